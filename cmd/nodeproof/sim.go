package main

import (
	"encoding/json"
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
	"github.com/spf13/pflag"

	"github.com/nodeproof/nodeproof/agent/outpath"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/reportview"
	"github.com/nodeproof/nodeproof/seedrange"
	"github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/verify"
)

// maxSimHours bounds --hours (sim.MaxHours).
const maxSimHours = sim.MaxHours

// simRunner runs one simulation; sim.Run, or a stand-in in tests that need
// a violation the clean tree cannot produce.
type simRunner func(cfg sim.Config, progress func(sim.Stats)) sim.Summary

// simOptions are the validated flags of `nodeproof sim`.
type simOptions struct {
	// first and last are the seeds to run, inclusive.
	first, last uint64
	duration    time.Duration
	pods        int
	maxPods     int
	faults      sim.Rates
	jsonPath    string
}

// config is the configuration of the run of one seed; the known findings'
// invariants are counted, not stopped at (verify.ExplainedIn).
func (o simOptions) config(seed uint64) sim.Config {
	return sim.Config{Seed: seed, Duration: o.duration, Pods: o.pods, NodeMaxPods: o.maxPods, Faults: o.faults, Explained: verify.ExplainedIn("sim")}
}

// simFlags are the flags of `nodeproof sim` as typed.
type simFlags struct {
	seed     uint64
	seeds    string
	hours    float64
	faults   string
	pods     int
	maxPods  int
	jsonPath string
}

