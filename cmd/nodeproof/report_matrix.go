package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/nodeproof/nodeproof/inventory"
)

// The layers of the coverage matrix, one column each, in the order a
// reviewer reads them: from the code, through models and generated tests,
// to real I/O, upstream's own code and the tests' measured power.
var matrixLayers = []string{
	"core", "reference model", "state-machine suite", "fuzz targets", "real-I/O integration",
	"linearizability", "conformance against upstream", "mutants killed",
}

// Cell states, which the page colours and report.json keeps.
const (
	cellPassed   = "passed"
	cellFailed   = "failed"
	cellBuilt    = "built"     // present in the tree; the report does not run it
	cellNotRun   = "not run"   // present, but its results were not given
	cellNotBuilt = "not built" // nothing in the tree at this layer
)

// matrixRow is one subsystem of the coverage matrix.
type matrixRow struct {
	Subsystem string       `json:"subsystem"`
	Cells     []matrixCell `json:"cells"`
}

// matrixCell is a figure that links to the section that explains it.
type matrixCell struct {
	Layer  string `json:"layer"`
	Text   string `json:"text"`
	Status string `json:"status"`
	Link   string `json:"link,omitempty"` // a fragment of index.html, "#suite-cgroups"
}

// notRun is an optional section the report did not include, and the
// command that produces it.
type notRun struct {
	Section string `json:"section"`
	Command string `json:"command"`
	// Writes is the file the command leaves for the report to include.
	Writes string `json:"writes,omitempty"`
}

// conformanceRow is what the matrix reads of a conformance result; the
// section itself shows the rows as they are.
type conformanceRow struct {
	Function   string `json:"function"`
	Mismatches int    `json:"mismatches"`
}

// withSuiteSubsystems adds a row for each suite whose subsystem the
// inventory does not know (a suite added since the inventory was
// generated), so that no suite's result is missing from the matrix.
func withSuiteSubsystems(subsystems []inventory.Subsystem, suites []suiteReport) []inventory.Subsystem {
	known := map[string]int{}
	for i, s := range subsystems {
		known[s.Name] = i
	}
	for _, sr := range suites {
		i, ok := known[sr.Subsystem]
		if !ok {
			known[sr.Subsystem] = len(subsystems)
			subsystems = append(subsystems, inventory.Subsystem{Name: sr.Subsystem, Suites: []string{sr.Name}})
			continue
		}
		if !slices.Contains(subsystems[i].Suites, sr.Name) {
			subsystems[i].Suites = append(subsystems[i].Suites, sr.Name)
		}
	}
	return subsystems
}

// buildMatrix lays out one row per subsystem of the inventory, with the
// figures of what this report ran or was given.
func buildMatrix(subsystems []inventory.Subsystem, data *reportData) []matrixRow {
	conformance := conformanceResults(data.Conformance)
	rows := make([]matrixRow, 0, len(subsystems))
	for _, s := range subsystems {
		inv := "#inventory-" + s.Name
		row := matrixRow{Subsystem: s.Name}
		row.Cells = append(row.Cells,
			builtCell(s.CorePackages, "package", inv),
			builtCell(s.Models, "model", inv),
			suiteCell(s, data.Suites),
			builtCell(s.FuzzTargets, "target", inv),
			builtCell(s.IntegrationTests, "test", inv),
			linearizabilityCell(s, data.Linearizability),
			conformanceCell(s, data.Conformance != nil, conformance),
			mutantCell(s, data.Mutants),
		)
		for i := range row.Cells {
			row.Cells[i].Layer = matrixLayers[i]
		}
		rows = append(rows, row)
	}
	return rows
}

// count is "1 test", "3 tests".
func count(n int, noun string) string {
	return fmt.Sprintf("%d %s", n, plural(n, noun, noun+"s"))
}

func notBuilt() matrixCell { return matrixCell{Text: cellNotBuilt, Status: cellNotBuilt} }

