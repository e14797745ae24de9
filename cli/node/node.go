package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/agent/outpath"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/realkubelet"
	"github.com/nodeproof/nodeproof/realkubelet/scenario"
	"github.com/nodeproof/nodeproof/realkubelet/sweep"
	"github.com/nodeproof/nodeproof/seedrange"
)

// Deps are what the command needs of the host: production passes
// realkubelet's and scenario's functions, tests stand-ins that need no
// node.
type Deps struct {
	// Unavailable says why the host cannot run a node, "" when it can.
	Unavailable func() string
	// Find finds the kubelet binary without building it.
	Find func() (string, error)
	// Play plays one seed's scenario (scenario.PlaySeed).
	Play func(ctx context.Context, seed uint64, maxSteps int, opts realkubelet.Options, tally *scenario.Tally) *sweep.Violation
}

// Production are the Deps of a real node.
func Production() Deps {
	return Deps{Unavailable: realkubelet.Unavailable, Find: realkubelet.Find, Play: scenario.PlaySeed}
}

// Options are the flags of `nodeproof node`, and what Complete and
// Validate derive from them.
type Options struct {
	// Seed is the one seed to play; Seeds, A..B, sweeps a range instead.
	Seed  uint64
	Seeds string
	// Steps bounds the steps of a scenario (rapid draws 1..Steps).
	Steps int
	// JSONPath is the file --json writes the summary to; "" for none.
	JSONPath string

	seedsGiven, seedGiven bool
	first, last           uint64
	kubelet               string
}

