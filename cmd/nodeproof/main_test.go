package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/cli/commands"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runNodeproof runs a command line as main does, reading stdin, and returns
// the exit status and what was printed.
func runNodeproof(stdin string, args ...string) (code int, stdout, stderr string) {
	return runRoot(cli.NewRoot(commands.All()...), stdin, args...)
}

// runRoot runs a command line against root, whose commands a test chose.
func runRoot(root *cobra.Command, stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = cli.Execute(root, args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestExitStatus: every command, the ones added later included, answers help
// on stdout with status 0, and a flag or command that does not exist with a
// message on stderr and status 2.
func TestExitStatus(t *testing.T) {
	type outcome struct {
		status int
		stdout string // a part of stdout; "" for none at all
		stderr string // a part of stderr; "" for none at all
	}
	cases := map[string]outcome{
		"":                         {2, "", "Usage:\n  nodeproof [command]\n\nAvailable Commands:\n  admit "},
		"help":                     {0, "Available Commands:\n  admit ", ""},
		"--help":                   {0, "Available Commands:\n  admit ", ""},
		"no-such-command":          {2, "", `nodeproof: unknown command "no-such-command" for "nodeproof"`},
		"help no-such-command":     {2, "", `nodeproof help: no command "no-such-command"`},
		"--no-such-flag":           {2, "", "nodeproof: unknown flag: --no-such-flag"},
		"completion bash":          {0, "# bash completion V2 for nodeproof", ""},
		"--version":                {0, "nodeproof version " + "0.1.0-dev", ""},
		"completion zsh":           {0, "#compdef nodeproof", ""},
		"completion no-such-sh":    {2, "", `nodeproof completion: no completion for shell "no-such-sh"`},
		"checkpoint a.json b.json": {2, "", `nodeproof checkpoint: unexpected argument "b.json"`},
		// A file that cannot be opened is bad input, as in the other commands.
		"checkpoint no-such-file.json": {2, "", "nodeproof checkpoint: no-such-file.json: no such file"},
		"cgroups -f no-such-file.yaml": {2, "", "nodeproof cgroups: no-such-file.yaml: no such file"},
		"admit -f no-such-file.yaml":   {2, "", "nodeproof admit: no-such-file.yaml: no such file"},
		"mutants --shrink-time -1s":    {2, "", "nodeproof mutants: --shrink-time: -1s is negative"},
		"mutants --jobs 0":             {2, "", "nodeproof mutants: --jobs: 0 is not a number of mutants to run at once (at least 1)"},
		// --steps is bounded where it is given, as replay's is (cli/replay).
		"report --steps 10001": {2, "", "nodeproof report: --steps: 10001 exceeds the bound of 10000"},
	}
	root := cli.NewRoot(commands.All()...)
	require.NotEmpty(t, root.Commands())
	for _, cmd := range root.Commands() {
		name := cmd.Name()
		usage := "Usage:\n  nodeproof " + name
		for _, help := range []string{"help " + name, name + " -h", name + " --help"} {
			cases[help] = outcome{0, usage, ""}
		}
		cases[name+" --no-such-flag"] = outcome{2, "", "nodeproof " + name + ": unknown flag: --no-such-flag (see 'nodeproof " + name + " --help')"}
	}
	for line, want := range cases {
		t.Run(line, func(t *testing.T) {
			status, stdout, stderr := runNodeproof("", strings.Fields(line)...)
			assert.Equal(t, want.status, status)
			for _, got := range []struct{ name, text, part string }{{"stdout", stdout, want.stdout}, {"stderr", stderr, want.stderr}} {
				if got.part == "" {
					assert.Empty(t, got.text, got.name)
				} else {
					assert.Contains(t, got.text, got.part, got.name)
				}
			}
		})
	}
}

// TestCompletesSuiteNames: the shell completion offers every suite's name
// for replay --suite and report --suite, and every finding's ID for
// findings.
func TestCompletesSuiteNames(t *testing.T) {
	for _, line := range [][]string{
		{"__complete", "replay", "--suite", ""},
		{"__complete", "report", "--suite", ""},
	} {
		status, stdout, _ := runNodeproof("", line...)
		assert.Equal(t, cli.StatusOK, status)
		for _, s := range []string{"admission", "cgroups", "devicemanager", "imagegc", "preemption", "prober", "sim"} {
			assert.Contains(t, stdout, s+"\n", "%v", line)
		}
	}
	status, stdout, _ := runNodeproof("", "__complete", "findings", "")
	assert.Equal(t, cli.StatusOK, status)
	assert.Contains(t, stdout, "CG-F1\t")
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
	require.NoError(t, json.Unmarshal([]byte(readFile(t, dir, "sim.json")), &want))

	out := filepath.Join(dir, "report")
	code, _, stderr = runNodeproof("", "report", "--out", out, "--checks", "2", "--steps", "2", "--seed", "1",
		"--suite", "^admission$", "--histories", "0", "--sim", sweep)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^sim +passed  2 seeds × 0.05 simulated hours \(seeds 3..4\)`, stderr)
	var got struct {
		Sim map[string]any `json:"sim"`
	}
	require.NoError(t, json.Unmarshal([]byte(readFile(t, out, "report.json")), &got))
	assert.Equal(t, want, got.Sim)
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	return string(data)
}
