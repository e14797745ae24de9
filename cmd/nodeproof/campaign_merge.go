package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/inventory"
	"github.com/nodeproof/nodeproof/phrase"
)

// campaignSection is the campaign a merged report comes from: report.json's
// "campaign" key, present only in a merged report.
type campaignSection struct {
	Shards int          `json:"shards"`
	Plan   resolvedPlan `json:"plan"`
	Units  int          `json:"units"`
	// ShardResults is one row per shard file, in index order.
	ShardResults []campaignShardRow `json:"shard_results"`
	// Failures lists every failed unit, in plan order, with its shard.
	Failures []campaignFailure `json:"failures"`
	Fuzz     []fuzzReport      `json:"fuzz"`
}

type campaignShardRow struct {
	Shard   int     `json:"shard"`
	File    string  `json:"file"`
	Units   int     `json:"units"`
	Seconds float64 `json:"seconds"`
	Passed  bool    `json:"passed"`
}

// campaignFailure is one failed unit: which shard found it, what failed
// and the line that replays it.
type campaignFailure struct {
	Shard     int    `json:"shard"`
	Unit      string `json:"unit"`
	Invariant string `json:"invariant"`
	Replay    string `json:"replay"`
}

// shardFileRE matches the files a campaign's shards write.
var shardFileRE = regexp.MustCompile(`^shard-(\d+)\.json$`)

// loadedShard is a shard file read and checked.
type loadedShard struct {
	path string
	rep  shardReport
}

// mergeShards reads every shard-N.json in dir, checks that together they
// are one whole campaign (one plan, each shard once, each unit in its
// shard) and returns the report of them all. Errors name the file and the
// field.
func mergeShards(dir string) (*reportData, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var shards []loadedShard
	for _, e := range entries {
		m := shardFileRE.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		rep, err := readShardFile(path)
		if err != nil {
			return nil, err
		}
		if n, err := strconv.Atoi(m[1]); err != nil || n != rep.Campaign.Shard {
			return nil, fmt.Errorf("%s: campaign.shard is %d, but the file's name says shard %s", path, rep.Campaign.Shard, m[1])
		}
		shards = append(shards, loadedShard{path: path, rep: rep})
	}
	if len(shards) == 0 {
		return nil, fmt.Errorf("%s holds no shard-N.json files (nodeproof campaign --out writes them)", dir)
	}
	slices.SortFunc(shards, func(a, b loadedShard) int { return a.rep.Campaign.Shard - b.rep.Campaign.Shard })
	first := shards[0]
	for i, s := range shards {
		c := s.rep.Campaign
		switch {
		case c.Shards != first.rep.Campaign.Shards:
			return nil, fmt.Errorf("%s: campaign.shards is %d, but %s says %d", s.path, c.Shards, first.path, first.rep.Campaign.Shards)
		case !c.Plan.equal(first.rep.Campaign.Plan):
			return nil, fmt.Errorf("%s: campaign.plan differs from %s's: the shards belong to different campaigns", s.path, first.path)
		case s.rep.Version != first.rep.Version:
			return nil, fmt.Errorf("%s: version %s differs from %s's %s: the shards ran different builds", s.path, s.rep.Version, first.path, first.rep.Version)
		case i > 0 && c.Shard == shards[i-1].rep.Campaign.Shard:
			return nil, fmt.Errorf("%s: campaign.shard %d is also in %s", s.path, c.Shard, shards[i-1].path)
		}
	}
	total := first.rep.Campaign.Shards
	for i := range total {
		if i >= len(shards) || shards[i].rep.Campaign.Shard != i {
			return nil, fmt.Errorf("campaign.shards is %d, but no file holds campaign.shard %d (want %s)", total, i, filepath.Join(dir, shardFileName(i)))
		}
	}
	plan := first.rep.Campaign.Plan
	for _, s := range shards {
		if err := checkShareOf(s, plan); err != nil {
			return nil, err
		}
	}
	return mergedReport(dir, plan, shards), nil
}

