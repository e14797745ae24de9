package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/cli/replay"
	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/findings"
	"github.com/nodeproof/nodeproof/inventory"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/simreport"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// The synthetic report's sources: one of each way a cell renders them, and a
// code source whose text and URL carry markup that must come out escaped.
var (
	igcSeed = sourceReport{Kind: "seed", Text: "Seed article on image garbage collection, section 'How image GC works'"}
	dmCode  = sourceReport{Kind: "code", Text: "ManagerImpl.Allocate <script>x</script> (v1.36.3)",
		URL: `https://github.com/kubernetes/kubernetes/blob/v1.36.3/pkg/kubelet/cm/devicemanager/manager.go?a="b"&c`}
	dmDoc   = sourceReport{Kind: "doc", Text: "nodeproof docs/architecture.md", URL: "docs/architecture.md"}
	dmIssue = sourceReport{Kind: "issue", Text: "kubernetes issue #109595", URL: "https://github.com/kubernetes/kubernetes/issues/109595"}
	igcPage = sourceReport{Kind: "kubernetes-doc", Text: "Kubernetes documentation, Garbage Collection", URL: "https://kubernetes.io/docs/concepts/architecture/garbage-collection/"}
)

// syntheticFinding is the one known finding of the synthetic report, which
// the imagegc suite reached; its search found it from seed 3.
var syntheticFinding = verify.Finding{ID: "IGC-F1", Title: "an image <b>in use</b> is removed", Subsystem: "imagegc", Suite: "imagegc",
	Property: "IGC-C-PROMISE", Promise: "Images in use are kept.", Sources: []cite.Source{{Kind: cite.KindKubernetesDoc, Text: igcPage.Text, URL: igcPage.URL}},
	Steps: []string{"pull image i1", "start c1 on i1 during the pass"}, Seed: 3, Confirmation: "conformance: TestFindingIGC", Releases: "still present in v1.37.2"}

// syntheticSearches is the findings file of the synthetic report.
func syntheticSearches() *findings.File {
	return &findings.File{Checks: 300, Steps: 100, Findings: []findings.Result{{ID: "IGC-F1", Suite: "imagegc", Property: "IGC-C-PROMISE",
		Searches: []findings.Search{{Seed: 3, Found: true, FoundAfter: 1.25, Seconds: 2, Cases: 7, Steps: 2}}, Reproduced: true, MedianFoundAfter: 1.25, MedianSteps: 2}}}
}

// syntheticReport has one passed suite, one failed suite whose message
// carries markup, a mutant and a pass-through section.
func syntheticReport(t *testing.T) *reportData {
	t.Helper()
	lin, err := parseTable([]byte(`[{"history":"seed 1","ops":12,"result":"Ok","visualization":"lin-1.html"},{"history":"seed 2","result":"Ok","note":"x","visualization":"../x.html"}]`))
	require.NoError(t, err)
	return &reportData{
		Version: "0.1.0-dev",
		Started: "2026-01-02T03:04:05Z",
		Seconds: 4.5,
		Suites: []suiteReport{
			{
				Name: "imagegc", Subsystem: "imagegc", Checks: 300, Steps: 3000, Seconds: 1.5, Passed: true, Seed: 42,
				Actions: map[string]int{"pull": 2000, "gc": 1000},
				Invariants: []invariantReport{
					{ID: "IGC-INUSE", Statement: "An image in use is never removed.", Source: igcSeed.Text, Sources: []sourceReport{igcSeed}, Checked: 3300, Applied: 2900, Kind: "fidelity"},
					{ID: "IGC-C-PROMISE", Statement: "An image a container runs is kept.", Source: igcPage.Text, Sources: []sourceReport{igcPage}, Checked: 3300, Applied: 12, Kind: "contract",
						Breaches: 4, FirstBreach: "IGC-C-PROMISE: image i1 removed while c1 runs it"},
				},
				Statistics: []statisticReport{{Name: "bytes freed beyond the target", Samples: 40, Mean: 1.23456, Max: 7, Nonzero: 12}},
			},
			{
				Name: "devicemanager", Subsystem: "devicemanager", Checks: 17, Steps: 212, Seconds: 3, Passed: false, Seed: 42,
				Actions: map[string]int{"register": 150, "allocate": 62},
				Invariants: []invariantReport{
					{ID: "DM-EXCLUSIVE", Statement: "A device is held by at most one container.", Source: dmCode.Text + "; " + dmDoc.Text,
						Sources: []sourceReport{dmCode, dmDoc}, Checked: 229, Applied: 31, Violations: 1, Kind: "fidelity"},
					{ID: "DM-CAPACITY", Statement: "Allocatable never exceeds capacity.", Source: dmIssue.Text, Sources: []sourceReport{dmIssue}, Checked: 229, Applied: 200, Kind: "fidelity"},
				},
				Failure: &failureReport{
					Invariant: "DM-EXCLUSIVE",
					Message:   "DM-EXCLUSIVE: device <script>alert(1)</script> held twice\nreplay: nodeproof replay --suite devicemanager --seed 59 --steps 100",
					Steps:     []string{"step 1: register resource=a.com/r endpoint=p1.sock", "DM-EXCLUSIVE: device <script>alert(1)</script> held twice"},
					Replay:    "nodeproof replay --suite devicemanager --seed 59 --steps 100",
				},
			},
		},
		Mutants: []mutantRow{
			{ID: "devicemanager-reregistration-race", Subsystem: "devicemanager", Source: "kubernetes#1", Killed: true, KilledBy: "DM-EXCLUSIVE", Seconds: 2.25},
		},
		Linearizability: lin,
		Sim:             syntheticSim(),
	}
}

