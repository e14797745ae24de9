package replay

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/properties/propertiestest"
)

// quietTB is the rapid.TB a test hands rapid.Check to let a property fail
// without failing the test, so that rapid writes its fail file.
type quietTB struct {
	name   string
	failed bool
}

func (q *quietTB) Helper()              {}
func (q *quietTB) Name() string         { return q.name }
func (q *quietTB) Logf(string, ...any)  {}
func (q *quietTB) Log(...any)           {}
func (q *quietTB) Skipf(string, ...any) { q.failed = true }
func (q *quietTB) Skip(...any)          { q.failed = true }
func (q *quietTB) SkipNow()             { q.failed = true }
func (q *quietTB) Errorf(string, ...any) {
	q.failed = true
}
func (q *quietTB) Error(...any)          { q.failed = true }
func (q *quietTB) Fatalf(string, ...any) { q.failed = true }
func (q *quietTB) Fatal(...any)          { q.failed = true }
func (q *quietTB) FailNow()              { q.failed = true }
func (q *quietTB) Fail()                 { q.failed = true }
func (q *quietTB) Failed() bool          { return q.failed }

// writeFailFile lets rapid find and shrink the failure of suite s, as `go
// test ./properties/suites` does under the test name TestSuites/<name> at its
// default budget (100 steps), and returns the fail file it wrote. The working
// directory is a temporary one.
func writeFailFile(t *testing.T, s properties.Suite, name string) string {
	t.Helper()
	t.Chdir(t.TempDir())
	steps := flag.Lookup("rapid.steps")
	saved := steps.Value.String()
	require.NoError(t, steps.Value.Set("100"))
	defer func() { require.NoError(t, steps.Value.Set(saved)) }()
	tb := &quietTB{name: "TestSuites/" + name}
	rapid.Check(tb, func(rt *rapid.T) { s.Property(rt, properties.NewTally()) })
	require.True(t, tb.failed, "the suite passed; a fail file needs a failure")
	files, err := filepath.Glob("testdata/rapid/*/*.fail")
	require.NoError(t, err)
	require.Len(t, files, 1)
	path, err := filepath.Abs(files[0])
	require.NoError(t, err)
	return path
}

// TestReplayFailFile: a fail file that cannot replay the suite's failure is
// an error naming the file and why, status 2. Before, rapid skipped such a
// file, ran a fresh random case, and replay printed "did not reproduce" with
// status 0.
func TestReplayFailFile(t *testing.T) {
	limited := counterSuite("limited", 2)
	good := writeFailFile(t, limited, "limited")
	data, err := os.ReadFile(good)
	require.NoError(t, err)
	text := string(data)
	versionLine := regexp.MustCompile(`(?m)^v[0-9.]+#(\d+)$`).FindStringSubmatch(text)
	require.NotNil(t, versionLine, "no version line in:\n%s", text)
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		return path
	}
	counterFile := writeFailFile(t, counterSuite("counter", 2), "counter")
	// The bug fixed: the same actions, and no limit to break.
	fixed := counterSuite("limited", 0)
	// A suite whose first draw rejects every value no longer fits any
	// recorded case.
	drawsNothing := func(t *rapid.T, _ *properties.Tally) {
		rapid.Int().Filter(func(int) bool { return false }).Draw(t, "nothing fits")
	}

	for _, tc := range []struct {
		name, path string
		suite      properties.Suite
		steps      []string
		// want is a part of stderr; "" when the failure reproduces, and
		// the whole of stdout when it no longer does.
		want string
	}{
		{"reproduces", good, limited, []string{"--steps", "100"}, ""},
		// go test ./properties/suites and the report run 100 steps; so does replay.
		{"reproduces at the default steps", good, limited, nil, ""},
		{"missing", filepath.Join(dir, "missing.fail"), limited, nil, "--failfile " + filepath.Join(dir, "missing.fail") + ": no such file or directory"},
		{"empty", write("empty.fail", ""), limited, nil, "empty.fail: empty: no recorded case"},
		{"comments only", write("comments.fail", "# a comment\n\n# another\n"), limited, nil, "comments.fail: holds no recorded case, only comments"},
		{"foreign", write("passwd", "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/:/usr/sbin/nologin\n"), limited, nil,
			`passwd: not a rapid fail file: line 1 "root:x:0:0:root:/root:/bin/bash" is not rapid's VERSION#SEED line`},
		{"another rapid version", write("old.fail", strings.Replace(text, versionLine[0], "v0.4.7#"+versionLine[1], 1)), limited, nil,
			`old.fail: written in rapid's format "v0.4.7"; this nodeproof's rapid (pgregory.net/rapid v1.3.0) reads "v0.4.8" only`},
		{"garbage seed", write("seed.fail", strings.Replace(text, versionLine[0], "v0.4.8#twelve", 1)), limited, nil,
			`seed.fail: line `},
		{"garbage draw", write("draw.fail", text+"\n0xZZ\n"), limited, nil, `draw.fail: line `},
		{"no draws", write("nodraws.fail", "# 2026/01/02 03:04:05.000006 [TestSuites/limited] [rapid] draw action: \"inc\"\nv0.4.8#1\n"), limited, nil,
			"nodraws.fail: records no draws"},
		{"no test name", write("noname.fail", regexp.MustCompile(`(?m)^#.*\n`).ReplaceAllString(text, "")), limited, nil,
			"noname.fail: names no test"},
		{"another suite", counterFile, limited, nil, "was written by test TestSuites/counter, not by suite limited (TestSuites/limited)"},
		{"draws that no longer fit", good, properties.Suite{Name: "limited", Invariants: limited.Invariants, Property: drawsNothing}, nil, "rapid did not replay it"},
		{"no longer fails", good, fixed, nil, "limited: the case in " + good + " no longer fails (2 steps replayed)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookup := func(name string) (properties.Suite, bool) { return tc.suite, name == tc.suite.Name }
			root := cli.NewRoot(NewCommand(lookup, []properties.Suite{tc.suite}))
			status, stdout, stderr := runRoot(root, "", append([]string{"replay", "--suite", tc.suite.Name, "--failfile", tc.path}, tc.steps...)...)
			if strings.HasPrefix(tc.want, "limited: ") {
				assert.Equal(t, 0, status, "stderr %q", stderr)
				assert.Equal(t, tc.want, stdout)
				assert.Empty(t, stderr)
				return
			}
			if tc.want == "" {
				assert.Equal(t, 1, status, "stderr %q", stderr)
				assert.Contains(t, stdout, "FAILED limited: TEST-LIMIT\n\nstep 1: inc\nstep 2: inc\n")
				return
			}
			assert.Equal(t, 2, status)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, "nodeproof replay: --failfile ")
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// TestStepsBound: --steps is bounded. Before, `replay --steps 100000000`
// ran for minutes without a word (a cgroups case had not ended after 100 s
// at 10000000). The report's --steps has the same bound (cmd/nodeproof's
// TestExitStatus).
func TestStepsBound(t *testing.T) {
	counter := counterSuite("counter", 0)
	lookup := func(string) (properties.Suite, bool) { return counter, true }
	over := strconv.Itoa(properties.MaxSteps + 1)
	want := "--steps: " + over + " exceeds the bound of " + strconv.Itoa(properties.MaxSteps)

	status, stdout, stderr := runRoot(cli.NewRoot(NewCommand(lookup, nil)), "", "replay", "--suite", "counter", "--seed", "1", "--steps", over)
	assert.Equal(t, 2, status)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "nodeproof replay: "+want)

	status, stdout, stderr = runRoot(cli.NewRoot(NewCommand(lookup, nil)), "", "replay", "--suite", "counter", "--seed", "1", "--steps", strconv.Itoa(properties.MaxSteps))
	assert.Equal(t, 0, status, "stderr %q", stderr)
	assert.Contains(t, stdout, "passed: the failure did not reproduce")
}