// NewCommand is `nodeproof node`.
func NewCommand(deps Deps) *cobra.Command {
	var o Options
	cmd := &cobra.Command{
		Use:   "node [--seed N | --seeds A..B] [--steps N] [--json FILE]",
		Short: "play generated scenarios against the real kubelet v" + strings.TrimPrefix(realkubelet.Version, "v") + ", checking its properties from outside after every step",
		Long: `Plays generated scenarios (package realkubelet/scenario) against the real kubelet binary, each on a
node of its own: a private containerd and the kubelet in a private mount namespace. rapid draws each
scenario's steps from its seed: static pods coming and going with devices and probes, kill -9
of the kubelet, the device plugin crashing and re-registering, a device's health flipping, a container
killed through CRI, a liveness or readiness probe's answer flipping. After every step the node is
observed from outside (/pods, the PodResources API, the checkpoint, the cgroupfs) and the RK-*
properties are checked. Prints each scenario's steps, per property how often it was checked and
applied, the breaches known kubelet bugs explain (counted apart), and on a violation the shrunk steps
and the lines that replay it. Needs root and the kubelet binary (make kubelet); every node is torn
down, leaving the host as it was, whether the run passes, fails or is interrupted.
Exit status: 1 when a property is violated or the output cannot be written, 2 for bad flags, a host
that cannot run a node or a missing kubelet binary, 130 on SIGINT or SIGTERM.`,
		Example: `  sudo nodeproof node --seed 1
  sudo nodeproof node --seeds 1..10 --json report/node.json
  sudo nodeproof node --seed 7 --steps 3`,
		DisableFlagsInUseLine: true,
		Args:                  cli.NoArguments,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Complete(cmd)
			if err := o.Validate(deps); err != nil {
				return err
			}
			ctx, stop := cli.InterruptContext(cmd.Context())
			defer stop()
			return o.Run(ctx, deps, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.Uint64Var(&o.Seed, "seed", 1, "the seed `N` (1 or more) the scenario's steps are drawn from")
	fl.StringVar(&o.Seeds, "seeds", "", "sweep the seeds `A..B` (inclusive, from 1) instead of one --seed")
	fl.IntVar(&o.Steps, "steps", scenario.DefaultSteps, "at most `N` steps a scenario")
	fl.StringVar(&o.JSONPath, "json", "", "write the sweep's summary as JSON to this `FILE`, creating its directory")
	return cmd
}

// Complete notes which seed flags were given: --seeds and --seed exclude
// each other, and --seed has a default.
func (o *Options) Complete(cmd *cobra.Command) {
	o.seedsGiven, o.seedGiven = cmd.Flags().Changed("seeds"), cmd.Flags().Changed("seed")
}

// Validate refuses bad flags, then a host that cannot run a node and a
// missing kubelet binary, all with usage errors, before any node starts.
func (o *Options) Validate(deps Deps) error {
	if err := o.validate(deps); err != nil {
		return cli.UsageError(err)
	}
	return nil
}

func (o *Options) validate(deps Deps) error {
	o.first, o.last = o.Seed, o.Seed
	if o.seedsGiven {
		if o.seedGiven {
			return errors.New("--seed and --seeds are mutually exclusive: give one seed or a range")
		}
		first, last, err := seedrange.Parse(o.Seeds)
		if err != nil {
			return fmt.Errorf("--seeds %v", err)
		}
		o.first, o.last = first, last
	}
	if o.first == 0 {
		// rapid takes seed 0 for "draw a random seed": not replayable.
		return errors.New("seed 0 is not a seed (rapid draws a random one for it): seeds start at 1")
	}
	if o.Steps < 1 {
		return fmt.Errorf("--steps: %d is not a number of steps (at least 1)", o.Steps)
	}
	if o.JSONPath != "" {
		if err := outpath.File(o.JSONPath); err != nil {
			return fmt.Errorf("--json: %v", err)
		}
	}
	if why := deps.Unavailable(); why != "" {
		return fmt.Errorf("this host cannot run a real kubelet: %s (nodeproof node needs root, Linux with cgroup v1, containerd, runc and busybox-static, and the kubelet binary `make kubelet` builds)", why)
	}
	kubelet, err := deps.Find()
	if err != nil {
		return fmt.Errorf("%v (`make kubelet` builds it, or set $%s to one)", err, realkubelet.BinaryEnv)
	}
	o.kubelet = kubelet
	return nil
}

// Run plays every seed, printing each scenario's steps as it goes, each
// seed's verdict and, at the end, the checks; it writes --json, and fails
// when any seed violated a property.
func (o *Options) Run(ctx context.Context, deps Deps, out io.Writer) error {
	w := &cli.Writer{W: out}
	tally := scenario.NewTally()
	tally.Log = func(line string) { fmt.Fprintln(w, line) }
	started := time.Now()
	var violations []sweep.Violation
	for seed := o.first; ; seed++ {
		fmt.Fprintf(w, "seed %d:\n", seed)
		v := deps.Play(ctx, seed, o.Steps, realkubelet.Options{Kubelet: o.kubelet}, tally)
		if ctx.Err() != nil {
			// The scenario failed because it was stopped: not a finding.
			return cli.InterruptedError()
		}
		if v == nil {
			fmt.Fprintf(w, "seed %d: passed\n", seed)
		} else {
			violations = append(violations, *v)
			fmt.Fprintf(w, "seed %d: VIOLATION\n%s\nreplay: %s\n        %s\n", seed, indent(v.Report), v.Replay, v.TestReplay)
		}
		if w.Err != nil {
			return cli.OutputError(w.Err)
		}
		if seed == o.last {
			break
		}
	}
	sweep := tally.Sweep(o.first, o.last, o.Steps, violations, time.Since(started))
	fmt.Fprint(w, tally.Summary())
	fmt.Fprintf(w, "not covered: %s\n", strings.Join(sweep.NotCovered, "; "))
	// Each violation again, shortened, last: a log cut to its tail (CI's)
	// still says which seed broke which property.
	for _, v := range violations {
		fmt.Fprintf(w, "violated at seed %d:\n%s\nreplay: %s\n", v.Seed, indent(head(v.Report, violationLines)), v.Replay)
	}
	if n := sweep.FidelityBugs(); n > 0 {
		fmt.Fprintf(w, "the simulation diverged from the node %d times where no known limit explains it (a fidelity bug: the divergences above)\n", n)
	}
	fmt.Fprintf(w, "seeds %d..%d in %.1f s: %d violations\n", o.first, o.last, sweep.Seconds, len(violations))
	if w.Err != nil {
		return cli.OutputError(w.Err)
	}
	if o.JSONPath != "" {
		if err := os.MkdirAll(filepath.Dir(o.JSONPath), 0o755); err != nil {
			return cli.OutputError(fmt.Errorf("--json: %w", err))
		}
		if err := cli.WriteJSONFile(o.JSONPath, sweep); err != nil {
			return cli.OutputError(fmt.Errorf("--json: %w", err))
		}
	}
	if !sweep.Passed {
		return cli.Exit(cli.StatusFailed)
	}
	return nil
}

// violationLines is how much of a violation's report the end of the run
// repeats: rapid's verdict, the failing check's message and the steps.
const violationLines = 12

// head is s's first n lines, with a line saying how many were left off.
func head(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n... %d more lines above, under the seed's verdict", len(lines)-n)
}

// indent sets a report's lines off from the verdicts around it.
func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
