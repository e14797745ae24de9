package reportview

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/findings"
	"github.com/nodeproof/nodeproof/inventory"
	"github.com/nodeproof/nodeproof/linearizability"
	"github.com/nodeproof/nodeproof/mutants"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/realkubelet/sweep"
	"github.com/nodeproof/nodeproof/simreport"
	"github.com/nodeproof/nodeproof/upstream"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// The synthetic report's sources: one of each way a cell renders them, and a
// code source whose text and URL carry markup that must come out escaped.
var (
	igcSeed = Source{Kind: "seed", Text: "Seed article on image garbage collection, section 'How image GC works'"}
	dmCode  = Source{Kind: "code", Text: "ManagerImpl.Allocate <script>x</script> (v1.36.3)",
		URL: `https://github.com/kubernetes/kubernetes/blob/v1.36.3/pkg/kubelet/cm/devicemanager/manager.go?a="b"&c`}
	dmDoc   = Source{Kind: "doc", Text: "nodeproof docs/architecture.md", URL: "docs/architecture.md"}
	dmIssue = Source{Kind: "issue", Text: "kubernetes issue #109595", URL: "https://github.com/kubernetes/kubernetes/issues/109595"}
	igcPage = Source{Kind: "kubernetes-doc", Text: "Kubernetes documentation, Garbage Collection", URL: "https://kubernetes.io/docs/concepts/architecture/garbage-collection/"}
)

// syntheticFinding is the one known finding of the synthetic report, which
// the imagegc suite reached; its search found it from seed 3.
var syntheticFinding = verify.Finding{ID: "IGC-F1", Title: "an image <b>in use</b> is removed", Subsystem: "imagegc", Suite: "imagegc",
	Property: "IGC-C-PROMISE", Promise: "Images in use are kept.", Sources: []cite.Source{{Kind: cite.KindKubernetesDoc, Text: igcPage.Text, URL: igcPage.URL}},
	Steps: []string{"pull image i1", "start c1 on i1 during the pass"}, Seed: 3, Confirmation: "conformance: TestFindingIGC",
	RealKubelet: "realkubelet/scenario: TestFindingIGCOnNode", Releases: "still present in v1.37.2"}

// syntheticSearches is the findings file of the synthetic report.
func syntheticSearches() *findings.File {
	return &findings.File{Checks: 300, Steps: 100, Findings: []findings.Result{{ID: "IGC-F1", Suite: "imagegc", Property: "IGC-C-PROMISE",
		Searches: []findings.Search{{Seed: 3, Found: true, FoundAfter: 1.25, Seconds: 2, Cases: 7, Steps: 2}}, Reproduced: true, MedianFoundAfter: 1.25, MedianSteps: 2}}}
}

// syntheticReport has one passed suite, one failed suite whose message
// carries markup, a mutant and a pass-through section.
func syntheticReport(t *testing.T) *Report {
	t.Helper()
	lin := []linearizability.Result{{History: "seed 1", Operations: 12, Result: "Ok", Visualization: "lin-1.html"},
		{History: "seed 2", Result: "Ok", Visualization: "../x.html"}}
	return &Report{
		Version: "0.1.0-dev",
		Started: "2026-01-02T03:04:05Z",
		Seconds: 4.5,
		Suites: []Suite{
			{
				Name: "imagegc", Subsystem: "imagegc", Checks: 300, Steps: 3000, Seconds: 1.5, Passed: true, Seed: 42,
				Actions: map[string]int{"pull": 2000, "gc": 1000},
				Invariants: []Invariant{
					{ID: "IGC-INUSE", Statement: "An image in use is never removed.", Source: igcSeed.Text, Sources: []Source{igcSeed}, Checked: 3300, Applied: 2900, Kind: "fidelity"},
					{ID: "IGC-C-PROMISE", Statement: "An image a container runs is kept.", Source: igcPage.Text, Sources: []Source{igcPage}, Checked: 3300, Applied: 12, Kind: "contract",
						Breaches: 4, FirstBreach: "IGC-C-PROMISE: image i1 removed while c1 runs it"},
				},
				Statistics: []Statistic{{Name: "bytes freed beyond the target", Samples: 40, Mean: 1.23456, Max: 7, Nonzero: 12}},
			},
			{
				Name: "devicemanager", Subsystem: "devicemanager", Checks: 17, Steps: 212, Seconds: 3, Passed: false, Seed: 42,
				Actions: map[string]int{"register": 150, "allocate": 62},
				Invariants: []Invariant{
					{ID: "DM-EXCLUSIVE", Statement: "A device is held by at most one container.", Source: dmCode.Text + "; " + dmDoc.Text,
						Sources: []Source{dmCode, dmDoc}, Checked: 229, Applied: 31, Violations: 1, Kind: "fidelity"},
					{ID: "DM-CAPACITY", Statement: "Allocatable never exceeds capacity.", Source: dmIssue.Text, Sources: []Source{dmIssue}, Checked: 229, Applied: 200, Kind: "fidelity"},
				},
				Failure: &Failure{
					Invariant: "DM-EXCLUSIVE",
					Message:   "DM-EXCLUSIVE: device <script>alert(1)</script> held twice\nreplay: nodeproof replay --suite devicemanager --seed 59 --steps 100",
					Steps:     []string{"step 1: register resource=a.com/r endpoint=p1.sock", "DM-EXCLUSIVE: device <script>alert(1)</script> held twice"},
					Replay:    "nodeproof replay --suite devicemanager --seed 59 --steps 100",
				},
			},
		},
		Mutants: []mutants.Row{
			{ID: "devicemanager-reregistration-race", Subsystem: "devicemanager", Source: "kubernetes#1", Killed: true, KilledBy: "DM-EXCLUSIVE", Seconds: 2.25},
		},
		Linearizability: lin,
		Sim:             syntheticSim(),
		Node:            syntheticNode(),
		Upstream:        syntheticUpstream(),
	}
}

