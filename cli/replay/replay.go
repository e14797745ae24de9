package replay

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/properties"
	// The suites register themselves with properties when imported.
	_ "github.com/nodeproof/nodeproof/properties/suites"
)

// Options are the flags of `nodeproof replay`.
type Options struct {
	// SuiteName is --suite; Suite is the suite it names, set by Validate.
	SuiteName string
	Suite     properties.Suite
	// Seed is the failing case's seed; FailFile the rapid fail file to
	// replay instead. One of them is given.
	Seed     uint64
	FailFile string
	// Steps is rapid's average actions per case, as in the run that failed.
	Steps int
	// recorded is what FailFile holds, read by Validate.
	recorded properties.FailFileCase
}

// NewCommand is `nodeproof replay`, choosing among the suites all (lookup
// finds one by name).
func NewCommand(lookup func(string) (properties.Suite, bool), all []properties.Suite) *cobra.Command {
	var o Options
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
			if err := o.Validate(lookup, all); err != nil {
				return cli.UsageError(err)
			}
			return o.Run(cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.SuiteName, "suite", "", "`NAME` of the suite to run")
	fl.Uint64Var(&o.Seed, "seed", 0, "seed `N` of the failing case, as printed by the report or rapid")
	fl.StringVar(&o.FailFile, "failfile", "", "rapid fail `FILE` to replay (from testdata/rapid)")
	// rapid reads a seed or a fail file's draws through the number of steps,
	// so the default is the one of the runs that print them: the report and
	// go test ./properties/suites.
	fl.IntVar(&o.Steps, "steps", 100, "`N` actions per case, on average, as in the run that failed (0: rapid's own default, 30)")
	_ = cmd.RegisterFlagCompletionFunc("suite", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return properties.SuiteNames(all), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.MarkFlagFilename("failfile", "fail")
	return cmd
}

// Validate checks the flags, finds the suite and reads the fail file.
func (o *Options) Validate(lookup func(string) (properties.Suite, bool), all []properties.Suite) error {
	switch {
	case o.SuiteName == "":
		return errors.New("--suite is required")
	case o.Seed == 0 && o.FailFile == "":
		return errors.New("one of --seed or --failfile is required")
	case o.Seed != 0 && o.FailFile != "":
		return errors.New("--seed and --failfile exclude each other")
	case o.Steps < 0:
		return fmt.Errorf("--steps must not be negative, got %d", o.Steps)
	}
	if err := properties.CheckSteps(o.Steps); err != nil {
		return fmt.Errorf("--steps: %v", err)
	}
	s, ok := lookup(o.SuiteName)
	if !ok {
		return fmt.Errorf("--suite: no suite %q; suites: %s", o.SuiteName, strings.Join(properties.SuiteNames(all), ", "))
	}
	o.Suite = s
	if o.FailFile != "" {
		// rapid skips a fail file it cannot use and generates a new case,
		// which would pass off a typo or another suite's file as a failure
		// that did not reproduce.
		c, err := properties.ReadFailFile(o.FailFile)
		if err != nil {
			return fmt.Errorf("--failfile %s: %v", o.FailFile, err)
		}
		if c.Suite() != s.Name {
			return fmt.Errorf("--failfile %s: was written by test %s, not by suite %s (TestSuites/%s)", o.FailFile, c.Test, s.Name, s.Name)
		}
		o.recorded = c
	}
	return nil
}

// Run runs the one case and prints its shrunk steps. A reproduced failure
// exits 1, like the run it reproduces.
func (o *Options) Run(out io.Writer) error {
	stdout := &cli.Writer{W: out}
	res := properties.Run(o.Suite, properties.RunOptions{
		Checks:   1,
		Steps:    o.Steps,
		Seed:     o.Seed,
		FailFile: o.FailFile,
		// A replayed case fails as it did when it was found, a breach of a
		// contract property that a known finding explains included.
		EnforceAll: true,
	})
	if res.FailFileIgnored != "" {
		return cli.UsageError(fmt.Errorf("--failfile %s: rapid did not replay it (%s): its draws no longer fit suite %s, "+
			"which changed what it draws since the file was written%s",
			o.FailFile, res.FailFileIgnored, o.Suite.Name, seedHint(o.recorded.Seed)))
	}
	f := res.Failure
	switch {
	case f == nil && o.FailFile != "":
		fmt.Fprintf(stdout, "%s: the case in %s no longer fails (%d steps replayed)\n", o.Suite.Name, o.FailFile, res.Tally.Steps)
		return stdout.Err
	case f == nil:
		fmt.Fprintf(stdout, "passed: the failure did not reproduce (%d steps ran)\n", res.Tally.Steps)
		return stdout.Err
	}
	fmt.Fprintf(stdout, "FAILED %s: %s\n\n", o.Suite.Name, f.Invariant)
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
