package coverage

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nodeproof/nodeproof/inventory"
	"github.com/nodeproof/nodeproof/phrase"
)

// Layers are the matrix's columns, in the order a reviewer reads them: from
// the code, through models and generated tests, to real I/O, upstream's own
// code and the tests' measured power.
var Layers = []string{
	"core", "reference model", "state-machine suite", "fuzz targets", "real-I/O integration",
	"linearizability", "conformance against upstream", "mutants killed",
}

// The states of a cell, which the page colours and report.json keeps.
const (
	StatusPassed   = "passed"
	StatusFailed   = "failed"
	StatusBuilt    = "built"     // present in the tree; the report does not run it
	StatusNotRun   = "not run"   // present, but its results, or some of them, were not given
	StatusNotBuilt = "not built" // nothing in the tree at this layer
)

// State is one state of a cell as the legend beside the matrix explains it.
type State struct {
	Status  string
	Meaning string
}

// Legend explains every state a cell can take, in the order a reviewer
// reads the matrix: what ran, what exists but this report does not run,
// what it lacks the results of, what does not exist. A cell in the tree's
// layers (core, models, fuzz targets, integration tests) is only ever
// built or not built: the report counts them, go test and make fuzz run
// them.
var Legend = []State{
	{StatusPassed, "ran in this report and passed"},
	{StatusFailed, "ran in this report and failed (the figure links to the failure)"},
	{StatusBuilt, "exists in the tree; this report counts it, go test and make fuzz run it"},
	{StatusNotRun, "exists, but this report lacks its results, or some of them (the figure links to the command that runs it)"},
	{StatusNotBuilt, "nothing in the tree at this layer"},
}

// The IDs of the entries for whole sections, by which a renderer finds what
// to say in a section the report lacks.
const (
	FindingsSearchID  = "findings-search"
	SimID             = "sim"
	NodeID            = "node"
	LinearizabilityID = "linearizability"
	ConformanceID     = "conformance"
	UpstreamID        = "upstream"
	PluginCheckID     = "plugin-check"
	MutantsID         = "mutants"
)

// Row is one subsystem of the matrix.
type Row struct {
	Subsystem string `json:"subsystem"`
	Cells     []Cell `json:"cells"`
}

// Cell is a figure that links to the section that explains it.
type Cell struct {
	Layer  string `json:"layer"`
	Text   string `json:"text"`
	Status string `json:"status"`
	// Link is a fragment of index.html, "#suite-cgroups".
	Link string `json:"link,omitempty"`
	// NotRun are the IDs of the entries for what the cell lacks: set
	// exactly when its text says "not run".
	NotRun []string `json:"not_run,omitempty"`
}

// NotRun is one entry of the list of what the report does not include: a
// section, a suite, or the results a subsystem's layer lacks.
type NotRun struct {
	// ID is unique in the list; the page's anchor for the entry is Anchor.
	ID string `json:"id"`
	// Section says what did not run, as every renderer words it:
	// "linearizability", "suite imagegc", "mutant pr-x".
	Section string `json:"section"`
	// Command produces it.
	Command string `json:"command"`
	// Writes is the file the command leaves for the report to include.
	Writes string `json:"writes,omitempty"`
}

// Anchor is the entry's fragment of index.html, without the "#".
func (n NotRun) Anchor() string { return "not-run-" + n.ID }

// Words say what did not run and how to run it, in the one wording of
// every renderer: text escapes words for the renderer and code marks a
// command or a file up.
func (n NotRun) Words(text, code func(string) string) string {
	s := text(n.Section+" not run: run it with ") + code(n.Command)
	if n.Writes != "" {
		s += text(", which writes ") + code(n.Writes)
	}
	return s + text(".")
}

// Command is how to produce a part of the report.
type Command struct {
	Run string
	// Writes is the file Run leaves for the report to include; empty when
	// the report runs it itself.
	Writes string
}

// Commands say how to produce each part of the report that can be missing;
// the command line knows its flags and make targets.
type Commands struct {
	Suites, FindingsSearch, Sim, Node, Linearizability, Conformance, Upstream, PluginCheck, Mutants Command
}

// Suite is a suite that ran, as the matrix reads it.
type Suite struct {
	Name, Subsystem string
	Checks          int
	Passed          bool
}

// Mutant is a row of the kill matrix, as the matrix reads it.
type Mutant struct {
	ID, Subsystem string
	Killed        bool
}

// Results are what a report ran or was given.
type Results struct {
	// Suites are the suites that ran.
	Suites []Suite
	// Findings counts the known findings; FindingsSearched says whether
	// the searches for them were given.
	Findings         int
	FindingsSearched bool
	Sim              bool
	// Node says whether a sweep on the real kubelet was given.
	Node bool
	// Linearizability holds, per history checked, whether it was
	// linearizable; nil when none was recorded or given.
	Linearizability []bool
	// Conformance holds each comparison's mismatches, by function; nil when
	// no results were given.
	Conformance map[string]int
	// Upstream says whether the release matrix (make upstream-matrix) was
	// given.
	Upstream    bool
	PluginCheck bool
	// Mutants is the kill matrix; nil when none was given.
	Mutants []Mutant
	How     Commands
}