// syntheticSim is a passing node simulation section of two seeds.
func syntheticSim() *simreport.Section {
	return &simreport.Section{
		Seeds: 2, FirstSeed: 42, LastSeed: 43, Hours: 2, Pods: 20, Faults: "plugin-crash=0.01",
		Events: 123456, SimulatedHours: 4, Seconds: 0.75, Injected: map[string]int{"plugin-crash": 7, "kubelet-restart": 2},
		Checks:   []simreport.Check{{ID: "SIM-DEVICES", Statement: "The devices held are the <admitted> pods'.", Checked: 123456, Applied: 4567}},
		Observed: map[string]int{}, Passed: true, Violations: []simreport.Violation{}, Runs: []simreport.Run{},
	}
}

// testInventory is a small inventory for the synthetic report: one
// subsystem with every layer built, one with only core.
var testInventory = []inventory.Subsystem{
	{
		Name: "devicemanager", CorePackages: []string{"core/devicemanager"}, Models: []string{"models/devicemanager"},
		Suites: []string{"devicemanager"}, FuzzTargets: []string{"fuzz.FuzzA", "fuzz.FuzzB"},
		IntegrationTests: []string{"TestX"}, Linearizability: []string{"TestHistories"},
		Conformance: []string{"checkpoint.Decode"}, Mutants: []string{"devicemanager-reregistration-race", "dm-other"},
	},
	{Name: "imagegc", CorePackages: []string{"core/imagegc"}, Suites: []string{"imagegc"}},
}

// finishedReport is syntheticReport with its verdict and matrix derived.
func finishedReport(t *testing.T) *reportData {
	withKnownFindings(t, syntheticFinding)
	data := syntheticReport(t)
	data.searches = syntheticSearches()
	data.finish(testInventory, 3)
	return data
}

func TestWriteReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	paths, err := writeReport(dir, finishedReport(t))
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "index.html"), filepath.Join(dir, "report.md"), filepath.Join(dir, "report.json")}, paths, "paths written")

	t.Run("json", func(t *testing.T) { checkReportJSON(t, read(t, dir, "report.json")) })

	t.Run("html", func(t *testing.T) {
		html := read(t, dir, "index.html")
		for _, want := range []string{
			"nodeproof replay --suite devicemanager --seed 59 --steps 100",
			"<svg",
			"&lt;script&gt;alert(1)&lt;/script&gt;",
			"step 1: register resource=a.com/r endpoint=p1.sock",
			"devicemanager-reregistration-race",
			"<th>History</th><th>Ops</th><th>Result</th><th>Visualization</th><th>Note</th>",
			`<a href="lin-1.html">lin-1.html</a>`,
			// Checked, then Applied, then Violations.
			`<td class="num">229</td><td class="num">31</td><td class="num failed">1</td>`,
			`<td class="num">3300</td><td class="num">12</td><td class="num">0 (&#43;4 explained by a known finding)</td>`,
			`<summary><code>IGC-F1</code> an image &lt;b&gt;in use&lt;/b&gt; is removed <small>(imagegc)</small></summary>`,
			`<tr><td><a href="#finding-IGC-F1"><code>IGC-F1</code></a></td><td>imagegc</td><td>an image &lt;b&gt;in use&lt;/b&gt; is removed</td><td>found from seed 3 after 1.25 s, shrunk to 2 steps</td><td>no upstream issue found</td></tr>`,
			`<ol><li>pull image i1</li><li>start c1 on i1 during the pass</li></ol>`,
			`Property <code>IGC-C-PROMISE</code> of suite <code>imagegc</code>: found from seed 3 after 1.25 s, shrunk to 2 steps; reached 4 times by this report&#39;s run of suite imagegc.`,
			`Upstream tracker: no upstream issue found.`,
			"<td>bytes freed beyond the target</td><td class=\"num\">40</td><td class=\"num\">1.2346</td><td class=\"num\">7</td><td class=\"num\">12</td>",
		} {
			assert.Contains(t, html, want, "index.html")
		}
		for _, banned := range []string{"<script", "http://", "src=", "url(", `href="../x.html"`, `href="docs/`} {
			assert.NotContains(t, html, banned, "index.html must be self-contained and escape its text")
		}
		// Upstream sources are the only links out of the page, and only as links.
		assert.Equal(t, strings.Count(html, `<a href="https://`), strings.Count(html, "https://"), "every https:// in index.html is a link's href")
		assert.Contains(t, html, `<td class="source"><a href="https://github.com/kubernetes/kubernetes/blob/v1.36.3/pkg/kubelet/cm/devicemanager/manager.go?a=&#34;b&#34;&amp;c">`+
			`ManagerImpl.Allocate &lt;script&gt;x&lt;/script&gt; (v1.36.3)</a><br>nodeproof docs/architecture.md</td>`)
		assert.Contains(t, html, `<td class="source"><a href="https://github.com/kubernetes/kubernetes/issues/109595">kubernetes issue #109595</a></td>`)
		assert.Contains(t, html, `<td class="source">Seed article on image garbage collection, section &#39;How image GC works&#39;</td>`)
		// An action chart per suite; a statistic's share of non-zero samples
		// compared nothing with anything, so it has its table alone.
		assert.Equal(t, 2, strings.Count(html, "<svg"), "charts in index.html")
		for _, want := range []string{
			`<div id="verdict" class="verdict failed"><strong>FAILED: 1 problem; 3 not run.</strong>`,
			`<li>suite devicemanager: DM-EXCLUSIVE violated; replay: nodeproof replay --suite devicemanager --seed 59 --steps 100</li>`,
			`<th><a href="#inventory-devicemanager">devicemanager</a></th><td class="cell-built"><a href="#inventory-devicemanager">1 package</a></td>`,
			`<td class="cell-failed"><a href="#suite-devicemanager">17 checks, failed</a></td>`,
			`<td class="cell-not-run"><a href="#not-run-mutants-devicemanager">1/2 killed (1 not run)</a></td>`,
			`<td class="cell-not-run"><a href="#not-run-conformance">1 function, not run</a></td>`,
			`<td class="cell-not-built">not built</td>`,
			`<li id="not-run-conformance">conformance against upstream not run: run it with <code>make conformance</code>, which writes <code>report/conformance.json</code>.</li>`,
			`<li id="not-run-mutants-devicemanager">mutant dm-other not run: run it with <code>make mutants</code>, which writes <code>report/mutants.json</code>.</li>`,
			"<section id=\"conformance\">\n<h2>Conformance against upstream</h2>\n<p>conformance against upstream not run: run it with <code>make conformance</code>, which writes <code>report/conformance.json</code>.</p>",
			`<details id="inventory-imagegc"><summary>imagegc</summary>`,
			// The counterexample under Failures, near the top, and its suite's section points there.
			"<section id=\"failures\">\n<h2>Failures</h2>",
			`<div class="counterexample" id="failure-devicemanager">` + "\n" + `<h3 class="failed">Counterexample: suite devicemanager, DM-EXCLUSIVE</h3>`,
			`<p class="failed">Failed: <a href="#failure-devicemanager">the counterexample of DM-EXCLUSIVE</a>.</p>`,
			// The per-invariant detail is folded.
			"<details><summary>2 invariants: statement, source, checked, applied, violations</summary>\n<table>",
			"<details><summary>1 statistic: samples, mean, max, non-zero</summary>",
			"<details><summary>2 actions: how often the generator drew each</summary>\n<svg",
			"<details><summary>1 invariant: statement, checked, applied</summary>",
			`<code class="replay">nodeproof replay --suite devicemanager --seed 59 --steps 100</code>`,
		} {
			assert.Contains(t, html, want)
		}
	})

	t.Run("markdown", func(t *testing.T) {
		md := read(t, dir, "report.md")
		for _, want := range []string{
			"**FAILED: 1 problem; 3 not run.**",
			"- suite devicemanager: DM-EXCLUSIVE violated; replay: nodeproof replay --suite devicemanager --seed 59 --steps 100\n",
			"| Subsystem | core | reference model | state-machine suite | fuzz targets | real-I/O integration | linearizability | conformance against upstream | mutants killed |",
			"| devicemanager | 1 package | 1 model | 17 checks, failed | 2 targets | 1 test | 2/2 histories linearizable | 1 function, not run | 1/2 killed (1 not run) |",
			"| imagegc | 1 package | not built | 300 checks, passed | not built | not built | not built | not built | not built |",
			"## Not run\n\n- conformance against upstream not run: run it with `make conformance`, which writes `report/conformance.json`.\n" +
				"- plugin check of plugins nobody here wrote not run: run it with `make conformance`, which writes `report/plugincheck.json`.\n" +
				"- mutant dm-other not run: run it with `make mutants`, which writes `report/mutants.json`.\n",
			"## Conformance against upstream\n\nconformance against upstream not run: run it with `make conformance`, which writes `report/conformance.json`.\n",
			"## Failures\n\n### Counterexample: suite devicemanager, DM-EXCLUSIVE\n\nShrunk steps:\n",
			"## Findings in the kubelet\n\n1 known broken promise of the v1.36.3 kubelet",
			"| IGC-F1 | imagegc | an image &lt;b&gt;in use&lt;/b&gt; is removed | found from seed 3 after 1.25 s, shrunk to 2 steps | `nodeproof findings IGC-F1` | conformance: TestFindingIGC | no upstream issue found |",
			"```text\nstep 1: register resource=a.com/r endpoint=p1.sock\nDM-EXCLUSIVE: device <script>",
			"Replay: `nodeproof replay --suite devicemanager --seed 59 --steps 100`",
			"1 of 1 killed.",
			"| seed 2 |  | Ok | ../x.html | x |",
			"## Node simulation\n\n| Result | Seeds | Hours per seed | Simulated hours | Events | Pods | Seconds | Violations |",
			"| passed | 2 (42..43) | 2 | 4 | 123456 | 20 | 0.8 | 0 |",
			"Faults injected: kubelet-restart 2, plugin-crash 7.",
			"The report's index.html and report.json hold the rest: each invariant",
		} {
			assert.Contains(t, md, want, "report.md")
		}
		// What a reviewer looks up rather than reads is left to index.html:
		// each invariant, the statistics, the actions, the simulation's
		// invariants, the inventory and the killed mutants.
		for _, unwanted := range []string{
			"| ID | Kind | Statement |", "IGC-INUSE", "bytes freed beyond the target", "Actions:", "SIM-DEVICES",
			"fuzz.FuzzA", "## Inventory", "| devicemanager-reregistration-race |",
		} {
			assert.NotContains(t, md, unwanted, "report.md")
		}
	})
}