// TestReplayDocListsEverySuite: docs/commands/replay.md names every suite
// --suite takes, so the page does not fall behind the registry.
func TestReplayDocListsEverySuite(t *testing.T) {
	doc, err := os.ReadFile("../../docs/commands/replay.md")
	require.NoError(t, err)
	var row string
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "| `--suite NAME` |") {
			row = line
		}
	}
	require.NotEmpty(t, row, "replay.md has no --suite row")
	for _, s := range properties.Suites() {
		assert.Contains(t, row, "`"+s.Name+"`", "replay.md's --suite row lacks suite %s", s.Name)
	}
}

func TestReplayPassing(t *testing.T) {
	var stdout bytes.Buffer
	o := Options{Suite: counterSuite("counter", 0), Seed: 3}
	assert.NoError(t, o.Run(&stdout), "replay (status 0)")
	const want = "passed: the failure did not reproduce"
	assert.True(t, strings.HasPrefix(stdout.String(), want), "the start of stdout: %q", stdout.String())
}

func TestReplayFlagErrors(t *testing.T) {
	all := []properties.Suite{counterSuite("counter", 0)}
	lookup := func(name string) (properties.Suite, bool) { return all[0], name == "counter" }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--seed", "1"}, "--suite is required"},
		{[]string{"--suite", "counter"}, "one of --seed or --failfile is required"},
		{[]string{"--suite", "counter", "--seed", "1", "--failfile", "f"}, "--seed and --failfile exclude each other"},
		{[]string{"--suite", "counter", "--failfile", filepath.Join(t.TempDir(), "missing.fail")}, "missing.fail: no such file or directory"},
		{[]string{"--suite", "counter", "--seed", "1", "--steps", "-1"}, "--steps must not be negative"},
		{[]string{"--suite", "nope", "--seed", "1"}, `--suite: no suite "nope"; suites: counter`},
	} {
		code, stdout, stderr := runRoot(cli.NewRoot(NewCommand(lookup, all)), "", append([]string{"replay"}, tc.args...)...)
		assert.Equal(t, 2, code, "replay %q: exit status; stderr %q", tc.args, stderr)
		assert.Empty(t, stdout, "replay %q: stdout", tc.args)
		assert.Contains(t, stderr, tc.want, "replay %q", tc.args)
	}

	code, _, stderr := runRoot(cli.NewRoot(NewCommand(properties.Lookup, properties.Suites())), "", "replay", "--suite", "no-such-suite", "--seed", "1")
	assert.Equal(t, 2, code, "replay of an unknown suite: exit status")
	assert.Contains(t, stderr, `no suite "no-such-suite"; suites: `, "the list of suites")
}

// runRoot runs a command line against root and returns the exit status and
// what was printed.
func runRoot(root *cobra.Command, stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = cli.Execute(root, args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// counterSuite is propertiestest's counter suite, citing this file.
func counterSuite(name string, limit int) properties.Suite {
	return propertiestest.CounterSuite(name, limit, "cli/replay/replay_test.go")
}