// Matrix is the coverage matrix and the list of what did not run.
type Matrix struct {
	// Inventory is the inventory the matrix counts, with a row added for a
	// suite whose subsystem it did not know.
	Inventory []inventory.Subsystem
	Rows      []Row
	// NotRun is in page order: the findings search, the suites, the node
	// simulation, the real kubelet, linearizability, conformance, the
	// upstream releases, the plugin check, the mutants.
	NotRun []NotRun
}

// Build lays out one row per subsystem of the inventory, with the figures
// of what ran or was given, and lists what did not.
func Build(subsystems []inventory.Subsystem, r Results) Matrix {
	// Empty lists, not nil: report.json says [] for "nothing", which CI
	// reads to check that nothing was left not run.
	b := &builder{results: r, notRun: []NotRun{}}
	m := Matrix{Inventory: withSuites(subsystems, r.Suites), Rows: []Row{}}
	if r.Findings > 0 && !r.FindingsSearched {
		b.add(FindingsSearchID, "findings search", r.How.FindingsSearch)
	}
	suites := column(m.Inventory, b.suiteCell)
	if !r.Sim {
		b.add(SimID, "node simulation", r.How.Sim)
	}
	if !r.Node {
		b.add(NodeID, "real kubelet", r.How.Node)
	}
	if r.Linearizability == nil {
		b.add(LinearizabilityID, "linearizability", r.How.Linearizability)
	}
	linearizability := column(m.Inventory, b.linearizabilityCell)
	if r.Conformance == nil {
		b.add(ConformanceID, "conformance against upstream", r.How.Conformance)
	}
	conformance := column(m.Inventory, b.conformanceCell)
	if !r.Upstream {
		b.add(UpstreamID, "upstream releases", r.How.Upstream)
	}
	if !r.PluginCheck {
		b.add(PluginCheckID, "plugin check of plugins nobody here wrote", r.How.PluginCheck)
	}
	if r.Mutants == nil {
		b.add(MutantsID, "mutants", r.How.Mutants)
	}
	mutants := column(m.Inventory, b.mutantCell)
	for i, s := range m.Inventory {
		inv := "#inventory-" + s.Name
		row := Row{Subsystem: s.Name, Cells: []Cell{
			builtCell(s.CorePackages, "package", inv),
			builtCell(s.Models, "model", inv),
			suites[i],
			builtCell(s.FuzzTargets, "target", inv),
			builtCell(s.IntegrationTests, "test", inv),
			linearizability[i], conformance[i], mutants[i],
		}}
		for j := range row.Cells {
			row.Cells[j].Layer = Layers[j]
		}
		m.Rows = append(m.Rows, row)
	}
	m.NotRun = b.notRun
	return m
}

// builder collects the not-run entries as the cells ask for them.
type builder struct {
	results Results
	notRun  []NotRun
}

func (b *builder) add(id, section string, how Command) string {
	b.notRun = append(b.notRun, NotRun{ID: id, Section: section, Command: how.Run, Writes: how.Writes})
	return id
}

// column builds one layer's cells, subsystem by subsystem, so that the
// entries they add come in the matrix's row order.
func column(subsystems []inventory.Subsystem, cell func(inventory.Subsystem) Cell) []Cell {
	cells := make([]Cell, len(subsystems))
	for i, s := range subsystems {
		cells[i] = cell(s)
	}
	return cells
}

// withSuites adds a row for each suite whose subsystem the inventory does
// not know (a suite added since the inventory was generated), so that no
// suite's result is missing from the matrix.
func withSuites(subsystems []inventory.Subsystem, suites []Suite) []inventory.Subsystem {
	subsystems = slices.Clone(subsystems)
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
			subsystems[i].Suites = append(slices.Clone(subsystems[i].Suites), sr.Name)
		}
	}
	return subsystems
}

// named is "suite a", "suites a, b": the things an entry stands for.
func named(noun string, names []string) string {
	if len(names) > 1 {
		noun += "s"
	}
	return noun + " " + strings.Join(names, ", ")
}

func notBuilt() Cell { return Cell{Text: StatusNotBuilt, Status: StatusNotBuilt} }

func builtCell(items []string, noun, link string) Cell {
	if len(items) == 0 {
		return notBuilt()
	}
	return Cell{Text: phrase.Count(len(items), noun), Status: StatusBuilt, Link: link}
}

// notRunCell is the cell of a layer none of whose results came back.
func notRunCell(text string, ids ...string) Cell {
	return Cell{Text: text, Status: StatusNotRun, Link: "#" + NotRun{ID: ids[0]}.Anchor(), NotRun: ids}
}

