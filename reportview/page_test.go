package reportview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/findings"
	"github.com/nodeproof/nodeproof/inventory"
	"github.com/nodeproof/nodeproof/linearizability"
	"github.com/nodeproof/nodeproof/mutants"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/simreport"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests of issue #26 item 7: the report as a reviewer reads it.

// commentTarget is what report.md of a passing run of every suite, with
// every optional section given, must stay under: a third of GitHub's
// 65536-character limit on a pull-request comment, so that the comment
// reads as a summary. A full run's was 58 KB before, and cut by that limit
// halfway through the suites.
const commentTarget = 20_000

// fullReport is the report of a run of every registered suite at the
// default budget, with every section a report can include: the real
// suites' invariants and sources, the known findings with their searches,
// a simulation sweep over the real cross-subsystem invariants, three
// linearizability histories, a conformance result for every comparison
// and a kill matrix of every mutant the inventory knows. failing adds a
// counterexample to two suites and a violation to the simulation.
func fullReport(t *testing.T, failing bool) *Report {
	t.Helper()
	data := &Report{Version: "0.1.0-dev+0123456789ab", Started: "2026-01-02T03:04:05Z", Seconds: 42.5}
	for i, s := range properties.Suites() {
		tally := properties.NewTally()
		tally.Cases = 300
		for a := range 12 {
			for range 2500 / (a + 1) {
				tally.Action(fmt.Sprintf("%s-action-%d", s.Name, a))
			}
		}
		for _, inv := range s.Invariants {
			tally.CheckCounts(inv.ID, 30_000, 12_345)
		}
		tally.Observe(s.Name+": a statistic the suite measures, per step", 0.25)
		res := properties.Result{Suite: s, Tally: tally, Seconds: 3.2, Passed: true, Seed: 1}
		if failing && i < 2 {
			steps := []string{"step 1: add pod p1 (Burstable, cpu 100m)", "step 2: admit p1", s.Invariants[0].ID + ": the core and the model differ"}
			replay := fmt.Sprintf("nodeproof replay --suite %s --seed 1 --steps 100", s.Name)
			res.Passed = false
			res.Failure = &properties.Failure{Invariant: s.Invariants[0].ID, Steps: steps, Replay: replay,
				Message: strings.Join(steps, "\n") + "\nreplay: " + replay}
		}
		data.Suites = append(data.Suites, NewSuite(res))
	}
	data.Searches = &findings.File{Checks: 300, Steps: 100}
	for _, f := range verify.Findings() {
		data.Searches.Findings = append(data.Searches.Findings, findings.Result{ID: f.ID, Suite: f.Suite, Property: f.Property, Reproduced: true,
			Searches: []findings.Search{{Seed: f.Seed, Found: true, FoundAfter: 1.5, Seconds: 2, Cases: 20, Steps: 4}}, MedianFoundAfter: 1.5, MedianSteps: 4})
	}
	data.Sim = syntheticSim()
	data.Node = syntheticNode()
	data.Upstream = syntheticUpstream()
	data.Sim.Checks = nil
	for _, inv := range sim.Invariants() {
		data.Sim.Checks = append(data.Sim.Checks, simreport.Check{ID: inv.ID, Statement: inv.Statement, Checked: 123456, Applied: 4567})
	}
	if failing {
		data.Sim.Passed = false
		data.Sim.Violations = []simreport.Violation{{Seed: 43, Invariant: sim.InvCgroups, Message: sim.InvCgroups + ": pod p1's cgroup is left",
			Trace: []string{"#8 50s pod-arrive: p1", "#9 1m0s kubelet-restart"}, Replay: "nodeproof sim --seed 43 --hours 2"}}
	}
	var histories []linearizability.Result
	for seed := 1; seed <= 3; seed++ {
		histories = append(histories, linearizability.Result{History: fmt.Sprintf("seed %d", seed), Clients: 10, Operations: 361, Partitions: 3,
			Unknown: 7, Faults: 27, CheckSeconds: 0.00134383, Result: "Ok", Visualization: fmt.Sprintf("linearizability-seed-%d.html", seed)})
	}
	data.Linearizability = histories
	var compared []ConformanceRow
	for _, s := range inventory.Subsystems() {
		for _, function := range s.Conformance {
			compared = append(compared, ConformanceRow{Function: function})
		}
		for _, id := range s.Mutants {
			data.Mutants = append(data.Mutants, mutants.Row{ID: id, Subsystem: s.Name, Source: "kubernetes issue #123631", Killed: true,
				KilledBy: "TestSuites/" + s.Name, Seconds: 41.5})
		}
	}
	data.Conformance = conformance(t, compared)
	data.PluginCheck = results(t, []map[string]any{{"plugin": "upstream stub", "passed": true, "findings": []string{}}})
	data.Finish(inventory.Subsystems(), verify.Findings(), 3)
	return data
}

