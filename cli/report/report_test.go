package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/cli/replay"
	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/mutants"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/properties/propertiestest"
	"github.com/nodeproof/nodeproof/reportview"
	"github.com/nodeproof/nodeproof/simreport"
	"github.com/nodeproof/nodeproof/upstream"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runReport runs nodeproof report over suites and the known findings, as
// nodeproof does, and returns its exit status and output.
func runReport(suites []properties.Suite, known []verify.Finding, args ...string) (status int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	root := cli.NewRoot(NewCommand(suites, known, nil))
	status = cli.Execute(root, append([]string{"report"}, args...), strings.NewReader(""), &out, &errOut)
	return status, out.String(), errOut.String()
}

// parse reads report's flags and the files they name as the command
// does, before any work.
func parse(known []verify.Finding, args ...string) (*Options, error) {
	o := &Options{suites: properties.Suites(), known: known}
	cmd := &cobra.Command{}
	o.define(cmd)
	if err := cmd.Flags().Parse(args); err != nil {
		return nil, err
	}
	o.Complete(cmd, nil)
	return o, o.Validate()
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
	upstreamState := filepath.Join(dir, "upstream-state.json")
	for path, content := range map[string]string{notArray: `{"a":1}`, notObjects: `[1,2]`, noID: `[{"killed":true}]`,
		upstreamState: `{"modelled":"v1.36.3","columns":[{"release":"v1.36.3","tests":[]}],"findings":[{"id":"X-F1","title":"x","stated":"",` +
			`"cells":[{"release":"v1.36.3","state":"gone","replay":"r"}]}],"tests":[]}`,
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
		{[]string{"--node", filepath.Join(dir, "missing.json")}, "--node: open "},
		{[]string{"--node", notObjects}, "--node: " + notObjects + ": want the JSON object nodeproof node --json writes"},
		{[]string{"--node", simUnknownKey}, "--node: " + simUnknownKey + `: want the JSON object nodeproof node --json writes: json: unknown field "seeds"`},
		{[]string{"--upstream", filepath.Join(dir, "missing.json")}, "--upstream: open "},
		{[]string{"--upstream", notObjects}, "--upstream: " + notObjects + ": want the JSON object nodeproof upstream --json writes"},
		{[]string{"--upstream", notArray}, "--upstream: " + notArray + `: want the JSON object nodeproof upstream --json writes: json: unknown field "a"`},
		{[]string{"--upstream", upstreamState}, "--upstream: " + upstreamState + `: findings[0].cells[0].state: "gone" is not one of present, absent, mixed, not applicable, broken, not run`},
		{[]string{"--seed", "-1"}, `invalid argument "-1" for "--seed" flag`},
		{[]string{"-seed", "1"}, "unknown shorthand flag: 's' in -seed"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		code, _, stderr := runReport(properties.Suites(), verify.Findings(), tc.args...)
		assert.Equal(t, 2, code, "report %q: exit status; stderr %q", tc.args, stderr)
		assert.Contains(t, stderr, tc.want, "report %q", tc.args)
	}
}

// counterSuite is propertiestest's counter suite, citing this file.
func counterSuite(name string, limit int) properties.Suite {
	return propertiestest.CounterSuite(name, limit, "cli/report/report_test.go")
}

func TestReportEndToEnd(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runReport([]properties.Suite{counterSuite("counter", 0), counterSuite("limited", 2)}, nil,
		"--out", dir, "--checks", "20", "--steps", "10", "--seed", "7", "--histories", "0", "--sim-seeds", "0")
	assert.Equal(t, 1, code, "exit status for a failed suite")
	for _, want := range []string{
		"counter  [##########] 20/20 checks\n",
		"counter  passed  20 checks, ",
		"limited  FAILED  TEST-LIMIT after ",
		// The whole counterexample, not only its first line.
		"\n                 step 1: inc\n                 step 2: inc\n                 TEST-LIMIT: counter is 2, limit 2\n",
		"                 replay: nodeproof replay --suite limited --seed ",
	} {
		assert.Contains(t, stderr, want)
	}
	assert.Contains(t, stdout, filepath.Join(dir, "report.json"), "stdout names report.json")

	var data reportview.Report
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
	var replayOut, replayErr bytes.Buffer
	code = cli.Execute(cli.NewRoot(replay.NewCommand(lookup, nil)), []string{"replay", "--suite", "limited", "--seed", m[1], "--steps", "10"},
		strings.NewReader(""), &replayOut, &replayErr)
	assert.Equal(t, 1, code, "replay exit status")
	assert.Empty(t, replayErr.String(), "replay stderr")
	want := "FAILED limited: TEST-LIMIT\n\nstep 1: inc\nstep 2: inc\nTEST-LIMIT: counter is 2, limit 2\n"
	out := replayOut.String()
	assert.Equal(t, want, out[:min(len(out), len(want))], "the start of what replay printed")
}

// TestReportRejectsOutBeforeRunning: a bad --out used to surface only after
// every suite had run. Now it is exit 2 with the flag named, and no suite
// starts.
func TestReportRejectsOutBeforeRunning(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, out := range []string{filepath.Join(file, "sub"), file} {
		code, _, stderr := runReport([]properties.Suite{counterSuite("counter", 0)}, nil,
			"--out", out, "--checks", "5", "--steps", "5", "--seed", "1", "--histories", "0", "--sim-seeds", "0")
		assert.Equal(t, 2, code, "--out %s", out)
		assert.Contains(t, stderr, fmt.Sprintf("nodeproof report: --out %q must be a", out))
		assert.NotContains(t, stderr, "counter", "a suite ran before --out was checked")
	}
}

// TestReportIncludesDefaultResults: without flags the report includes the
// kill matrix and conformance results where make mutants and make
// conformance write them, and says what it did not run.
func TestReportIncludesDefaultResults(t *testing.T) {
	t.Chdir(t.TempDir())
	// The one known finding the findings file below searched for.
	known := []verify.Finding{{ID: "IGC-F1", Subsystem: "imagegc", Suite: "imagegc", Property: "IGC-C-PROMISE"}}
	opts, err := parse(known)
	require.NoError(t, err)
	assert.Nil(t, opts.report.Mutants)
	assert.Nil(t, opts.report.Conformance)

	require.NoError(t, os.MkdirAll("report", 0o755))
	require.NoError(t, os.WriteFile(reportview.DefaultMutantsFile, []byte(`[{"id":"dm-x","subsystem":"dm","killed":true}]`), 0o644))
	require.NoError(t, os.WriteFile(reportview.DefaultConformanceFile, []byte(`[{"function":"pod.QOS","cases":5,"mismatches":0}]`), 0o644))
	opts, err = parse(known)
	require.NoError(t, err)
	assert.Equal(t, []mutants.Row{{ID: "dm-x", Subsystem: "dm", Killed: true}}, opts.report.Mutants)
	require.NotNil(t, opts.report.Conformance)
	assert.Equal(t, [][]string{{"pod.QOS", "5", "0"}}, opts.report.Conformance.Cells)
	assert.Nil(t, opts.report.PluginCheck)
	require.NoError(t, os.WriteFile(reportview.DefaultPluginCheckFile, []byte(`[{"plugin":"stub","passed":false,"findings":["PC-X (contract): m"]}]`), 0o644))
	opts, err = parse(known)
	require.NoError(t, err)
	require.NotNil(t, opts.report.PluginCheck)
	assert.Equal(t, [][]string{{"stub", "false", `["PC-X (contract): m"]`}}, opts.report.PluginCheck.Cells)

	assert.Nil(t, opts.report.Searches)
	require.NoError(t, os.WriteFile(reportview.DefaultFindingsFile, []byte(`{"findings":[{"id":"IGC-F1","searches":[{"seed":3,"found":true}],"reproduced":true}]}`), 0o644))
	opts, err = parse(known)
	require.NoError(t, err)
	require.NotNil(t, opts.report.Searches)
	assert.True(t, opts.report.Searches.Findings[0].Reproduced)

	assert.Nil(t, opts.report.Upstream)
	require.NoError(t, os.WriteFile(reportview.DefaultUpstreamFile, []byte(`{"modelled":"v1.36.3","columns":[{"release":"v1.36.3","tests":[{"name":"TestX","passed":true}]}],`+
		`"findings":[],"tests":[{"test":"TestX","cells":[{"release":"v1.36.3","state":"agrees","replay":"cd conformance && go test -count=1 -run '^TestX$' ."}]}]}`), 0o644))
	opts, err = parse(known)
	require.NoError(t, err)
	require.NotNil(t, opts.report.Upstream)
	assert.Equal(t, upstream.Agrees, opts.report.Upstream.Tests[0].Cells[0].State)

	// A file named by flag that is missing is still an error.
	_, err = parse(known, "--mutants", "missing.json")
	assert.ErrorContains(t, err, "--mutants: open missing.json")
}

// TestReportRecordsHistories runs the report as `nodeproof report` does,
// with one short history and one short simulated seed: the sections are in
// report.json, the visualization beside it, and no section is listed as
// not run (the inventory's suites, mutants and conformance comparisons,
// which this report's one test suite and partial results lack, are).
func TestReportRecordsHistories(t *testing.T) {
	dir := t.TempDir()
	// A result of each section, so that none is listed as not run.
	inputs := t.TempDir()
	files := map[string]string{
		"mutants":      `[{"id":"dm-x","subsystem":"devicemanager","killed":true,"killed_by":"DM-X"}]`,
		"conformance":  `[{"function":"pod.QOS","cases":5,"mismatches":0}]`,
		"plugin-check": `[{"plugin":"stub","passed":true}]`,
	}
	args := []string{"--out", dir, "--checks", "5", "--steps", "5", "--seed", "1", "--histories", "1", "--sim-seeds", "1", "--sim-hours", "0.1"}
	for flag, content := range files {
		path := filepath.Join(inputs, flag+".json")
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		args = append(args, "--"+flag, path)
	}
	// No known findings, so that no findings search is wanted.
	code, _, stderr := runReport([]properties.Suite{counterSuite("counter", 0)}, nil, args...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "linearizability  passed  1/1 histories linearizable")
	assert.Contains(t, stderr, "sim              passed  1 seed × 0.1 simulated hours (seeds 1..1), ")

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
			status, stdout, stderr := runReport(properties.Suites(), verify.Findings(), "--out", filepath.Join(root, out), "--suite", "^admission$", "--checks", "1",
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

// TestReportRefusesEmptyResultFiles: a results file that holds no results
// (null, an empty array) is not a section that ran and found nothing. It
// would show a green 0/0 and take the section off the not-run list, which
// CI's "nothing left not run" check reads, so it is bad input (exit 2),
// named with its flag and file, before any suite runs.
func TestReportRefusesEmptyResultFiles(t *testing.T) {
	dir := t.TempDir()
	for _, flag := range []string{"mutants", "linearizability", "conformance", "plugin-check"} {
		for name, tc := range map[string]struct{ body, want string }{
			"null":  {"null", "no results"},
			"empty": {"[]", "no results"},
			// An empty file was refused before: it is not JSON.
			"blank": {"  \n", "unexpected end of JSON input"},
		} {
			t.Run(flag+"/"+name, func(t *testing.T) {
				path := filepath.Join(dir, flag+"-"+name+".json")
				require.NoError(t, os.WriteFile(path, []byte(tc.body), 0o644))
				status, stdout, stderr := runReport(properties.Suites(), verify.Findings(), "--out", filepath.Join(dir, "out"), "--checks", "1", "--histories", "0", "--sim-seeds", "0", "--suite", "^preemption$", "--"+flag, path)
				assert.Equal(t, cli.StatusUsage, status, "stdout: %s", stdout)
				assert.Contains(t, stderr, "--"+flag+": "+path+": ")
				assert.Contains(t, stderr, tc.want)
			})
		}
	}
}

// TestCountsAreBounded: a count flag beyond its bound is a usage error
// before any work, like --steps.
func TestCountsAreBounded(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", out, "--checks", "30001"}, "--checks: 30001 exceeds the bound of 30000"},
		{[]string{"--out", out, "--histories", "1000000"}, "--histories: 1000000 exceeds the bound of 300"},
		{[]string{"--out", out, "--sim-seeds", "1001"}, "--sim-seeds: 1001 exceeds the bound of 1000"},
	} {
		t.Run(tc.args[len(tc.args)-2], func(t *testing.T) {
			status, stdout, stderr := runReport(properties.Suites(), verify.Findings(), tc.args...)
			assert.Equal(t, cli.StatusUsage, status)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// TestReportPrintsSeedFirst: the base seed is on stderr before the first
// suite's line, so that an interrupted report can be repeated.
func TestReportPrintsSeedFirst(t *testing.T) {
	status, _, stderr := runReport(properties.Suites(), verify.Findings(), "--out", filepath.Join(t.TempDir(), "out"), "--checks", "1", "--histories", "0", "--sim-seeds", "0", "--suite", "^preemption$")
	assert.Equal(t, cli.StatusOK, status, stderr)
	first, _, _ := strings.Cut(stderr, "\n")
	assert.Regexp(t, `^base seed [1-9][0-9]* \(rerun with --seed [1-9][0-9]*\)$`, first)
}