// syntheticNode is a passing sweep on the real kubelet, in which a known
// bug explained breaches.
func syntheticNode() *sweep.Summary {
	return &sweep.Summary{
		FirstSeed: 1, LastSeed: 10, MaxSteps: 8, Scenarios: 10, Steps: 42,
		Kinds:      map[string]int{"add-pod": 20, "kill-kubelet": 12, "remove-pod": 10},
		Checks:     []sweep.Check{{ID: "RK-C-NOT-SHARED", Checked: 42, Applied: 17}, {ID: "RK-RESTART-KEEPS", Checked: 42, Applied: 12}},
		Known:      []sweep.Known{{ID: "SIM-F2", Breaches: 3, Shortest: "steps:\n  1. add-pod p0"}},
		Violations: []sweep.Violation{}, StepMedianSeconds: 0.9, StepP95Seconds: 1.75, RestartMedianSeconds: 1.5, RestartP95Seconds: 2,
		Seconds: 55.5, NotCovered: []string{sweep.ImageGCNotCovered}, Passed: true,
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
func finishedReport(t *testing.T) *Report {
	data := syntheticReport(t)
	data.Searches = syntheticSearches()
	data.Finish(testInventory, []verify.Finding{syntheticFinding}, 3)
	return data
}

// render writes the three renderings of r into dir, as nodeproof report
// does (report.json through cli.WriteJSON, which encodes the same).
func render(t *testing.T, dir string, r *Report) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	var page, md bytes.Buffer
	require.NoError(t, WriteHTML(&page, r))
	require.NoError(t, WriteMarkdown(&md, r))
	data, err := json.Marshal(r)
	require.NoError(t, err)
	for name, content := range map[string][]byte{"index.html": page.Bytes(), "report.md": md.Bytes(), "report.json": data} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), content, 0o644))
	}
}

