package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/reportview"
	"github.com/nodeproof/nodeproof/simreport"
)

// TestReportRejectsOutBeforeRunning: a bad --out used to surface only after
// every suite had run. Now it is exit 2 with the flag named, and no suite
// starts.
func TestReportRejectsOutBeforeRunning(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, out := range []string{filepath.Join(file, "sub"), file} {
		var stdout, stderr bytes.Buffer
		code := report(reportOptions{out: out, checks: 5, steps: 5, seed: 1}, []properties.Suite{counterSuite("counter", 0)}, &stdout, &stderr)
		assert.Equal(t, 2, code, "--out %s", out)
		assert.Contains(t, stderr.String(), fmt.Sprintf("nodeproof report: --out %q must be a", out))
		assert.NotContains(t, stderr.String(), "counter", "a suite ran before --out was checked")
	}
}

// TestReportIncludesDefaultResults: without flags the report includes the
// kill matrix and conformance results where make mutants and make
// conformance write them, and says what it did not run.
func TestReportIncludesDefaultResults(t *testing.T) {
	t.Chdir(t.TempDir())
	opts, err := parseReportArgs()
	require.NoError(t, err)
	assert.Nil(t, opts.mutants)
	assert.Nil(t, opts.conformance)

	require.NoError(t, os.MkdirAll("report", 0o755))
	require.NoError(t, os.WriteFile(defaultMutantsFile, []byte(`[{"id":"dm-x","subsystem":"dm","killed":true}]`), 0o644))
	require.NoError(t, os.WriteFile(defaultConformanceFile, []byte(`[{"function":"pod.QOS","cases":5,"mismatches":0}]`), 0o644))
	opts, err = parseReportArgs()
	require.NoError(t, err)
	assert.Equal(t, []mutantRow{{ID: "dm-x", Subsystem: "dm", Killed: true}}, opts.mutants)
	require.NotNil(t, opts.conformance)
	assert.Equal(t, [][]string{{"pod.QOS", "5", "0"}}, opts.conformance.Cells)
	assert.Nil(t, opts.pluginCheck)
	require.NoError(t, os.WriteFile(defaultPluginCheckFile, []byte(`[{"plugin":"stub","passed":false,"findings":["PC-X (contract): m"]}]`), 0o644))
	opts, err = parseReportArgs()
	require.NoError(t, err)
	require.NotNil(t, opts.pluginCheck)
	assert.Equal(t, [][]string{{"stub", "false", `["PC-X (contract): m"]`}}, opts.pluginCheck.Cells)

	withKnownFindings(t, syntheticFinding)
	assert.Nil(t, opts.findings)
	require.NoError(t, os.WriteFile(defaultFindingsFile, []byte(`{"findings":[{"id":"IGC-F1","searches":[{"seed":3,"found":true}],"reproduced":true}]}`), 0o644))
	opts, err = parseReportArgs()
	require.NoError(t, err)
	require.NotNil(t, opts.findings)
	assert.True(t, opts.findings.Findings[0].Reproduced)

	// A file named by flag that is missing is still an error.
	_, err = parseReportArgs("--mutants", "missing.json")
	assert.ErrorContains(t, err, "--mutants: open missing.json")
}

