package coverage

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/inventory"
)

var how = Commands{
	Suites:          Command{Run: "nodeproof report"},
	FindingsSearch:  Command{Run: "make findings", Writes: "report/findings.json"},
	Sim:             Command{Run: "nodeproof report --sim-seeds 2"},
	Node:            Command{Run: "make node-e2e", Writes: "report/node.json"},
	Linearizability: Command{Run: "nodeproof report --histories 3"},
	Conformance:     Command{Run: "make conformance", Writes: "report/conformance.json"},
	Upstream:        Command{Run: "make upstream-matrix", Writes: "report/upstream.json"},
	PluginCheck:     Command{Run: "make conformance", Writes: "report/plugincheck.json"},
	Mutants:         Command{Run: "make mutants", Writes: "report/mutants.json"},
}

// testInventory has a subsystem with two suites and every layer built, one
// with only a core, and mutant IDs the real inventory does not know.
var testInventory = []inventory.Subsystem{
	{
		Name: "dm", CorePackages: []string{"core/dm"}, Models: []string{"models/dm"}, Suites: []string{"dm", "dm-contract"},
		FuzzTargets: []string{"fuzz.FuzzA"}, IntegrationTests: []string{"TestX"}, Linearizability: []string{"TestHistories"},
		Conformance: []string{"dm.A", "dm.B"}, Mutants: []string{"test-dm-1", "test-dm-2"},
	},
	{Name: "gc", CorePackages: []string{"core/gc"}},
}

// TestBuildPartialResults: results that lack some of a layer's (a suite
// --suite left out, a kill matrix or conformance file from an older tree)
// make the cell say how many did not run and list them, even when what did
// run failed. Before, a cell whose results failed hid what was missing.
func TestBuildPartialResults(t *testing.T) {
	m := Build(testInventory, Results{
		Suites:          []Suite{{Name: "dm", Subsystem: "dm", Checks: 30, Passed: false}},
		Sim:             true,
		Node:            true,
		Linearizability: []bool{true},
		Conformance:     map[string]int{"dm.A": 0},
		Upstream:        true,
		PluginCheck:     true,
		Mutants:         []Mutant{{ID: "test-dm-1", Subsystem: "dm", Killed: false}},
		How:             how,
	})
	assert.Equal(t, []NotRun{
		{ID: "suite-dm-contract", Section: "suite dm-contract", Command: "nodeproof report"},
		{ID: "conformance-dm", Section: "conformance comparison dm.B", Command: "make conformance", Writes: "report/conformance.json"},
		{ID: "mutants-dm", Section: "mutant test-dm-2", Command: "make mutants", Writes: "report/mutants.json"},
	}, m.NotRun)
	require.Len(t, m.Rows, 2)
	cells := m.Rows[0].Cells
	assert.Equal(t, Cell{Layer: "state-machine suite", Text: "30 checks, failed (1 suite not run)", Status: StatusFailed,
		Link: "#suite-dm", NotRun: []string{"suite-dm-contract"}}, cells[2])
	assert.Equal(t, Cell{Layer: "linearizability", Text: "1/1 histories linearizable", Status: StatusPassed, Link: "#linearizability"}, cells[5])
	assert.Equal(t, Cell{Layer: "conformance against upstream", Text: "1/2 functions agree (1 not run)", Status: StatusNotRun,
		Link: "#not-run-conformance-dm", NotRun: []string{"conformance-dm"}}, cells[6])
	assert.Equal(t, Cell{Layer: "mutants killed", Text: "0/2 killed (1 not run)", Status: StatusFailed,
		Link: "#mutants", NotRun: []string{"mutants-dm"}}, cells[7])
}

// TestBuildNothingGiven: every optional section has its entry, in page
// order, and the cells of a section not run point to it.
func TestBuildNothingGiven(t *testing.T) {
	m := Build(testInventory, Results{Findings: 2, How: how})
	var ids []string
	for _, n := range m.NotRun {
		ids = append(ids, n.ID)
	}
	assert.Equal(t, []string{FindingsSearchID, "suite-dm", "suite-dm-contract", SimID, NodeID, LinearizabilityID, ConformanceID, UpstreamID, PluginCheckID, MutantsID}, ids)
	cells := m.Rows[0].Cells
	assert.Equal(t, Cell{Layer: "state-machine suite", Text: "2 suites, not run", Status: StatusNotRun,
		Link: "#not-run-suite-dm", NotRun: []string{"suite-dm", "suite-dm-contract"}}, cells[2])
	assert.Equal(t, Cell{Layer: "linearizability", Text: "not run", Status: StatusNotRun,
		Link: "#not-run-linearizability", NotRun: []string{LinearizabilityID}}, cells[5])
	assert.Equal(t, "2 functions, not run", cells[6].Text)
	assert.Equal(t, "2 mutants, not run", cells[7].Text)
	assert.Equal(t, Cell{Layer: "core", Text: "1 package", Status: StatusBuilt, Link: "#inventory-gc"}, m.Rows[1].Cells[0])
	assert.Equal(t, Cell{Layer: "reference model", Text: StatusNotBuilt, Status: StatusNotBuilt}, m.Rows[1].Cells[1])
}

