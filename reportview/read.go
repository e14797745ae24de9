package reportview

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/nodeproof/nodeproof/linearizability"
	"github.com/nodeproof/nodeproof/mutants"
	"github.com/nodeproof/nodeproof/realkubelet/sweep"
	"github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/simreport"
	"github.com/nodeproof/nodeproof/upstream"
)

// The places other make targets leave their results, which nodeproof
// report includes without being told, and which the not-run list names.
const (
	DefaultMutantsFile     = "report/mutants.json"     // make mutants
	DefaultConformanceFile = "report/conformance.json" // make conformance
	DefaultPluginCheckFile = "report/plugincheck.json" // make conformance, the plugin checker's runs
	DefaultSimFile         = "report/sim.json"         // make sim
	DefaultFindingsFile    = "report/findings.json"    // make findings
	DefaultNodeFile        = "report/node.json"        // make node-e2e, nodeproof node's sweep
	DefaultUpstreamFile    = "report/upstream.json"    // make upstream-matrix, nodeproof upstream's release matrix
)

// NoResults is the complaint about a results file that holds none (null,
// []): shown, it would read as a section that ran and found nothing, and
// take it off the not-run list.
const NoResults = "no results (null or an empty array): a run that produced nothing is not a section that passed; run its make target again"

// LoadMutants reads a kill matrix written by nodeproof mutants --json.
func LoadMutants(path string) ([]mutants.Row, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows []mutants.Row
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("%s: not a kill matrix (an array of {id, subsystem, source, killed, killed_by, seconds}): %v", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: %s", path, NoResults)
	}
	for i, r := range rows {
		if r.ID == "" {
			return nil, fmt.Errorf("%s: element %d: id is required", path, i)
		}
	}
	return rows, nil
}

// LoadResults reads a JSON array of objects for a section whose shape the
// report does not own (the plugin check).
func LoadResults(path string) (*Results, error) {
	return load(path, ParseResults, func(r *Results) int { return len(r.rows) })
}

// LoadConformance reads the conformance module's results.
func LoadConformance(path string) (*Conformance, error) {
	return load(path, ParseConformance, func(c *Conformance) int { return len(c.rows) })
}

// LoadLinearizability reads linearizability results, a JSON array of the
// objects linearizability.Result encodes; an unknown key is refused, so
// that a file from another tool is not taken for one.
func LoadLinearizability(path string) ([]linearizability.Result, error) {
	parse := func(data []byte) ([]linearizability.Result, error) {
		// The shape first, for the same words as the other sections'.
		if _, _, err := ParseTable(data); err != nil {
			return nil, err
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		var results []linearizability.Result
		if err := dec.Decode(&results); err != nil {
			return nil, fmt.Errorf("want linearizability results: %v", err)
		}
		return results, nil
	}
	return load(path, parse, func(r []linearizability.Result) int { return len(r) })
}

// load reads path with parse, naming the file in every error and refusing
// a file that holds no results.
func load[T any](path string, parse func([]byte) (T, error), count func(T) int) (T, error) {
	var none T
	data, err := os.ReadFile(path)
	if err != nil {
		return none, err
	}
	t, err := parse(data)
	if err != nil {
		return none, fmt.Errorf("%s: %v", path, err)
	}
	if count(t) == 0 {
		return none, fmt.Errorf("%s: %s", path, NoResults)
	}
	return t, nil
}

// LoadSim reads a sweep nodeproof sim --json wrote. The file is decoded
// strictly and its totals checked against its runs, so that a hand-edited
// or truncated file cannot make the report claim a sweep that did not
// happen.
func LoadSim(path string) (*simreport.Section, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s simreport.Section
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: want the JSON object nodeproof sim --json writes: %v", path, err)
	}
	events := 0
	for _, r := range s.Runs {
		events += r.Events
	}
	switch {
	case s.Seeds <= 0 || len(s.Runs) != s.Seeds:
		return nil, fmt.Errorf("%s: seeds is %d but the file holds %d runs", path, s.Seeds, len(s.Runs))
	case events != s.Events:
		return nil, fmt.Errorf("%s: events is %d but the runs add up to %d", path, s.Events, events)
	case s.Passed != (len(s.Violations) == 0):
		return nil, fmt.Errorf("%s: passed is %v with %d violations", path, s.Passed, len(s.Violations))
	case math.IsNaN(s.Hours) || s.Hours <= 0 || s.Hours > sim.MaxHours:
		return nil, fmt.Errorf("%s: hours: %v is not a simulated duration (more than 0, at most %d)", path, s.Hours, sim.MaxHours)
	}
	for i, r := range s.Runs {
		switch {
		case s.Passed && !r.Passed:
			return nil, fmt.Errorf("%s: runs[%d]: passed is false under a total that passed", path, i)
		case r.SimulatedHours < 0:
			return nil, fmt.Errorf("%s: runs[%d].simulated_hours: %v is negative", path, i, r.SimulatedHours)
		case r.SimulatedHours > s.Hours:
			return nil, fmt.Errorf("%s: runs[%d].simulated_hours: %v exceeds the %v hours a seed runs", path, i, r.SimulatedHours, s.Hours)
		}
	}
	return &s, nil
}

