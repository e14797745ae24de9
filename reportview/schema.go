package reportview

import (
	"encoding/json"

	"github.com/nodeproof/nodeproof/campaign"
	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/findings"
	"github.com/nodeproof/nodeproof/inventory"
	"github.com/nodeproof/nodeproof/linearizability"
	"github.com/nodeproof/nodeproof/mutants"
	"github.com/nodeproof/nodeproof/realkubelet/sweep"
	"github.com/nodeproof/nodeproof/simreport"
	"github.com/nodeproof/nodeproof/upstream"
)

// Report is everything a report shows: report.json is its encoding, and
// the Markdown, HTML and terminal renderers read nothing else, so that the
// three agree. Build one from the results (NewSuite, simreport.NewSection, the Load
// functions), then call Finish, which derives the verdict, the findings,
// the matrix and the not-run list.
type Report struct {
	// Version is the nodeproof build that wrote the report (cli.Version).
	Version string `json:"version"`
	// Started is when the run began, RFC 3339.
	Started string `json:"started"`
	// Seconds is the wall time of the whole run, in seconds.
	Seconds float64 `json:"seconds"`
	// Passed is the verdict: every suite passed, no simulated seed violated
	// an invariant, no seed on the real kubelet violated a property, every
	// history is linearizable, no conformance mismatch, the release matrix
	// lists no failure (upstream.Matrix.Failures), no mutant survived, no
	// campaign unit failed and every known finding still reproduces, among
	// the sections the report includes (Finish).
	Passed bool `json:"passed"`
	// Findings are the known broken promises of the kubelet (verify), each
	// with what this report saw of it. A known finding does not make the
	// verdict red; one that no longer reproduces does.
	Findings []Finding `json:"findings"`
	// Suites are the invariant suites that ran, in the order they ran.
	Suites []Suite `json:"suites"`
	// Sim is the node simulation's seeds; null when not run.
	Sim *simreport.Section `json:"sim"`
	// Node is nodeproof node's sweep on the real kubelet (make node-e2e);
	// null when not given.
	Node *sweep.Summary `json:"node"`
	// Linearizability is porcupine's verdict on each recorded history;
	// null when not run. It and the sections below are null when not given,
	// which tells a reader "not run" apart from "ran and found nothing".
	Linearizability []linearizability.Result `json:"linearizability"`
	// Mutants is the kill matrix nodeproof mutants --json wrote.
	Mutants []mutants.Row `json:"mutants"`
	// Conformance is the conformance module's comparisons with upstream,
	// as it wrote them.
	Conformance *Conformance `json:"conformance"`
	// Upstream is the release matrix nodeproof upstream --json wrote (make
	// upstream-matrix): the conformance module run against each upstream
	// release; null when not given.
	Upstream *upstream.Matrix `json:"upstream"`
	// PluginCheck is agent/plugincheck's runs against plugins nobody here
	// wrote (upstream's stub, the sample device plugin), as the
	// conformance module wrote them. What it finds is a fact about their
	// code, shown and not part of the verdict.
	PluginCheck *Results `json:"plugin_check"`
	// Campaign is the campaign a report merged from shards comes from
	// (nodeproof report --merge); absent from a report that ran itself.
	Campaign *campaign.Section `json:"campaign,omitempty"`
	// Matrix is the coverage matrix: one row per subsystem of the
	// inventory, one cell per layer (Finish).
	Matrix []coverage.Row `json:"matrix"`
	// NotRun lists what the report lacks (sections, suites, the results a
	// matrix cell lacks) and how to run each; every renderer shows it and
	// the verdict counts it (Finish).
	NotRun []coverage.NotRun `json:"not_run"`
	// Inventory is what the matrix counts, shown on the page.
	Inventory []inventory.Subsystem `json:"-"`
	// Searches is what nodeproof findings --json wrote, which Findings
	// show; nil when not run.
	Searches *findings.File `json:"-"`
}

