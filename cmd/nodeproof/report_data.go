package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/nodeproof/nodeproof/campaign"

	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/findings"
	"github.com/nodeproof/nodeproof/inventory"
	"github.com/nodeproof/nodeproof/mutants"
	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/reportview"
	"github.com/nodeproof/nodeproof/simreport"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// reportData is everything a report shows. report.json is its encoding, and
// the Markdown and HTML renderers read nothing else, so the three agree.
type reportData struct {
	Version string  `json:"version"`
	Started string  `json:"started"` // RFC 3339
	Seconds float64 `json:"seconds"`
	// Passed is the verdict: every suite passed, no simulated seed violated an invariant, every history is
	// linearizable, no conformance mismatch and no mutant survived, among
	// the sections the report includes.
	Passed bool `json:"passed"`
	// Findings are the known broken promises of the kubelet (verify), each
	// with what this report saw of it. A known finding does not make the
	// verdict red; one that no longer reproduces does.
	Findings []findingReport `json:"findings"`
	Suites   []suiteReport   `json:"suites"`
	// Sim is the node simulation's seeds; null when not run.
	Sim *simreport.Section `json:"sim"`
	// The optional sections are null when not given, which tells a reader
	// "not run" apart from "ran and found nothing".
	Linearizability *tableSection `json:"linearizability"`
	Mutants         []mutantRow   `json:"mutants"`
	Conformance     *tableSection `json:"conformance"`
	// PluginCheck is agent/plugincheck's runs against plugins nobody here
	// wrote (upstream's stub, the sample device plugin). What it finds is
	// a fact about their code, shown and not part of the verdict.
	PluginCheck *tableSection `json:"plugin_check"`
	// Campaign is the campaign a report merged from shards comes from
	// (nodeproof report --merge); absent from a report that ran itself.
	Campaign *campaign.Section `json:"campaign,omitempty"`
	// Matrix is the coverage matrix: one row per subsystem of the
	// inventory, one cell per layer.
	Matrix []coverage.Row `json:"matrix"`
	// NotRun lists what the report lacks (sections, suites, the results a
	// matrix cell lacks) and how to run each; every renderer shows it and
	// the verdict counts it.
	NotRun []coverage.NotRun `json:"not_run"`
	// Inventory is what the matrix counts, shown on the page.
	Inventory []inventory.Subsystem `json:"-"`
	// searches is what `nodeproof findings --json` wrote; nil when not run.
	searches *findings.File
}

// finish derives the verdict, the matrix and the list of what did not run
// from what ran. histories is what --histories asked for.
func (d *reportData) finish(subsystems []inventory.Subsystem, histories int) {
	d.Passed = conformancePassed(d.Conformance)
	for _, s := range d.Suites {
		d.Passed = d.Passed && s.Passed
	}
	for _, m := range d.Mutants {
		d.Passed = d.Passed && m.Killed
	}
	if d.Sim != nil {
		d.Passed = d.Passed && d.Sim.Passed
	}
	if d.Campaign != nil {
		d.Passed = d.Passed && len(d.Campaign.Failures) == 0
	}
	for _, ok := range linearizable(d.Linearizability) {
		d.Passed = d.Passed && ok
	}
	d.Findings = newFindingReports(d.Suites, d.searches)
	if len(findingProblems(d.Findings, d.searches != nil)) > 0 {
		d.Passed = false
	}
	m := coverage.Build(subsystems, d.coverageResults(histories))
	d.Inventory, d.Matrix, d.NotRun = m.Inventory, m.Rows, m.NotRun
}

type suiteReport struct {
	Name      string  `json:"name"`
	Subsystem string  `json:"subsystem"`
	Checks    int     `json:"checks"` // generated cases that ran
	Steps     int     `json:"steps"`  // actions executed over all cases
	Seconds   float64 `json:"seconds"`
	Passed    bool    `json:"passed"`
	// Seed is the base seed; rerunning with it and the same budget repeats the run.
	Seed       uint64            `json:"seed"`
	Actions    map[string]int    `json:"actions"`
	Invariants []invariantReport `json:"invariants"`
	// Statistics are the suite's measurements that are not pass or fail
	// (properties.Tally.Observe), by name.
	Statistics []statisticReport `json:"statistics"`
	Failure    *failureReport    `json:"failure,omitempty"`
}

type statisticReport struct {
	Name    string  `json:"name"`
	Samples int     `json:"samples"`
	Mean    float64 `json:"mean"`
	Max     float64 `json:"max"`
	// Nonzero counts the samples that were not 0, for example how often a
	// greedy choice was not the best one.
	Nonzero int `json:"nonzero"`
}