// LoadNode reads a sweep on the real kubelet that nodeproof node --json
// wrote (make node-e2e). Like LoadSim it decodes strictly, naming an
// unknown field, and checks the totals against what they count, so that a
// truncated or hand-edited file cannot show a sweep that did not happen.
func LoadNode(path string) (*sweep.Summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s *sweep.Summary
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: want the JSON object nodeproof node --json writes: %v", path, err)
	}
	if s == nil || s.Scenarios == 0 {
		return nil, fmt.Errorf("%s: %s", path, NoResults)
	}
	kinds := 0
	for _, n := range s.Kinds {
		kinds += n
	}
	switch {
	case s.FirstSeed == 0 || s.LastSeed < s.FirstSeed:
		return nil, fmt.Errorf("%s: first_seed %d, last_seed %d: not a range of seeds from 1", path, s.FirstSeed, s.LastSeed)
	case s.Scenarios < int(s.LastSeed-s.FirstSeed+1):
		return nil, fmt.Errorf("%s: scenarios: %d, fewer than the %d seeds", path, s.Scenarios, s.LastSeed-s.FirstSeed+1)
	case kinds != s.Steps:
		return nil, fmt.Errorf("%s: steps is %d but kinds add up to %d", path, s.Steps, kinds)
	case len(s.Checks) == 0:
		return nil, fmt.Errorf("%s: checks: none, but every step checks every property", path)
	case s.Passed != (len(s.Violations) == 0 && s.FidelityBugs() == 0):
		return nil, fmt.Errorf("%s: passed is %v with %d violations and %d divergences of class %q", path, s.Passed, len(s.Violations), s.FidelityBugs(), sweep.FidelityBug)
	}
	for i, c := range s.Checks {
		if c.ID == "" || c.Applied > c.Checked {
			return nil, fmt.Errorf("%s: checks[%d]: id %q, applied %d of %d checked: want an id and applied at most checked", path, i, c.ID, c.Applied, c.Checked)
		}
	}
	for i, v := range s.Violations {
		if v.Replay == "" || v.Report == "" {
			return nil, fmt.Errorf("%s: violations[%d]: report and replay are required", path, i)
		}
	}
	return s, nil
}

// LoadUpstream reads the release matrix nodeproof upstream --json wrote
// (make upstream-matrix). It decodes strictly and checks that every row
// has one cell per column, in the columns' order, in a state its kind of
// row can take, and a replay line on every cell that ran: the section
// lays the cells out under the columns and the verdict reads their
// states, so a hand-edited or truncated file cannot shift or invent one.
func LoadUpstream(path string) (*upstream.Matrix, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m *upstream.Matrix
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: want the JSON object nodeproof upstream --json writes: %v", path, err)
	}
	if m == nil || len(m.Columns) == 0 {
		return nil, fmt.Errorf("%s: %s", path, NoResults)
	}
	if err := checkMatrix(m); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return m, nil
}