// checkReportJSON decodes report.json into the documented schema, refusing
// unknown keys, and checks the values that tools read.
func checkReportJSON(t *testing.T, data string) {
	type invariant struct {
		ID          string              `json:"id"`
		Statement   string              `json:"statement"`
		Source      string              `json:"source"`
		Sources     []map[string]string `json:"sources"`
		Checked     int                 `json:"checked"`
		Applied     int                 `json:"applied"`
		Violations  int                 `json:"violations"`
		Kind        string              `json:"kind"`
		Breaches    int                 `json:"breaches"`
		FirstBreach string              `json:"first_breach"`
	}
	type failure struct {
		Invariant string   `json:"invariant"`
		Message   string   `json:"message"`
		Steps     []string `json:"steps"`
		Replay    string   `json:"replay"`
	}
	type statistic struct {
		Name    string  `json:"name"`
		Samples int     `json:"samples"`
		Mean    float64 `json:"mean"`
		Max     float64 `json:"max"`
		Nonzero int     `json:"nonzero"`
	}
	type suite struct {
		Name       string         `json:"name"`
		Subsystem  string         `json:"subsystem"`
		Checks     int            `json:"checks"`
		Steps      int            `json:"steps"`
		Seconds    float64        `json:"seconds"`
		Passed     bool           `json:"passed"`
		Seed       uint64         `json:"seed"`
		Actions    map[string]int `json:"actions"`
		Invariants []invariant    `json:"invariants"`
		Statistics []statistic    `json:"statistics"`
		Failure    *failure       `json:"failure"`
	}
	var report struct {
		Version         string             `json:"version"`
		Started         string             `json:"started"`
		Seconds         float64            `json:"seconds"`
		Suites          []suite            `json:"suites"`
		Linearizability []map[string]any   `json:"linearizability"`
		Mutants         []map[string]any   `json:"mutants"`
		Conformance     []map[string]any   `json:"conformance"`
		PluginCheck     []map[string]any   `json:"plugin_check"`
		Passed          bool               `json:"passed"`
		Matrix          []coverage.Row     `json:"matrix"`
		NotRun          []coverage.NotRun  `json:"not_run"`
		Sim             *simreport.Section `json:"sim"`
		Findings        []findingReport    `json:"findings"`
	}
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&report), "report.json does not match the schema:\n%s", data)
	var keys map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(data), &keys))
	for _, k := range []string{"version", "started", "seconds", "suites", "sim", "linearizability", "mutants", "conformance"} {
		assert.Contains(t, keys, k, "report.json's keys")
	}

	require.Equal(t, "0.1.0-dev", report.Version, "version")
	require.Equal(t, "2026-01-02T03:04:05Z", report.Started, "started")
	require.Equal(t, 4.5, report.Seconds, "seconds")
	require.Len(t, report.Suites, 2)
	passed, failed := report.Suites[0], report.Suites[1]
	assert.True(t, passed.Passed, "passed suite: passed")
	assert.Nil(t, passed.Failure, "passed suite: failure")
	assert.Equal(t, 300, passed.Checks, "passed suite: checks")
	assert.Equal(t, 2000, passed.Actions["pull"], "passed suite: pull actions")
	require.NotEmpty(t, passed.Invariants, "passed suite: invariants")
	assert.Equal(t, 3300, passed.Invariants[0].Checked, "passed suite: checks of %s", passed.Invariants[0].ID)
	assert.Equal(t, 2900, passed.Invariants[0].Applied, "passed suite: applications of %s", passed.Invariants[0].ID)
	assert.Equal(t, []statistic{{"bytes freed beyond the target", 40, 1.23456, 7, 12}}, passed.Statistics, "passed suite: statistics")
	assert.False(t, failed.Passed, "failed suite: passed")
	if assert.NotNil(t, failed.Failure, "failed suite: failure") {
		assert.Equal(t, "DM-EXCLUSIVE", failed.Failure.Invariant, "failed suite: failure's invariant")
		assert.Len(t, failed.Failure.Steps, 2, "failed suite: failure's steps")
		assert.Equal(t, "nodeproof replay --suite devicemanager --seed 59 --steps 100", failed.Failure.Replay, "failed suite: replay line")
	}
	require.Len(t, failed.Invariants, 2, "failed suite: invariants")
	assert.Equal(t, 1, failed.Invariants[0].Violations, "violations of the failing invariant")
	assert.Equal(t, 0, failed.Invariants[1].Violations, "violations of the other invariant")
	assert.Equal(t, invariant{ID: "DM-CAPACITY", Statement: "Allocatable never exceeds capacity.", Source: "kubernetes issue #109595",
		Sources: []map[string]string{{"kind": "issue", "text": "kubernetes issue #109595", "url": "https://github.com/kubernetes/kubernetes/issues/109595"}},
		Checked: 229, Applied: 200, Kind: "fidelity"}, failed.Invariants[1])
	assert.Equal(t, "contract", passed.Invariants[1].Kind)
	assert.Equal(t, 4, passed.Invariants[1].Breaches)
	if assert.Len(t, report.Findings, 1, "findings") {
		f := report.Findings[0]
		assert.Equal(t, "IGC-F1", f.ID)
		assert.Equal(t, "imagegc", f.Subsystem)
		assert.Equal(t, "conformance: TestFindingIGC", f.Confirmation)
		assert.Equal(t, "nodeproof findings IGC-F1", f.Replay)
		assert.Equal(t, verify.NoTracker, f.TrackerNote)
		assert.Equal(t, []sourceReport{igcPage}, f.Sources)
		assert.Equal(t, 4, f.Breaches)
		if assert.NotNil(t, f.Search) {
			assert.True(t, f.Search.Reproduced)
		}
	}
	assert.Equal(t, []map[string]string{{"kind": "seed", "text": igcSeed.Text, "url": ""}}, passed.Invariants[0].Sources)
	wantMutant := map[string]any{"id": "devicemanager-reregistration-race", "subsystem": "devicemanager", "source": "kubernetes#1",
		"killed": true, "killed_by": "DM-EXCLUSIVE", "seconds": 2.25}
	assert.Equal(t, []map[string]any{wantMutant}, report.Mutants, "mutants")
	if assert.Len(t, report.Linearizability, 2, "linearizability, the input verbatim") {
		assert.Equal(t, 12.0, report.Linearizability[0]["ops"], "linearizability, the input verbatim")
	}
	assert.Nil(t, report.Conformance, "conformance is null when not given")
	assert.Equal(t, syntheticSim(), report.Sim, "sim")
	assert.False(t, report.Passed, "a report with a failed suite did not pass")
	assert.Equal(t, []coverage.NotRun{
		{ID: coverage.ConformanceID, Section: "conformance against upstream", Command: "make conformance", Writes: defaultConformanceFile},
		{ID: coverage.PluginCheckID, Section: "plugin check of plugins nobody here wrote", Command: "make conformance", Writes: defaultPluginCheckFile},
		{ID: "mutants-devicemanager", Section: "mutant dm-other", Command: "make mutants", Writes: defaultMutantsFile},
	}, report.NotRun)
	require.Len(t, report.Matrix, 2)
	notBuilt := coverage.Cell{Text: coverage.StatusNotBuilt, Status: coverage.StatusNotBuilt}
	assert.Equal(t, coverage.Row{Subsystem: "imagegc", Cells: []coverage.Cell{
		{Layer: "core", Text: "1 package", Status: coverage.StatusBuilt, Link: "#inventory-imagegc"},
		withLayer(notBuilt, "reference model"),
		{Layer: "state-machine suite", Text: "300 checks, passed", Status: coverage.StatusPassed, Link: "#suite-imagegc"},
		withLayer(notBuilt, "fuzz targets"),
		withLayer(notBuilt, "real-I/O integration"),
		withLayer(notBuilt, "linearizability"),
		withLayer(notBuilt, "conformance against upstream"),
		withLayer(notBuilt, "mutants killed"),
	}}, report.Matrix[1])
	assert.Equal(t, coverage.Cell{Layer: "mutants killed", Text: "1/2 killed (1 not run)", Status: coverage.StatusNotRun,
		Link: "#not-run-mutants-devicemanager", NotRun: []string{"mutants-devicemanager"}}, report.Matrix[0].Cells[7])
}

