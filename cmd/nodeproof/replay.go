package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/properties"
)

// maxSteps bounds --steps of replay and report: 100 times their default.
// rapid's cases grow with it: a case of 10000 steps of the slowest suite
// (cgroups) takes about 1.5 s on two cores, and one of 10000000 had not ended
// after 100 s, without a word on the terminal.
const maxSteps = 10_000

// stepsBoundError is the error of a --steps beyond maxSteps.
func stepsBoundError(steps int) error {
	return fmt.Errorf("--steps: %d exceeds the bound of %d", steps, maxSteps)
}

// replayOptions are the validated flags of `nodeproof replay`.
type replayOptions struct {
	suite    properties.Suite
	seed     uint64
	failFile string
	// recorded is what the fail file holds, when there is one.
	recorded properties.FailFileCase
	steps    int
}

// replayFlags are the flags of `nodeproof replay` as typed.
type replayFlags struct {
	suite    string
	seed     uint64
	failFile string
	steps    int
}

// newReplayCommand is `nodeproof replay`, choosing among the suites all
// (lookup finds one by name).
func newReplayCommand(lookup func(string) (properties.Suite, bool), all []properties.Suite) *cobra.Command {
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay --suite NAME (--seed N | --failfile FILE) [--steps N]",
		Short: "re-run one suite from a seed or a rapid fail file and print the steps",
		Long: `Re-runs one case of a suite, from the seed the report printed or from a fail file
rapid wrote under testdata/rapid, and prints its shrunk steps and the violated invariant.
Exit status: 1 when the failure reproduces, 0 when it does not, 2 for bad flags or a fail
file that cannot be replayed.`,
		Example: `  nodeproof replay --suite devicemanager --seed 2946870663927987 --steps 100
  nodeproof replay --suite cgroups --failfile properties/suites/testdata/rapid/TestSuites_cgroups/X.fail`,
		DisableFlagsInUseLine: true,
		Args:                  cli.NoArguments,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.options(lookup, all)
			if err != nil {
				return cli.UsageError(err)
			}
			return replay(opts, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.suite, "suite", "", "`NAME` of the suite to run")
	fl.Uint64Var(&f.seed, "seed", 0, "seed `N` of the failing case, as printed by the report or rapid")
	fl.StringVar(&f.failFile, "failfile", "", "rapid fail `FILE` to replay (from testdata/rapid)")
	// rapid reads a seed or a fail file's draws through the number of steps,
	// so the default is the one of the runs that print them: the report and
	// go test ./properties/suites.
	fl.IntVar(&f.steps, "steps", 100, "`N` actions per case, on average, as in the run that failed (0: rapid's own default, 30)")
	_ = cmd.RegisterFlagCompletionFunc("suite", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return suiteNames(all), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.MarkFlagFilename("failfile", "fail")
	return cmd
}

func suiteNames(all []properties.Suite) []string {
	names := make([]string, 0, len(all))
	for _, s := range all {
		names = append(names, s.Name)
	}
	return names
}

// options validates the flags.
func (f replayFlags) options(lookup func(string) (properties.Suite, bool), all []properties.Suite) (replayOptions, error) {
	opts := replayOptions{seed: f.seed, failFile: f.failFile, steps: f.steps}
	switch {
	case f.suite == "":
		return opts, errors.New("--suite is required")
	case opts.seed == 0 && opts.failFile == "":
		return opts, errors.New("one of --seed or --failfile is required")
	case opts.seed != 0 && opts.failFile != "":
		return opts, errors.New("--seed and --failfile exclude each other")
	case opts.steps < 0:
		return opts, fmt.Errorf("--steps must not be negative, got %d", opts.steps)
	case opts.steps > maxSteps:
		return opts, stepsBoundError(opts.steps)
	}
	s, ok := lookup(f.suite)
	if !ok {
		return opts, fmt.Errorf("--suite: no suite %q; suites: %s", f.suite, listOrNone(suiteNames(all)))
	}
	opts.suite = s
	if opts.failFile != "" {
		// rapid skips a fail file it cannot use and generates a new case,
		// which would pass off a typo or another suite's file as a failure
		// that did not reproduce.
		c, err := properties.ReadFailFile(opts.failFile)
		if err != nil {
			return opts, fmt.Errorf("--failfile %s: %v", opts.failFile, err)
		}
		if c.Suite() != s.Name {
			return opts, fmt.Errorf("--failfile %s: was written by test %s, not by suite %s (TestSuites/%s)", opts.failFile, c.Test, s.Name, s.Name)
		}
		opts.recorded = c
	}
	return opts, nil
}

// replay runs the one case and prints its shrunk steps. A reproduced failure
// exits 1, like the run it reproduces.
func replay(opts replayOptions, out io.Writer) error {
	stdout := &cli.Writer{W: out}
	res := properties.Run(opts.suite, properties.RunOptions{
		Checks:   1,
		Steps:    opts.steps,
		Seed:     opts.seed,
		FailFile: opts.failFile,
		// A replayed case fails as it did when it was found, a breach of a
		// contract property that a known finding explains included.
		EnforceAll: true,
	})
	if res.FailFileIgnored != "" {
		return cli.UsageError(fmt.Errorf("--failfile %s: rapid did not replay it (%s): its draws no longer fit suite %s, "+
			"which changed what it draws since the file was written%s",
			opts.failFile, res.FailFileIgnored, opts.suite.Name, seedHint(opts.recorded.Seed)))
	}
	f := res.Failure
	switch {
	case f == nil && opts.failFile != "":
		fmt.Fprintf(stdout, "%s: the case in %s no longer fails (%d steps replayed)\n", opts.suite.Name, opts.failFile, res.Tally.Steps)
		return stdout.Err
	case f == nil:
		fmt.Fprintf(stdout, "passed: the failure did not reproduce (%d steps ran)\n", res.Tally.Steps)
		return stdout.Err
	}
	fmt.Fprintf(stdout, "FAILED %s: %s\n\n", opts.suite.Name, f.Invariant)
	// The last step is the failure line, which the message repeats.
	for _, step := range f.Steps[:len(f.Steps)-1] {
		fmt.Fprintln(stdout, step)
	}
	fmt.Fprintln(stdout, strings.TrimSuffix(f.Message, "\n"))
	if stdout.Err != nil {
		return stdout.Err
	}
	return cli.Exit(cli.StatusFailed)
}

// seedHint points to the seed a fail file records, which generates the case
// anew where its draws no longer fit.
func seedHint(seed uint64) string {
	if seed == 0 {
		return ""
	}
	return fmt.Sprintf("; run its case anew with --seed %d and the --steps of the run that wrote it", seed)
}
