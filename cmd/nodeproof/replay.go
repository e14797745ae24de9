package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nodeproof/nodeproof/properties"
)

func init() {
	register(command{
		name:    "replay",
		summary: "re-run one suite from a seed or a rapid fail file and print the steps",
		run:     runReplay,
	})
}

// replayOptions are the validated flags of `nodeproof replay`.
type replayOptions struct {
	suite    properties.Suite
	seed     uint64
	failFile string
	steps    int
}

func runReplay(args []string, stdout, stderr io.Writer) int {
	opts, err := parseReplayFlags(args, stderr, properties.Lookup, properties.Suites())
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintf(stderr, "nodeproof replay: %v\n", err)
		}
		return 2
	}
	return replay(opts, stdout)
}

func parseReplayFlags(args []string, stderr io.Writer, lookup func(string) (properties.Suite, bool), all []properties.Suite) (replayOptions, error) {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		opts  replayOptions
		suite string
	)
	fs.StringVar(&suite, "suite", "", "`NAME` of the suite to run")
	fs.Uint64Var(&opts.seed, "seed", 0, "seed `N` of the failing case, as printed by the report or rapid")
	fs.StringVar(&opts.failFile, "failfile", "", "rapid fail `FILE` to replay (from testdata/rapid)")
	fs.IntVar(&opts.steps, "steps", 0, "`N` actions per case, on average, as in the run that failed (0: rapid's default, as in go test)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: nodeproof replay --suite NAME (--seed N | --failfile FILE) [--steps N]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return opts, err
		}
		return opts, errUsage
	}

	switch {
	case fs.NArg() > 0:
		return opts, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case suite == "":
		return opts, errors.New("--suite is required")
	case opts.seed == 0 && opts.failFile == "":
		return opts, errors.New("one of --seed or --failfile is required")
	case opts.seed != 0 && opts.failFile != "":
		return opts, errors.New("--seed and --failfile exclude each other")
	case opts.steps < 0:
		return opts, fmt.Errorf("--steps must not be negative, got %d", opts.steps)
	}
	if opts.failFile != "" {
		// rapid ignores an unreadable fail file and generates a new case,
		// which would pass off a typo as a failure that did not reproduce.
		if _, err := os.Stat(opts.failFile); err != nil {
			return opts, fmt.Errorf("--failfile: %v", err)
		}
	}
	s, ok := lookup(suite)
	if !ok {
		names := make([]string, 0, len(all))
		for _, s := range all {
			names = append(names, s.Name)
		}
		return opts, fmt.Errorf("--suite: no suite %q; suites: %s", suite, listOrNone(names))
	}
	opts.suite = s
	return opts, nil
}

// replay runs the one case and prints its shrunk steps. A reproduced failure
// exits 1, like the run it reproduces.
func replay(opts replayOptions, stdout io.Writer) int {
	res := properties.Run(opts.suite, properties.RunOptions{
		Checks:   1,
		Steps:    opts.steps,
		Seed:     opts.seed,
		FailFile: opts.failFile,
	})
	f := res.Failure
	if f == nil {
		fmt.Fprintf(stdout, "passed: the failure did not reproduce (%d steps ran)\n", res.Tally.Steps)
		return 0
	}
	fmt.Fprintf(stdout, "FAILED %s: %s\n\n", opts.suite.Name, f.Invariant)
	// The last step is the failure line, which the message repeats.
	for _, step := range f.Steps[:len(f.Steps)-1] {
		fmt.Fprintln(stdout, step)
	}
	fmt.Fprintln(stdout, strings.TrimSuffix(f.Message, "\n"))
	return 1
}
