package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/findings"
	"github.com/nodeproof/nodeproof/inventory"
	"github.com/nodeproof/nodeproof/linearizability"
	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/simreport"
)

// reportOptions are the validated flags of `nodeproof report`.
type reportOptions struct {
	out    string
	checks int
	steps  int
	seed   uint64
	suite  *regexp.Regexp
	// histories is the number of linearizability histories to record and
	// check in-process; 0 records none (the section is then "not run"
	// unless linearizability holds results read from a file).
	histories int
	// simSeeds is the number of node simulation seeds to run, from the
	// report's seed on, each for simHours simulated hours; 0 runs none.
	simSeeds int
	simHours float64
	// sim is a sweep read from a file (nodeproof sim --json), shown instead
	// of running simSeeds.
	sim *simreport.Section
	// The optional sections to include, each already read and validated.
	mutants         []mutantRow
	linearizability *tableSection
	conformance     *tableSection
	pluginCheck     *tableSection
	findings        *findings.File
}

// The places `make mutants`, `make conformance` and `make findings` write
// their results, which the report includes without being told.
const (
	defaultMutantsFile     = "report/mutants.json"
	defaultConformanceFile = "report/conformance.json"
	defaultFindingsFile    = "report/findings.json"
	// defaultSimFile is where `make sim` leaves its sweep.
	defaultSimFile = "report/sim.json"
	// defaultPluginCheckFile is where `make conformance` leaves the plugin
	// checker's runs against upstream's plugins.
	defaultPluginCheckFile = "report/plugincheck.json"
)

