package findings

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/agent/outpath"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/findings"
	"github.com/nodeproof/nodeproof/seedrange"
	"github.com/nodeproof/nodeproof/verify"
)

// maxSeeds bounds a sweep: each seed is a whole search of up to 300 cases
// and its shrinking, up to a minute.
const maxSeeds = 1000

// Options are the arguments and flags of `nodeproof findings`.
type Options struct {
	// Findings are the findings to search for: the IDs given, or every
	// known one (set by Complete).
	Findings []verify.Finding
	// Seeds is --seeds as typed; with it, Complete sets Sweep, First and
	// Last, and every finding is searched from each seed of the range
	// rather than from its own registered seed.
	Seeds       string
	Sweep       bool
	First, Last uint64
	// JSONPath is where the searches are written; "" for nowhere.
	JSONPath string
	// List lists the known findings instead of searching.
	List bool
	// Shrink bounds rapid's minimization of each case found; 0 is rapid's
	// 30 s.
	Shrink time.Duration
}

// NewCommand is `nodeproof findings`, searching with search
// (properties.SearchFinding, or a stand-in in tests).
func NewCommand(search findings.Searcher) *cobra.Command {
	var o Options
	cmd := &cobra.Command{
		Use:   "findings [ID...] [--seeds A..B] [--shrink-time DURATION] [--json FILE] [--list]",
		Short: "search for each known kubelet finding and print its shrunk case",
		Long: `Searches for each known finding (a contract property upstream's kubelet is known to
break, docs/findings.md) with its suite at the default budget (` + fmt.Sprint(findings.Checks) + ` cases of ` + fmt.Sprint(findings.Steps) + ` steps),
its property enforced, from the finding's own seed or from every seed of --seeds, and prints
how long the search took to find it, the shrunk steps and the replay line. With several
seeds it prints the median time to find and the median shrunk length.
Exit status: 1 when a finding is not reached from its own seed (in a sweep: from no seed),
when another invariant fails first, or when the output cannot be written after the searches; 2
for bad arguments or a --json path that cannot be written (checked before the first search).`,
		Example: `  nodeproof findings                     # every finding, from its own seed
  nodeproof findings PB-F1               # one finding
  nodeproof findings --seeds 1..10       # time to find over ten fresh seeds
  nodeproof findings --list`,
		DisableFlagsInUseLine: true,
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			var ids []cobra.Completion
			for _, f := range verify.Findings() {
				ids = append(ids, cobra.CompletionWithDesc(f.ID, f.Title))
			}
			return ids, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(cmd, args); err != nil {
				return cli.UsageError(err)
			}
			if err := o.Validate(); err != nil {
				return cli.UsageError(err)
			}
			return o.Run(search, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Seeds, "seeds", "", "search from every seed `A..B` (inclusive) instead of each finding's own")
	fl.StringVar(&o.JSONPath, "json", "", "write the searches as JSON to this `FILE` (the report's findings section)")
	fl.BoolVar(&o.List, "list", false, "list the known findings and exit")
	fl.DurationVar(&o.Shrink, "shrink-time", 0, "bound rapid's shrinking of each case found to `DURATION` (default rapid's 30s); the time to find is unaffected")
	_ = cmd.MarkFlagFilename("json", "json")
	return cmd
}

// Complete finds the findings the arguments name (every known one without
// any) and reads --seeds when it was given.
func (o *Options) Complete(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		o.Findings = verify.Findings()
	}
	for _, id := range args {
		found, err := verify.ByID(id)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(o.Findings, func(g verify.Finding) bool { return g.ID == id }) {
			o.Findings = append(o.Findings, found)
		}
	}
	if cmd.Flags().Changed("seeds") {
		first, last, err := seedrange.Parse(o.Seeds)
		if err != nil {
			return fmt.Errorf("--seeds %v", err)
		}
		o.Sweep, o.First, o.Last = true, first, last
	}
	return nil
}

// Validate refuses a sweep it cannot repeat or bound, flags that do not go
// together, and a --json path that cannot be written, before any search.
func (o *Options) Validate() error {
	if o.Shrink < 0 {
		return fmt.Errorf("--shrink-time: %v is negative", o.Shrink)
	}
	if o.Sweep {
		if o.First == 0 {
			return errors.New("--seeds: seed 0 means a seed from the clock, which a sweep cannot repeat; start at 1")
		}
		if o.Last-o.First >= maxSeeds {
			return fmt.Errorf("--seeds %s: %d seeds exceed the bound of %d", o.Seeds, o.Last-o.First+1, maxSeeds)
		}
	}
	if o.List && (o.Sweep || o.JSONPath != "") {
		return errors.New("--list takes no --seeds or --json")
	}
	if o.JSONPath != "" {
		// Before any search: a bad path must not cost the searches.
		if err := outpath.Dir(filepath.Dir(o.JSONPath)); err != nil {
			return fmt.Errorf("--json: %v", err)
		}
	}
	return nil
}

// Run lists the findings, or searches for each and prints what it found.
// It fails when a finding was not reproduced or the output could not be
// written.
func (o *Options) Run(search findings.Searcher, stdout, stderr io.Writer) error {
	w := &cli.Writer{W: stdout}
	if o.List {
		findings.WriteList(w, o.Findings)
		return w.Err
	}
	if len(o.Findings) == 0 {
		fmt.Fprintln(w, "no known findings: nothing to search for")
	}
	runOpts := findings.Options{
		Shrink: o.Shrink,
		// The seed goes out before the work, so that an interrupted
		// search can be repeated.
		Starting: func(f verify.Finding, seed uint64) {
			fmt.Fprintf(stderr, "searching for %s (%s) in suite %s from seed %d\n", f.ID, f.Property, f.Suite, seed)
		},
		Searched: func(f verify.Finding, s findings.Search) { findings.WriteSearch(w, f, s) },
	}
	if o.Sweep {
		for s := o.First; ; s++ {
			runOpts.Seeds = append(runOpts.Seeds, s)
			if s == o.Last {
				break
			}
		}
	}
	out, err := findings.Run(o.Findings, search, runOpts)
	if err != nil {
		return err
	}
	findings.WriteTotal(w, out, o.Sweep)
	if o.JSONPath != "" {
		// The path passed the check before the searches, so a write that
		// fails now is output lost, not bad input.
		if err := cli.WriteJSONFile(o.JSONPath, out); err != nil {
			return cli.OutputError(fmt.Errorf("--json: %w", err))
		}
	}
	if w.Err != nil {
		return w.Err
	}
	if out.Reproduced() < len(o.Findings) {
		return cli.Exit(cli.StatusFailed)
	}
	return nil
}
