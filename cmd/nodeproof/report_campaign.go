package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	clisim "github.com/nodeproof/nodeproof/cli/sim"
	"github.com/nodeproof/nodeproof/reportview"

	"github.com/nodeproof/nodeproof/campaign"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/inventory"
	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/simreport"
)

// The report's side of a campaign (package campaign): the shard file, whose
// suites and sim keys are report.json's own sections; the recorder that
// keeps a shard's simulation seeds and suite runs in them, which `nodeproof
// campaign` is given (campaign.Recorder); and the merge of the shard files
// into one report (report --merge). This is the seam through which the
// campaign reaches the report, and it moves with the report's code.

// shardReport is what one shard writes: the report's JSON (version,
// started, seconds, passed, suites, sim) for its units, with the campaign
// it belongs to and its fuzz targets.
type shardReport struct {
	Version  string                `json:"version"`
	Started  string                `json:"started"`
	Seconds  float64               `json:"seconds"`
	Passed   bool                  `json:"passed"`
	Campaign campaign.Info         `json:"campaign"`
	Suites   []suiteReport         `json:"suites"`
	Sim      *simreport.Section    `json:"sim"`
	Fuzz     []campaign.FuzzResult `json:"fuzz"`
}

// shardRecorder keeps one shard's simulation seeds and suite runs as the
// report's sections, with a bar on a terminal as sim and report draw it.
type shardRecorder struct {
	sim    clisim.Runner
	suite  func(properties.Suite, properties.RunOptions) properties.Result
	suites map[string]properties.Suite
	stderr io.Writer
	tty    bool

	suiteReports []suiteReport
	simRuns      []simreport.Seed
}

// newShardRecorder is the campaign's NewRecorder: shards run their seeds
// with run and their suites with suite, among all.
func newShardRecorder(run clisim.Runner, suite func(properties.Suite, properties.RunOptions) properties.Result, all []properties.Suite) func(io.Writer) campaign.Recorder {
	return func(stderr io.Writer) campaign.Recorder {
		r := &shardRecorder{sim: run, suite: suite, suites: map[string]properties.Suite{}, stderr: stderr, tty: cli.IsTerminal(stderr),
			suiteReports: []suiteReport{}}
		for _, s := range all {
			r.suites[s.Name] = s
		}
		return r
	}
}

// Sim runs one simulation seed, with a bar over simulated time on a
// terminal, as nodeproof sim does.
func (r *shardRecorder) Sim(plan campaign.ResolvedSim, seed uint64) *campaign.Failure {
	// The plan was validated when it was resolved, so the rates parse.
	rates, _ := sim.ParseRates(plan.Faults)
	// Known findings are counted, not stopped at, as in nodeproof sim.
	cfg := sim.Config{Seed: seed, Duration: time.Duration(plan.Hours * float64(time.Hour)), Pods: plan.Pods, Faults: rates, Explained: simreport.Explained()}
	run := clisim.RunSeed(cfg, r.sim, r.stderr, r.tty, len("seed ")+len(strconv.FormatUint(seed, 10)))
	r.simRuns = append(r.simRuns, run)
	if v := run.Summary.Violation; v != nil {
		return &campaign.Failure{Invariant: v.Invariant, Replay: run.Summary.Replay}
	}
	return nil
}

// Suite runs one suite from seed. A terminal gets a bar over the suite's
// checks; a log only the line of each unit.
func (r *shardRecorder) Suite(plan campaign.ResolvedSuites, name string, seed uint64) *campaign.Failure {
	runOpts := properties.RunOptions{Checks: plan.Checks, Steps: plan.Steps, Seed: seed}
	var bar cli.Progress
	if r.tty {
		label := campaign.Unit{Kind: "suite", Suite: name, Seed: seed}.String()
		bar = cli.NewProgress(r.stderr, r.tty, label, "checks", len(label))
		runOpts.Progress = bar.Update
	}
	res := r.suite(r.suites[name], runOpts)
	if bar != nil {
		bar.Finish()
	}
	sr := newSuiteReport(res)
	r.suiteReports = append(r.suiteReports, sr)
	if f := sr.Failure; f != nil {
		return &campaign.Failure{Invariant: f.Invariant, Replay: f.Replay}
	}
	return nil
}

// File is the shard file: the outcome with the suites and seeds recorded.
func (r *shardRecorder) File(o campaign.Outcome) any {
	rep := shardReport{Version: o.Version, Started: o.Started, Seconds: o.Seconds, Passed: o.Passed,
		Campaign: o.Info, Suites: r.suiteReports, Fuzz: o.Fuzz}
	if len(r.simRuns) > 0 {
		seconds := 0.0
		for _, run := range r.simRuns {
			seconds += run.Seconds
		}
		section := simreport.NewSection(r.simRuns, seconds)
		rep.Sim = &section
	}
	return rep
}