func newReportCommand() *cobra.Command {
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "report [--merge DIR] [--out DIR] [--checks N] [--steps N] [--seed N] [--suite REGEX] [--histories N] [--sim-seeds N] [--sim-hours H] [--sim FILE] [--mutants FILE] [--linearizability FILE] [--conformance FILE] [--plugin-check FILE] [--findings FILE]",
		Short: "run every invariant suite and write index.html, report.md and report.json",
		Long: `Runs every invariant suite, simulates the node from --sim-seeds seeds and records and
checks the linearizability histories in-process, shows the progress on stderr and writes index.html, report.md and report.json
into --out. The mutant kill matrix, the conformance results and a simulation sweep are included when
` + defaultMutantsFile + `, ` + defaultConformanceFile + ` and ` + defaultSimFile + ` exist (or the flags name them);
the report says which sections were not run and the command that runs them. With --merge DIR
it runs nothing and writes the report of a campaign's shards instead (nodeproof campaign). Exit
status: 1 when anything the report shows failed, 2 for bad flags or a file that cannot
be included or written.`,
		DisableFlagsInUseLine: true,
		Args:                  cli.NoArguments,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.merge != "" {
				if err := mergeOnlyFlags(cmd.Flags().Changed); err != nil {
					return cli.UsageError(err)
				}
			}
			opts, err := f.options()
			if err != nil {
				return cli.UsageError(err)
			}
			if f.merge != "" {
				return mergeReport(f.merge, opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			suites, err := selectSuites(opts.suite, properties.Suites())
			if err != nil {
				return cli.UsageError(err)
			}
			return cli.Exit(report(opts, suites, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	f.define(cmd.Flags())
	// --suite takes a regular expression; the suites' names are the ones
	// worth completing.
	_ = cmd.RegisterFlagCompletionFunc("suite", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return properties.SuiteNames(properties.Suites()), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.MarkFlagDirname("out")
	_ = cmd.MarkFlagDirname("merge")
	for _, name := range []string{"sim", "mutants", "linearizability", "conformance", "findings", "plugin-check"} {
		_ = cmd.MarkFlagFilename(name, "json")
	}
	return cmd
}

// report runs the suites and records the linearizability histories,
// shows their progress on stderr, writes the report and returns the exit
// status: 1 when anything the report shows failed.
func report(opts reportOptions, suites []properties.Suite, stdout, stderr io.Writer) int {
	if err := cli.OutDir(opts.out); err != nil {
		fmt.Fprintf(stderr, "nodeproof report: %v\n", err)
		return 2
	}
	started := time.Now()
	data := &reportData{
		Version:         cli.Version(),
		Started:         started.Format(time.RFC3339),
		Mutants:         opts.mutants,
		Linearizability: opts.linearizability,
		Conformance:     opts.conformance,
		PluginCheck:     opts.pluginCheck,
		searches:        opts.findings,
	}
	recording := data.Linearizability == nil && opts.histories > 0
	width := len("sim")
	if recording {
		width = len("linearizability")
	}
	for _, s := range suites {
		width = max(width, len(s.Name))
	}
	tty := cli.IsTerminal(stderr)
	seed := opts.seed
	if seed == 0 {
		seed = properties.ClockSeed()
	}
	// Before the work: an interrupted report can be repeated.
	fmt.Fprintf(stderr, "base seed %d (rerun with --seed %d)\n", seed, seed)
	for _, s := range suites {
		bar := cli.NewProgress(stderr, tty, s.Name, "checks", width)
		res := properties.Run(s, properties.RunOptions{
			Checks:   opts.checks,
			Steps:    opts.steps,
			Seed:     seed,
			Progress: bar.Update,
		})
		bar.Finish()
		// Every suite runs from the same seed, so one number repeats the report.
		seed = res.Seed
		sr := newSuiteReport(res)
		printSuiteResult(stderr, sr, width)
		data.Suites = append(data.Suites, sr)
	}
	switch {
	case opts.sim != nil:
		data.Sim = opts.sim
		printSimSection(stderr, *opts.sim, width)
	case opts.simSeeds > 0:
		// The simulation's seeds follow the suites' seed, so the same
		// number repeats them too.
		data.Sim = simulate(opts, seed, stderr, width)
	}
	if recording {
		section, err := recordHistories(opts, stderr, tty, width)
		if err != nil {
			fmt.Fprintf(stderr, "nodeproof report: linearizability: %v\n", err)
			return 1
		}
		data.Linearizability = section
	}
	data.Seconds = phrase.RoundMilli(time.Since(started).Seconds())
	data.finish(inventory.Subsystems(), opts.histories)

	paths, err := writeReport(opts.out, data)
	if err != nil {
		fmt.Fprintf(stderr, "nodeproof report: %v\n", err)
		return 2
	}
	printVerdict(stderr, data)
	fmt.Fprintf(stdout, "seed %d (rerun with --seed %d)\n", seed, seed)
	for _, p := range paths {
		fmt.Fprintln(stdout, p)
	}
	if !data.Passed {
		return 1
	}
	return 0
}

// printVerdict prints the verdict's headline and what did not run, in the
// words of the page.
func printVerdict(w io.Writer, data *reportData) {
	fmt.Fprintln(w, verdict(data).Headline)
	printNotRun(w, data.NotRun)
}

func printNotRun(w io.Writer, list []coverage.NotRun) {
	for _, n := range list {
		fmt.Fprintln(w, notRunText(n))
	}
}

// recordHistories records and checks the linearizability histories, writes
// their visualizations beside the report and returns the section.
func recordHistories(opts reportOptions, stderr io.Writer, tty bool, width int) (*tableSection, error) {
	started := time.Now()
	bar := cli.NewProgress(stderr, tty, "linearizability", "histories", width)
	results, err := linearizability.RecordHistories(context.Background(), linearizability.Histories{
		Count: opts.histories, Dir: opts.out, Progress: bar.Update,
	})
	bar.Finish()
	if err != nil {
		return nil, err
	}
	ok := 0
	for _, r := range results {
		if r.Passed() {
			ok++
			continue
		}
		fmt.Fprintf(stderr, "%-*s  FAILED  the history of %s is %s: no order of its operations explains what the clients saw\n",
			width, "linearizability", r.History, r.Result)
		fmt.Fprintf(stderr, "%-*s          visualization: %s\n", width, "", filepath.Join(opts.out, r.Visualization))
		fmt.Fprintf(stderr, "%-*s          replay: %s\n", width, "", r.Replay)
	}
	if ok == len(results) {
		fmt.Fprintf(stderr, "%-*s  passed  %d/%d histories linearizable, %.1fs\n", width, "linearizability", ok, len(results),
			time.Since(started).Seconds())
	}
	raw, err := json.Marshal(results)
	if err != nil {
		return nil, err
	}
	return parseTable(raw)
}

// The bounds of report's counts, each 100 times its default or about
// half an hour on two cores: a count beyond them is a typo, not a plan,
// and would run for hours with nothing to show (--histories 1000000 was
// interrupted with 407 visualizations written and no index.html).
const (
	maxChecks         = 30_000 // cases per suite; 100 x 300
	maxHistories      = 300    // linearizability histories; 100 x 3
	maxReportSimSeeds = 1_000  // simulation seeds of --sim-hours each
)

// reportFlags are the flags of `nodeproof report` as typed.
type reportFlags struct {
	out, suitePattern                                 string
	checks, steps, histories, simSeeds                int
	simHours                                          float64
	seed                                              uint64
	mutantsFile, linearizabilityFile, conformanceFile string
	simFile, pluginCheckFile, findingsFile            string
	merge                                             string
}

// define adds the flags to fl, with their defaults.
func (f *reportFlags) define(fl *pflag.FlagSet) {
	fl.StringVar(&f.out, "out", "report", "directory `DIR` to write index.html, report.md and report.json into")
	fl.IntVar(&f.checks, "checks", 300, "`N` generated cases per suite")
	fl.IntVar(&f.steps, "steps", 100, "`N` actions per case, on average")
	fl.Uint64Var(&f.seed, "seed", 0, "base seed `N`; 0 picks one and prints it")
	fl.IntVar(&f.histories, "histories", 3, "`N` linearizability histories to record and check; 0 for none")
	fl.IntVar(&f.simSeeds, "sim-seeds", defaultReportSimSeeds, "`N` node simulation seeds to run, from the base seed on; 0 for none")
	fl.Float64Var(&f.simHours, "sim-hours", defaultReportSimHours, "simulated `H`ours per node simulation seed")
	fl.StringVar(&f.simFile, "sim", "", "`FILE` written by nodeproof sim --json, to include instead of running --sim-seeds (default "+defaultSimFile+" if it exists)")
	fl.StringVar(&f.suitePattern, "suite", "", "`REGEX` selecting suites by name (default all)")
	fl.StringVar(&f.mutantsFile, "mutants", "", "kill matrix `FILE` written by nodeproof mutants --json, to include (default "+defaultMutantsFile+" if it exists)")
	fl.StringVar(&f.linearizabilityFile, "linearizability", "", "`FILE` holding a JSON array of linearizability results, to include instead of recording histories")
	fl.StringVar(&f.conformanceFile, "conformance", "", "`FILE` holding a JSON array of conformance results, to include (default "+defaultConformanceFile+" if it exists)")
	fl.StringVar(&f.merge, "merge", "", "combine the shard-N.json files nodeproof campaign wrote into `DIR` into one report, running nothing")
	fl.StringVar(&f.findingsFile, "findings", "", "`FILE` written by nodeproof findings --json, to include (default "+defaultFindingsFile+" if it exists)")
	fl.StringVar(&f.pluginCheckFile, "plugin-check", "", "`FILE` holding a JSON array of plugin checker runs against upstream's plugins, to include (default "+defaultPluginCheckFile+" if it exists)")
}

// options validates the flags and reads the result files to include.
func (f reportFlags) options() (reportOptions, error) {
	opts := reportOptions{out: f.out, checks: f.checks, steps: f.steps, seed: f.seed, histories: f.histories,
		simSeeds: f.simSeeds, simHours: f.simHours}
	switch {
	case opts.out == "":
		return opts, errors.New("--out must name a directory")
	case opts.checks <= 0:
		return opts, fmt.Errorf("--checks must be positive, got %d", opts.checks)
	case opts.steps <= 0:
		return opts, fmt.Errorf("--steps must be positive, got %d", opts.steps)
	case properties.CheckSteps(opts.steps) != nil:
		return opts, fmt.Errorf("--steps: %v", properties.CheckSteps(opts.steps))
	case opts.checks > maxChecks:
		return opts, fmt.Errorf("--checks: %d exceeds the bound of %d", opts.checks, maxChecks)
	case opts.histories < 0:
		return opts, fmt.Errorf("--histories must not be negative, got %d", opts.histories)
	case opts.histories > maxHistories:
		return opts, fmt.Errorf("--histories: %d exceeds the bound of %d", opts.histories, maxHistories)
	case opts.simSeeds < 0:
		return opts, fmt.Errorf("--sim-seeds must not be negative, got %d", opts.simSeeds)
	case opts.simSeeds > maxReportSimSeeds:
		return opts, fmt.Errorf("--sim-seeds: %d exceeds the bound of %d (nodeproof sim --seeds sweeps more, and report --sim includes it)", opts.simSeeds, maxReportSimSeeds)
	case math.IsNaN(opts.simHours) || opts.simHours <= 0 || opts.simHours > sim.MaxHours:
		return opts, fmt.Errorf("--sim-hours must be more than 0 and at most %d, got %v", sim.MaxHours, opts.simHours)
	}
	re, err := regexp.Compile(f.suitePattern)
	if err != nil {
		return opts, fmt.Errorf("--suite: %v", err)
	}
	opts.suite = re
	mutantsFile := orExisting(f.mutantsFile, defaultMutantsFile)
	conformanceFile := orExisting(f.conformanceFile, defaultConformanceFile)
	if mutantsFile != "" {
		if opts.mutants, err = loadMutants(mutantsFile); err != nil {
			return opts, fmt.Errorf("--mutants: %v", err)
		}
	}
	if f.linearizabilityFile != "" {
		if opts.linearizability, err = loadTable(f.linearizabilityFile); err != nil {
			return opts, fmt.Errorf("--linearizability: %v", err)
		}
	}
	if conformanceFile != "" {
		if opts.conformance, err = loadTable(conformanceFile); err != nil {
			return opts, fmt.Errorf("--conformance: %v", err)
		}
	}
	if file := orExisting(f.pluginCheckFile, defaultPluginCheckFile); file != "" {
		if opts.pluginCheck, err = loadTable(file); err != nil {
			return opts, fmt.Errorf("--plugin-check: %v", err)
		}
	}
	if file := orExisting(f.findingsFile, defaultFindingsFile); file != "" {
		if opts.findings, err = findings.Load(file, knownFindings()); err != nil {
			return opts, fmt.Errorf("--findings: %v", err)
		}
	}
	if simFile := orExisting(f.simFile, defaultSimFile); simFile != "" {
		if opts.sim, err = loadSim(simFile); err != nil {
			return opts, fmt.Errorf("--sim: %v", err)
		}
	}
	return opts, nil
}

// orExisting returns the file a flag named, else the default place when a
// file exists there, else "": the section is then not run.
func orExisting(given, defaultPath string) string {
	if given != "" {
		return given
	}
	if _, err := os.Stat(defaultPath); err == nil {
		return defaultPath
	}
	return ""
}

// selectSuites returns the suites --suite selects.
func selectSuites(re *regexp.Regexp, all []properties.Suite) ([]properties.Suite, error) {
	selected, err := properties.Select(re, all)
	if err != nil {
		return nil, fmt.Errorf("--suite %v", err)
	}
	return selected, nil
}

// writeReport writes the three renderings into dir and returns their paths.
func writeReport(dir string, data *reportData) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	renderers := []struct {
		name   string
		render func(io.Writer, *reportData) error
	}{
		{"index.html", writeHTML},
		{"report.md", writeMarkdown},
		{"report.json", writeJSON},
	}
	var paths []string
	for _, r := range renderers {
		path := filepath.Join(dir, r.name)
		if err := writeFile(path, data, r.render); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func writeFile(path string, data *reportData, render func(io.Writer, *reportData) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := render(f, data); err != nil {
		f.Close()
		return fmt.Errorf("%s: %v", path, err)
	}
	return f.Close()
}

// printSuiteResult prints a suite's line and, when it failed, everything
// needed to act on it: the invariant, the shrunk steps and the replay line.
func printSuiteResult(w io.Writer, sr suiteReport, width int) {
	counts := fmt.Sprintf("%d checks, %d steps, %.1fs", sr.Checks, sr.Steps, sr.Seconds)
	if sr.Failure == nil {
		fmt.Fprintf(w, "%-*s  passed  %s\n", width, sr.Name, counts)
		return
	}
	indent := strings.Repeat(" ", width+10)
	fmt.Fprintf(w, "%-*s  FAILED  %s after %s\n", width, sr.Name, sr.Failure.Invariant, counts)
	steps := sr.Failure.Steps
	if len(steps) == 0 {
		// A failure without step lines (a panic, say) still shows its message.
		steps = strings.Split(strings.TrimRight(sr.Failure.Message, "\n"), "\n")
	}
	for _, line := range steps {
		fmt.Fprintf(w, "%s%s\n", indent, line)
	}
	if sr.Failure.Replay != "" {
		fmt.Fprintf(w, "%sreplay: %s\n", indent, sr.Failure.Replay)
	}
}
