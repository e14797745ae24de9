package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/cli/commands"
	"github.com/nodeproof/nodeproof/doclinks/commandlines"
)

// repoRoot is the module's root, seen from this package's directory, where
// go test runs its tests.
const repoRoot = "../.."

// documentedRun is how TestDocumentedOutputs runs a command a page shows
// with its output.
type documentedRun struct {
	// status is the exit status the page's example has.
	status int
	// mask hides what differs from run to run (wall times), in both the
	// page's lines and the command's; nil compares every line.
	mask func(string) string
}

// documentedRuns are the commands that README.md and docs/ show with their
// output and that TestDocumentedOutputs runs, by their text as written:
// the cheap ones, which read a file of the repository or run a short
// simulation.
var documentedRuns = map[string]documentedRun{
	"nodeproof sim --seed 1 --hours 2":                 {cli.StatusOK, maskWallTimes},
	"nodeproof admit -f docs/examples/admit-node.yaml": {cli.StatusOK, nil},
	"nodeproof cgroups -f docs/examples/seed004-pods.yaml --node-cpu 3 --node-memory 8Gi --qos-reserved memory=100%": {cli.StatusOK, nil},
	// The example file breaks an invariant, which is its point.
	"nodeproof checkpoint cli/checkpoint/testdata/double-allocation.json": {cli.StatusFailed, nil},
}

// documentedNotRun are the commands shown with their output that the test
// only parses, and why.
var documentedNotRun = map[string]string{
	"nodeproof plugin-check --exec 'testplugin --fault GetPreferredAllocation=wrong-preferred-size' --seed 1": "it needs the testplugin binary on PATH and serves a kubelet socket for 100 checks",
}

var wallTimeRE = regexp.MustCompile(`\b\d+\.\d+s\b|[\d.]+ (simulated h/s|events/s)`)

// maskWallTimes hides a sim run's wall time and speeds, which depend on
// the machine; its events, simulated time and counts do not.
func maskWallTimes(s string) string { return wallTimeRE.ReplaceAllString(s, "<wall>") }

// documentedCommands reads every nodeproof command line the repository's
// Markdown shows.
func documentedCommands(t *testing.T) []commandlines.Command {
	t.Helper()
	root := os.DirFS(repoRoot)
	files, err := commandlines.Files(root)
	require.NoError(t, err)
	require.Contains(t, files, "README.md", "the walk must reach the README, or it checks nothing")
	cmds, err := commandlines.Extract(root, files, "nodeproof")
	require.NoError(t, err)
	return cmds
}

// TestDocumentedCommandLines: every nodeproof command line README.md,
// BENCHMARKS.md and docs/ show in a shell or console block still parses
// against the real command tree: its subcommand exists, every flag exists
// and takes the value it is shown with, and its arguments are accepted. A
// synopsis ("sim [--seed N | --seeds A..B]") is held to its subcommand, and
// each flag to whether it takes a value; any concrete value it shows
// ("--cgroup-version 1|2") must parse.
func TestDocumentedCommandLines(t *testing.T) {
	cmds := documentedCommands(t)
	synopsis, examples := map[string]bool{}, 0
	for _, c := range cmds {
		if u := c.Usage(); c.Synopsis && len(u.Words) > 0 {
			synopsis[u.Words[0]] = true
		} else if !c.Synopsis {
			examples++
		}
	}
	require.NotZero(t, examples, "the pages' example command lines")
	// Every command's synopsis is in a shell block, where this test reads
	// it; help and completion are cobra's own.
	for _, c := range cli.NewRoot(commands.All()...).Commands() {
		if name := c.Name(); name != "help" && name != "completion" {
			assert.True(t, synopsis[name], "no page shows the synopsis of nodeproof %s in a shell block", name)
		}
	}
	for _, c := range cmds {
		var err error
		if c.Synopsis {
			err = checkSynopsis(c.Usage())
		} else {
			err = checkCommandLine(c.Args)
		}
		assert.NoError(t, err, "%s: %s", c.Where(), c.Text)
	}
}

