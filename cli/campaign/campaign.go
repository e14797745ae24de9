package campaign

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/agent/outpath"
	"github.com/nodeproof/nodeproof/campaign"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/properties"
)

// JobIndexEnv is where Kubernetes tells each pod of an Indexed Job its
// index, the default of --index.
const JobIndexEnv = "JOB_COMPLETION_INDEX"

// Deps are what a shard runs its units with: the real ones in nodeproof,
// stand-ins in tests that need a failure the tree cannot produce.
type Deps struct {
	// Suites are the suites a plan's suites.names selects from.
	Suites []properties.Suite
	// ListFuzz finds the fuzz targets under the plan's binaries directory
	// (campaign.ListFuzzTargets).
	ListFuzz func(dir string) ([]campaign.FuzzTarget, error)
	// Fuzz fuzzes one target (campaign.RunFuzz).
	Fuzz campaign.FuzzRunner
	// NewRecorder starts the record of one shard's simulation seeds and
	// suite runs in the report's schema (campaign.Recorder), showing their
	// progress on stderr.
	NewRecorder func(stderr io.Writer) campaign.Recorder
}

// Options are the flags of `nodeproof campaign` and what they resolve to.
type Options struct {
	// PlanFile is --plan; "-" reads stdin.
	PlanFile string
	// Out is the results directory the shard file goes into.
	Out string
	// Index is the shard to run; Shards, when given, must agree with the
	// plan's.
	Index, Shards int
	// Plan is the resolved plan, set by Validate.
	Plan campaign.Resolved

	// indexGiven and shardsGiven say whether the flags were given; stdin is
	// what --plan - reads. Complete sets them.
	indexGiven, shardsGiven bool
	stdin                   io.Reader
}

// NewCommand is `nodeproof campaign`.
func NewCommand(deps Deps) *cobra.Command {
	var o Options
	cmd := &cobra.Command{
		Use:   "campaign --plan FILE [--index N] [--shards N] [--out DIR]",
		Short: "run one shard of a campaign (simulation seeds, long suite runs, fuzz targets) and write its report JSON",
		Long: `Reads a campaign plan (simulation seeds, property suites at a budget of their own, fuzz targets
for a duration), takes shard --index of --shards (every unit of the plan falls in exactly one
shard), runs it and writes DIR/shard-<index>.json: the report's JSON for the shard, with every
failure's replay line. Meant for the pods of a Kubernetes Indexed Job, which set
` + JobIndexEnv + `; nodeproof report --merge DIR combines the shards into one report.
Exit status: 1 when a unit failed (the shard file is written all the same) or the shard file
could not be written after the run, 2 for bad flags, a bad plan or a --out that cannot be written
(checked before the first unit runs).`,
		Example: `  nodeproof campaign --plan plan.yaml --index 0 --out results
  JOB_COMPLETION_INDEX=2 nodeproof campaign --plan /etc/nodeproof/plan.yaml --out /results
  nodeproof report --merge results --out report`,
		DisableFlagsInUseLine: true,
		Args:                  cli.NoArguments,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Complete(cmd)
			if err := o.Validate(deps); err != nil {
				return cli.UsageError(err)
			}
			return o.Run(deps, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.PlanFile, "plan", "", "the campaign plan `FILE` (YAML or JSON, read strictly; - reads stdin; see docs/campaign.md)")
	fl.StringVar(&o.Out, "out", "results", "directory `DIR` to write shard-<index>.json (and failing fuzz inputs) into")
	fl.IntVar(&o.Index, "index", 0, "this shard's index `N`, from 0 (default $"+JobIndexEnv+")")
	fl.IntVar(&o.Shards, "shards", 0, "the number of shards `N` (default the plan's shards; when both are given they must agree)")
	_ = cmd.MarkFlagFilename("plan", "yaml", "yml", "json")
	_ = cmd.MarkFlagDirname("out")
	return cmd
}

// Complete notes which flags were given and where --plan - reads from.
func (o *Options) Complete(cmd *cobra.Command) {
	o.indexGiven = cmd.Flags().Changed("index")
	o.shardsGiven = cmd.Flags().Changed("shards")
	o.stdin = cmd.InOrStdin()
}

// Validate checks the flags, takes the index from $JOB_COMPLETION_INDEX
// when --index is not given, reads and resolves the plan and proves --out
// writable, all before the first unit runs.
func (o *Options) Validate(deps Deps) error {
	if o.PlanFile == "" {
		return errors.New("--plan must name the campaign's plan file")
	}
	if o.Out == "" {
		return errors.New("--out must name a directory")
	}
	if !o.indexGiven {
		env, ok := os.LookupEnv(JobIndexEnv)
		if !ok {
			return fmt.Errorf("--index is required when $%s is not set", JobIndexEnv)
		}
		n, err := strconv.Atoi(env)
		if err != nil {
			return fmt.Errorf("$%s must be a whole number (the --index), got %q", JobIndexEnv, env)
		}
		o.Index = n
	}
	plan, err := o.readPlan()
	if err != nil {
		return err
	}
	if o.shardsGiven {
		if plan.Shards != 0 && plan.Shards != o.Shards {
			return fmt.Errorf("--shards %d, but the plan %s says shards: %d", o.Shards, o.PlanFile, plan.Shards)
		}
		plan.Shards = o.Shards
	}
	if o.Plan, err = plan.Resolve(deps.Suites, deps.ListFuzz); err != nil {
		return fmt.Errorf("--plan %s: %v", o.PlanFile, err)
	}
	if o.Index < 0 || o.Index >= o.Plan.Shards {
		return fmt.Errorf("--index must be between 0 and %d (shards - 1), got %d", o.Plan.Shards-1, o.Index)
	}
	if err := outpath.Dir(o.Out); err != nil {
		return fmt.Errorf("--out %q must be a writable directory nodeproof can create: %v", o.Out, err)
	}
	return nil
}

// readPlan reads --plan, or stdin for "-", and decodes it strictly.
func (o *Options) readPlan() (campaign.Plan, error) {
	_, data, err := cli.ReadManifest(o.PlanFile, o.stdin)
	if err != nil {
		return campaign.Plan{}, fmt.Errorf("--plan: %v", err)
	}
	plan, err := campaign.DecodePlan(data)
	if err != nil {
		return plan, fmt.Errorf("--plan %s: %v", o.PlanFile, err)
	}
	return plan, nil
}

// Run runs the shard's units in plan order, writes its file and prints its
// path. It fails when a unit failed (the file is written all the same) or
// the output could not be written.
func (o *Options) Run(deps Deps, stdout, stderr io.Writer) error {
	rec := deps.NewRecorder(stderr)
	outcome := campaign.Run(campaign.RunOptions{Plan: o.Plan, Index: o.Index, Out: o.Out, Version: cli.Version(),
		Recorder: rec, Fuzz: deps.Fuzz, Log: stderr})
	path := filepath.Join(o.Out, campaign.ShardFileName(o.Index))
	// Through a file renamed into place, so that a pod stopped while
	// writing leaves no half file for the merge to trip on.
	if err := cli.WriteJSONFile(path, rec.File(outcome)); err != nil {
		// --out was checked before the first unit; failing now, the
		// shard's results were not delivered.
		return cli.OutputError(fmt.Errorf("--out: %w", err))
	}
	if _, err := fmt.Fprintln(stdout, path); err != nil {
		return cli.OutputError(err)
	}
	if !outcome.Passed {
		return cli.Exit(cli.StatusFailed)
	}
	return nil
}
