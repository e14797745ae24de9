package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/sim"
)

// jobIndexEnv is where Kubernetes tells each pod of an Indexed Job its index.
const jobIndexEnv = "JOB_COMPLETION_INDEX"

// campaignRunners are what a shard runs its units with: the real ones in
// nodeproof, stand-ins in tests that need a failure the tree cannot produce.
type campaignRunners struct {
	sim   simRunner
	suite func(properties.Suite, properties.RunOptions) properties.Result
	fuzz  fuzzRunner
	// listFuzz finds the fuzz targets under the plan's binaries directory.
	listFuzz func(dir string) ([]fuzzTarget, error)
	suites   []properties.Suite
}

func defaultCampaignRunners() campaignRunners {
	return campaignRunners{sim: sim.Run, suite: properties.Run, fuzz: runFuzzTarget, listFuzz: listFuzzTargets, suites: properties.Suites()}
}

// campaignFlags are the flags of `nodeproof campaign` as typed.
type campaignFlags struct {
	plan   string
	out    string
	index  int
	shards int
}

// campaignOptions are the validated flags and the resolved plan.
type campaignOptions struct {
	plan  resolvedPlan
	index int
	out   string
}

func newCampaignCommand(runners campaignRunners) *cobra.Command {
	var f campaignFlags
	cmd := &cobra.Command{
		Use:   "campaign --plan FILE [--index N] [--shards N] [--out DIR]",
		Short: "run one shard of a campaign (simulation seeds, long suite runs, fuzz targets) and write its report JSON",
		Long: `Reads a campaign plan (simulation seeds, property suites at a budget of their own, fuzz targets
for a duration), takes shard --index of --shards (every unit of the plan falls in exactly one
shard), runs it and writes DIR/shard-<index>.json: the report's JSON for the shard, with every
failure's replay line. Meant for the pods of a Kubernetes Indexed Job, which set
` + jobIndexEnv + `; nodeproof report --merge DIR combines the shards into one report.
Exit status: 1 when a unit failed (the shard file is written all the same) or the shard file
could not be written after the run, 2 for bad flags, a bad plan or a --out that cannot be written
(checked before the first unit runs).`,
		Example: `  nodeproof campaign --plan plan.yaml --index 0 --out results
  JOB_COMPLETION_INDEX=2 nodeproof campaign --plan /etc/nodeproof/plan.yaml --out /results
  nodeproof report --merge results --out report`,
		DisableFlagsInUseLine: true,
		Args:                  cli.NoArguments,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.options(cmd.Flags().Changed, runners, cmd.InOrStdin())
			if err != nil {
				return cli.UsageError(err)
			}
			return runCampaign(opts, runners, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.define(cmd.Flags())
	_ = cmd.MarkFlagFilename("plan", "yaml", "yml", "json")
	_ = cmd.MarkFlagDirname("out")
	return cmd
}

func (f *campaignFlags) define(fl *pflag.FlagSet) {
	fl.StringVar(&f.plan, "plan", "", "the campaign plan `FILE` (YAML or JSON, read strictly; - reads stdin; see docs/campaign.md)")
	fl.StringVar(&f.out, "out", "results", "directory `DIR` to write shard-<index>.json (and failing fuzz inputs) into")
	fl.IntVar(&f.index, "index", 0, "this shard's index `N`, from 0 (default $"+jobIndexEnv+")")
	fl.IntVar(&f.shards, "shards", 0, "the number of shards `N` (default the plan's shards; when both are given they must agree)")
}

// options validates the flags and resolves the plan.
func (f campaignFlags) options(changed func(string) bool, runners campaignRunners, stdin io.Reader) (campaignOptions, error) {
	opts := campaignOptions{index: f.index, out: f.out}
	if f.plan == "" {
		return opts, errors.New("--plan must name the campaign's plan file")
	}
	if f.out == "" {
		return opts, errors.New("--out must name a directory")
	}
	if !changed("index") {
		env, ok := os.LookupEnv(jobIndexEnv)
		if !ok {
			return opts, fmt.Errorf("--index is required when $%s is not set", jobIndexEnv)
		}
		n, err := strconv.Atoi(env)
		if err != nil {
			return opts, fmt.Errorf("$%s must be a whole number (the --index), got %q", jobIndexEnv, env)
		}
		opts.index = n
	}
	plan, err := readPlan(f.plan, stdin)
	if err != nil {
		return opts, err
	}
	if changed("shards") {
		if plan.Shards != 0 && plan.Shards != f.shards {
			return opts, fmt.Errorf("--shards %d, but the plan %s says shards: %d", f.shards, f.plan, plan.Shards)
		}
		plan.Shards = f.shards
	}
	if opts.plan, err = plan.resolve(runners.suites, runners.listFuzz); err != nil {
		return opts, fmt.Errorf("--plan %s: %v", f.plan, err)
	}
	if opts.index < 0 || opts.index >= opts.plan.Shards {
		return opts, fmt.Errorf("--index must be between 0 and %d (shards - 1), got %d", opts.plan.Shards-1, opts.index)
	}
	return opts, nil
}

// shardReport is what one shard writes: the report's JSON (version,
// started, seconds, passed, suites, sim) for its units, with the campaign
// it belongs to and its fuzz targets.
type shardReport struct {
	Version  string        `json:"version"`
	Started  string        `json:"started"`
	Seconds  float64       `json:"seconds"`
	Passed   bool          `json:"passed"`
	Campaign shardInfo     `json:"campaign"`
	Suites   []suiteReport `json:"suites"`
	Sim      *simSection   `json:"sim"`
	Fuzz     []fuzzReport  `json:"fuzz"`
}

// shardInfo places a shard in its campaign.
type shardInfo struct {
	Shard  int          `json:"shard"`
	Shards int          `json:"shards"`
	Plan   resolvedPlan `json:"plan"`
}

// fuzzReport is one fuzz target's run.
type fuzzReport struct {
	Package string       `json:"package"`
	Target  string       `json:"target"`
	Shard   int          `json:"shard"`
	Seconds float64      `json:"seconds"`
	Passed  bool         `json:"passed"`
	Failure *fuzzFailure `json:"failure"`
}

// fuzzFailure is what a failing fuzz run printed and the input it failed on.
type fuzzFailure struct {
	Message string `json:"message"`
	// Input is the failing input's file, relative to the directory holding
	// the shard file; empty when the run failed without one (a crash of
	// the binary, a timeout).
	Input string `json:"input"`
	// Replay reruns the input from a nodeproof checkout.
	Replay string `json:"replay"`
}

// shardFileName is the file shard index writes into --out.
func shardFileName(index int) string { return fmt.Sprintf("shard-%d.json", index) }

// runCampaign runs the shard's units in plan order, writes its file and
// fails when any unit failed.
func runCampaign(opts campaignOptions, runners campaignRunners, stdout, stderr io.Writer) error {
	if err := checkOutDir(opts.out); err != nil {
		return cli.UsageError(err)
	}
	started := time.Now()
	rep := shardReport{Version: cli.Version(), Started: started.Format(time.RFC3339), Passed: true,
		Campaign: shardInfo{Shard: opts.index, Shards: opts.plan.Shards, Plan: opts.plan},
		Suites:   []suiteReport{}, Fuzz: []fuzzReport{}}
	units := opts.plan.shardUnits(opts.index)
	fmt.Fprintf(stderr, "shard %d of %d: %s\n", opts.index, opts.plan.Shards, phrase.Count(len(units), "unit"))
	tty := isTerminal(stderr)
	suites := map[string]properties.Suite{}
	for _, s := range runners.suites {
		suites[s.Name] = s
	}
	var simRuns []simRun
	for i, u := range units {
		passed, detail := true, ""
		switch u.Kind {
		case "sim":
			r := runCampaignSim(opts.plan.Sim, u.Seed, runners.sim, stderr, tty)
			simRuns = append(simRuns, r)
			if v := r.summary.Violation; v != nil {
				passed, detail = false, v.Invariant+"; replay: "+r.summary.Replay
			}
		case "suite":
			// A terminal gets a bar over the suite's checks; a log only
			// the line of each unit.
			runOpts := properties.RunOptions{Checks: opts.plan.Suites.Checks, Steps: opts.plan.Suites.Steps, Seed: u.Seed}
			var bar progress
			if tty {
				bar = newProgress(stderr, tty, u.String(), "checks", len(u.String()))
				runOpts.Progress = bar.update
			}
			res := runners.suite(suites[u.Suite], runOpts)
			if bar != nil {
				bar.finish()
			}
			sr := newSuiteReport(res)
			rep.Suites = append(rep.Suites, sr)
			if f := sr.Failure; f != nil {
				passed, detail = false, f.Invariant+"; replay: "+orDash(f.Replay)
			}
		case "fuzz":
			fr := runCampaignFuzz(opts, u.Target, runners.fuzz)
			rep.Fuzz = append(rep.Fuzz, fr)
			if f := fr.Failure; f != nil {
				passed, detail = false, "replay: "+orDash(f.Replay)
			}
		}
		rep.Passed = rep.Passed && passed
		verdict := "passed"
		if !passed {
			verdict = "FAILED " + detail
		}
		fmt.Fprintf(stderr, "[%d/%d] %s: %s\n", i+1, len(units), u, verdict)
	}
	if len(simRuns) > 0 {
		section := newSimSection(simRuns, sumSeconds(simRuns))
		rep.Sim = &section
	}
	rep.Seconds = roundMillis(time.Since(started).Seconds())
	path := filepath.Join(opts.out, shardFileName(opts.index))
	if err := writeShardFile(path, rep); err != nil {
		// --out was checked before the first unit; failing now, the
		// shard's results were not delivered.
		return cli.OutputError(fmt.Errorf("--out: %w", err))
	}
	if _, err := fmt.Fprintln(stdout, path); err != nil {
		return cli.OutputError(err)
	}
	if !rep.Passed {
		return cli.Exit(cli.StatusFailed)
	}
	return nil
}

// runCampaignSim runs one simulation seed, with a bar over simulated time on
// a terminal, as nodeproof sim does.
func runCampaignSim(plan *resolvedSim, seed uint64, run simRunner, stderr io.Writer, tty bool) simRun {
	// The plan was validated when it was resolved, so the rates parse.
	rates, _ := sim.ParseRates(plan.Faults)
	// Known findings are counted, not stopped at, as in nodeproof sim.
	cfg := sim.Config{Seed: seed, Duration: time.Duration(plan.Hours * float64(time.Hour)), Pods: plan.Pods, Faults: rates, Explained: simExplained()}
	return runSeed(cfg, run, stderr, tty, len("seed ")+len(strconv.FormatUint(seed, 10)))
}

func runCampaignFuzz(opts campaignOptions, t fuzzTarget, run fuzzRunner) fuzzReport {
	inputsRel := filepath.Join("fuzz-inputs", fmt.Sprintf("shard-%d", opts.index), t.Name)
	fr := run(fuzzJob{
		target:    t,
		duration:  time.Duration(opts.plan.Fuzz.Seconds * float64(time.Second)),
		binaries:  opts.plan.Fuzz.Binaries,
		cacheDir:  filepath.Join(opts.out, "fuzz-cache"),
		inputsDir: filepath.Join(opts.out, inputsRel),
		inputsRel: inputsRel,
	})
	fr.Shard = opts.index
	if f := fr.Failure; f != nil && f.Input != "" {
		// Relative to the results directory as the shard saw it; the merge
		// rewrites it for the directory it reads.
		f.Replay = fuzzReplay(t, filepath.Join(opts.out, filepath.FromSlash(f.Input)))
	}
	return fr
}

func sumSeconds(runs []simRun) float64 {
	total := 0.0
	for _, r := range runs {
		total += r.seconds
	}
	return total
}

// writeShardFile writes the shard's JSON through a temporary file, so that a
// pod stopped while writing leaves no half file for the merge to trip on.
func writeShardFile(path string, rep shardReport) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".shard-*.json")
	if err != nil {
		return err
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}
