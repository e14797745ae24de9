package upstream

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nodeproof/nodeproof/verify"
)

// The states of a matrix cell.
const (
	// Present: the finding's test showed the bug on the release.
	Present = "present"
	// Absent: the release keeps the promise the finding breaks.
	Absent = "absent"
	// Mixed: some of the test's cases showed the bug, some did not.
	Mixed = "mixed"
	// Breached, Held and NotApplicable: a contract property in a suite's
	// generated search with the release's code as the system under test
	// (not applicable: no case reached it). A finding is not applicable on
	// a release that lacks what it is about.
	Breached      = "breached"
	Held          = "held"
	NotApplicable = "not applicable"
	// Agrees and Differs: a comparison of nodeproof's core with the
	// release, or another conformance test, passed or failed.
	Agrees  = "agrees"
	Differs = "differs"
	// Broken: the test failed where it must not (a finding's harness, or
	// any test on the modelled release).
	Broken = "broken"
	// NotRun: the release was not run, did not build, or the test is not
	// in the conformance module.
	NotRun = "not run"
)

// Cell is one release's verdict on a row.
type Cell struct {
	Release string `json:"release"`
	State   string `json:"state"`
	Detail  string `json:"detail,omitempty"`
	// Replay runs the row's test against the release again; set on every
	// cell but a not-run one.
	Replay string `json:"replay,omitempty"`
}

// FindingRow is a confirmed finding across releases.
type FindingRow struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Test is the conformance test that confirms it; "" for a finding
	// confirmed on the real kubelet binary only.
	Test string `json:"test,omitempty"`
	// Stated is what docs/findings.md says of later releases
	// (verify.Finding.Releases); Contradicted names the releases whose
	// cell says otherwise.
	Stated       string   `json:"stated"`
	Contradicted []string `json:"contradicted,omitempty"`
	Cells        []Cell   `json:"cells"`
}

// ContractRow is a contract property of the suites run with each
// release's code as the system under test.
type ContractRow struct {
	ID    string `json:"id"`
	Cells []Cell `json:"cells"`
}

// TestRow is a conformance test that is not a finding's: a comparison of
// nodeproof's core with upstream, whose difference on another release is a
// behaviour change between releases.
type TestRow struct {
	Test  string `json:"test"`
	Cells []Cell `json:"cells"`
}

// Matrix is the release matrix.
type Matrix struct {
	Modelled  string        `json:"modelled"`
	Columns   []Column      `json:"columns"`
	Findings  []FindingRow  `json:"findings"`
	Contracts []ContractRow `json:"contracts"`
	Tests     []TestRow     `json:"tests"`
}

