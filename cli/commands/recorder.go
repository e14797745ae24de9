package commands

import (
	"io"
	"strconv"
	"time"

	clisim "github.com/nodeproof/nodeproof/cli/sim"

	"github.com/nodeproof/nodeproof/campaign"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/reportview"
	"github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/simreport"
)

// The recorder that keeps a campaign shard's simulation seeds and suite
// runs as the report's sections (reportview.ShardFile), which `nodeproof
// campaign` is given (campaign.Recorder). It runs seeds as nodeproof sim
// does (cli/sim's RunSeed); the shard file and the merge of shards are
// reportview's.

// shardRecorder keeps one shard's simulation seeds and suite runs as the
// report's sections, with a bar on a terminal as sim and report draw it.
type shardRecorder struct {
	sim    clisim.Runner
	suite  func(properties.Suite, properties.RunOptions) properties.Result
	suites map[string]properties.Suite
	stderr io.Writer
	tty    bool

	suiteReports []reportview.Suite
	simRuns      []simreport.Seed
}

// NewShardRecorder is the campaign's NewRecorder: shards run their seeds
// with run and their suites with suite, among all.
func NewShardRecorder(run clisim.Runner, suite func(properties.Suite, properties.RunOptions) properties.Result, all []properties.Suite) func(io.Writer) campaign.Recorder {
	return func(stderr io.Writer) campaign.Recorder {
		r := &shardRecorder{sim: run, suite: suite, suites: map[string]properties.Suite{}, stderr: stderr, tty: cli.IsTerminal(stderr),
			suiteReports: []reportview.Suite{}}
		for _, s := range all {
			r.suites[s.Name] = s
		}
		return r
	}
}

// Sim runs one simulation seed, with a bar over simulated time on a
// terminal, as nodeproof sim does.
func (r *shardRecorder) Sim(plan campaign.ResolvedSim, seed uint64) *campaign.Failure {
	// The plan was validated when it was resolved, so the rates parse.
	rates, _ := sim.ParseRates(plan.Faults)
	// Known findings are counted, not stopped at, as in nodeproof sim.
	cfg := sim.Config{Seed: seed, Duration: time.Duration(plan.Hours * float64(time.Hour)), Pods: plan.Pods, Faults: rates, Explained: simreport.Explained()}
	run := clisim.RunSeed(cfg, r.sim, r.stderr, r.tty, len("seed ")+len(strconv.FormatUint(seed, 10)))
	r.simRuns = append(r.simRuns, run)
	if v := run.Summary.Violation; v != nil {
		return &campaign.Failure{Invariant: v.Invariant, Replay: run.Summary.Replay}
	}
	return nil
}

// Suite runs one suite from seed. A terminal gets a bar over the suite's
// checks; a log only the line of each unit.
func (r *shardRecorder) Suite(plan campaign.ResolvedSuites, name string, seed uint64) *campaign.Failure {
	runOpts := properties.RunOptions{Checks: plan.Checks, Steps: plan.Steps, Seed: seed}
	var bar cli.Progress
	if r.tty {
		label := campaign.Unit{Kind: "suite", Suite: name, Seed: seed}.String()
		bar = cli.NewProgress(r.stderr, r.tty, label, "checks", len(label))
		runOpts.Progress = bar.Update
	}
	res := r.suite(r.suites[name], runOpts)
	if bar != nil {
		bar.Finish()
	}
	sr := reportview.NewSuite(res)
	r.suiteReports = append(r.suiteReports, sr)
	if f := sr.Failure; f != nil {
		return &campaign.Failure{Invariant: f.Invariant, Replay: f.Replay}
	}
	return nil
}

// File is the shard file: the outcome with the suites and seeds recorded.
func (r *shardRecorder) File(o campaign.Outcome) any {
	rep := reportview.ShardFile{Version: o.Version, Started: o.Started, Seconds: o.Seconds, Passed: o.Passed,
		Campaign: o.Info, Suites: r.suiteReports, Fuzz: o.Fuzz}
	if len(r.simRuns) > 0 {
		seconds := 0.0
		for _, run := range r.simRuns {
			seconds += run.Seconds
		}
		section := simreport.NewSection(r.simRuns, seconds)
		rep.Sim = &section
	}
	return rep
}