func withLayer(c coverage.Cell, layer string) coverage.Cell {
	c.Layer = layer
	return c
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	return string(data)
}

func TestReportFlagErrors(t *testing.T) {
	dir := t.TempDir()
	notArray := filepath.Join(dir, "object.json")
	notObjects := filepath.Join(dir, "numbers.json")
	noID := filepath.Join(dir, "noid.json")
	simUnknownKey := filepath.Join(dir, "sim-unknown.json")
	simNoRuns := filepath.Join(dir, "sim-noruns.json")
	simEvents := filepath.Join(dir, "sim-events.json")
	simVerdict := filepath.Join(dir, "sim-verdict.json")
	for path, content := range map[string]string{notArray: `{"a":1}`, notObjects: `[1,2]`, noID: `[{"killed":true}]`,
		simUnknownKey: `{"seeds":1,"speed":3}`, simNoRuns: `{"seeds":2,"runs":[{"seed":1}]}`,
		simEvents:  `{"seeds":1,"events":9,"passed":true,"runs":[{"seed":1,"events":8}]}`,
		simVerdict: `{"seeds":1,"events":8,"passed":false,"runs":[{"seed":1,"events":8}]}`} {
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--checks", "0"}, "--checks must be positive, got 0"},
		{[]string{"--checks", "-5"}, "--checks must be positive, got -5"},
		{[]string{"--steps", "0"}, "--steps must be positive"},
		{[]string{"--histories", "-1"}, "--histories must not be negative, got -1"},
		{[]string{"--sim-seeds", "-1"}, "--sim-seeds must not be negative, got -1"},
		{[]string{"--sim-hours", "0"}, "--sim-hours must be more than 0 and at most 8760, got 0"},
		{[]string{"--sim-hours", "NaN"}, "--sim-hours must be more than 0"},
		{[]string{"--out", ""}, "--out must name a directory"},
		{[]string{"--suite", "("}, "--suite: error parsing regexp"},
		{[]string{"--suite", "^no-such-suite$"}, `--suite "^no-such-suite$" matches no suite; suites: `},
		{[]string{"--mutants", filepath.Join(dir, "missing.json")}, "--mutants: open "},
		{[]string{"--mutants", noID}, "--mutants: " + noID + ": element 0: id is required"},
		{[]string{"--linearizability", notArray}, "--linearizability: " + notArray + ": want a JSON array of objects"},
		{[]string{"--conformance", notObjects}, "--conformance: " + notObjects + ": element 0: not a JSON object"},
		{[]string{"--sim", filepath.Join(dir, "missing.json")}, "--sim: open "},
		{[]string{"--sim", notArray}, "--sim: " + notArray + ": want the JSON object nodeproof sim --json writes"},
		{[]string{"--sim", simUnknownKey}, `--sim: ` + simUnknownKey + `: want the JSON object nodeproof sim --json writes: json: unknown field "speed"`},
		{[]string{"--sim", simNoRuns}, "--sim: " + simNoRuns + ": seeds is 2 but the file holds 1 runs"},
		{[]string{"--sim", simEvents}, "--sim: " + simEvents + ": events is 9 but the runs add up to 8"},
		{[]string{"--sim", simVerdict}, "--sim: " + simVerdict + ": passed is false with 0 violations"},
		{[]string{"--seed", "-1"}, `invalid argument "-1" for "--seed" flag`},
		{[]string{"-seed", "1"}, "unknown shorthand flag: 's' in -seed"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		code, _, stderr := runNodeproof("", append([]string{"report"}, tc.args...)...)
		assert.Equal(t, 2, code, "report %q: exit status; stderr %q", tc.args, stderr)
		assert.Contains(t, stderr, tc.want, "report %q", tc.args)
	}
}

func TestSelectSuites(t *testing.T) {
	all := []properties.Suite{{Name: "devicemanager"}, {Name: "imagegc"}, {Name: "prober"}}
	got, err := selectSuites(regexp.MustCompile("^(imagegc|prober)$"), all)
	require.NoError(t, err)
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"imagegc", "prober"}, names, "suites selected")
	_, err = selectSuites(regexp.MustCompile("cgroups"), all)
	assert.ErrorContains(t, err, "suites: devicemanager, imagegc, prober", "selectSuites(cgroups) lists the suites")
}

