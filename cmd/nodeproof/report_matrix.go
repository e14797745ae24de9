package main

import (
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"slices"

	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/inventory"
)

// reportCommands say how to produce each part a report can lack;
// histories is what --histories asked for.
func reportCommands(histories int) coverage.Commands {
	return coverage.Commands{
		Suites:          coverage.Command{Run: "nodeproof report"},
		FindingsSearch:  coverage.Command{Run: "make findings", Writes: defaultFindingsFile},
		Sim:             coverage.Command{Run: fmt.Sprintf("nodeproof report --sim-seeds %d", defaultReportSimSeeds)},
		Linearizability: coverage.Command{Run: fmt.Sprintf("nodeproof report --histories %d", max(histories, 3))},
		Conformance:     coverage.Command{Run: "make conformance", Writes: defaultConformanceFile},
		PluginCheck:     coverage.Command{Run: "make conformance", Writes: defaultPluginCheckFile},
		Mutants:         coverage.Command{Run: "make mutants", Writes: defaultMutantsFile},
	}
}

// coverageResults is what the matrix reads of the report.
func (d *reportData) coverageResults(histories int) coverage.Results {
	r := coverage.Results{Findings: len(d.Findings), FindingsSearched: d.searches != nil, Sim: d.Sim != nil,
		Linearizability: linearizable(d.Linearizability), PluginCheck: d.PluginCheck != nil, How: reportCommands(histories)}
	for _, s := range d.Suites {
		r.Suites = append(r.Suites, coverage.Suite{Name: s.Name, Subsystem: s.Subsystem, Checks: s.Checks, Passed: s.Passed})
	}
	if d.Conformance != nil {
		r.Conformance = map[string]int{}
		for function, row := range conformanceResults(d.Conformance) {
			r.Conformance[function] = row.Mismatches
		}
	}
	if d.Mutants != nil {
		r.Mutants = []coverage.Mutant{}
		for _, m := range d.Mutants {
			r.Mutants = append(r.Mutants, coverage.Mutant{ID: m.ID, Subsystem: m.Subsystem, Killed: m.Killed})
		}
	}
	return r
}

// linearizable says of each history whether it was linearizable; nil when
// the section is.
func linearizable(section *tableSection) []bool {
	if section == nil {
		return nil
	}
	result := slices.Index(section.Columns, "result")
	out := []bool{}
	for _, cells := range section.Cells {
		out = append(out, result >= 0 && cells[result] == "Ok")
	}
	return out
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

// notRunHTML words an entry for index.html.
func notRunHTML(n coverage.NotRun) template.HTML {
	return template.HTML(n.Words(html.EscapeString, func(s string) string { return "<code>" + html.EscapeString(s) + "</code>" }))
}

// notRunText words an entry for the terminal.
func notRunText(n coverage.NotRun) string {
	plain := func(s string) string { return s }
	return n.Words(plain, plain)
}

// conformanceRow is what the matrix reads of a conformance result; the
// section itself shows the rows as they are.
type conformanceRow struct {
	Function   string `json:"function"`
	Mismatches int    `json:"mismatches"`
}

func conformanceResults(section *tableSection) map[string]conformanceRow {
	out := map[string]conformanceRow{}
	if section == nil {
		return out
	}
	for _, raw := range section.rows {
		var r conformanceRow
		if json.Unmarshal(raw, &r) == nil && r.Function != "" {
			out[r.Function] = r
		}
	}
	return out
}

// conformancePassed reports whether no conformance result has a mismatch.
func conformancePassed(section *tableSection) bool {
	for _, r := range conformanceResults(section) {
		if r.Mismatches > 0 {
			return false
		}
	}
	return true
}

// inventoryLayers lists a subsystem's inventory for its section of the page,
// one line per layer that has something.
func inventoryLayers(s inventory.Subsystem) []inventoryLayer {
	var out []inventoryLayer
	for _, l := range []inventoryLayer{
		{"core", s.CorePackages}, {"reference model", s.Models}, {"state-machine suite", s.Suites},
		{"fuzz targets", s.FuzzTargets}, {"real-I/O integration", s.IntegrationTests},
		{"linearizability", s.Linearizability}, {"conformance against upstream", s.Conformance}, {"mutants", s.Mutants},
	} {
		if len(l.Items) > 0 {
			out = append(out, l)
		}
	}
	return out
}

type inventoryLayer struct {
	Layer string
	Items []string
}
