package sim

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/agent/outpath"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/seedrange"
	"github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/simreport"
)

// Runner runs one simulation: sim.Run, or a stand-in in tests that need a
// violation the clean tree cannot produce.
type Runner func(cfg sim.Config, progress func(sim.Stats)) sim.Summary

// Options are the flags of `nodeproof sim`, as typed, and what Complete
// and Validate derive from them.
type Options struct {
	// Seed is the one seed to run; Seeds, A..B, sweeps a range instead.
	Seed  uint64
	Seeds string
	// Hours is the simulated time per seed, Faults the fault rates as
	// sim.ParseRates reads them, Pods the pods the node holds on average
	// and MaxPods its pod capacity (0: the kubelet's default).
	Hours   float64
	Faults  string
	Pods    int
	MaxPods int
	// JSONPath is the file --json writes the summary to; "" for none.
	JSONPath string
	// Jobs is how many seeds of a sweep run at once.
	Jobs int

	// seedsGiven and seedGiven say which seed flags were given (Complete);
	// first and last are the seeds to run, inclusive, duration and faults
	// the flags read (Validate).
	seedsGiven, seedGiven bool
	first, last           uint64
	duration              time.Duration
	faults                sim.Rates
}

// NewCommand is `nodeproof sim`; run runs each seed (sim.Run).
func NewCommand(run Runner) *cobra.Command {
	var o Options
	cmd := &cobra.Command{
		Use:   "sim [--seed N | --seeds A..B] [--hours H] [--faults RATES] [--pods P] [--max-pods M] [--jobs N] [--json FILE]",
		Short: "simulate a whole node from one seed, with faults, checking the cross-subsystem invariants after every event",
		Long: `Runs the node simulation (package sim): one kubelet composed of every core, with simulated device
plugins, container runtime and probe targets, on a virtual clock, with faults drawn from the seed. The
cross-subsystem invariants are checked after every event. Prints a summary per seed and a total:
events, simulated time and speed, faults injected per kind and invariant checks. On a violation it
prints the invariant, the message, the events before it and the command that replays the run exactly.
Exit status: 1 when an invariant is violated or the output cannot be written, 2 for bad flags or a
--json path that cannot be written (checked before the first seed runs).`,
		Example: `  nodeproof sim --seed 1 --hours 24
  nodeproof sim --seeds 1..100 --hours 2 --faults default
  nodeproof sim --seed 7 --faults 'plugin-crash=0.01,kubelet-restart=0.001' --pods 5`,
		DisableFlagsInUseLine: true,
		Args:                  cli.NoArguments,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Complete(cmd)
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(run, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	def := sim.DefaultConfig()
	fl.Uint64Var(&o.Seed, "seed", def.Seed, "the seed `N` every choice of the run is drawn from")
	fl.StringVar(&o.Seeds, "seeds", "", "sweep the seeds `A..B` (inclusive) instead of one --seed")
	fl.Float64Var(&o.Hours, "hours", def.Duration.Hours(), "simulated `H`ours per seed (a decimal fraction is fine)")
	fl.StringVar(&o.Faults, "faults", "default", "fault `RATES`: default, none (every kind off), or kind=rate,... (a rate in [0, 1] per opportunity; empty is an error)")
	fl.IntVar(&o.Pods, "pods", def.Pods, "`P` pods the node holds at once on average")
	fl.IntVar(&o.MaxPods, "max-pods", 0, "the node's pod capacity `M` (the kubelet's --max-pods); 0 is its default, 110")
	fl.StringVar(&o.JSONPath, "json", "", "write the summaries as JSON to this `FILE`, creating its directory")
	fl.IntVar(&o.Jobs, "jobs", 1, "run up to `N` seeds of a sweep at once (each seed's run is deterministic, whatever runs beside it; the lines still come in seed order)")
	_ = cmd.RegisterFlagCompletionFunc("faults", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return []cobra.Completion{"default", "none"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// Complete notes which seed flags were given: --seeds and --seed exclude
// each other, and --seed has a default.
func (o *Options) Complete(cmd *cobra.Command) {
	o.seedsGiven, o.seedGiven = cmd.Flags().Changed("seeds"), cmd.Flags().Changed("seed")
}

// Validate reads the flags, refusing a bad one with a usage error naming
// it, and proves the --json path writable before the first seed runs.
func (o *Options) Validate() error {
	if err := o.validate(); err != nil {
		return cli.UsageError(err)
	}
	return nil
}

func (o *Options) validate() error {
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
	if o.Jobs < 1 {
		return fmt.Errorf("--jobs: %d is not a number of seeds to run at once (at least 1)", o.Jobs)
	}
	if math.IsNaN(o.Hours) || o.Hours <= 0 || o.Hours > sim.MaxHours {
		return fmt.Errorf("--hours must be more than 0 and at most %d, got %v", sim.MaxHours, o.Hours)
	}
	o.duration = time.Duration(o.Hours * float64(time.Hour))
	rates, err := sim.ParseRates(o.Faults)
	if err != nil {
		return flagError(err)
	}
	o.faults = rates
	if err := o.config(o.first).Validate(); err != nil {
		return flagError(err)
	}
	if o.JSONPath != "" {
		// Before the first seed: a path that cannot be written must not
		// cost the sweep.
		if err := outpath.File(o.JSONPath); err != nil {
			return fmt.Errorf("--json: %v", err)
		}
	}
	return nil
}

// config is the configuration of the run of one seed; the known findings'
// invariants are counted, not stopped at (simreport.Explained).
func (o *Options) config(seed uint64) sim.Config {
	return sim.Config{Seed: seed, Duration: o.duration, Pods: o.Pods, NodeMaxPods: o.MaxPods, Faults: o.faults, Explained: simreport.Explained()}
}

// flagErrors name the flag behind each field of sim.Config, whose
// errors start with the field ("pods: 0 must be between 1 and 100").
var flagErrors = map[string]string{"duration": "--hours", "pods": "--pods", "nodeMaxPods": "--max-pods", "faults": "--faults"}

// flagError names the flag in an error of sim.Config or sim.ParseRates.
func flagError(err error) error {
	field, rest, ok := strings.Cut(err.Error(), ": ")
	if flag, known := flagErrors[field]; ok && known {
		return fmt.Errorf("%s: %s", flag, rest)
	}
	return err
}

// Run runs every seed, printing each seed's summary, then the total, and
// writes --json. It fails when any seed violated an invariant, and when its
// output cannot be written: a sweep whose lines cannot be delivered stops at
// the first such line rather than run on unseen.
func (o *Options) Run(run Runner, out, stderr io.Writer) error {
	stdout := &cli.Writer{W: out}
	tty := cli.IsTerminal(stderr)
	width := len("seed ") + len(strconv.FormatUint(o.last, 10))
	started := time.Now()
	var runs []simreport.Seed
	o.runSeeds(run, stderr, tty, width, func(r simreport.Seed) bool {
		simreport.WriteSeed(stdout, r, width)
		runs = append(runs, r)
		return stdout.Err == nil
	})
	if stdout.Err != nil {
		return stdout.Err
	}
	section := simreport.NewSection(runs, time.Since(started).Seconds())
	simreport.WriteTotal(stdout, section)
	if stdout.Err != nil {
		return stdout.Err
	}
	if o.JSONPath != "" {
		// The path was checked before the first seed; failing now, the
		// run's output was not delivered.
		if err := writeJSON(o.JSONPath, section); err != nil {
			return cli.OutputError(fmt.Errorf("--json: %w", err))
		}
	}
	if !section.Passed {
		return cli.Exit(cli.StatusFailed)
	}
	return nil
}

// runSeeds runs the seeds first..last, o.Jobs at a time, and hands each
// result to emit in seed order; once emit returns false no further seed
// starts. With more than one job the seeds draw no progress bars, which
// would write over each other.
func (o *Options) runSeeds(run Runner, stderr io.Writer, tty bool, width int, emit func(simreport.Seed) bool) {
	jobs := max(o.Jobs, 1)
	if jobs > 1 {
		tty = false
	}
	// With more than one job, up to 2 x jobs seeds are under way or
	// finished and waiting for an earlier one, of which jobs run: a slow
	// seed delays the lines, not the cores. One job runs one seed after
	// another, as without the flag.
	slots, stop := make(chan struct{}, jobs), make(chan struct{})
	var pending []chan simreport.Seed
	next, more := o.first, true
	start := func() {
		result := make(chan simreport.Seed, 1)
		cfg := o.config(next)
		go func() {
			select {
			case slots <- struct{}{}:
			case <-stop:
				result <- simreport.Seed{}
				return
			}
			result <- RunSeed(cfg, run, stderr, tty, width)
			<-slots
		}()
		pending = append(pending, result)
		more = next != o.last
		next++
	}
	window := jobs
	if jobs > 1 {
		window = 2 * jobs
	}
	for more && len(pending) < window {
		start()
	}
	for len(pending) > 0 {
		r := <-pending[0]
		pending = pending[1:]
		if !emit(r) {
			close(stop)
			for _, p := range pending {
				<-p
			}
			return
		}
		if more {
			start()
		}
	}
}

// RunSeed runs one seed and times it, with a bar over simulated time on a
// terminal and nothing elsewhere: the summary lines say everything a log
// needs. A campaign's sim shards run their seeds with it too.
func RunSeed(cfg sim.Config, run Runner, stderr io.Writer, tty bool, width int) simreport.Seed {
	onProgress := func(sim.Stats) {}
	var bar cli.Progress
	if tty {
		total := max(1, int(cfg.Duration/time.Minute))
		bar = cli.NewProgress(stderr, tty, fmt.Sprintf("seed %d", cfg.Seed), "simulated min", width)
		onProgress = func(st sim.Stats) { bar.Update(min(int(st.Simulated/time.Minute), total), total) }
	}
	start := time.Now()
	s := run(cfg, onProgress)
	seconds := time.Since(start).Seconds()
	if bar != nil {
		bar.Finish()
	}
	return simreport.Seed{Config: cfg, Summary: s, Seconds: seconds}
}

// writeJSON writes the summary to path, making its directory.
func writeJSON(path string, s simreport.Section) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return cli.WriteJSONFile(path, s)
}