type invariantReport struct {
	ID        string `json:"id"`
	Statement string `json:"statement"`
	// Source is Sources' texts joined, for the DESIGN schema's one string.
	Source  string         `json:"source"`
	Sources []sourceReport `json:"sources"`
	// Checked counts the evaluations of the invariant, Applied those where
	// it had something to compare (properties.Tally).
	Checked    int `json:"checked"`
	Applied    int `json:"applied"`
	Violations int `json:"violations"`
	// Kind is "fidelity" (upstream's behaviour) or "contract" (Kubernetes'
	// promise to its users).
	Kind string `json:"kind"`
	// Breaches counts the breaches of a contract invariant that a known
	// finding explains, counted instead of failing the suite.
	Breaches    int    `json:"breaches"`
	FirstBreach string `json:"first_breach,omitempty"`
}

type failureReport struct {
	Invariant string   `json:"invariant"`
	Message   string   `json:"message"`
	Steps     []string `json:"steps"`
	Replay    string   `json:"replay"`
}

// mutantRow is one row of the kill matrix `nodeproof mutants --json`
// writes, which package mutants defines.
type mutantRow = mutants.Row

// tableSection is a section whose shape nodeproof does not own (the
// linearizability and conformance results): an array of objects, kept
// verbatim for report.json and flattened into a table for the other renderers.
type tableSection struct {
	rows []json.RawMessage
	reportview.Table
}

func (t *tableSection) MarshalJSON() ([]byte, error) {
	return json.Marshal(t.rows)
}

// newSuiteReport converts the outcome of properties.Run for the report.
func newSuiteReport(res properties.Result) suiteReport {
	sr := suiteReport{
		Name:      res.Suite.Name,
		Subsystem: res.Suite.Subsystem,
		Checks:    res.Tally.Cases,
		Steps:     res.Tally.Steps,
		Seconds:   phrase.RoundMilli(res.Seconds),
		Passed:    res.Passed,
		Seed:      res.Seed,
		Actions:   res.Tally.Actions,
	}
	for _, inv := range res.Suite.Invariants {
		ir := invariantReport{ID: inv.ID, Statement: inv.Statement, Source: cite.Join(inv.Sources), Sources: sourceReports(inv.Sources),
			Checked: res.Tally.Checked[inv.ID], Applied: res.Tally.Applied[inv.ID], Kind: inv.Kind.String(),
			Breaches: res.Tally.Breaches[inv.ID], FirstBreach: res.Tally.FirstBreach[inv.ID]}
		if res.Failure != nil && res.Failure.Invariant == inv.ID {
			ir.Violations = 1
		}
		sr.Invariants = append(sr.Invariants, ir)
	}
	sr.Statistics = []statisticReport{}
	names := make([]string, 0, len(res.Tally.Stats))
	for name := range res.Tally.Stats {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		st := res.Tally.Stats[name]
		sr.Statistics = append(sr.Statistics, statisticReport{Name: name, Samples: st.Samples,
			Mean: phrase.RoundMicro(st.Mean()), Max: phrase.RoundMicro(st.Max), Nonzero: st.Nonzero})
	}
	if f := res.Failure; f != nil {
		sr.Failure = &failureReport{Invariant: f.Invariant, Message: f.Message, Steps: f.Steps, Replay: f.Replay}
	}
	return sr
}

// orDash writes an empty string as "-".
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// loadMutants reads a kill matrix written by `nodeproof mutants --json`.
func loadMutants(path string) ([]mutantRow, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows []mutantRow
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("%s: not a kill matrix (an array of {id, subsystem, source, killed, killed_by, seconds}): %v", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: %s", path, noResults)
	}
	for i, r := range rows {
		if r.ID == "" {
			return nil, fmt.Errorf("%s: element %d: id is required", path, i)
		}
	}
	return rows, nil
}

// loadTable reads a JSON array of objects for a pass-through section.
func loadTable(path string) (*tableSection, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := parseTable(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(t.rows) == 0 {
		return nil, fmt.Errorf("%s: %s", path, noResults)
	}
	return t, nil
}

// noResults is the complaint about a results file that holds none (null,
// []): shown, it would read as a section that ran and found nothing, and
// take it off the not-run list.
const noResults = "no results (null or an empty array): a run that produced nothing is not a section that passed; run its make target again"

func parseTable(data []byte) (*tableSection, error) {
	rows, table, err := reportview.ParseTable(data)
	if err != nil {
		return nil, err
	}
	return &tableSection{rows: rows, Table: table}, nil
}
