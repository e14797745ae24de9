package reportview

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

	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/upstream"
	"github.com/nodeproof/nodeproof/verify"
)

// The replay lines of the synthetic matrix's cells that are explained
// under its tables.
const (
	findingReplay  = "cd conformance && go test -count=1 -modfile=releases/v1.37.2.mod -tags=kubelet1.37 -run '^TestFindingIGC$' ."
	contractReplay = "cd conformance && go test -count=1 -run '^TestSearchUpstream$/^imagegc$' ."
	compareReplay  = "cd conformance && go test -count=1 -modfile=releases/v1.37.2.mod -tags=kubelet1.37 -run '^TestCompareQOS$' ."
)

// syntheticUpstream is a passing release matrix of the modelled release
// and v1.37.2: one finding, fixed in v1.37.2 as its record says; its
// contract property, which the imagegc suite's search on upstream's code
// breaches on the modelled release only; one comparison that differs on
// v1.37.2 (a behaviour change, not a failure); one that agrees on both.
func syntheticUpstream() *upstream.Matrix {
	search := func(release string, breached bool, applied int, detail string) upstream.Test {
		return upstream.Test{Name: "TestSearchUpstream", Passed: true, Contracts: []upstream.ContractVerdict{{Property: "IGC-C-PROMISE",
			Release: release, Test: "TestSearchUpstream/imagegc", Checked: 300, Applied: applied, Breached: breached, Detail: detail}}}
	}
	finding := verify.Finding{ID: "IGC-F1", Title: "an image <b>in use</b> is removed", Confirmation: "conformance: TestFindingIGC",
		Releases: "fixed in v1.37.2 by kubernetes PR #1"}
	m := upstream.Build([]verify.Finding{finding}, []upstream.Column{
		{Release: upstream.Modelled, BuildSeconds: 41.25, RunSeconds: 12.5, Tests: []upstream.Test{
			{Name: "TestFindingIGC", Passed: true, Verdicts: []upstream.Verdict{{Finding: "IGC-F1", Release: upstream.Modelled, Present: true}}},
			search(upstream.Modelled, true, 12, "IGC-C-PROMISE: image i1 removed while c1 runs it; steps: 1. pull i1 2. start c1 on i1"),
			{Name: "TestCompareQOS", Passed: true},
			{Name: "TestCompareCgroups", Passed: true},
		}},
		{Release: "v1.37.2", Checks: 1000, BuildSeconds: 50, RunSeconds: 13, Tests: []upstream.Test{
			{Name: "TestFindingIGC", Passed: true, Verdicts: []upstream.Verdict{{Finding: "IGC-F1", Release: "v1.37.2",
				Detail: "image i1 is kept while c1 runs it\nsecond line"}}},
			search("v1.37.2", false, 14, ""),
			{Name: "TestCompareQOS", Failure: "=== RUN   TestCompareQOS\n    qos_test.go:40: \n        \tError Trace:\tqos_test.go:40\n" +
				"        \tError:      \tpod p1: got Burstable, want Guaranteed\n--- FAIL: TestCompareQOS (0.00s)"},
			{Name: "TestCompareCgroups", Passed: true},
		}},
	})
	return &m
}

