package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/reportview"
	"github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/simreport"
)

// The report's node simulation budget: a few seconds of `make report` on
// the CI machine (BENCHMARKS.md); `nodeproof sim --seeds` sweeps further.
const (
	defaultReportSimSeeds = 2
	defaultReportSimHours = 2.0
)

// simulate runs the report's node simulation seeds, from seed on, with the
// default pods and fault rates, and prints their line, or each violation
// with its trace and replay line, on stderr.
func simulate(opts reportOptions, seed uint64, stderr io.Writer, width int) *simreport.Section {
	started := time.Now()
	tty := cli.IsTerminal(stderr)
	bar := cli.NewProgress(stderr, tty, "sim", "seeds", width)
	def := sim.DefaultConfig()
	duration := time.Duration(opts.simHours * float64(time.Hour))
	var runs []simreport.Seed
	for i := range opts.simSeeds {
		cfg := sim.Config{Seed: seed + uint64(i), Duration: duration, Pods: def.Pods, Faults: def.Faults, Explained: simreport.Explained()}
		start := time.Now()
		s := sim.Run(cfg, func(sim.Stats) {})
		runs = append(runs, simreport.Seed{Config: cfg, Summary: s, Seconds: time.Since(start).Seconds()})
		bar.Update(i+1, opts.simSeeds)
	}
	bar.Finish()
	section := simreport.NewSection(runs, time.Since(started).Seconds())
	printSimSection(stderr, section, width)
	return &section
}

// printSimSection prints the section's verdict line and, when it failed,
// each violation with its replay line.
func printSimSection(stderr io.Writer, section simreport.Section, width int) {
	if section.Passed {
		fmt.Fprintf(stderr, "%-*s  passed  %s\n", width, "sim", simBudget(section))
		return
	}
	fmt.Fprintf(stderr, "%-*s  FAILED  %s in %s\n", width, "sim", phrase.Count(len(section.Violations), "violation"), simBudget(section))
	indent := strings.Repeat(" ", width+2)
	for _, v := range section.Violations {
		fmt.Fprintf(stderr, "%sseed %d: %s\n", indent, v.Seed, v.Invariant)
		simreport.WriteViolation(stderr, indent+"  ", v)
	}
}

// loadSim reads a sweep nodeproof sim --json wrote. The file is decoded
// strictly and its totals checked against its runs, so that a hand-edited or
// truncated file cannot make the report claim a sweep that did not happen.
func loadSim(path string) (*simreport.Section, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s simreport.Section
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: want the JSON object nodeproof sim --json writes: %v", path, err)
	}
	events := 0
	for _, r := range s.Runs {
		events += r.Events
	}
	switch {
	case s.Seeds <= 0 || len(s.Runs) != s.Seeds:
		return nil, fmt.Errorf("%s: seeds is %d but the file holds %d runs", path, s.Seeds, len(s.Runs))
	case events != s.Events:
		return nil, fmt.Errorf("%s: events is %d but the runs add up to %d", path, s.Events, events)
	case s.Passed != (len(s.Violations) == 0):
		return nil, fmt.Errorf("%s: passed is %v with %d violations", path, s.Passed, len(s.Violations))
	case math.IsNaN(s.Hours) || s.Hours <= 0 || s.Hours > sim.MaxHours:
		return nil, fmt.Errorf("%s: hours: %v is not a simulated duration (more than 0, at most %d)", path, s.Hours, sim.MaxHours)
	}
	for i, r := range s.Runs {
		switch {
		case s.Passed && !r.Passed:
			return nil, fmt.Errorf("%s: runs[%d]: passed is false under a total that passed", path, i)
		case r.SimulatedHours < 0:
			return nil, fmt.Errorf("%s: runs[%d].simulated_hours: %v is negative", path, i, r.SimulatedHours)
		case r.SimulatedHours > s.Hours:
			return nil, fmt.Errorf("%s: runs[%d].simulated_hours: %v exceeds the %v hours a seed runs", path, i, r.SimulatedHours, s.Hours)
		}
	}
	return &s, nil
}

// simBudget says what a simulation section ran, in a line.
func simBudget(s simreport.Section) string {
	return fmt.Sprintf("%s × %s simulated hours (seeds %d..%d), %d events, %.1fs",
		phrase.Count(s.Seeds, "seed"), phrase.Stat(s.Hours), s.FirstSeed, s.LastSeed, s.Events, s.Seconds)
}

// simProblems are the verdict's lines for the simulation's violations.
func simProblems(s *simreport.Section) []string {
	if s == nil {
		return nil
	}
	var problems []string
	for _, v := range s.Violations {
		problems = append(problems, fmt.Sprintf("sim: seed %d: %s violated; replay: %s", v.Seed, v.Invariant, v.Replay))
	}
	return problems
}

// simFaultsText lists the faults injected per kind, in kind order.
func simFaultsText(injected map[string]int) string {
	if len(injected) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(injected)) {
		parts = append(parts, k+" "+strconv.Itoa(injected[k]))
	}
	return strings.Join(parts, ", ")
}

// markdownSim is the simulation's block of report.md; notRun is its body
// when the report lacks it. Its counterexamples are under Failures, its
// invariants' counts in index.html.
func markdownSim(s *simreport.Section, notRun string) string {
	var b strings.Builder
	b.WriteString("\n## Node simulation\n\n")
	if s == nil {
		b.WriteString(notRun)
		return b.String()
	}
	result := "passed"
	if !s.Passed {
		result = "FAILED"
	}
	reportview.MarkdownTable(&b, []string{"Result", "Seeds", "Hours per seed", "Simulated hours", "Events", "Pods", "Seconds", "Violations"},
		[][]string{{result, fmt.Sprintf("%d (%d..%d)", s.Seeds, s.FirstSeed, s.LastSeed), phrase.Stat(s.Hours), phrase.Stat(s.SimulatedHours),
			strconv.Itoa(s.Events), strconv.Itoa(s.Pods), strconv.FormatFloat(s.Seconds, 'f', 1, 64), strconv.Itoa(len(s.Violations))}})
	fmt.Fprintf(&b, "\nFaults injected: %s.\n", reportview.MarkdownEscape(simFaultsText(s.Injected)))
	return b.String()
}