// readShardFile decodes a shard file strictly, checks its simulation's sums
// and lists the units its sections hold for campaign.Merge.
func readShardFile(path string) (shardReport, campaign.Record, error) {
	var rep shardReport
	data, err := os.ReadFile(path)
	if err != nil {
		return rep, campaign.Record{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		return rep, campaign.Record{}, fmt.Errorf("%s: want the JSON nodeproof campaign writes: %v", path, err)
	}
	rec := campaign.Record{Path: path, Version: rep.Version, Started: rep.Started, Seconds: rep.Seconds, Passed: rep.Passed,
		Info: rep.Campaign, Fuzz: rep.Fuzz}
	if rep.Sim != nil {
		events := 0
		for _, r := range rep.Sim.Runs {
			events += r.Events
			h := campaign.Held{Unit: campaign.Unit{Kind: "sim", Seed: r.Seed}, Field: "sim.runs"}
			if v := r.Violation; v != nil {
				h.Failure = &campaign.Failure{Invariant: v.Invariant, Replay: v.Replay}
			}
			rec.Held = append(rec.Held, h)
		}
		if events != rep.Sim.Events {
			return rep, rec, fmt.Errorf("%s: sim.events is %d, but sim.runs add up to %d", path, rep.Sim.Events, events)
		}
	}
	for _, s := range rep.Suites {
		h := campaign.Held{Unit: campaign.Unit{Kind: "suite", Suite: s.Name, Seed: s.Seed}, Field: "suites"}
		if f := s.Failure; f != nil {
			h.Failure = &campaign.Failure{Invariant: f.Invariant, Replay: f.Replay}
		}
		rec.Held = append(rec.Held, h)
	}
	return rep, rec, nil
}

// mergeShards reads the shard files in dir, which campaign.Merge checks are
// one whole campaign, and returns the report of them all: suites summed
// per suite, the simulation's runs in seed order, and the campaign section
// with every failure and the shard that found it.
func mergeShards(dir string) (*reportData, error) {
	files := map[string]shardReport{}
	m, err := campaign.Merge(dir, func(path string) (campaign.Record, error) {
		rep, rec, err := readShardFile(path)
		files[path] = rep
		return rec, err
	})
	if err != nil {
		return nil, err
	}
	data := &reportData{Version: m.Version, Started: m.Started, Seconds: m.Seconds, Campaign: m.Section}
	var sims []simreport.Section
	var suites []suiteReport
	for _, rec := range m.Records {
		rep := files[rec.Path]
		suites = append(suites, rep.Suites...)
		if rep.Sim != nil {
			sims = append(sims, *rep.Sim)
		}
	}
	if plan := m.Section.Plan; plan.Suites != nil {
		data.Suites = mergeSuites(plan.Suites.Names, suites)
	}
	if len(sims) > 0 {
		merged := mergeSimSections(sims)
		data.Sim = &merged
	}
	return data, nil
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
			m.Seconds = phrase.RoundMilli(m.Seconds + r.Seconds)
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
					sum.Mean = phrase.RoundMicro((sum.Mean*float64(sum.Samples) + st.Mean*float64(st.Samples)) / float64(total))
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
func mergeSimSections(sections []simreport.Section) simreport.Section {
	s := simreport.Section{Hours: sections[0].Hours, Pods: sections[0].Pods, Faults: sections[0].Faults,
		Injected: map[string]int{}, Observed: map[string]int{}, Passed: true, Violations: []simreport.Violation{}}
	for _, sec := range sections {
		s.Runs = append(s.Runs, sec.Runs...)
		s.Seconds += sec.Seconds
	}
	sort.Slice(s.Runs, func(i, j int) bool { return s.Runs[i].Seed < s.Runs[j].Seed })
	s.SumRuns()
	s.Seeds = len(s.Runs)
	s.FirstSeed, s.LastSeed = s.Runs[0].Seed, s.Runs[len(s.Runs)-1].Seed
	s.Seconds = phrase.RoundMicro(s.Seconds)
	return s
}

// markdownCampaign is the campaign's block of report.md.
func markdownCampaign(c *campaign.Section) string {
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
	reportview.MarkdownTable(&b, []string{"Shard", "File", "Units", "Seconds", "Result"}, rows)
	b.WriteString("\n### Failures\n\n")
	if len(c.Failures) == 0 {
		b.WriteString("None: every unit passed.\n")
	} else {
		// A list, not a table: a table cell would escape the replay line's
		// characters inside its code span.
		for _, f := range c.Failures {
			fmt.Fprintf(&b, "- shard %d, %s: %s; replay: %s\n", f.Shard, reportview.MarkdownEscape(f.Unit), reportview.MarkdownEscape(f.Invariant), reportview.MarkdownInline(orDash(f.Replay)))
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
		reportview.MarkdownTable(&b, []string{"Target", "Package", "Shard", "Seconds", "Result"}, rows)
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
	if err := cli.OutDir(opts.out); err != nil {
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
	for _, p := range c.Problems() {
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