// counterSuite is a throwaway suite for the end-to-end tests: a counter that
// rapid drives up and down, failing TEST-LIMIT when it reaches limit > 0.
func counterSuite(name string, limit int) properties.Suite {
	return properties.Suite{
		Name:      name,
		Subsystem: "test",
		Invariants: []verify.Property{
			{ID: "TEST-LIMIT", Subsystem: "test", Statement: "The counter stays below the limit.", Sources: []properties.Source{cite.Doc("cmd/nodeproof/report_test.go", "")}, Kind: verify.Fidelity},
		},
		Property: func(t *rapid.T, tally *properties.Tally) {
			n, step := 0, 0
			t.Repeat(map[string]func(*rapid.T){
				"inc": func(t *rapid.T) {
					step++
					t.Logf("step %d: inc", step)
					tally.Action("inc")
					n++
				},
				"reset": func(t *rapid.T) {
					step++
					t.Logf("step %d: reset", step)
					tally.Action("reset")
					n = 0
				},
				"": func(t *rapid.T) {
					// It says something once the counter is off zero.
					tally.Check("TEST-LIMIT", n > 0)
					if limit > 0 && n >= limit {
						t.Fatalf("TEST-LIMIT: counter is %d, limit %d", n, limit)
					}
				},
			})
		},
	}
}