// results is rows as a pass-through section, as the report reads it from a file.
func results(t *testing.T, rows any) *Results {
	t.Helper()
	raw, err := json.Marshal(rows)
	require.NoError(t, err)
	section, err := ParseResults(raw)
	require.NoError(t, err)
	return section
}

// conformance is rows as the conformance section, as the report reads it from a file.
func conformance(t *testing.T, rows []ConformanceRow) *Conformance {
	t.Helper()
	raw, err := json.Marshal(rows)
	require.NoError(t, err)
	section, err := ParseConformance(raw)
	require.NoError(t, err)
	return section
}

// TestMarkdownOfAFullReportFitsAComment: report.md of a passing run of
// every suite, every section given, is a summary under commentTarget that
// leads with the verdict and the matrix; a failing one still shows each
// counterexample with its shrunk steps and replay line. Before, the
// passing one was cut at 65 KB, halfway through the per-invariant tables.
func TestMarkdownOfAFullReportFitsAComment(t *testing.T) {
	passing := fullReport(t, false)
	require.True(t, passing.Passed, "%v", passing.Verdict().Problems)
	require.Empty(t, passing.NotRun, "the fixture leaves nothing not run")
	md := RenderMarkdown(passing, MarkdownLimit)
	assert.Less(t, len(md), commentTarget, "report.md of a passing full run, in bytes")
	assert.NotContains(t, md, "Truncated")
	assert.True(t, strings.HasPrefix(md, "# nodeproof invariant report\n\n**PASSED: "), md[:100])
	assert.Less(t, strings.Index(md, "## Coverage"), strings.Index(md, "## Findings in the kubelet"), "the matrix before the findings")
	for _, s := range passing.Suites {
		assert.Contains(t, md, "| "+s.Name+" | "+s.Subsystem+" | passed | 300 |", "the suites' table")
	}
	for _, f := range passing.Findings {
		assert.Contains(t, md, "| "+f.ID+" | ", "the findings' table")
	}
	assert.Contains(t, md, fmt.Sprintf("%d of %d killed.", len(passing.Mutants), len(passing.Mutants)))

	failing := fullReport(t, true)
	require.False(t, failing.Passed)
	md = RenderMarkdown(failing, MarkdownLimit)
	assert.NotContains(t, md, "Truncated")
	_, failures, found := strings.Cut(md, "\n## Failures\n")
	require.True(t, found, "report.md has no Failures section")
	for _, s := range failing.Suites[:2] {
		f := s.Failure
		assert.Contains(t, failures, "### Counterexample: suite "+s.Name+", "+f.Invariant+"\n\nShrunk steps:\n\n```text\n"+strings.Join(f.Steps, "\n")+"\n```\n\nReplay: `"+f.Replay+"`\n")
	}
	assert.Contains(t, failures, "### Counterexample: seed 43, SIM-CGROUPS\n\n```text\nSIM-CGROUPS: pod p1's cgroup is left\n\n#8 50s pod-arrive: p1\n#9 1m0s kubelet-restart\n```\n\nReplay: `nodeproof sim --seed 43 --hours 2`\n")
	assert.Less(t, strings.Index(md, "## Failures"), strings.Index(md, "## Findings in the kubelet"), "the failures before the findings")
}

// TestMatrixLegend: every state a matrix cell can take is explained beside
// the matrix, with the colour it has there, on the page and in report.md.
// Before, blue ("built": exists, not run here) and the rest were unexplained.
func TestMatrixLegend(t *testing.T) {
	data := finishedReport(t)
	var page bytes.Buffer
	require.NoError(t, WriteHTML(&page, data))
	matrix := regexp.MustCompile(`(?s)<section id="matrix">.*?</section>`).FindString(page.String())
	require.NotEmpty(t, matrix)
	legend := regexp.MustCompile(`(?s)<ul class="legend" id="legend">.*?</ul>`).FindString(matrix)
	require.NotEmpty(t, legend, "the legend, in the matrix's section")
	assert.Less(t, strings.Index(matrix, legend), strings.Index(matrix, `<table class="matrix">`), "the legend above the matrix")
	md := RenderMarkdown(data, MarkdownLimit)
	mdMatrix := md[strings.Index(md, "## Coverage"):strings.Index(md, "| Subsystem |")]
	require.Len(t, coverage.Legend, 5)
	for _, s := range coverage.Legend {
		assert.Contains(t, legend, `<li><span class="sample cell-`+statusClass(s.Status)+`">`+s.Status+`</span> `+html.EscapeString(s.Meaning)+`</li>`)
		assert.Contains(t, mdMatrix, "*"+s.Status+"*: "+s.Meaning)
	}
	// Every class a cell has is one the legend shows.
	for _, class := range regexp.MustCompile(`<td class="(cell-[a-z-]+)"`).FindAllStringSubmatch(matrix, -1) {
		assert.Contains(t, legend, `class="sample `+class[1]+`"`)
	}
}