func builtCell(items []string, noun, link string) matrixCell {
	if len(items) == 0 {
		return notBuilt()
	}
	return matrixCell{Text: count(len(items), noun), Status: cellBuilt, Link: link}
}

func suiteCell(s inventory.Subsystem, suites []suiteReport) matrixCell {
	if len(s.Suites) == 0 {
		return notBuilt()
	}
	var ran []suiteReport
	for _, sr := range suites {
		for _, name := range s.Suites {
			if sr.Name == name {
				ran = append(ran, sr)
			}
		}
	}
	if len(ran) == 0 {
		return matrixCell{Text: count(len(s.Suites), "suite") + ", not run", Status: cellNotRun, Link: "#inventory-" + s.Name}
	}
	cell := matrixCell{Status: cellPassed, Link: "#suite-" + ran[0].Name}
	checks := 0
	for _, sr := range ran {
		checks += sr.Checks
		if !sr.Passed {
			cell.Status = cellFailed
		}
	}
	cell.Text = fmt.Sprintf("%s, %s", count(checks, "check"), cell.Status)
	return cell
}

func linearizabilityCell(s inventory.Subsystem, section *tableSection) matrixCell {
	if len(s.Linearizability) == 0 {
		return notBuilt()
	}
	if section == nil {
		return matrixCell{Text: "not run", Status: cellNotRun, Link: "#not-run"}
	}
	ok := 0
	for _, raw := range section.rows {
		var r struct {
			Result string `json:"result"`
		}
		if json.Unmarshal(raw, &r) == nil && r.Result == "Ok" {
			ok++
		}
	}
	cell := matrixCell{Text: fmt.Sprintf("%d/%d histories linearizable", ok, len(section.rows)), Status: cellPassed, Link: "#linearizability"}
	if ok < len(section.rows) {
		cell.Status = cellFailed
	}
	return cell
}

func conformanceCell(s inventory.Subsystem, given bool, results map[string]conformanceRow) matrixCell {
	if len(s.Conformance) == 0 {
		return notBuilt()
	}
	if !given {
		return matrixCell{Text: count(len(s.Conformance), "function") + ", not run", Status: cellNotRun, Link: "#not-run"}
	}
	agree, ran := 0, 0
	for _, name := range s.Conformance {
		if r, ok := results[name]; ok {
			ran++
			if r.Mismatches == 0 {
				agree++
			}
		}
	}
	return resultCell(agree, ran, len(s.Conformance), "functions agree", "#conformance")
}

func mutantCell(s inventory.Subsystem, mutants []mutantRow) matrixCell {
	if len(s.Mutants) == 0 {
		return notBuilt()
	}
	if mutants == nil {
		return matrixCell{Text: count(len(s.Mutants), "mutant") + ", not run", Status: cellNotRun, Link: "#not-run"}
	}
	killed, ran := 0, 0
	for _, m := range mutants {
		if mutantSubsystem(m) != s.Name {
			continue
		}
		ran++
		if m.Killed {
			killed++
		}
	}
	return resultCell(killed, ran, len(s.Mutants), "killed", "#mutants")
}

// resultCell is the cell of a layer whose expected results came back ran
// times, good of them passing: failed when one that ran did not pass, not
// run when some did not come back.
func resultCell(good, ran, expected int, what, link string) matrixCell {
	cell := matrixCell{Text: fmt.Sprintf("%d/%d %s", good, expected, what), Status: cellPassed, Link: link}
	switch {
	case good < ran:
		cell.Status = cellFailed
	case ran < expected:
		cell.Status = cellNotRun
		cell.Text += fmt.Sprintf(" (%d not run)", expected-ran)
	}
	return cell
}

// mutantSubsystem places a kill matrix row by the inventory, falling back to
// the row's own subsystem for a mutant the inventory does not know.
func mutantSubsystem(m mutantRow) string {
	if s := inventory.OfMutant(m.ID); s != "" {
		return s
	}
	return m.Subsystem
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

// joinItems is an inventory line for Markdown and the terminal.
func joinItems(items []string) string { return strings.Join(items, ", ") }