// TestDocumentedOutputs: a command a page shows with its output prints
// that output still, for the commands of documentedRuns; every other
// command shown with an output is listed, with the reason, in
// documentedNotRun, so that a new one is not left out unseen.
func TestDocumentedOutputs(t *testing.T) {
	var shown []commandlines.Command
	for _, c := range documentedCommands(t) {
		if c.Output != nil {
			shown = append(shown, c)
		}
	}
	seen := map[string]bool{}
	t.Chdir(repoRoot) // the pages' paths are relative to the repository
	for _, c := range shown {
		seen[c.Text] = true
		how, run := documentedRuns[c.Text]
		if !run {
			assert.Contains(t, documentedNotRun, c.Text, "%s shows the output of %q: add it to documentedRuns, or to documentedNotRun with the reason", c.Where(), c.Text)
			continue
		}
		t.Run(c.Where(), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			status := cli.Execute(cli.NewRoot(commands.All()...), c.Args, strings.NewReader(""), &stdout, &stderr)
			require.Equal(t, how.status, status, "%s\nstderr:\n%s", c.Text, stderr.String())
			got := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
			err := commandlines.MatchOutput(mapLines(c.Output, how.mask), mapLines(got, how.mask))
			assert.NoError(t, err, "%s: the output shown under %q drifted; the command prints:\n%s", c.Where(), c.Text, stdout.String())
		})
	}
	for text := range documentedRuns {
		assert.True(t, seen[text], "documentedRuns: no page shows %q with its output any more", text)
	}
	for text := range documentedNotRun {
		assert.True(t, seen[text], "documentedNotRun: no page shows %q with its output any more", text)
	}
}

func mapLines(lines []string, f func(string) string) []string {
	if f == nil {
		return lines
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = f(l)
	}
	return out
}

// checkCommandLine parses args as nodeproof would, without running the
// command: the subcommand, the flags and their values, the arguments.
func checkCommandLine(args []string) error {
	root := cli.NewRoot(commands.All()...)
	root.InitDefaultVersionFlag()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	cmd.InitDefaultHelpFlag()
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return err
	}
	if err := cmd.ValidateRequiredFlags(); err != nil {
		return err
	}
	return cmd.ValidateFlagGroups()
}

// checkSynopsis holds a synopsis to the command tree: it names a command,
// whose every flag it shows exists and takes a value exactly when shown
// with one, and whose concrete values parse.
func checkSynopsis(u commandlines.Usage) error {
	root := cli.NewRoot(commands.All()...)
	cmd, _, err := root.Find(u.Words)
	if err != nil {
		return err
	}
	if cmd == root {
		return fmt.Errorf("names no command: %q", u.Words)
	}
	var errs []error
	for _, f := range u.Flags {
		fl := lookupFlag(cmd, f.Name)
		takesValue := fl != nil && fl.NoOptDefVal == ""
		switch {
		case fl == nil:
			errs = append(errs, fmt.Errorf("%s has no flag %s", cmd.CommandPath(), f.Name))
		case takesValue && f.Value == "":
			errs = append(errs, fmt.Errorf("%s takes a value, shown without one", f.Name))
		case !takesValue && f.Value != "":
			errs = append(errs, fmt.Errorf("%s takes no value, shown with %q", f.Name, f.Value))
		}
		if takesValue {
			for _, v := range f.Concrete() {
				if err := checkCommandLine(append(strings.Fields(cmd.CommandPath())[1:], f.Name+"="+v)); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// lookupFlag finds a flag of cmd, its own or inherited, by its name as
// written: --name or -n.
func lookupFlag(cmd *cobra.Command, written string) *pflag.Flag {
	cmd.InitDefaultHelpFlag()
	for _, set := range []*pflag.FlagSet{cmd.Flags(), cmd.InheritedFlags()} {
		if name, long := strings.CutPrefix(written, "--"); long {
			if fl := set.Lookup(name); fl != nil {
				return fl
			}
		} else if fl := set.ShorthandLookup(strings.TrimPrefix(written, "-")); fl != nil {
			return fl
		}
	}
	return nil
}