// The states each kind of row takes, in the words of their errors.
var (
	findingStates  = []string{upstream.Present, upstream.Absent, upstream.Mixed, upstream.NotApplicable, upstream.Broken, upstream.NotRun}
	contractStates = []string{upstream.Breached, upstream.Held, upstream.NotApplicable, upstream.Broken, upstream.NotRun}
	testStates     = []string{upstream.Agrees, upstream.Differs, upstream.Broken, upstream.NotRun}
)

// checkMatrix says what is wrong with a decoded matrix, naming the field
// as the JSON spells it and the rule it breaks.
func checkMatrix(m *upstream.Matrix) error {
	if m.Modelled == "" {
		return errors.New("modelled: required (the release nodeproof's core models)")
	}
	var releases []string
	for i, c := range m.Columns {
		switch {
		case c.Release == "":
			return fmt.Errorf("columns[%d].release: required", i)
		case slices.Contains(releases, c.Release):
			return fmt.Errorf("columns[%d].release: %q is also column %d's: one column a release", i, c.Release, slices.Index(releases, c.Release))
		case c.BuildSeconds < 0 || c.RunSeconds < 0:
			return fmt.Errorf("columns[%d]: build_seconds %v, run_seconds %v: a duration is not negative", i, c.BuildSeconds, c.RunSeconds)
		}
		for j, t := range c.Tests {
			if t.Name == "" {
				return fmt.Errorf("columns[%d].tests[%d].name: required", i, j)
			}
		}
		releases = append(releases, c.Release)
	}
	for i, row := range m.Findings {
		field := fmt.Sprintf("findings[%d]", i)
		if row.ID == "" {
			return fmt.Errorf("%s.id: required", field)
		}
		for _, r := range row.Contradicted {
			if !slices.Contains(releases, r) {
				return fmt.Errorf("%s.contradicted: %q is not one of the columns (%s)", field, r, strings.Join(releases, ", "))
			}
		}
		if err := checkCells(field, row.Cells, releases, findingStates); err != nil {
			return err
		}
	}
	for i, row := range m.Contracts {
		field := fmt.Sprintf("contracts[%d]", i)
		if row.ID == "" {
			return fmt.Errorf("%s.id: required", field)
		}
		if err := checkCells(field, row.Cells, releases, contractStates); err != nil {
			return err
		}
	}
	for i, row := range m.Tests {
		field := fmt.Sprintf("tests[%d]", i)
		if row.Test == "" {
			return fmt.Errorf("%s.test: required", field)
		}
		if err := checkCells(field, row.Cells, releases, testStates); err != nil {
			return err
		}
	}
	return nil
}

// checkCells holds a row's cells to the columns: one each, in their
// order, in one of states, with a replay line when the test ran.
func checkCells(field string, cells []upstream.Cell, releases, states []string) error {
	if len(cells) != len(releases) {
		return fmt.Errorf("%s.cells: %d cells for %d columns: want one cell a column", field, len(cells), len(releases))
	}
	for j, c := range cells {
		switch {
		case !slices.Contains(releases, c.Release):
			return fmt.Errorf("%s.cells[%d].release: %q is not one of the columns (%s)", field, j, c.Release, strings.Join(releases, ", "))
		case c.Release != releases[j]:
			return fmt.Errorf("%s.cells[%d].release: %q is column %d's, not column %d's (%s): cells follow the columns' order", field, j, c.Release, slices.Index(releases, c.Release), j, releases[j])
		case !slices.Contains(states, c.State):
			return fmt.Errorf("%s.cells[%d].state: %q is not one of %s", field, j, c.State, strings.Join(states, ", "))
		case c.State != upstream.NotRun && c.Replay == "":
			return fmt.Errorf("%s.cells[%d].replay: required on a cell that ran (state %q)", field, j, c.State)
		}
	}
	return nil
}