// readShardFile decodes a shard file strictly and checks its own fields.
func readShardFile(path string) (shardReport, error) {
	var rep shardReport
	data, err := os.ReadFile(path)
	if err != nil {
		return rep, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		return rep, fmt.Errorf("%s: want the JSON nodeproof campaign writes: %v", path, err)
	}
	c := rep.Campaign
	switch {
	case c.Shards < 1 || c.Shards > maxCampaignShards:
		return rep, fmt.Errorf("%s: campaign.shards must be between 1 and %d, got %d", path, maxCampaignShards, c.Shards)
	case c.Shard < 0 || c.Shard >= c.Shards:
		return rep, fmt.Errorf("%s: campaign.shard must be between 0 and %d (campaign.shards - 1), got %d", path, c.Shards-1, c.Shard)
	case c.Plan.Shards != c.Shards:
		return rep, fmt.Errorf("%s: campaign.plan.shards is %d, but campaign.shards is %d", path, c.Plan.Shards, c.Shards)
	case c.Plan.unitCount() > maxCampaignUnits:
		return rep, fmt.Errorf("%s: campaign.plan holds more than %d units", path, maxCampaignUnits)
	case rep.Passed != (len(shardFailures(rep)) == 0):
		return rep, fmt.Errorf("%s: passed is %v, but the file holds %d failures", path, rep.Passed, len(shardFailures(rep)))
	}
	if rep.Sim != nil {
		events := 0
		for _, r := range rep.Sim.Runs {
			events += r.Events
		}
		if events != rep.Sim.Events {
			return rep, fmt.Errorf("%s: sim.events is %d, but sim.runs add up to %d", path, rep.Sim.Events, events)
		}
	}
	return rep, nil
}

// checkShareOf checks that a shard ran exactly its share of the plan's units.
func checkShareOf(s loadedShard, plan resolvedPlan) error {
	want := map[string]bool{}
	for _, u := range plan.shardUnits(s.rep.Campaign.Shard) {
		want[u.String()] = true
	}
	seen := map[string]bool{}
	for _, u := range shardUnitsRan(s.rep) {
		switch {
		case seen[u.unit]:
			return fmt.Errorf("%s: %s holds %s twice", s.path, u.field, u.unit)
		case !want[u.unit]:
			return fmt.Errorf("%s: %s holds %s, which is not in shard %d's share of campaign.plan", s.path, u.field, u.unit, s.rep.Campaign.Shard)
		}
		seen[u.unit] = true
	}
	for _, u := range plan.shardUnits(s.rep.Campaign.Shard) {
		if !seen[u.String()] {
			return fmt.Errorf("%s: %s of shard %d's share is not in the file", s.path, u, s.rep.Campaign.Shard)
		}
	}
	return nil
}

// ranUnit is a unit a shard file holds and the field it is in.
type ranUnit struct{ unit, field string }

func shardUnitsRan(rep shardReport) []ranUnit {
	var out []ranUnit
	if rep.Sim != nil {
		for _, r := range rep.Sim.Runs {
			out = append(out, ranUnit{campaignUnit{Kind: "sim", Seed: r.Seed}.String(), "sim.runs"})
		}
	}
	for _, s := range rep.Suites {
		out = append(out, ranUnit{campaignUnit{Kind: "suite", Suite: s.Name, Seed: s.Seed}.String(), "suites"})
	}
	for _, f := range rep.Fuzz {
		out = append(out, ranUnit{campaignUnit{Kind: "fuzz", Target: fuzzTarget{Package: f.Package, Name: f.Target}}.String(), "fuzz"})
	}
	return out
}

// shardFailures are a shard's failed units, in the order of its file.
func shardFailures(rep shardReport) []campaignFailure {
	var out []campaignFailure
	if rep.Sim != nil {
		for _, r := range rep.Sim.Runs {
			if r.Violation != nil {
				out = append(out, campaignFailure{Shard: rep.Campaign.Shard, Unit: campaignUnit{Kind: "sim", Seed: r.Seed}.String(),
					Invariant: r.Violation.Invariant, Replay: r.Violation.Replay})
			}
		}
	}
	for _, s := range rep.Suites {
		if f := s.Failure; f != nil {
			out = append(out, campaignFailure{Shard: rep.Campaign.Shard, Unit: campaignUnit{Kind: "suite", Suite: s.Name, Seed: s.Seed}.String(),
				Invariant: f.Invariant, Replay: f.Replay})
		}
	}
	for _, f := range rep.Fuzz {
		if f.Failure != nil {
			out = append(out, campaignFailure{Shard: rep.Campaign.Shard, Unit: campaignUnit{Kind: "fuzz", Target: fuzzTarget{Package: f.Package, Name: f.Target}}.String(),
				Invariant: "fuzz", Replay: f.Failure.Replay})
		}
	}
	return out
}