// TestReportRecordsHistories runs the report as `nodeproof report` does,
// with one short history and one short simulated seed: the sections are in
// report.json, the visualization beside it, and no section is listed as
// not run (the inventory's suites, mutants and conformance comparisons,
// which this report's one test suite and empty results lack, are).
func TestReportRecordsHistories(t *testing.T) {
	withKnownFindings(t) // none, so that no findings search is wanted
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := report(reportOptions{out: dir, checks: 5, steps: 5, seed: 1, histories: 1, simSeeds: 1, simHours: 0.1, mutants: []mutantRow{},
		conformance: &tableSection{}, pluginCheck: &tableSection{}}, []properties.Suite{counterSuite("counter", 0)}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	assert.Contains(t, stderr.String(), "linearizability  passed  1/1 histories linearizable")
	assert.Contains(t, stderr.String(), "sim              passed  1 seed × 0.1 simulated hours (seeds 1..1), ")

	var data struct {
		Passed          bool               `json:"passed"`
		Linearizability []map[string]any   `json:"linearizability"`
		NotRun          []coverage.NotRun  `json:"not_run"`
		Sim             *simreport.Section `json:"sim"`
	}
	require.NoError(t, json.Unmarshal([]byte(read(t, dir, "report.json")), &data))
	assert.True(t, data.Passed)
	for _, n := range data.NotRun {
		assert.NotContains(t, []string{coverage.FindingsSearchID, coverage.SimID, coverage.LinearizabilityID, coverage.ConformanceID,
			coverage.PluginCheckID, coverage.MutantsID}, n.ID, "a section listed as not run")
	}
	if assert.NotNil(t, data.Sim, "sim") {
		assert.Equal(t, []uint64{1, 1, 1}, []uint64{uint64(data.Sim.Seeds), data.Sim.FirstSeed, data.Sim.LastSeed}, "sim: one seed, the report's")
		assert.Equal(t, 0.1, data.Sim.Hours, "sim: hours per seed")
		assert.Positive(t, data.Sim.Events, "sim: events")
		assert.True(t, data.Sim.Passed, "sim: passed")
		assert.Len(t, data.Sim.Runs, 1, "sim: runs")
	}
	require.Len(t, data.Linearizability, 1)
	assert.Equal(t, "Ok", data.Linearizability[0]["result"])
	assert.Equal(t, "linearizability-seed-1.html", data.Linearizability[0]["visualization"])
	assert.FileExists(t, filepath.Join(dir, "linearizability-seed-1.html"))
	assert.Contains(t, read(t, dir, "index.html"), `<a href="linearizability-seed-1.html">linearizability-seed-1.html</a>`)
}

// TestMarkdownFitsAPullRequestComment fills a report far past GitHub's
// limit: report.md stays within it, keeps the verdict, the matrix and the
// first counterexample, and says it was cut.
func TestMarkdownFitsAPullRequestComment(t *testing.T) {
	data := finishedReport(t)
	failed := data.Suites[1]
	failed.Failure.Message = strings.Repeat("a long message line\n", 2000)
	for i := range 200 {
		s := failed
		s.Name = fmt.Sprintf("suite-%03d", i)
		data.Suites = append(data.Suites, s)
	}
	md := renderMarkdown(data, reportview.MarkdownLimit)
	assert.LessOrEqual(t, len(md), reportview.MarkdownLimit)
	assert.True(t, strings.HasPrefix(md, "# nodeproof invariant report\n\n**FAILED: "), md[:200])
	assert.Contains(t, md, "| Subsystem | core |")
	assert.Contains(t, md, "### Counterexample: suite devicemanager, DM-EXCLUSIVE")
	assert.Contains(t, md, "Replay: `nodeproof replay --suite devicemanager --seed 59 --steps 100`")
	assert.Contains(t, md, "(cut; index.html has the whole message)")
	assert.Regexp(t, `\*\*Truncated:\*\* \d+ more parts of the report do not fit a pull-request comment`, md)

	small := renderMarkdown(finishedReport(t), reportview.MarkdownLimit)
	assert.NotContains(t, small, "Truncated")
}

// parseReportArgs reads report's flags as the command does.
func parseReportArgs(args ...string) (reportOptions, error) {
	var f reportFlags
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	f.define(fs)
	if err := fs.Parse(args); err != nil {
		return reportOptions{}, err
	}
	return f.options()
}

// TestReportFailsOnSimViolation: a simulated seed that broke an invariant
// fails the report, and the verdict, report.md and index.html give the
// invariant, the trace and the replay line.
func TestReportFailsOnSimViolation(t *testing.T) {
	data := syntheticReport(t)
	data.Suites = data.Suites[:1] // the passing suite only
	data.Mutants = nil
	replay := "nodeproof sim --seed 43 --hours 2 --pods 20 --faults 'plugin-crash=0.01'"
	v := simreport.Violation{Seed: 43, Invariant: "SIM-DEVICES", Message: "SIM-DEVICES: device d1 held by <p1> and p2",
		Event: "#9 1m0s plugin-crash: p", Trace: []string{"#8 50s pod-arrive: p1", "#9 1m0s plugin-crash: p"}, Replay: replay}
	data.Sim.Passed = false
	data.Sim.Violations = []simreport.Violation{v}
	data.finish(testInventory, 3)
	assert.False(t, data.Passed, "a report whose simulation broke an invariant passes")
	assert.Equal(t, []string{"sim: seed 43: SIM-DEVICES violated; replay: " + replay}, verdict(data).Problems)

	md := renderMarkdown(data, reportview.MarkdownLimit)
	assert.Contains(t, md, "| FAILED | 2 (42..43) |")
	assert.Contains(t, md, "### Counterexample: seed 43, SIM-DEVICES\n\n```text\nSIM-DEVICES: device d1 held by <p1> and p2\n\n#8 50s pod-arrive: p1\n#9 1m0s plugin-crash: p\n```")
	assert.Contains(t, md, "Replay: `"+replay+"`")

	var html bytes.Buffer
	require.NoError(t, writeHTML(&html, data))
	assert.Contains(t, html.String(), `<h3 class="failed">Counterexample: seed 43, SIM-DEVICES</h3>`)
	assert.Contains(t, html.String(), "SIM-DEVICES: device d1 held by &lt;p1&gt; and p2\n\n#8 50s pod-arrive: p1\n#9 1m0s plugin-crash: p\n</code></pre>")
	assert.Contains(t, html.String(), `<code class="replay">nodeproof sim --seed 43 --hours 2 --pods 20 --faults &#39;plugin-crash=0.01&#39;</code>`)
}

// TestOutLeavesNothingBehind: an --out that cannot be created (a name
// longer than NAME_MAX at its end or midway, a path longer than PATH_MAX)
// exits 2 naming the flag, and the directories made on the way are
// removed. Before, the report exited 2 and left them behind.
func TestOutLeavesNothingBehind(t *testing.T) {
	tooLongName := strings.Repeat("n", 300)
	deep := "deep"
	for range 20 {
		deep = filepath.Join(deep, strings.Repeat("d", 250))
	}
	for name, out := range map[string]string{
		"a last name beyond NAME_MAX":   filepath.Join("a", "b", tooLongName),
		"a name beyond NAME_MAX midway": filepath.Join("a", "b", tooLongName, "c"),
		"a path beyond PATH_MAX":        deep,
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			status, stdout, stderr := runNodeproof("", "report", "--out", filepath.Join(root, out), "--suite", "^admission$", "--checks", "1",
				"--histories", "0", "--sim-seeds", "0")
			assert.Equal(t, cli.StatusUsage, status, "stdout: %s", stdout)
			assert.Contains(t, stderr, "nodeproof report: --out ")
			assert.Contains(t, stderr, "file name too long")
			left, err := os.ReadDir(root)
			require.NoError(t, err)
			assert.Empty(t, left, "what the failed --out left behind")
		})
	}
}