// TestBuildEverythingRan: nothing listed, and an empty list rather than
// none, which report.json writes as [] for CI to check.
func TestBuildEverythingRan(t *testing.T) {
	m := Build(testInventory, Results{
		Suites:           []Suite{{Name: "dm", Subsystem: "dm", Checks: 3, Passed: true}, {Name: "dm-contract", Subsystem: "dm", Checks: 4, Passed: true}},
		Findings:         1,
		FindingsSearched: true, Sim: true, Node: true, Linearizability: []bool{true}, Conformance: map[string]int{"dm.A": 0, "dm.B": 1},
		Upstream: true, PluginCheck: true, Mutants: []Mutant{{ID: "test-dm-1", Subsystem: "dm", Killed: true}, {ID: "test-dm-2", Subsystem: "dm", Killed: true}},
		How: how,
	})
	assert.NotNil(t, m.NotRun)
	assert.Empty(t, m.NotRun)
	cells := m.Rows[0].Cells
	assert.Equal(t, Cell{Layer: "state-machine suite", Text: "7 checks, passed", Status: StatusPassed, Link: "#suite-dm"}, cells[2])
	assert.Equal(t, Cell{Layer: "conformance against upstream", Text: "1/2 functions agree", Status: StatusFailed, Link: "#conformance"}, cells[6])
	assert.Equal(t, Cell{Layer: "mutants killed", Text: "2/2 killed", Status: StatusPassed, Link: "#mutants"}, cells[7])
}

// TestBuildAddsSuiteSubsystems: a suite of a subsystem the inventory does
// not know gets a row, and the caller's inventory is left alone.
func TestBuildAddsSuiteSubsystems(t *testing.T) {
	inv := []inventory.Subsystem{{Name: "dm", Suites: []string{"dm"}}}
	m := Build(inv, Results{Suites: []Suite{{Name: "dm-new", Subsystem: "dm", Checks: 1, Passed: true}, {Name: "x", Subsystem: "x", Checks: 2, Passed: true}}, How: how})
	assert.Equal(t, []inventory.Subsystem{{Name: "dm", Suites: []string{"dm", "dm-new"}}, {Name: "x", Suites: []string{"x"}}}, m.Inventory)
	assert.Equal(t, []string{"dm"}, inv[0].Suites, "the caller's inventory")
	assert.Equal(t, "1 check, passed (1 suite not run)", m.Rows[0].Cells[2].Text)
	assert.Equal(t, "2 checks, passed", m.Rows[1].Cells[2].Text)
}

// TestLegendExplainsEveryState: the legend beside the matrix explains each
// state a cell takes, once, and no state that none takes. Before, the page
// coloured five states and explained none (blue "built" read as a mystery).
func TestLegendExplainsEveryState(t *testing.T) {
	m := Build(testInventory, Results{
		Suites:          []Suite{{Name: "dm", Subsystem: "dm", Checks: 3, Passed: false}},
		Linearizability: []bool{true},
		How:             how,
	})
	seen := map[string]bool{}
	for _, row := range m.Rows {
		for _, c := range row.Cells {
			seen[c.Status] = true
		}
	}
	var explained []string
	for _, s := range Legend {
		assert.NotEmpty(t, s.Meaning, "the meaning of %q", s.Status)
		explained = append(explained, s.Status)
	}
	assert.ElementsMatch(t, []string{StatusPassed, StatusFailed, StatusBuilt, StatusNotRun, StatusNotBuilt}, slices.Collect(maps.Keys(seen)),
		"the states this matrix shows")
	assert.Equal(t, []string{StatusPassed, StatusFailed, StatusBuilt, StatusNotRun, StatusNotBuilt}, explained, "the legend's states, in reading order")
}

// legendHas reports whether the legend explains status.
func legendHas(status string) bool {
	return slices.ContainsFunc(Legend, func(s State) bool { return s.Status == status })
}