// mergedReport combines checked shards: suites summed per suite, the
// simulation's runs in seed order, and the campaign section with every
// failure and the shard that found it.
func mergedReport(dir string, plan resolvedPlan, shards []loadedShard) *reportData {
	units := plan.units()
	order := map[string]int{}
	for i, u := range units {
		order[u.String()] = i
	}
	c := &campaignSection{Shards: plan.Shards, Plan: plan, Units: len(units), Failures: []campaignFailure{}, Fuzz: []fuzzReport{}}
	data := &reportData{Version: shards[0].rep.Version, Campaign: c}
	var sims []simSection
	var suites []suiteReport
	var start, end time.Time
	for _, s := range shards {
		rep := s.rep
		c.ShardResults = append(c.ShardResults, campaignShardRow{Shard: rep.Campaign.Shard, File: filepath.Base(s.path),
			Units: len(shardUnitsRan(rep)), Seconds: rep.Seconds, Passed: rep.Passed})
		fuzz := make([]fuzzReport, len(rep.Fuzz))
		for i, f := range rep.Fuzz {
			if f.Failure != nil && f.Failure.Input != "" {
				// The input now lies under the directory being merged.
				failure := *f.Failure
				failure.Replay = fuzzReplay(fuzzTarget{Package: f.Package, Name: f.Target}, filepath.Join(dir, filepath.FromSlash(failure.Input)))
				f.Failure = &failure
			}
			fuzz[i] = f
		}
		rep.Fuzz = fuzz
		c.Fuzz = append(c.Fuzz, fuzz...)
		c.Failures = append(c.Failures, shardFailures(rep)...)
		suites = append(suites, rep.Suites...)
		if rep.Sim != nil {
			sims = append(sims, *rep.Sim)
		}
		if t, err := time.Parse(time.RFC3339, rep.Started); err == nil {
			if start.IsZero() || t.Before(start) {
				start = t
			}
			if e := t.Add(time.Duration(rep.Seconds * float64(time.Second))); e.After(end) {
				end = e
			}
		}
	}
	sort.SliceStable(c.Failures, func(i, j int) bool { return order[c.Failures[i].Unit] < order[c.Failures[j].Unit] })
	sort.SliceStable(c.Fuzz, func(i, j int) bool {
		a, b := c.Fuzz[i], c.Fuzz[j]
		return a.Package+" "+a.Target < b.Package+" "+b.Target
	})
	data.Started = start.Format(time.RFC3339)
	data.Seconds = roundMillis(end.Sub(start).Seconds())
	if plan.Suites != nil {
		data.Suites = mergeSuites(plan.Suites.Names, suites)
	}
	if len(sims) > 0 {
		merged := mergeSimSections(sims)
		data.Sim = &merged
	}
	return data
}

// mergeSuites sums the runs of each suite from every seed into one row per
// suite, in names' order; its failure is the first seed's that failed.
func mergeSuites(names []string, runs []suiteReport) []suiteReport {
	slices.SortStableFunc(runs, func(a, b suiteReport) int { return cmp.Compare(a.Seed, b.Seed) })
	var out []suiteReport
	for _, name := range names {
		var m *suiteReport
		stats := map[string]*statisticReport{}
		for _, r := range runs {
			if r.Name != name {
				continue
			}
			if m == nil {
				m = &suiteReport{Name: r.Name, Subsystem: r.Subsystem, Passed: true, Seed: r.Seed, Actions: map[string]int{},
					Invariants: slices.Clone(r.Invariants), Statistics: []statisticReport{}}
				for i := range m.Invariants {
					m.Invariants[i].Checked, m.Invariants[i].Applied, m.Invariants[i].Violations = 0, 0, 0
				}
			}
			m.Checks += r.Checks
			m.Steps += r.Steps
			m.Seconds = roundMillis(m.Seconds + r.Seconds)
			m.Passed = m.Passed && r.Passed
			if m.Failure == nil && r.Failure != nil {
				m.Failure = r.Failure
			}
			for k, n := range r.Actions {
				m.Actions[k] += n
			}
			for _, inv := range r.Invariants {
				for i := range m.Invariants {
					if m.Invariants[i].ID == inv.ID {
						m.Invariants[i].Checked += inv.Checked
						m.Invariants[i].Applied += inv.Applied
						m.Invariants[i].Violations += inv.Violations
					}
				}
			}
			for _, st := range r.Statistics {
				sum := stats[st.Name]
				if sum == nil {
					sum = &statisticReport{Name: st.Name, Max: st.Max}
					stats[st.Name] = sum
				}
				// The mean of the merged samples, weighted by each run's count.
				if total := sum.Samples + st.Samples; total > 0 {
					sum.Mean = roundMicro((sum.Mean*float64(sum.Samples) + st.Mean*float64(st.Samples)) / float64(total))
				}
				sum.Samples += st.Samples
				sum.Max = max(sum.Max, st.Max)
				sum.Nonzero += st.Nonzero
			}
		}
		if m == nil {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(stats)) {
			m.Statistics = append(m.Statistics, *stats[name])
		}
		out = append(out, *m)
	}
	return out
}