func newSimCommand(run simRunner) *cobra.Command {
	var f simFlags
	cmd := &cobra.Command{
		Use:   "sim [--seed N | --seeds A..B] [--hours H] [--faults RATES] [--pods P] [--max-pods M] [--json FILE]",
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
			opts, err := f.options(cmd.Flags().Changed)
			if err != nil {
				return cli.UsageError(err)
			}
			return runSim(opts, run, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.define(cmd.Flags())
	_ = cmd.RegisterFlagCompletionFunc("faults", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return []cobra.Completion{"default", "none"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func (f *simFlags) define(fl *pflag.FlagSet) {
	def := sim.DefaultConfig()
	fl.Uint64Var(&f.seed, "seed", def.Seed, "the seed `N` every choice of the run is drawn from")
	fl.StringVar(&f.seeds, "seeds", "", "sweep the seeds `A..B` (inclusive) instead of one --seed")
	fl.Float64Var(&f.hours, "hours", def.Duration.Hours(), "simulated `H`ours per seed (a decimal fraction is fine)")
	fl.StringVar(&f.faults, "faults", "default", "fault `RATES`: default, none (every kind off), or kind=rate,... (a rate in [0, 1] per opportunity; empty is an error)")
	fl.IntVar(&f.pods, "pods", def.Pods, "`P` pods the node holds at once on average")
	fl.IntVar(&f.maxPods, "max-pods", 0, "the node's pod capacity `M` (the kubelet's --max-pods); 0 is its default, 110")
	fl.StringVar(&f.jsonPath, "json", "", "write the summaries as JSON to this `FILE`, creating its directory")
}

// options validates the flags; changed says whether a flag was given.
func (f simFlags) options(changed func(string) bool) (simOptions, error) {
	opts := simOptions{first: f.seed, last: f.seed, pods: f.pods, maxPods: f.maxPods, jsonPath: f.jsonPath}
	if changed("seeds") {
		if changed("seed") {
			return opts, errors.New("--seed and --seeds are mutually exclusive: give one seed or a range")
		}
		first, last, err := parseSeedRange(f.seeds)
		if err != nil {
			return opts, err
		}
		opts.first, opts.last = first, last
	}
	if math.IsNaN(f.hours) || f.hours <= 0 || f.hours > maxSimHours {
		return opts, fmt.Errorf("--hours must be more than 0 and at most %d, got %v", maxSimHours, f.hours)
	}
	opts.duration = time.Duration(f.hours * float64(time.Hour))
	rates, err := sim.ParseRates(f.faults)
	if err != nil {
		return opts, simFlagError(err)
	}
	opts.faults = rates
	if err := opts.config(opts.first).Validate(); err != nil {
		return opts, simFlagError(err)
	}
	if opts.jsonPath != "" {
		// Before the first seed: a path that cannot be written must not
		// cost the sweep.
		if err := outpath.File(opts.jsonPath); err != nil {
			return opts, fmt.Errorf("--json: %v", err)
		}
	}
	return opts, nil
}

// simFlagErrors name the flag behind each field of sim.Config, whose
// errors start with the field ("pods: 0 must be between 1 and 100").
var simFlagErrors = map[string]string{"duration": "--hours", "pods": "--pods", "nodeMaxPods": "--max-pods", "faults": "--faults"}

// simFlagError names the flag in an error of sim.Config or sim.ParseRates.
func simFlagError(err error) error {
	field, rest, ok := strings.Cut(err.Error(), ": ")
	if flag, known := simFlagErrors[field]; ok && known {
		return fmt.Errorf("%s: %s", flag, rest)
	}
	return err
}

// parseSeedRange reads --seeds A..B.
func parseSeedRange(s string) (first, last uint64, err error) {
	first, last, err = seedrange.Parse(s)
	if err != nil {
		return 0, 0, fmt.Errorf("--seeds %v", err)
	}
	return first, last, nil
}

// runSim runs every seed, printing each seed's summary, then the total,
// and writes --json. It fails when any seed violated an invariant, and
// when its output cannot be written: a sweep whose lines cannot be
// delivered stops at the first such line rather than run on unseen.
func runSim(opts simOptions, run simRunner, out, stderr io.Writer) error {
	stdout := &cli.Writer{W: out}
	tty := cli.IsTerminal(stderr)
	width := len("seed ") + len(strconv.FormatUint(opts.last, 10))
	started := time.Now()
	var runs []reportview.SimResult
	for seed := opts.first; ; seed++ {
		r := runSeed(opts.config(seed), run, stderr, tty, width)
		printSimRun(stdout, r, width)
		if stdout.Err != nil {
			return stdout.Err
		}
		runs = append(runs, r)
		if seed == opts.last {
			break
		}
	}
	section := reportview.NewSim(runs, time.Since(started).Seconds())
	printSimTotal(stdout, section)
	if stdout.Err != nil {
		return stdout.Err
	}
	if opts.jsonPath != "" {
		// The path was checked before the first seed; failing now, the
		// run's output was not delivered.
		if err := writeSimJSON(opts.jsonPath, section); err != nil {
			return cli.OutputError(fmt.Errorf("--json: %w", err))
		}
	}
	if !section.Passed {
		return cli.Exit(cli.StatusFailed)
	}
	return nil
}

// runSeed runs one seed, with a bar over simulated time on a terminal and
// nothing elsewhere: the summary lines say everything a log needs.
func runSeed(cfg sim.Config, run simRunner, stderr io.Writer, tty bool, width int) reportview.SimResult {
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
	return reportview.SimResult{Config: cfg, Summary: s, Seconds: seconds}
}

// printSimRun prints one seed's line and, on a violation, everything needed
// to act on it: the invariant, its message, the trace and the replay line.
func printSimRun(w io.Writer, r reportview.SimResult, width int) {
	st := r.Summary.Stats
	name := fmt.Sprintf("seed %d", r.Config.Seed)
	counts := fmt.Sprintf("%d events, %s simulated, %.1fs (%s simulated h/s, %s events/s)", st.Events,
		formatSimulated(st.Simulated), r.Seconds, formatRate(st.Simulated.Hours(), r.Seconds), formatRate(float64(st.Events), r.Seconds))
	if r.Summary.Violation == nil {
		fmt.Fprintf(w, "%-*s  passed  %s\n", width, name, counts)
		printExplained(w, strings.Repeat(" ", width+10), st.Explained)
		return
	}
	v := reportview.NewSimViolation(r.Config.Seed, r.Summary)
	fmt.Fprintf(w, "%-*s  FAILED  %s after %s\n", width, name, v.Invariant, counts)
	reportview.PrintSimViolation(w, strings.Repeat(" ", width+10), *v)
}

// printExplained says how often a known finding's broken promise was seen
// again: counted, not stopped at.
func printExplained(w io.Writer, indent string, explained map[string]int) {
	for _, id := range reportview.SortedKeys(explained) {
		fmt.Fprintf(w, "%s%s broken %s: a known finding (nodeproof findings --list)\n", indent, id, phrase.Count(explained[id], "time"))
	}
}

// printSimTotal prints the sums over every seed.
func printSimTotal(w io.Writer, s reportview.Sim) {
	verdict := "passed"
	if !s.Passed {
		verdict = fmt.Sprintf("FAILED (%s)", phrase.Count(len(s.Violations), "violation"))
	}
	fmt.Fprintf(w, "total: %s, %s; %d events, %s simulated hours in %.1fs: %s simulated h/s, %s events/s\n",
		phrase.Count(s.Seeds, "seed"), verdict, s.Events, reportview.Stat(s.SimulatedHours), s.Seconds,
		formatRate(s.SimulatedHours, s.Seconds), formatRate(float64(s.Events), s.Seconds))
	fmt.Fprintln(w, "faults injected:")
	printCounts(w, s.Injected)
	fmt.Fprintln(w, "invariants (checked / applied):")
	idWidth := 0
	for _, c := range s.Checks {
		idWidth = max(idWidth, len(c.ID))
	}
	for _, c := range s.Checks {
		fmt.Fprintf(w, "  %-*s  %d / %d\n", idWidth, c.ID, c.Checked, c.Applied)
	}
	if len(s.Observed) > 0 {
		fmt.Fprintln(w, "upstream behaviour observed (reported, not judged):")
		printCounts(w, s.Observed)
	}
	for _, v := range s.Violations {
		fmt.Fprintf(w, "violation: seed %d: %s; replay: %s\n", v.Seed, v.Invariant, v.Replay)
	}
}

func printCounts(w io.Writer, counts map[string]int) {
	if len(counts) == 0 {
		fmt.Fprintln(w, "  (none)")
		return
	}
	keys := reportview.SortedKeys(counts)
	kw := 0
	for _, k := range keys {
		kw = max(kw, len(k))
	}
	for _, k := range keys {
		fmt.Fprintf(w, "  %-*s  %d\n", kw, k, counts[k])
	}
}

// formatSimulated prints a simulated duration in whole seconds.
func formatSimulated(d time.Duration) string { return d.Truncate(time.Second).String() }

// formatRate prints n per second, without decimals from 100 up.
func formatRate(n, seconds float64) string {
	if seconds <= 0 {
		return "-"
	}
	r := n / seconds
	if r >= 100 {
		return strconv.FormatFloat(math.Round(r), 'f', 0, 64)
	}
	return strconv.FormatFloat(r, 'f', 1, 64)
}

func writeSimJSON(path string, s reportview.Sim) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