// TestLoadUpstream: the matrix nodeproof upstream --json writes reads back
// as it was; a file that is not one, holds none, or whose cells do not
// follow its columns is refused, naming the file, the field and the rule.
func TestLoadUpstream(t *testing.T) {
	dir := t.TempDir()
	write := func(t *testing.T, data string) string {
		path := filepath.Join(dir, filepath.Base(t.Name())+".json")
		require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
		return path
	}
	encode := func(m *upstream.Matrix) string {
		data, err := json.Marshal(m)
		require.NoError(t, err)
		return string(data)
	}
	t.Run("good", func(t *testing.T) {
		got, err := LoadUpstream(write(t, encode(syntheticUpstream())))
		require.NoError(t, err)
		assert.Equal(t, syntheticUpstream(), got)
	})
	for name, tc := range map[string]struct{ data, want string }{
		"bad JSON":      {`{"modelled": "v1.36.3",`, "want the JSON object nodeproof upstream --json writes: unexpected EOF"},
		"unknown field": {`{"modelled": "v1.36.3", "rows": []}`, `want the JSON object nodeproof upstream --json writes: json: unknown field "rows"`},
		"array":         {`[]`, "want the JSON object nodeproof upstream --json writes"},
		"null":          {`null`, NoResults},
		"no columns":    {`{"modelled": "v1.36.3", "columns": []}`, NoResults},
	} {
		t.Run(name, func(t *testing.T) {
			path := write(t, tc.data)
			_, err := LoadUpstream(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), path+": ")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	for name, tc := range map[string]struct {
		change func(*upstream.Matrix)
		want   string
	}{
		"no modelled release":  {func(m *upstream.Matrix) { m.Modelled = "" }, "modelled: required"},
		"column without name":  {func(m *upstream.Matrix) { m.Columns[1].Release = "" }, "columns[1].release: required"},
		"release twice":        {func(m *upstream.Matrix) { m.Columns[1].Release = upstream.Modelled }, `columns[1].release: "v1.36.3" is also column 0's: one column a release`},
		"negative seconds":     {func(m *upstream.Matrix) { m.Columns[0].RunSeconds = -1 }, "columns[0]: build_seconds 41.25, run_seconds -1: a duration is not negative"},
		"test without name":    {func(m *upstream.Matrix) { m.Columns[1].Tests[2].Name = "" }, "columns[1].tests[2].name: required"},
		"finding without ID":   {func(m *upstream.Matrix) { m.Findings[0].ID = "" }, "findings[0].id: required"},
		"test row without one": {func(m *upstream.Matrix) { m.Tests[1].Test = "" }, "tests[1].test: required"},
		"contract without ID":  {func(m *upstream.Matrix) { m.Contracts[0].ID = "" }, "contracts[0].id: required"},
		"a finding's state on a contract": {func(m *upstream.Matrix) { m.Contracts[0].Cells[1].State = upstream.Present },
			`contracts[0].cells[1].state: "present" is not one of breached, held, not applicable, broken, not run`},
		"a contract's cell short": {func(m *upstream.Matrix) { m.Contracts[0].Cells = nil },
			"contracts[0].cells: 0 cells for 2 columns: want one cell a column"},
		"a cell short": {func(m *upstream.Matrix) { m.Findings[0].Cells = m.Findings[0].Cells[:1] },
			"findings[0].cells: 1 cells for 2 columns: want one cell a column"},
		"a cell too many": {func(m *upstream.Matrix) { m.Tests[0].Cells = append(m.Tests[0].Cells, m.Tests[0].Cells[1]) },
			"tests[0].cells: 3 cells for 2 columns: want one cell a column"},
		"cell of another release": {func(m *upstream.Matrix) { m.Findings[0].Cells[1].Release = "v1.99.0" },
			`findings[0].cells[1].release: "v1.99.0" is not one of the columns (v1.36.3, v1.37.2)`},
		"cells out of order": {func(m *upstream.Matrix) {
			m.Tests[1].Cells[0], m.Tests[1].Cells[1] = m.Tests[1].Cells[1], m.Tests[1].Cells[0]
		},
			`tests[1].cells[0].release: "v1.37.2" is column 1's, not column 0's (v1.36.3): cells follow the columns' order`},
		"unknown state": {func(m *upstream.Matrix) { m.Findings[0].Cells[1].State = "fixed" },
			`findings[0].cells[1].state: "fixed" is not one of present, absent, mixed, not applicable, broken, not run`},
		"a test's state on a finding": {func(m *upstream.Matrix) { m.Findings[0].Cells[0].State = upstream.Agrees },
			`findings[0].cells[0].state: "agrees" is not one of present, absent, mixed, not applicable, broken, not run`},
		"a finding's state on a test": {func(m *upstream.Matrix) { m.Tests[0].Cells[1].State = upstream.Absent },
			`tests[0].cells[1].state: "absent" is not one of agrees, differs, broken, not run`},
		"ran without replay": {func(m *upstream.Matrix) { m.Findings[0].Cells[1].Replay = "" },
			`findings[0].cells[1].replay: required on a cell that ran (state "absent")`},
		"contradicted elsewhere": {func(m *upstream.Matrix) { m.Findings[0].Contradicted = []string{"v1.38.0-beta.0"} },
			`findings[0].contradicted: "v1.38.0-beta.0" is not one of the columns (v1.36.3, v1.37.2)`},
	} {
		t.Run(name, func(t *testing.T) {
			m := syntheticUpstream()
			tc.change(m)
			path := write(t, encode(m))
			_, err := LoadUpstream(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), path+": "+tc.want)
		})
	}
	t.Run("not run without replay", func(t *testing.T) {
		m := syntheticUpstream()
		m.Tests[0].Cells[1] = upstream.Cell{Release: "v1.37.2", State: upstream.NotRun, Detail: "TestCompareCgroups is not in this release's run"}
		_, err := LoadUpstream(write(t, encode(m)))
		assert.NoError(t, err, "a cell that did not run has nothing to replay")
	})
}

// TestUpstreamSection: both renderings show what the matrix is, a row per
// release, a state per finding and release with a note (detail, replay)
// under the table for each cell that is not "present", the contract
// properties with a note for each cell that is not "held", and only the
// tests some release does not agree on, counting the others; a passing
// matrix leaves the report's verdict alone.
func TestUpstreamSection(t *testing.T) {
	r := &Report{Version: "test", Upstream: syntheticUpstream()}
	r.Finish(testInventory, []verify.Finding{}, 0)
	assert.Empty(t, r.Upstream.Failures())
	for _, n := range r.NotRun {
		assert.NotEqual(t, coverage.UpstreamID, n.ID, "the matrix was given")
	}
	for _, p := range r.Verdict().Problems {
		assert.NotContains(t, p, "upstream", "a comparison that differs on another release is not a failure")
	}

	md := RenderMarkdown(r, MarkdownLimit)
	for _, want := range []string{
		"\n## Upstream releases\n\nThe conformance module (nodeproof's checks modelled on v1.36.3, the tests that confirm its findings " +
			"and the suites' searches with upstream's code as the system under test) built and run against each upstream release's " +
			"own kubelet packages (nodeproof upstream, make upstream-matrix). " +
			"A finding absent on a release means that release keeps the promise the finding breaks; " +
			"a comparison that differs is a behaviour change since v1.36.3, not a bug.\n\n",
		"| Release | Build (s) | Run (s) | Cases a comparison | Tests | Failed | Error |\n|---|---|---|---|---|---|---|\n| v1.36.3 | 41.2 | 12.5 | 10,000 (the module's) | 4 | 0 | - |\n| v1.37.2 | 50.0 | 13.0 | 1000 | 4 | 1 | - |\n",
		"| Finding | Broken promise | v1.36.3 | v1.37.2 |\n|---|---|---|---|\n| IGC-F1 | an image &lt;b&gt;in use&lt;/b&gt; is removed | present | absent |\n\n" +
			"- `IGC-F1` on v1.37.2: absent: image i1 is kept while c1 runs it; replay: `" + findingReplay + "`\n",
		"| Contract property | v1.36.3 | v1.37.2 |\n|---|---|---|\n| IGC-C-PROMISE | breached | held |\n\n" +
			"- `IGC-C-PROMISE` on v1.36.3: breached: checked 300, applied 12: IGC-C-PROMISE: image i1 removed while c1 runs it; " +
			"steps: 1. pull i1 2. start c1 on i1; replay: `" + contractReplay + "`\n",
		"| Test | v1.36.3 | v1.37.2 |\n|---|---|---|\n| TestCompareQOS | agrees | differs |\n\n" +
			"- `TestCompareQOS` on v1.37.2: differs: pod p1: got Burstable, want Guaranteed (qos_test.go:40); replay: `" + compareReplay + "`\n",
		"\n1 other test agrees on every release.\n",
	} {
		assert.Contains(t, md, want, "report.md")
	}
	for _, unwanted := range []string{"second line", "| TestCompareCgroups |", "| TestSearchUpstream |", "IGC-C-PROMISE` on v1.37.2", "Failures, which fail"} {
		assert.NotContains(t, md, unwanted, "report.md")
	}
	assert.Less(t, indexOf(t, md, "## Conformance against upstream"), indexOf(t, md, "## Upstream releases"))
	assert.Less(t, indexOf(t, md, "## Upstream releases"), indexOf(t, md, "## Plugins nobody here wrote"))

	var page bytes.Buffer
	require.NoError(t, WriteHTML(&page, r))
	section := regexp.MustCompile(`(?s)<section id="upstream">.*?</section>`).FindString(page.String())
	for _, want := range []string{
		"<h2>Upstream releases</h2>\n<p>The conformance module (nodeproof&#39;s checks modelled on v1.36.3",
		"<tr><td>v1.37.2</td><td>50.0</td><td>13.0</td><td>1000</td><td>4</td><td>1</td><td>-</td></tr>",
		"<tr><th>Finding</th><th>Broken promise</th><th>v1.36.3</th><th>v1.37.2</th></tr>\n" +
			"<tr><td>IGC-F1</td><td>an image &lt;b&gt;in use&lt;/b&gt; is removed</td><td>present</td><td>absent</td></tr>",
		"<li><code>IGC-F1</code> on v1.37.2: absent: image i1 is kept while c1 runs it; replay: <code class=\"replay\">cd conformance &amp;&amp; go test -count=1 " +
			"-modfile=releases/v1.37.2.mod -tags=kubelet1.37 -run &#39;^TestFindingIGC$&#39; .</code></li>",
		"<tr><th>Contract property</th><th>v1.36.3</th><th>v1.37.2</th></tr>\n<tr><td>IGC-C-PROMISE</td><td>breached</td><td>held</td></tr>",
		"<li><code>IGC-C-PROMISE</code> on v1.36.3: breached: checked 300, applied 12: IGC-C-PROMISE: image i1 removed while c1 runs it; " +
			"steps: 1. pull i1 2. start c1 on i1; replay: <code class=\"replay\">cd conformance &amp;&amp; go test -count=1 -run &#39;^TestSearchUpstream$/^imagegc$&#39; .</code></li>",
		"<tr><td>TestCompareQOS</td><td>agrees</td><td>differs</td></tr>",
		"<li><code>TestCompareQOS</code> on v1.37.2: differs: pod p1: got Burstable, want Guaranteed (qos_test.go:40); replay: <code class=\"replay\">",
		"<p>1 other test agrees on every release.</p>",
	} {
		assert.Contains(t, section, want, "index.html")
	}
	for _, unwanted := range []string{"second line", "<td>TestCompareCgroups</td>", "<td>TestSearchUpstream</td>", "Failures, which fail"} {
		assert.NotContains(t, section, unwanted, "index.html")
	}
}

// TestUpstreamFailuresFailTheReport: what Matrix.Failures lists (a broken
// harness, a release that did not build, a record a cell contradicts)
// makes the verdict red, each failure a problem, and the section lists
// them; without the file, the section is listed as not run.
func TestUpstreamFailuresFailTheReport(t *testing.T) {
	m := syntheticUpstream()
	m.Findings[0].Stated = "still present in v1.37.2"
	m.Findings[0].Contradicted = []string{"v1.37.2"}
	r := &Report{Version: "test", Upstream: m}
	r.Finish(testInventory, []verify.Finding{}, 0)
	assert.False(t, r.Passed)
	failure := `IGC-F1: the record says "still present in v1.37.2", the matrix says otherwise on v1.37.2`
	assert.Equal(t, []string{failure}, m.Failures())
	assert.Contains(t, r.Verdict().Problems, "upstream releases: "+failure)
	md := RenderMarkdown(r, MarkdownLimit)
	assert.Contains(t, md, "\nFailures, which fail this report:\n\n- IGC-F1: the record says \"still present in v1.37.2\", the matrix says otherwise on v1.37.2\n")
	var page bytes.Buffer
	require.NoError(t, WriteHTML(&page, r))
	assert.Contains(t, page.String(), `<p class="failed">Failures, which fail this report:</p>`+"\n"+
		`<ul><li>IGC-F1: the record says &#34;still present in v1.37.2&#34;, the matrix says otherwise on v1.37.2</li></ul>`)

	// A release that did not build: every cell of its column not run, the
	// column's error on its row.
	m = syntheticUpstream()
	m.Columns[1].Error, m.Columns[1].Tests = "the conformance module does not build against v1.37.2: exit status 1\n./shim.go:3: undefined: x", []upstream.Test{}
	for _, rows := range [][]upstream.Cell{m.Findings[0].Cells, m.Contracts[0].Cells, m.Tests[0].Cells, m.Tests[1].Cells} {
		rows[1] = upstream.Cell{Release: "v1.37.2", State: upstream.NotRun, Detail: "the conformance module does not build against v1.37.2: exit status 1"}
	}
	r = &Report{Version: "test", Upstream: m}
	r.Finish(testInventory, []verify.Finding{}, 0)
	assert.False(t, r.Passed)
	assert.Contains(t, r.Verdict().Problems, "upstream releases: v1.37.2: the conformance module does not build against v1.37.2: exit status 1")
	md = RenderMarkdown(r, MarkdownLimit)
	assert.Contains(t, md, "| v1.37.2 | 50.0 | 13.0 | 1000 | 0 | 0 | the conformance module does not build against v1.37.2: exit status 1 |\n")
	assert.Contains(t, md, "- `IGC-F1` on v1.37.2: not run: the conformance module does not build against v1.37.2: exit status 1\n", "a cell not run has no replay")

	r.Upstream = nil
	r.Finish(testInventory, []verify.Finding{}, 0)
	assert.True(t, r.Passed)
	assert.Contains(t, r.NotRun, coverage.NotRun{ID: coverage.UpstreamID, Section: "upstream releases", Command: "make upstream-matrix", Writes: DefaultUpstreamFile})
	page.Reset()
	require.NoError(t, WriteHTML(&page, r))
	assert.Contains(t, page.String(), "<h2>Upstream releases</h2>\n<p>upstream releases not run: run it with <code>make upstream-matrix</code>, which writes <code>report/upstream.json</code>.</p>")
	assert.Contains(t, RenderMarkdown(r, MarkdownLimit), "## Upstream releases\n\nupstream releases not run: run it with `make upstream-matrix`, which writes `report/upstream.json`.\n")
}

// indexOf is where want starts in s, failing the test when it is absent.
func indexOf(t *testing.T, s, want string) int {
	t.Helper()
	i := strings.Index(s, want)
	require.GreaterOrEqual(t, i, 0, "%q is missing", want)
	return i
}