func TestReportEndToEnd(t *testing.T) {
	dir := t.TempDir()
	opts := reportOptions{out: dir, checks: 20, steps: 10, seed: 7}
	var stdout, stderr bytes.Buffer
	code := report(opts, []properties.Suite{counterSuite("counter", 0), counterSuite("limited", 2)}, &stdout, &stderr)
	assert.Equal(t, 1, code, "exit status for a failed suite")
	for _, want := range []string{
		"counter  [##########] 20/20 checks\n",
		"counter  passed  20 checks, ",
		"limited  FAILED  TEST-LIMIT after ",
		// The whole counterexample, not only its first line.
		"\n                 step 1: inc\n                 step 2: inc\n                 TEST-LIMIT: counter is 2, limit 2\n",
		"                 replay: nodeproof replay --suite limited --seed ",
	} {
		assert.Contains(t, stderr.String(), want)
	}
	assert.Contains(t, stdout.String(), filepath.Join(dir, "report.json"), "stdout names report.json")

	var data reportData
	require.NoError(t, json.Unmarshal([]byte(read(t, dir, "report.json")), &data))
	require.Len(t, data.Suites, 2)
	counter, limited := data.Suites[0], data.Suites[1]
	assert.True(t, counter.Passed, "counter: passed")
	assert.Equal(t, 20, counter.Checks, "counter: checks")
	assert.Equal(t, uint64(7), counter.Seed, "counter: seed")
	require.NotEmpty(t, counter.Invariants, "counter: invariants")
	assert.NotZero(t, counter.Invariants[0].Checked, "counter: checks of TEST-LIMIT")
	// Applications come from the tally, not from the evaluations: the first
	// evaluation of each case, on a zero counter, never applies.
	assert.Positive(t, counter.Invariants[0].Applied, "counter applications")
	assert.LessOrEqual(t, counter.Invariants[0].Applied, counter.Invariants[0].Checked-counter.Checks, "counter applications")
	require.False(t, limited.Passed, "limited: passed")
	require.NotNil(t, limited.Failure, "limited: failure")
	require.NotEmpty(t, limited.Invariants, "limited: invariants")
	require.Equal(t, 1, limited.Invariants[0].Violations, "limited: violations of TEST-LIMIT")
	assert.Equal(t, []string{"step 1: inc", "step 2: inc", "TEST-LIMIT: counter is 2, limit 2"}, limited.Failure.Steps, "limited: the counterexample's steps")

	// The replay line in the report reproduces the failure.
	m := regexp.MustCompile(`--seed (\d+)`).FindStringSubmatch(limited.Failure.Replay)
	require.Len(t, m, 2, "replay line %q has no --seed", limited.Failure.Replay)
	lookup := func(string) (properties.Suite, bool) { return counterSuite("limited", 2), true }
	code, replayOut, replayErr := runRoot(cli.NewRoot(replay.NewCommand(lookup, nil)), "", "replay", "--suite", "limited", "--seed", m[1], "--steps", "10")
	assert.Equal(t, 1, code, "replay exit status")
	assert.Empty(t, replayErr, "replay stderr")
	want := "FAILED limited: TEST-LIMIT\n\nstep 1: inc\nstep 2: inc\nTEST-LIMIT: counter is 2, limit 2\n"
	assert.Equal(t, want, prefixOf(replayOut, want), "the start of what replay printed")
}