func (b *builder) suiteCell(s inventory.Subsystem) Cell {
	if len(s.Suites) == 0 {
		return notBuilt()
	}
	var ran []Suite
	var missing []string
	for _, name := range s.Suites {
		i := slices.IndexFunc(b.results.Suites, func(sr Suite) bool { return sr.Name == name })
		if i < 0 {
			// One entry a suite: a finding names the suite that did not
			// run, and the entry's words name it the same way.
			missing = append(missing, b.add("suite-"+name, "suite "+name, b.results.How.Suites))
			continue
		}
		ran = append(ran, b.results.Suites[i])
	}
	if len(ran) == 0 {
		return notRunCell(phrase.Count(len(s.Suites), "suite")+", not run", missing...)
	}
	cell := Cell{Status: StatusPassed, Link: "#suite-" + ran[0].Name}
	checks := 0
	for _, sr := range ran {
		checks += sr.Checks
		if !sr.Passed {
			cell.Status = StatusFailed
		}
	}
	cell.Text = fmt.Sprintf("%s, %s", phrase.Count(checks, "check"), cell.Status)
	if len(missing) > 0 {
		cell.Text += fmt.Sprintf(" (%s not run)", phrase.Count(len(missing), "suite"))
		cell.NotRun = missing
		if cell.Status == StatusPassed {
			cell.Status, cell.Link = StatusNotRun, "#"+NotRun{ID: missing[0]}.Anchor()
		}
	}
	return cell
}

func (b *builder) linearizabilityCell(s inventory.Subsystem) Cell {
	if len(s.Linearizability) == 0 {
		return notBuilt()
	}
	histories := b.results.Linearizability
	if histories == nil {
		return notRunCell("not run", LinearizabilityID)
	}
	ok := 0
	for _, linearizable := range histories {
		if linearizable {
			ok++
		}
	}
	cell := Cell{Text: fmt.Sprintf("%d/%d histories linearizable", ok, len(histories)), Status: StatusPassed, Link: "#linearizability"}
	if ok < len(histories) {
		cell.Status = StatusFailed
	}
	return cell
}

func (b *builder) conformanceCell(s inventory.Subsystem) Cell {
	if len(s.Conformance) == 0 {
		return notBuilt()
	}
	if b.results.Conformance == nil {
		return notRunCell(phrase.Count(len(s.Conformance), "function")+", not run", ConformanceID)
	}
	agree := 0
	var missing []string
	for _, name := range s.Conformance {
		mismatches, ok := b.results.Conformance[name]
		switch {
		case !ok:
			missing = append(missing, name)
		case mismatches == 0:
			agree++
		}
	}
	cell := resultCell(agree, len(s.Conformance)-len(missing), len(s.Conformance), "functions agree", "#conformance")
	if len(missing) > 0 {
		b.lacks(&cell, "conformance-"+s.Name, named("conformance comparison", missing), len(missing), b.results.How.Conformance)
	}
	return cell
}

func (b *builder) mutantCell(s inventory.Subsystem) Cell {
	if len(s.Mutants) == 0 {
		return notBuilt()
	}
	if b.results.Mutants == nil {
		return notRunCell(phrase.Count(len(s.Mutants), "mutant")+", not run", MutantsID)
	}
	killed, ran := 0, 0
	reported := map[string]bool{}
	for _, m := range b.results.Mutants {
		if mutantSubsystem(m) != s.Name {
			continue
		}
		reported[m.ID] = true
		ran++
		if m.Killed {
			killed++
		}
	}
	var missing []string
	for _, id := range s.Mutants {
		if !reported[id] {
			missing = append(missing, id)
		}
	}
	cell := resultCell(killed, ran, len(s.Mutants), "killed", "#mutants")
	if len(missing) > 0 {
		b.lacks(&cell, "mutants-"+s.Name, named("mutant", missing), len(missing), b.results.How.Mutants)
	}
	return cell
}

// resultCell is the cell of a layer whose expected results came back ran
// times, good of them passing: failed when one that ran did not pass.
func resultCell(good, ran, expected int, what, link string) Cell {
	cell := Cell{Text: fmt.Sprintf("%d/%d %s", good, expected, what), Status: StatusPassed, Link: link}
	if good < ran {
		cell.Status = StatusFailed
	}
	return cell
}

// lacks marks a cell whose results lack missing of the layer's: an entry
// for them, and "not run" in the cell, failed or not.
func (b *builder) lacks(cell *Cell, id, section string, missing int, how Command) {
	cell.NotRun = []string{b.add(id, section, how)}
	cell.Text += fmt.Sprintf(" (%d not run)", missing)
	if cell.Status == StatusPassed {
		cell.Status, cell.Link = StatusNotRun, "#"+NotRun{ID: id}.Anchor()
	}
}

// mutantSubsystem places a kill matrix row by the inventory, falling back to
// the row's own subsystem for a mutant the inventory does not know.
func mutantSubsystem(m Mutant) string {
	if s := inventory.OfMutant(m.ID); s != "" {
		return s
	}
	return m.Subsystem
}