// Build makes the matrix of findings over the columns, oldest release
// first. The columns' tests stay in it, for the report's detail.
func Build(findings []verify.Finding, columns []Column) Matrix {
	columns = slices.Clone(columns)
	slices.SortFunc(columns, func(a, b Column) int { return order(a.Release) - order(b.Release) })
	m := Matrix{Modelled: Modelled, Columns: columns, Findings: []FindingRow{}, Contracts: []ContractRow{}, Tests: []TestRow{}}
	confirming := map[string]bool{}
	for _, f := range findings {
		row := FindingRow{ID: f.ID, Title: f.Title, Stated: f.Releases, Cells: []Cell{}}
		test, inModule := strings.CutPrefix(f.Confirmation, "conformance: ")
		if inModule {
			row.Test = test
			confirming[test] = true
		}
		for _, col := range columns {
			c := findingCell(f, row.Test, col)
			row.Cells = append(row.Cells, c)
			if contradicts(f.Releases, c) {
				row.Contradicted = append(row.Contradicted, c.Release)
			}
		}
		m.Findings = append(m.Findings, row)
	}
	ids := map[string]bool{}
	for _, col := range columns {
		for _, t := range col.Tests {
			for _, v := range t.Contracts {
				// A suite's search is a contract row, not a comparison.
				confirming[t.Name] = true
				ids[v.Property] = true
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		m.Contracts = append(m.Contracts, ContractRow{ID: id, Cells: cells(columns, func(col Column) Cell { return contractCell(id, col) })})
	}
	names := map[string]bool{}
	for _, col := range columns {
		for _, t := range col.Tests {
			if !confirming[t.Name] {
				names[t.Name] = true
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		m.Tests = append(m.Tests, TestRow{Test: name, Cells: cells(columns, func(col Column) Cell { return testCell(name, col) })})
	}
	return m
}

// cells is a row's cell for each column, in the columns' order.
func cells(columns []Column, cell func(Column) Cell) []Cell {
	row := []Cell{}
	for _, col := range columns {
		row = append(row, cell(col))
	}
	return row
}

// order is a release's place among Releases; an unknown one goes last.
func order(version string) int {
	if i := slices.Index(Versions(), version); i >= 0 {
		return i
	}
	return len(Releases)
}

func release(version string) Release {
	r, err := Find(version)
	if err != nil {
		return Release{Version: version}
	}
	return r
}

func findingCell(f verify.Finding, test string, col Column) Cell {
	c := Cell{Release: col.Release}
	if test == "" {
		c.State, c.Detail = NotRun, "confirmed on the real kubelet binary ("+f.Confirmation+"); the matrix runs the conformance module"
		return c
	}
	if col.Error != "" {
		c.State, c.Detail = NotRun, firstLineOf(col.Error)
		return c
	}
	i := slices.IndexFunc(col.Tests, func(t Test) bool { return t.Name == test })
	if i < 0 {
		c.State, c.Detail = NotRun, test+" did not run"
		return c
	}
	t := col.Tests[i]
	c.Replay = release(col.Release).Replay(test)
	if !t.Passed {
		c.State, c.Detail = Broken, t.Failure
		return c
	}
	var present, absent int
	var details []string
	for _, v := range t.Verdicts {
		if v.Finding != f.ID {
			continue
		}
		if v.Inapplicable != "" {
			c.State, c.Detail = NotApplicable, v.Inapplicable
			return c
		}
		if v.Present {
			present++
		} else {
			absent++
			details = append(details, v.Detail)
		}
	}
	switch {
	case present+absent == 0:
		c.State, c.Detail = Broken, test+" passed but logged no verdict on "+f.ID
	case absent == 0:
		c.State = Present
	case present == 0:
		c.State, c.Detail = Absent, strings.Join(details, "; ")
	default:
		c.State, c.Detail = Mixed, fmt.Sprintf("%d of %d cases show the bug; the others: %s", present, present+absent, strings.Join(details, "; "))
	}
	return c
}

// contractCell is the release's verdict on contract property id: from
// the test whose search logged it; broken when that test failed.
func contractCell(id string, col Column) Cell {
	c := Cell{Release: col.Release}
	if col.Error != "" {
		c.State, c.Detail = NotRun, firstLineOf(col.Error)
		return c
	}
	for _, t := range col.Tests {
		for _, v := range t.Contracts {
			if v.Property != id {
				continue
			}
			c.Replay = release(col.Release).Replay(v.Test)
			switch {
			case !t.Passed:
				c.State, c.Detail = Broken, t.Failure
			case v.Breached:
				c.State, c.Detail = Breached, fmt.Sprintf("checked %d, applied %d: %s", v.Checked, v.Applied, v.Detail)
			case v.Applied == 0 && v.Detail != "":
				c.State, c.Detail = NotApplicable, fmt.Sprintf("checked %d, applied in none: %s", v.Checked, v.Detail)
			case v.Applied == 0:
				c.State, c.Detail = NotApplicable, fmt.Sprintf("checked %d, applied in none: no generated case reached it", v.Checked)
			default:
				c.State, c.Detail = Held, fmt.Sprintf("checked %d, applied %d", v.Checked, v.Applied)
			}
			return c
		}
	}
	c.State, c.Detail = NotRun, "no search of "+id+" ran on this release"
	return c
}

func testCell(name string, col Column) Cell {
	c := Cell{Release: col.Release}
	if col.Error != "" {
		c.State, c.Detail = NotRun, firstLineOf(col.Error)
		return c
	}
	i := slices.IndexFunc(col.Tests, func(t Test) bool { return t.Name == name })
	if i < 0 {
		c.State, c.Detail = NotRun, name+" is not in this release's run"
		return c
	}
	c.Replay = release(col.Release).Replay(name)
	switch t := col.Tests[i]; {
	case t.Passed:
		c.State = Agrees
	case col.Release == Modelled:
		c.State, c.Detail = Broken, t.Failure
	default:
		c.State, c.Detail = Differs, t.Failure
	}
	return c
}

// contradicts says whether a cell says the opposite of what the finding's
// record states of its release ("still present in v1.37.2", "fixed in
// v1.37.2 by ...").
func contradicts(stated string, c Cell) bool {
	switch c.State {
	case Present:
		return strings.Contains(stated, "fixed in "+c.Release)
	case Absent:
		return strings.Contains(stated, "still present in "+c.Release)
	}
	return false
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Failures are what makes a matrix run fail: a broken cell (a test that
// failed on the modelled release, or a finding's harness that cannot drive
// a release), a release that did not build, and a finding whose record a
// cell contradicts. Differences of comparisons on other releases are not
// failures: they are the matrix's content.
func (m Matrix) Failures() []string {
	var out []string
	for _, col := range m.Columns {
		if col.Error != "" {
			out = append(out, fmt.Sprintf("%s: %s", col.Release, firstLineOf(col.Error)))
		}
	}
	for _, row := range m.Findings {
		for _, c := range row.Cells {
			if c.State == Broken {
				out = append(out, fmt.Sprintf("%s on %s: %s broke: %s", row.ID, c.Release, row.Test, FailureLine(c.Detail)))
			}
		}
		if len(row.Contradicted) > 0 {
			out = append(out, fmt.Sprintf("%s: the record says %q, the matrix says otherwise on %s", row.ID, row.Stated, strings.Join(row.Contradicted, ", ")))
		}
	}
	for _, row := range m.Contracts {
		for _, c := range row.Cells {
			if c.State == Broken {
				out = append(out, fmt.Sprintf("%s on %s: its search broke: %s", row.ID, c.Release, FailureLine(c.Detail)))
			}
		}
	}
	for _, row := range m.Tests {
		for _, c := range row.Cells {
			if c.State == Broken {
				out = append(out, fmt.Sprintf("%s failed on the modelled release %s", row.Test, c.Release))
			}
		}
	}
	return out
}
