package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nodeproof/nodeproof/agent/outpath"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/phrase"
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
// invariants are counted, not stopped at (simExplained).
func (o simOptions) config(seed uint64) sim.Config {
	return sim.Config{Seed: seed, Duration: o.duration, Pods: o.pods, NodeMaxPods: o.maxPods, Faults: o.faults, Explained: simExplained()}
}

// simExplained are the contract invariants of the simulation that a known
// finding (verify.Findings) is about: a run counts their violations, the
// known broken promises of upstream's kubelet, and goes on.
func simExplained() []string {
	var ids []string
	for _, f := range verify.Findings() {
		if f.Suite == "sim" {
			ids = append(ids, f.Property)
		}
	}
	return ids
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

// simRun is one seed's finished run and the wall time it took.
type simRun struct {
	config  sim.Config
	summary sim.Summary
	seconds float64
}

// runSim runs every seed, printing each seed's summary, then the total,
// and writes --json. It fails when any seed violated an invariant, and
// when its output cannot be written: a sweep whose lines cannot be
// delivered stops at the first such line rather than run on unseen.
func runSim(opts simOptions, run simRunner, out, stderr io.Writer) error {
	stdout := &cli.Writer{W: out}
	tty := isTerminal(stderr)
	width := len("seed ") + len(strconv.FormatUint(opts.last, 10))
	started := time.Now()
	var runs []simRun
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
	section := newSimSection(runs, time.Since(started).Seconds())
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
func runSeed(cfg sim.Config, run simRunner, stderr io.Writer, tty bool, width int) simRun {
	onProgress := func(sim.Stats) {}
	var bar progress
	if tty {
		total := max(1, int(cfg.Duration/time.Minute))
		bar = newProgress(stderr, tty, fmt.Sprintf("seed %d", cfg.Seed), "simulated min", width)
		onProgress = func(st sim.Stats) { bar.update(min(int(st.Simulated/time.Minute), total), total) }
	}
	start := time.Now()
	s := run(cfg, onProgress)
	seconds := time.Since(start).Seconds()
	if bar != nil {
		bar.finish()
	}
	return simRun{config: cfg, summary: s, seconds: seconds}
}

// printSimRun prints one seed's line and, on a violation, everything needed
// to act on it: the invariant, its message, the trace and the replay line.
func printSimRun(w io.Writer, r simRun, width int) {
	st := r.summary.Stats
	name := fmt.Sprintf("seed %d", r.config.Seed)
	counts := fmt.Sprintf("%d events, %s simulated, %.1fs (%s simulated h/s, %s events/s)", st.Events,
		formatSimulated(st.Simulated), r.seconds, formatRate(st.Simulated.Hours(), r.seconds), formatRate(float64(st.Events), r.seconds))
	if r.summary.Violation == nil {
		fmt.Fprintf(w, "%-*s  passed  %s\n", width, name, counts)
		printExplained(w, strings.Repeat(" ", width+10), st.Explained)
		return
	}
	v := newSimViolation(r.config.Seed, r.summary)
	fmt.Fprintf(w, "%-*s  FAILED  %s after %s\n", width, name, v.Invariant, counts)
	printSimViolation(w, strings.Repeat(" ", width+10), *v)
}

// printExplained says how often a known finding's broken promise was seen
// again: counted, not stopped at.
func printExplained(w io.Writer, indent string, explained map[string]int) {
	for _, id := range sortedKeys(explained) {
		fmt.Fprintf(w, "%s%s broken %s: a known finding (nodeproof findings --list)\n", indent, id, phrase.Count(explained[id], "time"))
	}
}

// printSimViolation prints what a reader needs to act on a violation, each
// line after indent: its message, the trace and the replay line.
func printSimViolation(w io.Writer, indent string, v simViolation) {
	for _, line := range strings.Split(strings.TrimRight(v.Message, "\n"), "\n") {
		fmt.Fprintf(w, "%s%s\n", indent, line)
	}
	fmt.Fprintf(w, "%strace (the %d events up to the violation, oldest first):\n", indent, len(v.Trace))
	for _, e := range v.Trace {
		fmt.Fprintf(w, "%s  %s\n", indent, e)
	}
	fmt.Fprintf(w, "%sreplay: %s\n", indent, v.Replay)
}

// newSimViolation is a run's violation as the JSON and the report show it;
// the run must have one.
func newSimViolation(seed uint64, sum sim.Summary) *simViolation {
	v := sum.Violation
	sv := &simViolation{Seed: seed, Invariant: v.Invariant, Message: v.Message, Event: v.Event.String(),
		Trace: make([]string, 0, len(v.Trace)), Replay: sum.Replay}
	for _, e := range v.Trace {
		sv.Trace = append(sv.Trace, e.String())
	}
	return sv
}

// printSimTotal prints the sums over every seed.
func printSimTotal(w io.Writer, s simSection) {
	verdict := "passed"
	if !s.Passed {
		verdict = fmt.Sprintf("FAILED (%s)", phrase.Count(len(s.Violations), "violation"))
	}
	fmt.Fprintf(w, "total: %s, %s; %d events, %s simulated hours in %.1fs: %s simulated h/s, %s events/s\n",
		phrase.Count(s.Seeds, "seed"), verdict, s.Events, formatStat(s.SimulatedHours), s.Seconds,
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
	keys := sortedKeys(counts)
	kw := 0
	for _, k := range keys {
		kw = max(kw, len(k))
	}
	for _, k := range keys {
		fmt.Fprintf(w, "  %-*s  %d\n", kw, k, counts[k])
	}
}

func sortedKeys(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) }

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

// simSection is what a set of seeds did: the output of `nodeproof sim
// --json` and the "sim" key of report.json.
type simSection struct {
	Seeds     int    `json:"seeds"`
	FirstSeed uint64 `json:"first_seed"`
	LastSeed  uint64 `json:"last_seed"`
	// Hours is the simulated time per seed, Pods and Faults the rest of the
	// configuration, Faults as --faults takes it.
	Hours  float64 `json:"hours"`
	Pods   int     `json:"pods"`
	Faults string  `json:"faults"`
	// The sums over every seed.
	Events         int            `json:"events"`
	SimulatedHours float64        `json:"simulated_hours"`
	Seconds        float64        `json:"seconds"`
	Injected       map[string]int `json:"injected"`
	Checks         []simCheck     `json:"checks"`
	Observed       map[string]int `json:"observed"`
	Passed         bool           `json:"passed"`
	Violations     []simViolation `json:"violations"`
	Runs           []simRunReport `json:"runs"`
}

// simCheck is how often one invariant was evaluated and applied.
type simCheck struct {
	ID        string `json:"id"`
	Statement string `json:"statement"`
	Checked   int    `json:"checked"`
	Applied   int    `json:"applied"`
}

// simRunReport is one seed's run.
type simRunReport struct {
	Seed           uint64         `json:"seed"`
	Events         int            `json:"events"`
	SimulatedHours float64        `json:"simulated_hours"`
	Seconds        float64        `json:"seconds"`
	EventsByKind   map[string]int `json:"events_by_kind"`
	Injected       map[string]int `json:"injected"`
	Checks         []simCheck     `json:"checks"`
	Observed       map[string]int `json:"observed"`
	Passed         bool           `json:"passed"`
	Violation      *simViolation  `json:"violation"`
	Replay         string         `json:"replay"`
}

// simViolation is the invariant a seed broke, the event after which the
// check failed, the events up to it (oldest first) and the replay line.
type simViolation struct {
	Seed      uint64   `json:"seed"`
	Invariant string   `json:"invariant"`
	Message   string   `json:"message"`
	Event     string   `json:"event"`
	Trace     []string `json:"trace"`
	Replay    string   `json:"replay"`
}

// newSimSection sums the runs of consecutive seeds of one configuration;
// seconds is the wall time of them all.
func newSimSection(runs []simRun, seconds float64) simSection {
	cfg := runs[0].config
	s := simSection{
		Seeds: len(runs), FirstSeed: cfg.Seed, LastSeed: runs[len(runs)-1].config.Seed,
		Hours: roundMillis(cfg.Duration.Hours()), Pods: cfg.Pods, Faults: cfg.Faults.String(),
		Seconds: roundMicro(seconds), Injected: map[string]int{}, Observed: map[string]int{},
		Passed: true, Violations: []simViolation{},
	}
	for _, r := range runs {
		s.Runs = append(s.Runs, newSimRunReport(r))
	}
	s.sumRuns()
	return s
}

// sumRuns sets the section's totals from its runs: events, simulated
// hours, faults, observations, checks and violations. A sweep and a merge
// of campaign shards both take their totals this way.
func (s *simSection) sumRuns() {
	checks := verify.Counts{}
	simulated := 0.0
	for _, r := range s.Runs {
		s.Events += r.Events
		simulated += r.SimulatedHours
		for k, n := range r.Injected {
			s.Injected[k] += n
		}
		for k, n := range r.Observed {
			s.Observed[k] += n
		}
		for _, c := range r.Checks {
			sum := checks[c.ID]
			sum.Checked += c.Checked
			sum.Applied += c.Applied
			checks[c.ID] = sum
		}
		if r.Violation != nil {
			s.Passed = false
			s.Violations = append(s.Violations, *r.Violation)
		}
	}
	s.SimulatedHours = roundMillis(simulated)
	s.Checks = simChecks(checks)
}

func newSimRunReport(r simRun) simRunReport {
	sum, st := r.summary, r.summary.Stats
	rr := simRunReport{
		Seed: r.config.Seed, Events: st.Events, SimulatedHours: roundMillis(st.Simulated.Hours()),
		Seconds: roundMicro(r.seconds), EventsByKind: orEmpty(st.ByKind), Injected: map[string]int{},
		Checks: simChecks(st.Checks), Observed: orEmpty(st.Observed), Passed: sum.Violation == nil, Replay: sum.Replay,
	}
	for kind, n := range st.Faults {
		rr.Injected[string(kind)] = n
	}
	if sum.Violation != nil {
		rr.Violation = newSimViolation(r.config.Seed, sum)
	}
	return rr
}

// simChecks lists the counts in the order of sim.Invariants, then any
// other ID in name order, so that every table reads the same way.
func simChecks(counts verify.Counts) []simCheck {
	order := map[string]int{}
	statements := map[string]string{}
	for i, inv := range sim.Invariants() {
		order[inv.ID] = i
		statements[inv.ID] = inv.Statement
	}
	out := make([]simCheck, 0, len(counts))
	for id, c := range counts {
		out = append(out, simCheck{ID: id, Statement: statements[id], Checked: c.Checked, Applied: c.Applied})
	}
	sort.Slice(out, func(i, j int) bool {
		oi, iKnown := order[out[i].ID]
		oj, jKnown := order[out[j].ID]
		if iKnown != jKnown {
			return iKnown
		}
		if iKnown {
			return oi < oj
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// orEmpty keeps a nil map from appearing as null in JSON.
func orEmpty(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

func writeSimJSON(path string, s simSection) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
