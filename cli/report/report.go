package report

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/inventory"
	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/reportview"
	"github.com/nodeproof/nodeproof/verify"
)

// Merge reads the shard files a campaign wrote into dir and returns their
// report, without its verdict (campaign's merge of shards).
type Merge func(dir string) (*reportview.Report, error)

// Options are report's flags, then what Complete and Validate make of them.
type Options struct {
	// Out is the directory of the three files; Merge, when set, the
	// directory of a campaign's shard files to report on instead of running.
	Out, Merge string
	// The budget of the run, its seed (0 picks one) and the suites to run.
	Checks, Steps, Histories, SimSeeds int
	SimHours                           float64
	Seed                               uint64
	SuitePattern                       string
	// The result files to include; Complete fills in the default places.
	MutantsFile, LinearizabilityFile, ConformanceFile string
	PluginCheckFile, FindingsFile, SimFile, NodeFile  string
	UpstreamFile                                      string

	suites  []properties.Suite // the registry, then those --suite selects
	known   []verify.Finding
	merge   Merge
	changed func(flag string) bool
	report  reportview.Report // the sections read from files, then the run's
}

// NewCommand returns nodeproof report over suites, the known findings and
// the merge of a campaign's shards.
func NewCommand(suites []properties.Suite, known []verify.Finding, merge Merge) *cobra.Command {
	o := &Options{suites: suites, known: known, merge: merge}
	cmd := &cobra.Command{
		Use:   "report [--merge DIR] [--out DIR] [--checks N] [--steps N] [--seed N] [--suite REGEX] [--histories N] [--sim-seeds N] [--sim-hours H] [--sim FILE] [--node FILE] [--upstream FILE] [--mutants FILE] [--linearizability FILE] [--conformance FILE] [--plugin-check FILE] [--findings FILE]",
		Short: "run every invariant suite and write index.html, report.md and report.json",
		Long: `Runs every invariant suite, simulates the node from --sim-seeds seeds and records and
checks the linearizability histories in-process, shows the progress on stderr and writes index.html, report.md and report.json
into --out. The mutant kill matrix, the conformance results, a simulation sweep, a sweep on the real kubelet and the upstream
release matrix are included when ` + reportview.DefaultMutantsFile + `, ` + reportview.DefaultConformanceFile + `, ` + reportview.DefaultSimFile + `,
` + reportview.DefaultNodeFile + ` and ` + reportview.DefaultUpstreamFile + ` exist (or the flags name them);
the report says which sections were not run and the command that runs them. With --merge DIR
it runs nothing and writes the report of a campaign's shards instead (nodeproof campaign). Exit
status: 1 when anything the report shows failed, 2 for bad flags or a file that cannot
be included or written.`,
		DisableFlagsInUseLine: true,
		Args:                  cli.NoArguments,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Complete(cmd, args)
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.define(cmd)
	return cmd
}

// Complete finds the result files the flags leave to their default place.
func (o *Options) Complete(cmd *cobra.Command, _ []string) {
	o.changed = cmd.Flags().Changed
	o.MutantsFile = orExisting(o.MutantsFile, reportview.DefaultMutantsFile)
	o.ConformanceFile = orExisting(o.ConformanceFile, reportview.DefaultConformanceFile)
	o.PluginCheckFile = orExisting(o.PluginCheckFile, reportview.DefaultPluginCheckFile)
	o.FindingsFile = orExisting(o.FindingsFile, reportview.DefaultFindingsFile)
	o.SimFile = orExisting(o.SimFile, reportview.DefaultSimFile)
	o.NodeFile = orExisting(o.NodeFile, reportview.DefaultNodeFile)
	o.UpstreamFile = orExisting(o.UpstreamFile, reportview.DefaultUpstreamFile)
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

// Run writes the report: of the shards --merge names, or of the suites,
// the simulation and the histories it runs, printing their progress and
// results on stderr and the files it wrote on stdout.
func (o *Options) Run(ctx context.Context, stdout, stderr io.Writer) error {
	if o.Merge != "" {
		return o.runMerge(stdout, stderr)
	}
	if err := cli.OutDir(o.Out); err != nil {
		return cli.UsageError(err)
	}
	started := time.Now()
	r := &o.report
	r.Version, r.Started = cli.Version(), started.Format(time.RFC3339)
	seed := o.Seed
	if seed == 0 {
		seed = properties.ClockSeed()
	}
	// Before the work: an interrupted report can be repeated.
	fmt.Fprintf(stderr, "base seed %d (rerun with --seed %d)\n", seed, seed)
	tty := cli.IsTerminal(stderr)
	seed, err := reportview.Run(ctx, r, reportview.RunOptions{
		Suites: o.suites, Checks: o.Checks, Steps: o.Steps, Seed: seed, SimSeeds: o.SimSeeds, SimHours: o.SimHours,
		Histories: o.Histories, Out: o.Out, Log: stderr,
		NewProgress: func(name, unit string, width int) reportview.Progress {
			return cli.NewProgress(stderr, tty, name, unit, width)
		},
	})
	if err != nil {
		return cli.Failed(err)
	}
	r.Seconds = phrase.RoundMilli(time.Since(started).Seconds())
	r.Finish(inventory.Subsystems(), o.known, o.Histories)
	paths, err := write(o.Out, r)
	if err != nil {
		return cli.UsageError(err)
	}
	reportview.PrintVerdict(stderr, r)
	fmt.Fprintf(stdout, "seed %d (rerun with --seed %d)\n", seed, seed)
	for _, p := range paths {
		fmt.Fprintln(stdout, p)
	}
	if !r.Passed {
		return cli.Exit(cli.StatusFailed)
	}
	return nil
}