// prefixOf returns s cut to the length of prefix, so that
// assert.Equal(t, prefix, prefixOf(s, prefix)) checks strings.HasPrefix and
// shows a diff when it fails.
func prefixOf(s, prefix string) string { return s[:min(len(s), len(prefix))] }

// TestSuiteReportStatistics checks that a suite's observed statistics reach
// the report sorted by name, with the mean computed and rounded.
func TestSuiteReportStatistics(t *testing.T) {
	tally := properties.NewTally()
	for _, v := range []float64{1, 0, 0} {
		tally.Observe("b: excess", v)
	}
	tally.Observe("a: gap", 0.5)
	sr := newSuiteReport(properties.Result{Suite: properties.Suite{Name: "s"}, Tally: tally, Passed: true})
	want := []statisticReport{{Name: "a: gap", Samples: 1, Mean: 0.5, Max: 0.5, Nonzero: 1}, {Name: "b: excess", Samples: 3, Mean: 0.333333, Max: 1, Nonzero: 1}}
	assert.Equal(t, want, sr.Statistics)
	empty := newSuiteReport(properties.Result{Suite: properties.Suite{Name: "s"}, Tally: properties.NewTally()})
	assert.NotNil(t, empty.Statistics, "statistics = null; want [] so readers need not tell null from empty")
}

// TestReportIncludesSimSweep: a sweep written by nodeproof sim --json is
// the report's simulation section verbatim, instead of the report's own
// seeds, and its line on stderr says what it covered.
func TestReportIncludesSimSweep(t *testing.T) {
	dir := t.TempDir()
	sweep := filepath.Join(dir, "sim.json")
	code, _, stderr := runNodeproof("", "sim", "--seeds", "3..4", "--hours", "0.05", "--pods", "3", "--json", sweep)
	require.Equal(t, 0, code, stderr)
	var want map[string]any
	require.NoError(t, json.Unmarshal([]byte(read(t, dir, "sim.json")), &want))

	out := filepath.Join(dir, "report")
	code, _, stderr = runNodeproof("", "report", "--out", out, "--checks", "2", "--steps", "2", "--seed", "1",
		"--suite", "^admission$", "--histories", "0", "--sim", sweep)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^sim +passed  2 seeds × 0.05 simulated hours \(seeds 3..4\)`, stderr)
	var got struct {
		Sim map[string]any `json:"sim"`
	}
	require.NoError(t, json.Unmarshal([]byte(read(t, out, "report.json")), &got))
	assert.Equal(t, want, got.Sim)
}