// headingRE finds a heading of the page and its text.
var headingRE = regexp.MustCompile(`(?s)<h([1-6])[^>]*>(.*?)</h[1-6]>`)

// repeatedRE is a heading that says a name twice, "imagegc (imagegc)".
var repeatedRE = regexp.MustCompile(`^(.+) \((.+)\)$`)

// TestNoRepeatedHeadings: a suite named after its subsystem is headed by
// its name once; one of another subsystem says which. Before, every suite
// was headed "imagegc (imagegc)".
func TestNoRepeatedHeadings(t *testing.T) {
	data := syntheticReport(t)
	other := data.Suites[0]
	other.Name, other.Subsystem = "imagegc-contract", "imagegc"
	data.Suites = append(data.Suites, other)
	data.Finish(testInventory, nil, 3)
	var page bytes.Buffer
	require.NoError(t, WriteHTML(&page, data))
	var headings []string
	for _, h := range headingRE.FindAllStringSubmatch(page.String(), -1) {
		text := html.UnescapeString(htmlTagRE.ReplaceAllString(h[2], ""))
		headings = append(headings, text)
		if m := repeatedRE.FindStringSubmatch(text); m != nil {
			assert.NotEqual(t, m[1], m[2], "heading %q repeats itself", text)
		}
	}
	assert.Contains(t, headings, "imagegc")
	assert.Contains(t, headings, "devicemanager")
	assert.Contains(t, headings, "imagegc-contract (imagegc)")
	for _, line := range strings.Split(RenderMarkdown(data, MarkdownLimit), "\n") {
		if m := repeatedRE.FindStringSubmatch(strings.TrimLeft(line, "# ")); strings.HasPrefix(line, "#") && m != nil {
			assert.NotEqual(t, m[1], m[2], "report.md heading %q repeats itself", line)
		}
	}
}

// TestLinearizabilityTableReadsAsWords: the histories' table, as the
// report records it, has headings in words and times with their unit,
// while report.json keeps the results verbatim. Before, it was headed
// check_seconds and showed 0.00134383.
func TestLinearizabilityTableReadsAsWords(t *testing.T) {
	data := fullReport(t, false)
	var page bytes.Buffer
	require.NoError(t, WriteHTML(&page, data))
	section := regexp.MustCompile(`(?s)<section id="linearizability">.*?</section>`).FindString(page.String())
	assert.Contains(t, section, "<tr><th>History</th><th>Clients</th><th>Operations</th><th>Partitions</th><th>Unknown outcomes</th>"+
		"<th>Faults</th><th>Check time</th><th>Result</th><th>Visualization</th></tr>")
	assert.Contains(t, section, `<td>seed 1</td><td>10</td><td>361</td><td>3</td><td>7</td><td>27</td><td>1.3 ms</td><td>Ok</td>`+
		`<td><a href="linearizability-seed-1.html">linearizability-seed-1.html</a></td>`)
	md := RenderMarkdown(data, MarkdownLimit)
	assert.Contains(t, md, "| History | Clients | Operations | Partitions | Unknown outcomes | Faults | Check time | Result | Visualization |\n")
	assert.Contains(t, md, "| seed 1 | 10 | 361 | 3 | 7 | 27 | 1.3 ms | Ok | linearizability-seed-1.html |\n")
	for _, rendered := range []string{section, md} {
		assert.NotContains(t, rendered, "check_seconds")
		assert.NotContains(t, rendered, "0.00134383")
	}
	written, err := json.Marshal(data)
	require.NoError(t, err)
	var report struct {
		Linearizability []map[string]any `json:"linearizability"`
	}
	require.NoError(t, json.Unmarshal(written, &report))
	require.Len(t, report.Linearizability, 3)
	assert.Equal(t, 0.00134383, report.Linearizability[0]["check_seconds"], "report.json keeps the figure")
}

// TestActionsOfOneKindHaveNoChart: a suite that drew one kind of action
// says so in words; a chart of one bar compared nothing and filled the
// width.
func TestActionsOfOneKindHaveNoChart(t *testing.T) {
	data := finishedReport(t)
	data.Suites[0].Actions = map[string]int{"pull": 2000}
	var page bytes.Buffer
	require.NoError(t, WriteHTML(&page, data))
	section := regexp.MustCompile(`(?s)<section class="suite" id="suite-imagegc">.*?</section>`).FindString(page.String())
	assert.Contains(t, section, "<p>Actions drawn: pull 2000.</p>")
	assert.NotContains(t, section, "<svg")
	assert.Equal(t, 1, strings.Count(page.String(), "<svg"), "the other suite's chart of two actions")
}

// htmlTagRE finds a tag, to read a heading's text.
var htmlTagRE = regexp.MustCompile(`<[^>]*>`)
