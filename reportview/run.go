package reportview

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/nodeproof/nodeproof/linearizability"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/simreport"
)

// The report's node simulation budget: a few seconds of make report on the
// CI machine (BENCHMARKS.md); nodeproof sim --seeds sweeps further.
const (
	DefaultSimSeeds = 2
	DefaultSimHours = 2.0
)

// Progress shows one job's progress: a suite's checks, the simulation's
// seeds, the linearizability histories (cli.NewProgress makes one).
type Progress interface {
	Update(done, total int)
	// Finish removes what Update drew, before the job's result is printed.
	Finish()
}

// RunOptions say what Run runs and where it reports its progress.
type RunOptions struct {
	// Suites run in order, each for Checks cases of about Steps actions,
	// all from Seed: one number repeats the report.
	Suites    []properties.Suite
	Checks    int
	Steps     int
	Seed      uint64
	SimSeeds  int     // simulation seeds from Seed on; 0 for none
	SimHours  float64 // simulated hours per seed
	Histories int     // linearizability histories to record; 0 for none
	Out       string  // where the histories' visualizations go
	Log       io.Writer
	// NewProgress makes a job's progress display; name is padded to width.
	NewProgress func(name, unit string, width int) Progress
}

// Run runs what the report shows into r: the suites, then the simulation
// unless r already holds one (read from a file), then the linearizability
// histories unless r holds them. It prints each job's line, or its
// counterexample, on o.Log. The seed it returns repeats the run.
func Run(ctx context.Context, r *Report, o RunOptions) (uint64, error) {
	recording := r.Linearizability == nil && o.Histories > 0
	width := len("sim")
	if recording {
		width = len("linearizability")
	}
	for _, s := range o.Suites {
		width = max(width, len(s.Name))
	}
	seed := o.Seed
	for _, s := range o.Suites {
		bar := o.NewProgress(s.Name, "checks", width)
		res := properties.Run(s, properties.RunOptions{Checks: o.Checks, Steps: o.Steps, Seed: seed, Progress: bar.Update})
		bar.Finish()
		// Every suite runs from the same seed, so one number repeats the report.
		seed = res.Seed
		sr := NewSuite(res)
		PrintSuite(o.Log, sr, width)
		r.Suites = append(r.Suites, sr)
	}
	switch {
	case r.Sim != nil:
		PrintSim(o.Log, *r.Sim, width)
	case o.SimSeeds > 0:
		// The simulation's seeds follow the suites' seed, so the same
		// number repeats them too.
		r.Sim = simulate(o, seed, width)
		PrintSim(o.Log, *r.Sim, width)
	}
	if recording {
		results, err := recordHistories(ctx, o, width)
		if err != nil {
			return seed, fmt.Errorf("linearizability: %v", err)
		}
		r.Linearizability = results
	}
	return seed, nil
}

// simulate runs the report's node simulation seeds, from seed on, with the
// default pods and fault rates.
func simulate(o RunOptions, seed uint64, width int) *simreport.Section {
	started := time.Now()
	bar := o.NewProgress("sim", "seeds", width)
	def := sim.DefaultConfig()
	var runs []simreport.Seed
	for i := range o.SimSeeds {
		// The known findings' invariants are counted, not stopped at.
		cfg := sim.Config{Seed: seed + uint64(i), Duration: time.Duration(o.SimHours * float64(time.Hour)),
			Pods: def.Pods, Faults: def.Faults, Explained: simreport.Explained()}
		start := time.Now()
		s := sim.Run(cfg, func(sim.Stats) {})
		runs = append(runs, simreport.Seed{Config: cfg, Summary: s, Seconds: time.Since(start).Seconds()})
		bar.Update(i+1, o.SimSeeds)
	}
	bar.Finish()
	section := simreport.NewSection(runs, time.Since(started).Seconds())
	return &section
}

// recordHistories records and checks the linearizability histories, writes
// their visualizations into o.Out and prints their line, or each failure.
func recordHistories(ctx context.Context, o RunOptions, width int) ([]linearizability.Result, error) {
	started := time.Now()
	bar := o.NewProgress("linearizability", "histories", width)
	results, err := linearizability.RecordHistories(ctx, linearizability.Histories{
		Count: o.Histories, Dir: o.Out, Progress: bar.Update,
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
		fmt.Fprintf(o.Log, "%-*s  FAILED  the history of %s is %s: no order of its operations explains what the clients saw\n",
			width, "linearizability", r.History, r.Result)
		fmt.Fprintf(o.Log, "%-*s          visualization: %s\n", width, "", filepath.Join(o.Out, r.Visualization))
		fmt.Fprintf(o.Log, "%-*s          replay: %s\n", width, "", r.Replay)
	}
	if ok == len(results) {
		fmt.Fprintf(o.Log, "%-*s  passed  %d/%d histories linearizable, %.1fs\n", width, "linearizability", ok, len(results),
			time.Since(started).Seconds())
	}
	return results, nil
}
