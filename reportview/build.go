package reportview

import (
	"fmt"
	"slices"
	"sort"

	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/inventory"
	"github.com/nodeproof/nodeproof/linearizability"
	"github.com/nodeproof/nodeproof/mutants"
	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// NewSuite converts the outcome of properties.Run for the report.
func NewSuite(res properties.Result) Suite {
	sr := Suite{
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
		ir := Invariant{ID: inv.ID, Statement: inv.Statement, Source: cite.Join(inv.Sources), Sources: Sources(inv.Sources),
			Checked: res.Tally.Checked[inv.ID], Applied: res.Tally.Applied[inv.ID], Kind: inv.Kind.String(),
			Breaches: res.Tally.Breaches[inv.ID], FirstBreach: res.Tally.FirstBreach[inv.ID]}
		if res.Failure != nil && res.Failure.Invariant == inv.ID {
			ir.Violations = 1
		}
		sr.Invariants = append(sr.Invariants, ir)
	}
	sr.Statistics = []Statistic{}
	names := make([]string, 0, len(res.Tally.Stats))
	for name := range res.Tally.Stats {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		st := res.Tally.Stats[name]
		sr.Statistics = append(sr.Statistics, Statistic{Name: name, Samples: st.Samples,
			Mean: phrase.RoundMicro(st.Mean()), Max: phrase.RoundMicro(st.Max), Nonzero: st.Nonzero})
	}
	if f := res.Failure; f != nil {
		sr.Failure = &Failure{Invariant: f.Invariant, Message: f.Message, Steps: f.Steps, Replay: f.Replay}
	}
	return sr
}

// Finish derives what the report concludes from what it holds: the known
// findings and what the suites saw of them, the coverage matrix over
// subsystems, the list of what did not run and the verdict. histories is
// what --histories asked for, which the not-run list's command repeats.
func (r *Report) Finish(subsystems []inventory.Subsystem, known []verify.Finding, histories int) {
	r.Findings = newFindings(known, r.Suites, r.Searches)
	m := coverage.Build(subsystems, r.coverageResults(histories))
	r.Inventory, r.Matrix, r.NotRun = m.Inventory, m.Rows, m.NotRun
	r.Passed = len(r.problems()) == 0
}

// Verdict is the report's conclusion: the banner at the top of every
// rendering.
type Verdict struct {
	// Headline says in one line whether the report passed, how many
	// problems it has and how much did not run.
	Headline string
	// Problems lists every failure, each with the line that acts on it.
	Problems []string
}

// Verdict words the verdict Finish reached.
func (r *Report) Verdict() Verdict {
	problems := r.problems()
	headline := "PASSED: every check this report ran passed"
	if !r.Passed {
		headline = "FAILED: " + phrase.Count(len(problems), "problem")
	}
	if len(r.NotRun) > 0 {
		headline += fmt.Sprintf("; %d not run", len(r.NotRun))
	}
	return Verdict{Headline: headline + ".", Problems: problems}
}

// problems lists what failed, in the order the page shows it: the one
// place that decides what fails a report.
func (r *Report) problems() []string {
	var problems []string
	if r.Campaign != nil {
		// A merged report lists every failed unit of every shard, where a
		// suite's row holds only its first counterexample.
		problems = r.Campaign.Problems()
	} else {
		for _, s := range r.Suites {
			if f := s.Failure; f != nil {
				problems = append(problems, "suite "+s.Name+": "+f.Invariant+" violated; replay: "+f.Replay)
			} else if !s.Passed {
				problems = append(problems, "suite "+s.Name+" failed")
			}
		}
		if r.Sim != nil {
			for _, v := range r.Sim.Violations {
				problems = append(problems, fmt.Sprintf("sim: seed %d: %s violated; replay: %s", v.Seed, v.Invariant, v.Replay))
			}
		}
	}
	if r.Node != nil {
		for _, v := range r.Node.Violations {
			problems = append(problems, fmt.Sprintf("real kubelet: seed %d violated a property; replay: %s", v.Seed, v.Replay))
		}
		if n := r.Node.FidelityBugs(); n > 0 {
			problems = append(problems, fmt.Sprintf("real kubelet: the simulation diverged from the node %d times where no known limit explains it (a fidelity bug)", n))
		}
	}
	for _, h := range r.Linearizability {
		if !h.Passed() {
			problems = append(problems, "linearizability: the history of "+h.History+" is "+h.Result)
		}
	}
	var differ []string
	if r.Conformance != nil {
		for _, c := range r.Conformance.Rows {
			if c.Mismatches > 0 {
				differ = append(differ, "conformance: "+c.Function+" differs from upstream")
			}
		}
	}
	slices.Sort(differ)
	problems = append(problems, slices.Compact(differ)...)
	if r.Upstream != nil {
		for _, f := range r.Upstream.Failures() {
			problems = append(problems, "upstream releases: "+f)
		}
	}
	problems = append(problems, findingProblems(r.Findings, r.Searches != nil)...)
	for _, m := range r.Mutants {
		if !m.Killed {
			problems = append(problems, "mutant "+m.ID+" survived")
		}
	}
	return problems
}

// commands say how to produce each part a report can lack; histories is
// what --histories asked for.
func commands(histories int) coverage.Commands {
	return coverage.Commands{
		Suites:          coverage.Command{Run: "nodeproof report"},
		FindingsSearch:  coverage.Command{Run: "make findings", Writes: DefaultFindingsFile},
		Sim:             coverage.Command{Run: fmt.Sprintf("nodeproof report --sim-seeds %d", DefaultSimSeeds)},
		Node:            coverage.Command{Run: "make node-e2e", Writes: DefaultNodeFile},
		Linearizability: coverage.Command{Run: fmt.Sprintf("nodeproof report --histories %d", max(histories, 3))},
		Conformance:     coverage.Command{Run: "make conformance", Writes: DefaultConformanceFile},
		Upstream:        coverage.Command{Run: "make upstream-matrix", Writes: DefaultUpstreamFile},
		PluginCheck:     coverage.Command{Run: "make conformance", Writes: DefaultPluginCheckFile},
		Mutants:         coverage.Command{Run: "make mutants", Writes: DefaultMutantsFile},
	}
}

// coverageResults is what the matrix reads of the report.
func (r *Report) coverageResults(histories int) coverage.Results {
	c := coverage.Results{Findings: len(r.Findings), FindingsSearched: r.Searches != nil, Sim: r.Sim != nil, Node: r.Node != nil,
		Upstream: r.Upstream != nil, PluginCheck: r.PluginCheck != nil, How: commands(histories)}
	if r.Linearizability != nil {
		c.Linearizability = []bool{}
		for _, h := range r.Linearizability {
			c.Linearizability = append(c.Linearizability, h.Passed())
		}
	}
	for _, s := range r.Suites {
		c.Suites = append(c.Suites, coverage.Suite{Name: s.Name, Subsystem: s.Subsystem, Checks: s.Checks, Passed: s.Passed})
	}
	if r.Conformance != nil {
		c.Conformance = map[string]int{}
		for _, row := range r.Conformance.Rows {
			c.Conformance[row.Function] = row.Mismatches
		}
	}
	if r.Mutants != nil {
		c.Mutants = []coverage.Mutant{}
		for _, m := range r.Mutants {
			c.Mutants = append(c.Mutants, coverage.Mutant{ID: m.ID, Subsystem: m.Subsystem, Killed: m.Killed})
		}
	}
	return c
}

// LinearizabilityTable lays the histories out for the pages: a column per
// field of linearizability.Result, the visualization and replay columns
// only when a history has them.
func LinearizabilityTable(results []linearizability.Result) Table {
	var t Table
	visualization, replay := false, false
	for _, r := range results {
		visualization = visualization || r.Visualization != ""
		replay = replay || r.Replay != ""
	}
	t.Columns = []string{"history", "clients", "operations", "partitions", "unknown_outcomes", "faults", "check_seconds", "result"}
	if visualization {
		t.Columns = append(t.Columns, "visualization")
	}
	if replay {
		t.Columns = append(t.Columns, "replay")
	}
	for _, c := range t.Columns {
		t.Headings = append(t.Headings, Heading(c))
	}
	for _, r := range results {
		cells := []string{r.History, fmt.Sprint(r.Clients), fmt.Sprint(r.Operations), fmt.Sprint(r.Partitions),
			fmt.Sprint(r.Unknown), fmt.Sprint(r.Faults), fmt.Sprint(r.CheckSeconds), r.Result}
		figures := []string{r.History, Number(float64(r.Clients)), Number(float64(r.Operations)), Number(float64(r.Partitions)),
			Number(float64(r.Unknown)), Number(float64(r.Faults)), Duration(r.CheckSeconds), r.Result}
		if visualization {
			cells, figures = append(cells, r.Visualization), append(figures, r.Visualization)
		}
		if replay {
			cells, figures = append(cells, r.Replay), append(figures, r.Replay)
		}
		t.Cells = append(t.Cells, cells)
		t.Figures = append(t.Figures, figures)
	}
	return t
}

// counterexamples counts the failures that come with a counterexample to
// show under Failures: a suite's, or a simulated seed's.
func (r *Report) counterexamples() int {
	n := 0
	for _, s := range r.Suites {
		if s.Failure != nil {
			n++
		}
	}
	if r.Sim != nil {
		n += len(r.Sim.Violations)
	}
	return n
}

// killed counts the mutants killed.
func killed(rows []mutants.Row) int {
	n := 0
	for _, m := range rows {
		if m.Killed {
			n++
		}
	}
	return n
}

// notRunEntry is the entry with that ID; nil when the report lacks
// nothing of the kind.
func notRunEntry(list []coverage.NotRun, id string) *coverage.NotRun {
	for i := range list {
		if list[i].ID == id {
			return &list[i]
		}
	}
	return nil
}