func TestRenderings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	render(t, dir, finishedReport(t))

	t.Run("json", func(t *testing.T) { checkReportJSON(t, read(t, dir, "report.json")) })

	t.Run("html", func(t *testing.T) {
		html := read(t, dir, "index.html")
		for _, want := range []string{
			"nodeproof replay --suite devicemanager --seed 59 --steps 100",
			"<svg",
			"&lt;script&gt;alert(1)&lt;/script&gt;",
			"step 1: register resource=a.com/r endpoint=p1.sock",
			"devicemanager-reregistration-race",
			"<th>History</th><th>Clients</th><th>Operations</th><th>Partitions</th><th>Unknown outcomes</th><th>Faults</th><th>Check time</th><th>Result</th><th>Visualization</th>",
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
			// The real kubelet's sweep, its properties folded, the known bug counted apart.
			"<section id=\"node\">\n<h2>Real kubelet</h2>",
			`<tr><td>passed</td><td>1..10</td><td>10</td><td>42</td><td>0.900 / 1.750</td><td>1.500 / 2.000</td><td>55.500</td><td>0</td></tr>`,
			"<p>Steps by kind: add-pod 20, kill-kubelet 12, remove-pod 10.</p>",
			"<details><summary>RK-* properties (2): checked, applied</summary>\n<table>",
			"<tr><td>RK-C-NOT-SHARED</td><td>42</td><td>17</td></tr>",
			"<tr><th>Known bug</th><th>Breaches it explained</th></tr>\n<tr><td>SIM-F2</td><td>3</td></tr>",
			"<p>Not covered: the kubelet&#39;s image garbage collection: the kubelet runs a pass as it starts",
			// The release matrix, after the conformance results.
			"<section id=\"upstream\">\n<h2>Upstream releases</h2>\n<p>The conformance module (nodeproof&#39;s checks modelled on v1.36.3",
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
			"| IGC-F1 | imagegc | an image &lt;b&gt;in use&lt;/b&gt; is removed | found from seed 3 after 1.25 s, shrunk to 2 steps | `nodeproof findings IGC-F1` | conformance: TestFindingIGC | realkubelet/scenario: TestFindingIGCOnNode | no upstream issue found |",
			"```text\nstep 1: register resource=a.com/r endpoint=p1.sock\nDM-EXCLUSIVE: device <script>",
			"Replay: `nodeproof replay --suite devicemanager --seed 59 --steps 100`",
			"1 of 1 killed.",
			"| seed 2 | 0 | 0 | 0 | 0 | 0 | 0 s | Ok | ../x.html |",
			"## Node simulation\n\n| Result | Seeds | Hours per seed | Simulated hours | Events | Pods | Seconds | Violations |",
			"| passed | 2 (42..43) | 2 | 4 | 123456 | 20 | 0.8 | 0 |",
			"Faults injected: kubelet-restart 2, plugin-crash 7.",
			"## Real kubelet\n\nGenerated scenarios played against the real kubelet v1.36.3 binary",
			"| passed | 1..10 | 10 | 42 | 0.900 / 1.750 | 1.500 / 2.000 | 55.500 | 0 |",
			"Steps by kind: add-pod 20, kill-kubelet 12, remove-pod 10.",
			"| RK-C-NOT-SHARED | 42 | 17 |",
			"| SIM-F2 | 3 |",
			"Not covered: the kubelet's image garbage collection: the kubelet runs a pass as it starts",
			"## Upstream releases\n\nThe conformance module (nodeproof's checks modelled on v1.36.3",
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
		Node            *sweep.Summary     `json:"node"`
		Upstream        *upstream.Matrix   `json:"upstream"`
		Findings        []Finding          `json:"findings"`
	}
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&report), "report.json does not match the schema:\n%s", data)
	var keys map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(data), &keys))
	for _, k := range []string{"version", "started", "seconds", "suites", "sim", "node", "upstream", "linearizability", "mutants", "conformance"} {
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
		assert.Equal(t, "realkubelet/scenario: TestFindingIGCOnNode", f.RealKubelet)
		assert.Equal(t, "nodeproof findings IGC-F1", f.Replay)
		assert.Equal(t, verify.NoTracker, f.TrackerNote)
		assert.Equal(t, []Source{igcPage}, f.Sources)
		assert.Equal(t, 4, f.Breaches)
		if assert.NotNil(t, f.Search) {
			assert.True(t, f.Search.Reproduced)
		}
	}
	assert.Equal(t, []map[string]string{{"kind": "seed", "text": igcSeed.Text, "url": ""}}, passed.Invariants[0].Sources)
	wantMutant := map[string]any{"id": "devicemanager-reregistration-race", "subsystem": "devicemanager", "source": "kubernetes#1",
		"killed": true, "killed_by": "DM-EXCLUSIVE", "seconds": 2.25}
	assert.Equal(t, []map[string]any{wantMutant}, report.Mutants, "mutants")
	if assert.Len(t, report.Linearizability, 2, "linearizability") {
		assert.Equal(t, 12.0, report.Linearizability[0]["operations"], "linearizability, linearizability.Result's fields")
	}
	assert.Nil(t, report.Conformance, "conformance is null when not given")
	assert.Equal(t, syntheticSim(), report.Sim, "sim")
	assert.Equal(t, syntheticNode(), report.Node, "node")
	assert.Equal(t, syntheticUpstream(), report.Upstream, "upstream")
	assert.False(t, report.Passed, "a report with a failed suite did not pass")
	assert.Equal(t, []coverage.NotRun{
		{ID: coverage.ConformanceID, Section: "conformance against upstream", Command: "make conformance", Writes: DefaultConformanceFile},
		{ID: coverage.PluginCheckID, Section: "plugin check of plugins nobody here wrote", Command: "make conformance", Writes: DefaultPluginCheckFile},
		{ID: "mutants-devicemanager", Section: "mutant dm-other", Command: "make mutants", Writes: DefaultMutantsFile},
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

// TestNewSuiteStatistics checks that a suite's observed statistics reach
// the report sorted by name, with the mean computed and rounded.
func TestNewSuiteStatistics(t *testing.T) {
	tally := properties.NewTally()
	for _, v := range []float64{1, 0, 0} {
		tally.Observe("b: excess", v)
	}
	tally.Observe("a: gap", 0.5)
	sr := NewSuite(properties.Result{Suite: properties.Suite{Name: "s"}, Tally: tally, Passed: true})
	want := []Statistic{{Name: "a: gap", Samples: 1, Mean: 0.5, Max: 0.5, Nonzero: 1}, {Name: "b: excess", Samples: 3, Mean: 0.333333, Max: 1, Nonzero: 1}}
	assert.Equal(t, want, sr.Statistics)
	empty := NewSuite(properties.Result{Suite: properties.Suite{Name: "s"}, Tally: properties.NewTally()})
	assert.NotNil(t, empty.Statistics, "statistics = null; want [] so readers need not tell null from empty")
}
