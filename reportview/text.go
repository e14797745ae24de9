package reportview

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/simreport"
)

// PrintSuite prints a suite's line on the terminal, its name padded to
// width, and, when it failed, everything needed to act on it: the
// invariant, the shrunk steps and the replay line.
func PrintSuite(w io.Writer, s Suite, width int) {
	counts := fmt.Sprintf("%d checks, %d steps, %.1fs", s.Checks, s.Steps, s.Seconds)
	if s.Failure == nil {
		fmt.Fprintf(w, "%-*s  passed  %s\n", width, s.Name, counts)
		return
	}
	indent := strings.Repeat(" ", width+10)
	fmt.Fprintf(w, "%-*s  FAILED  %s after %s\n", width, s.Name, s.Failure.Invariant, counts)
	steps := s.Failure.Steps
	if len(steps) == 0 {
		// A failure without step lines (a panic, say) still shows its message.
		steps = strings.Split(strings.TrimRight(s.Failure.Message, "\n"), "\n")
	}
	for _, line := range steps {
		fmt.Fprintf(w, "%s%s\n", indent, line)
	}
	if s.Failure.Replay != "" {
		fmt.Fprintf(w, "%sreplay: %s\n", indent, s.Failure.Replay)
	}
}

// PrintSim prints the simulation's verdict line and, when it failed, each
// violation with its replay line.
func PrintSim(w io.Writer, s simreport.Section, width int) {
	if s.Passed {
		fmt.Fprintf(w, "%-*s  passed  %s\n", width, "sim", SimBudget(s))
		return
	}
	fmt.Fprintf(w, "%-*s  FAILED  %s in %s\n", width, "sim", phrase.Count(len(s.Violations), "violation"), SimBudget(s))
	indent := strings.Repeat(" ", width+2)
	for _, v := range s.Violations {
		fmt.Fprintf(w, "%sseed %d: %s\n", indent, v.Seed, v.Invariant)
		simreport.WriteViolation(w, indent+"  ", v)
	}
}

// SimBudget says what a simulation section ran, in a line.
func SimBudget(s simreport.Section) string {
	return fmt.Sprintf("%s × %s simulated hours (seeds %d..%d), %d events, %.1fs",
		phrase.Count(s.Seeds, "seed"), phrase.Stat(s.Hours), s.FirstSeed, s.LastSeed, s.Events, s.Seconds)
}

// countsText lists counts by kind, in kind order ("kill-kubelet 2,
// plugin-crash 7"), or says none: the faults a simulation injected, the
// steps a sweep played, the divergences it saw.
func countsText(counts map[string]int) string {
	if len(counts) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, k+" "+strconv.Itoa(counts[k]))
	}
	return strings.Join(parts, ", ")
}

// PrintVerdict prints the verdict's headline and what did not run, in the
// words of the page.
func PrintVerdict(w io.Writer, r *Report) {
	fmt.Fprintln(w, r.Verdict().Headline)
	PrintNotRun(w, r.NotRun)
}

// PrintNotRun prints each entry of the not-run list on a line of its own.
func PrintNotRun(w io.Writer, list []coverage.NotRun) {
	plain := func(s string) string { return s }
	for _, n := range list {
		fmt.Fprintln(w, n.Words(plain, plain))
	}
}