func TestWords(t *testing.T) {
	plain := func(s string) string { return s }
	code := func(s string) string { return "`" + s + "`" }
	assert.Equal(t, "mutants not run: run it with `make mutants`, which writes `report/mutants.json`.",
		NotRun{ID: MutantsID, Section: "mutants", Command: "make mutants", Writes: "report/mutants.json"}.Words(plain, code))
	assert.Equal(t, "suite dm not run: run it with `nodeproof report`.", NotRun{ID: "suite-dm", Section: "suite dm", Command: "nodeproof report"}.Words(plain, code))
	assert.Equal(t, "not-run-suite-dm", NotRun{ID: "suite-dm"}.Anchor())
}

// TestNotRunOneSourceOfTruth: whatever ran or was given, a cell says "not
// run" exactly when it names entries of the list, every entry it names is
// listed, the IDs are unique, and each entry is either a whole section or
// named by a cell, so that nothing the page shows goes uncounted and
// nothing counted goes unshown.
func TestNotRunOneSourceOfTruth(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var r Results
		r.How = how
		for _, name := range []string{"dm", "dm-contract", "other"} {
			if rapid.Bool().Draw(t, "ran "+name) {
				subsystem := "dm"
				if name == "other" {
					subsystem = "elsewhere"
				}
				r.Suites = append(r.Suites, Suite{Name: name, Subsystem: subsystem, Checks: 1, Passed: rapid.Bool().Draw(t, "passed")})
			}
		}
		r.Findings = rapid.IntRange(0, 2).Draw(t, "findings")
		r.FindingsSearched = rapid.Bool().Draw(t, "searched")
		r.Sim = rapid.Bool().Draw(t, "sim")
		r.Node = rapid.Bool().Draw(t, "node")
		r.Upstream = rapid.Bool().Draw(t, "upstream")
		r.PluginCheck = rapid.Bool().Draw(t, "plugin check")
		if rapid.Bool().Draw(t, "linearizability given") {
			r.Linearizability = rapid.SliceOf(rapid.Bool()).Draw(t, "linearizable")
		}
		if rapid.Bool().Draw(t, "conformance given") {
			r.Conformance = map[string]int{}
			for _, f := range []string{"dm.A", "dm.B", "unknown.C"} {
				if rapid.Bool().Draw(t, "compared "+f) {
					r.Conformance[f] = rapid.IntRange(0, 1).Draw(t, "mismatches")
				}
			}
		}
		if rapid.Bool().Draw(t, "mutants given") {
			r.Mutants = []Mutant{}
			for _, id := range []string{"test-dm-1", "test-dm-2", "test-unknown"} {
				if rapid.Bool().Draw(t, "ran "+id) {
					r.Mutants = append(r.Mutants, Mutant{ID: id, Subsystem: "dm", Killed: rapid.Bool().Draw(t, "killed")})
				}
			}
		}
		m := Build(testInventory, r)

		listed := map[string]bool{}
		for _, n := range m.NotRun {
			if listed[n.ID] {
				t.Fatalf("ID %s listed twice", n.ID)
			}
			listed[n.ID] = true
		}
		named := map[string]bool{}
		for _, row := range m.Rows {
			for _, c := range row.Cells {
				if strings.Contains(c.Text, "not run") != (len(c.NotRun) > 0) {
					t.Fatalf("%s %s: %q names %v", row.Subsystem, c.Layer, c.Text, c.NotRun)
				}
				if !legendHas(c.Status) {
					t.Fatalf("%s %s: status %q, which the legend does not explain", row.Subsystem, c.Layer, c.Status)
				}
				if (c.Status == StatusNotRun) && len(c.NotRun) == 0 {
					t.Fatalf("%s %s: status not run without an entry", row.Subsystem, c.Layer)
				}
				for _, id := range c.NotRun {
					if !listed[id] {
						t.Fatalf("%s %s names %s, which is not listed", row.Subsystem, c.Layer, id)
					}
					named[id] = true
				}
			}
		}
		sections := []string{FindingsSearchID, SimID, NodeID, LinearizabilityID, ConformanceID, UpstreamID, PluginCheckID, MutantsID}
		for _, n := range m.NotRun {
			if !named[n.ID] && !slices.Contains(sections, n.ID) {
				t.Fatalf("%s is listed, but neither a section nor named by a cell", n.ID)
			}
		}
		for id, missing := range map[string]bool{
			FindingsSearchID: r.Findings > 0 && !r.FindingsSearched, SimID: !r.Sim, NodeID: !r.Node, LinearizabilityID: r.Linearizability == nil,
			ConformanceID: r.Conformance == nil, UpstreamID: !r.Upstream, PluginCheckID: !r.PluginCheck, MutantsID: r.Mutants == nil,
		} {
			if listed[id] != missing {
				t.Fatalf("section %s: listed %v, missing %v", id, listed[id], missing)
			}
		}
	})
}
