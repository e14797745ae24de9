// Package fuzzspeed is the fuzzspeed command (cmd/fuzzspeed, `make
// fuzz-speed`): its flags choose the decoder fuzz targets and how long each
// run fuzzes, and package fuzz/speed measures them against the fuzzing
// engine's ceiling and an empty target in their own binary, side by side
// (docs/commands/fuzzspeed.md). It is a binary of its own, not a nodeproof
// command, because it drives the go command from a module checkout.
//
// Exit status: 0 when every run was measured, 1 when one failed, 2 for bad
// flags.
package fuzzspeed

import (
	"fmt"
	"io"
	"regexp"
	"time"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/fuzz/speed"
)

// Run is the command with its arguments and output, fuzzing with the go
// command: it returns the exit status.
func Run(args []string, stdout, stderr io.Writer) int {
	return run(args, stdout, stderr, speed.Tools{Fuzz: speed.GoTest, Counters: speed.GoCounters})
}

// run is Run with the tools that fuzz and size test binaries, which tests
// fake.
func run(args []string, stdout, stderr io.Writer, with speed.Tools) int {
	var (
		each    time.Duration
		pattern string
		goCmd   string
	)
	status := 0
	cmd := &cobra.Command{
		Use:           "fuzzspeed [--time 10s] [--run REGEXP]",
		Short:         "measure each decoder fuzz target against the fuzzing engine's ceiling and an empty target in its own binary, side by side",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(*cobra.Command, []string) error {
			if each < time.Second {
				return fmt.Errorf("--time %v: must be at least 1s, the engine's clock reports whole seconds of warm-up", each)
			}
			match, err := regexp.Compile(pattern)
			if err != nil {
				return fmt.Errorf("--run %q: not a regular expression: %v", pattern, err)
			}
			var targets []speed.Target
			for _, t := range speed.DecoderTargets {
				if match.MatchString(t.Name) {
					targets = append(targets, t)
				}
			}
			if len(targets) == 0 {
				return fmt.Errorf("--run %q: matches none of the decoder targets", pattern)
			}
			loadBefore := speed.LoadAverage()
			rows, runs, failed := speed.Measure(targets, each, goCmd, with, stderr)
			fmt.Fprintf(stdout, "%d runs of %v each (go test -fuzz -parallel 1 -fuzzminimizetime 0); load average %s before, %s after\n\n",
				runs, each, loadBefore, speed.LoadAverage())
			speed.WriteTable(stdout, rows)
			if failed {
				status = 1
			}
			return nil
		},
	}
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	fl := cmd.Flags()
	fl.DurationVar(&each, "time", 10*time.Second, "how long each run fuzzes (-fuzztime)")
	fl.StringVar(&pattern, "run", "", "measure only the decoder targets whose name matches this `REGEXP`")
	fl.StringVar(&goCmd, "go", "go", "the go `COMMAND`")
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(stderr, "fuzzspeed: %v\n", err)
		return 2
	}
	return status
}
