package report

import (
	"errors"
	"fmt"
	"math"
	"regexp"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/findings"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/reportview"
	"github.com/nodeproof/nodeproof/sim"
)

// The bounds of report's counts, each 100 times its default or about
// half an hour on two cores: a count beyond them is a typo, not a plan,
// and would run for hours with nothing to show (--histories 1000000 was
// interrupted with 407 visualizations written and no index.html).
const (
	maxChecks    = 30_000 // cases per suite; 100 x 300
	maxHistories = 300    // linearizability histories; 100 x 3
	maxSimSeeds  = 1_000  // simulation seeds of --sim-hours each
)

// Validate refuses a bad flag and reads the result files to include, all
// before any work: a usage error (status 2) naming the flag.
func (o *Options) Validate() error {
	if err := o.validate(); err != nil {
		return cli.UsageError(err)
	}
	return nil
}

func (o *Options) validate() error {
	if o.Merge != "" {
		for _, name := range runFlags {
			if o.changed(name) {
				return fmt.Errorf("--%s does not apply to --merge, which combines shards that already ran", name)
			}
		}
	}
	switch {
	case o.Out == "":
		return errors.New("--out must name a directory")
	case o.Checks <= 0:
		return fmt.Errorf("--checks must be positive, got %d", o.Checks)
	case o.Steps <= 0:
		return fmt.Errorf("--steps must be positive, got %d", o.Steps)
	case properties.CheckSteps(o.Steps) != nil:
		return fmt.Errorf("--steps: %v", properties.CheckSteps(o.Steps))
	case o.Checks > maxChecks:
		return fmt.Errorf("--checks: %d exceeds the bound of %d", o.Checks, maxChecks)
	case o.Histories < 0:
		return fmt.Errorf("--histories must not be negative, got %d", o.Histories)
	case o.Histories > maxHistories:
		return fmt.Errorf("--histories: %d exceeds the bound of %d", o.Histories, maxHistories)
	case o.SimSeeds < 0:
		return fmt.Errorf("--sim-seeds must not be negative, got %d", o.SimSeeds)
	case o.SimSeeds > maxSimSeeds:
		return fmt.Errorf("--sim-seeds: %d exceeds the bound of %d (nodeproof sim --seeds sweeps more, and report --sim includes it)", o.SimSeeds, maxSimSeeds)
	case math.IsNaN(o.SimHours) || o.SimHours <= 0 || o.SimHours > sim.MaxHours:
		return fmt.Errorf("--sim-hours must be more than 0 and at most %d, got %v", sim.MaxHours, o.SimHours)
	}
	re, err := regexp.Compile(o.SuitePattern)
	if err != nil {
		return fmt.Errorf("--suite: %v", err)
	}
	if err := o.read(); err != nil {
		return err
	}
	if o.Merge == "" {
		if o.suites, err = properties.Select(re, o.suites); err != nil {
			return fmt.Errorf("--suite %v", err)
		}
	}
	return nil
}

// read reads each result file to include into o.report, naming its flag
// in an error.
func (o *Options) read() error {
	r := &o.report
	var err error
	for _, f := range []struct {
		flag, path string
		read       func(string) error
	}{
		{"mutants", o.MutantsFile, func(p string) (err error) { r.Mutants, err = reportview.LoadMutants(p); return err }},
		{"linearizability", o.LinearizabilityFile, func(p string) (err error) { r.Linearizability, err = reportview.LoadLinearizability(p); return err }},
		{"conformance", o.ConformanceFile, func(p string) (err error) { r.Conformance, err = reportview.LoadConformance(p); return err }},
		{"plugin-check", o.PluginCheckFile, func(p string) (err error) { r.PluginCheck, err = reportview.LoadResults(p); return err }},
		{"findings", o.FindingsFile, func(p string) (err error) { r.Searches, err = findings.Load(p, o.known); return err }},
		{"sim", o.SimFile, func(p string) (err error) { r.Sim, err = reportview.LoadSim(p); return err }},
		{"node", o.NodeFile, func(p string) (err error) { r.Node, err = reportview.LoadNode(p); return err }},
		{"upstream", o.UpstreamFile, func(p string) (err error) { r.Upstream, err = reportview.LoadUpstream(p); return err }},
	} {
		if f.path == "" {
			continue
		}
		if err = f.read(f.path); err != nil {
			return fmt.Errorf("--%s: %v", f.flag, err)
		}
	}
	return nil
}