// mergeSimSections combines the shards' simulation sections into one over
// every seed, its runs in seed order and its sums taken again from them.
func mergeSimSections(sections []simSection) simSection {
	s := simSection{Hours: sections[0].Hours, Pods: sections[0].Pods, Faults: sections[0].Faults,
		Injected: map[string]int{}, Observed: map[string]int{}, Passed: true, Violations: []simViolation{}}
	for _, sec := range sections {
		s.Runs = append(s.Runs, sec.Runs...)
		s.Seconds += sec.Seconds
	}
	sort.Slice(s.Runs, func(i, j int) bool { return s.Runs[i].Seed < s.Runs[j].Seed })
	s.sumRuns()
	s.Seeds = len(s.Runs)
	s.FirstSeed, s.LastSeed = s.Runs[0].Seed, s.Runs[len(s.Runs)-1].Seed
	s.Seconds = roundMicro(s.Seconds)
	return s
}

// campaignProblems are the verdict's lines for a merged report: every
// failure with the shard that found it.
func campaignProblems(c *campaignSection) []string {
	var out []string
	for _, f := range c.Failures {
		line := fmt.Sprintf("shard %d: %s: %s", f.Shard, f.Unit, f.Invariant)
		if f.Invariant != "fuzz" {
			line += " violated"
		} else {
			line = strings.TrimSuffix(line, ": fuzz") + " failed"
		}
		out = append(out, line+"; replay: "+orDash(f.Replay))
	}
	return out
}

// markdownCampaign is the campaign's block of report.md.
func markdownCampaign(c *campaignSection) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Campaign\n\nMerged from %d shards of one plan (%d units), each unit run by exactly one shard.\n\n", c.Shards, c.Units)
	var rows [][]string
	for _, r := range c.ShardResults {
		result := "passed"
		if !r.Passed {
			result = "FAILED"
		}
		rows = append(rows, []string{strconv.Itoa(r.Shard), r.File, strconv.Itoa(r.Units), strconv.FormatFloat(r.Seconds, 'f', 1, 64), result})
	}
	mdTable(&b, []string{"Shard", "File", "Units", "Seconds", "Result"}, rows)
	b.WriteString("\n### Failures\n\n")
	if len(c.Failures) == 0 {
		b.WriteString("None: every unit passed.\n")
	} else {
		// A list, not a table: a table cell would escape the replay line's
		// characters inside its code span.
		for _, f := range c.Failures {
			fmt.Fprintf(&b, "- shard %d, %s: %s; replay: %s\n", f.Shard, mdEscape(f.Unit), mdEscape(f.Invariant), mdInline(orDash(f.Replay)))
		}
	}
	if len(c.Fuzz) > 0 {
		b.WriteString("\n### Fuzz targets\n\n")
		rows = nil
		for _, f := range c.Fuzz {
			result := "passed"
			if !f.Passed {
				result = "FAILED"
			}
			rows = append(rows, []string{f.Target, "./" + f.Package, strconv.Itoa(f.Shard), strconv.FormatFloat(f.Seconds, 'f', 1, 64), result})
		}
		mdTable(&b, []string{"Target", "Package", "Shard", "Seconds", "Result"}, rows)
	}
	return b.String()
}

// runFlags are report's flags about what to run, which a merge does not do.
var runFlags = []string{"checks", "steps", "seed", "suite", "histories", "sim-seeds", "sim-hours", "sim", "linearizability"}

// mergeOnlyFlags refuses a flag that would run something alongside --merge.
func mergeOnlyFlags(changed func(string) bool) error {
	for _, name := range runFlags {
		if changed(name) {
			return fmt.Errorf("--%s does not apply to --merge, which combines shards that already ran", name)
		}
	}
	return nil
}

// mergeReport writes the report of the campaign's shards in dir into
// opts.out, with the result files opts names, and fails when a unit failed.
func mergeReport(dir string, opts reportOptions, stdout, stderr io.Writer) error {
	data, err := mergeShards(dir)
	if err != nil {
		return cli.UsageError(fmt.Errorf("--merge: %v", err))
	}
	if err := checkOutDir(opts.out); err != nil {
		return cli.UsageError(err)
	}
	data.Mutants, data.Conformance, data.PluginCheck = opts.mutants, opts.conformance, opts.pluginCheck
	data.finish(inventory.Subsystems(), 0)
	paths, err := writeReport(opts.out, data)
	if err != nil {
		return cli.UsageError(err)
	}
	c := data.Campaign
	fmt.Fprintf(stderr, "merged %s of %s: %s\n", phrase.Count(c.Shards, "shard"), phrase.Count(c.Units, "unit"), verdict(data).Headline)
	for _, p := range campaignProblems(c) {
		fmt.Fprintf(stderr, "  %s\n", p)
	}
	printNotRun(stderr, data.NotRun)
	for _, p := range paths {
		fmt.Fprintln(stdout, p)
	}
	if !data.Passed {
		return cli.Exit(cli.StatusFailed)
	}
	return nil
}