// Suite is one invariant suite's run (properties.Run).
type Suite struct {
	Name      string `json:"name"`
	Subsystem string `json:"subsystem"`
	// Checks counts the generated cases that ran, Steps the actions
	// executed over all of them.
	Checks  int     `json:"checks"`
	Steps   int     `json:"steps"`
	Seconds float64 `json:"seconds"`
	Passed  bool    `json:"passed"`
	// Seed is the base seed; rerunning with it and the same budget repeats the run.
	Seed uint64 `json:"seed"`
	// Actions counts how often the generator drew each action, by name.
	Actions    map[string]int `json:"actions"`
	Invariants []Invariant    `json:"invariants"`
	// Statistics are the suite's measurements that are not pass or fail
	// (properties.Tally.Observe), by name.
	Statistics []Statistic `json:"statistics"`
	// Failure is the shrunk counterexample; absent when the suite passed.
	Failure *Failure `json:"failure,omitempty"`
}

// Statistic is one measurement of a suite over its samples.
type Statistic struct {
	Name    string  `json:"name"`
	Samples int     `json:"samples"`
	Mean    float64 `json:"mean"`
	Max     float64 `json:"max"`
	// Nonzero counts the samples that were not 0, for example how often a
	// greedy choice was not the best one.
	Nonzero int `json:"nonzero"`
}

// Invariant is one invariant of a suite and what the run made of it.
type Invariant struct {
	ID        string `json:"id"`
	Statement string `json:"statement"`
	// Source is Sources' texts joined, for the DESIGN schema's one string.
	Source  string   `json:"source"`
	Sources []Source `json:"sources"`
	// Checked counts the evaluations of the invariant, Applied those where
	// it had something to compare (properties.Tally).
	Checked int `json:"checked"`
	Applied int `json:"applied"`
	// Violations is 1 when the suite's counterexample broke it.
	Violations int `json:"violations"`
	// Kind is "fidelity" (upstream's behaviour) or "contract" (Kubernetes'
	// promise to its users).
	Kind string `json:"kind"`
	// Breaches counts the breaches of a contract invariant that a known
	// finding explains, counted instead of failing the suite.
	Breaches    int    `json:"breaches"`
	FirstBreach string `json:"first_breach,omitempty"`
}

// Failure is a suite's shrunk counterexample.
type Failure struct {
	// Invariant is the ID the failure message starts with.
	Invariant string `json:"invariant"`
	// Message is rapid's whole message.
	Message string `json:"message"`
	// Steps are the shrunk actions, one a line.
	Steps []string `json:"steps"`
	// Replay is the nodeproof replay command that repeats the failure.
	Replay string `json:"replay"`
}

// Source is one source of an invariant or a finding. Kind says how to read
// URL: an absolute link for upstream code, issues, pull requests and KEPs;
// a path relative to nodeproof's repository for "doc"; empty for "seed".
type Source struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
	URL  string `json:"url"`
}

// Results is a section whose shape nodeproof does not own (the plugin
// check's runs, the conformance comparisons): an array of objects, kept
// verbatim for report.json and flattened into a Table for the pages.
type Results struct {
	rows []json.RawMessage
	Table
}

// MarshalJSON writes the objects as they were read.
func (r *Results) MarshalJSON() ([]byte, error) {
	return json.Marshal(r.rows)
}

// ParseResults reads a JSON array of objects into a section.
func ParseResults(data []byte) (*Results, error) {
	rows, table, err := ParseTable(data)
	if err != nil {
		return nil, err
	}
	return &Results{rows: rows, Table: table}, nil
}

// Conformance is the conformance section: the comparisons as written, and
// what the verdict and the matrix read of each.
type Conformance struct {
	Results
	// Rows are the comparisons' functions and mismatches, decoded once
	// when the section is read.
	Rows []ConformanceRow
}

// ConformanceRow is what the report reads of one conformance comparison
// (the conformance module's Result); the section shows the whole object.
type ConformanceRow struct {
	// Function names the function compared with upstream's.
	Function string `json:"function"`
	// Mismatches counts the executions whose outputs differed without a
	// listed deviation; any makes the report fail.
	Mismatches int `json:"mismatches"`
}

// ParseConformance reads the conformance module's JSON array of results.
// An object without a function is shown but not counted.
func ParseConformance(data []byte) (*Conformance, error) {
	results, err := ParseResults(data)
	if err != nil {
		return nil, err
	}
	c := &Conformance{Results: *results}
	for _, raw := range results.rows {
		var r ConformanceRow
		if json.Unmarshal(raw, &r) == nil && r.Function != "" {
			c.Rows = append(c.Rows, r)
		}
	}
	return c, nil
}
