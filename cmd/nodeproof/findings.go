package main

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
	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/verify"
)

// maxFindingSeeds bounds a sweep: each seed is a whole search of up to
// 300 cases and its shrinking, up to a minute.
const maxFindingSeeds = 1000

// defaultFindingsFile is where `make findings` leaves its searches, which
// the report includes without being told.
const defaultFindingsFile = "report/findings.json"

// findingsOptions are the validated arguments and flags of `nodeproof findings`.
type findingsOptions struct {
	findings []verify.Finding
	// sweep is set when --seeds gave a range; otherwise each finding is
	// searched from its own registered seed.
	sweep       bool
	first, last uint64
	jsonPath    string
	list        bool
	// shrink bounds rapid's minimization of each case found; 0 is rapid's
	// 30 s.
	shrink time.Duration
}

type findingsFlags struct {
	seeds    string
	jsonPath string
	list     bool
	shrink   time.Duration
}

func newFindingsCommand(search findings.Searcher) *cobra.Command {
	var f findingsFlags
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
			opts, err := f.options(args, cmd.Flags().Changed)
			if err != nil {
				return cli.UsageError(err)
			}
			if opts.list {
				return listFindings(opts.findings, cmd.OutOrStdout())
			}
			return searchFindings(opts, search, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.seeds, "seeds", "", "search from every seed `A..B` (inclusive) instead of each finding's own")
	fl.StringVar(&f.jsonPath, "json", "", "write the searches as JSON to this `FILE` (the report's findings section)")
	fl.BoolVar(&f.list, "list", false, "list the known findings and exit")
	fl.DurationVar(&f.shrink, "shrink-time", 0, "bound rapid's shrinking of each case found to `DURATION` (default rapid's 30s); the time to find is unaffected")
	_ = cmd.MarkFlagFilename("json", "json")
	return cmd
}

func (f findingsFlags) options(args []string, changed func(string) bool) (findingsOptions, error) {
	opts := findingsOptions{jsonPath: f.jsonPath, list: f.list, shrink: f.shrink}
	if f.shrink < 0 {
		return opts, fmt.Errorf("--shrink-time: %v is negative", f.shrink)
	}
	all := verify.Findings()
	if len(args) == 0 {
		opts.findings = all
	}
	for _, id := range args {
		found, err := verify.ByID(id)
		if err != nil {
			return opts, err
		}
		if !slices.ContainsFunc(opts.findings, func(g verify.Finding) bool { return g.ID == id }) {
			opts.findings = append(opts.findings, found)
		}
	}
	if changed("seeds") {
		first, last, err := parseSeedRange(f.seeds)
		if err != nil {
			return opts, err
		}
		if first == 0 {
			return opts, errors.New("--seeds: seed 0 means a seed from the clock, which a sweep cannot repeat; start at 1")
		}
		if last-first >= maxFindingSeeds {
			return opts, fmt.Errorf("--seeds %s: %d seeds exceed the bound of %d", f.seeds, last-first+1, maxFindingSeeds)
		}
		opts.sweep, opts.first, opts.last = true, first, last
	}
	if opts.list && (opts.sweep || opts.jsonPath != "") {
		return opts, errors.New("--list takes no --seeds or --json")
	}
	if opts.jsonPath != "" {
		// Before any search: a bad path must not cost the searches.
		if err := outpath.Dir(filepath.Dir(opts.jsonPath)); err != nil {
			return opts, fmt.Errorf("--json: %v", err)
		}
	}
	return opts, nil
}

func listFindings(all []verify.Finding, stdout io.Writer) error {
	w := &cli.Writer{W: stdout}
	if len(all) == 0 {
		fmt.Fprintln(w, "no known findings")
	}
	for _, f := range all {
		fmt.Fprintf(w, "%-8s %-14s %-28s %s\n", f.ID, f.Subsystem, f.Property, f.Title)
	}
	return w.Err
}

func searchFindings(opts findingsOptions, search findings.Searcher, stdout, stderr io.Writer) error {
	w := &cli.Writer{W: stdout}
	if len(opts.findings) == 0 {
		fmt.Fprintln(w, "no known findings: nothing to search for")
	}
	runOpts := findings.Options{
		Shrink: opts.shrink,
		// The seed goes out before the work, so that an interrupted
		// search can be repeated.
		Starting: func(f verify.Finding, seed uint64) {
			fmt.Fprintf(stderr, "searching for %s (%s) in suite %s from seed %d\n", f.ID, f.Property, f.Suite, seed)
		},
		Searched: func(f verify.Finding, s findings.Search) { printSearch(w, f, s) },
	}
	if opts.sweep {
		for s := opts.first; ; s++ {
			runOpts.Seeds = append(runOpts.Seeds, s)
			if s == opts.last {
				break
			}
		}
	}
	out, err := findings.Run(opts.findings, search, runOpts)
	if err != nil {
		return err
	}
	reproduced := 0
	for _, r := range out.Findings {
		if opts.sweep {
			fmt.Fprintf(w, "%s: %s\n", r.ID, r.Summary())
		}
		if r.Reproduced {
			reproduced++
		}
	}
	if n := len(opts.findings); n > 0 {
		fmt.Fprintf(w, "total: %d of %d %s reproduced\n", reproduced, n, phrase.Noun(n, "finding", "findings"))
	}
	if opts.jsonPath != "" {
		// The path passed the check before the searches, so a write that
		// fails now is output lost, not bad input.
		if err := findings.Write(opts.jsonPath, out); err != nil {
			return cli.OutputError(fmt.Errorf("--json: %w", err))
		}
	}
	if w.Err != nil {
		return w.Err
	}
	if reproduced < len(opts.findings) {
		return cli.Exit(cli.StatusFailed)
	}
	return nil
}

// printSearch prints one search: its verdict line, then the shrunk steps
// and the replay line when it found the finding or something else.
func printSearch(w io.Writer, f verify.Finding, s findings.Search) {
	switch {
	case s.Found:
		fmt.Fprintf(w, "%s  %s  seed %d: found after %.2f s (%d cases), shrunk to %d steps (%.1f s in all)\n",
			f.ID, f.Property, s.Seed, s.FoundAfter, s.Cases, s.Steps, s.Seconds)
	case s.Other != "":
		fmt.Fprintf(w, "%s  %s  seed %d: FAILED: %s failed first, which no known finding explains\n", f.ID, f.Property, s.Seed, s.Other)
	default:
		fmt.Fprintf(w, "%s  %s  seed %d: NOT FOUND in %d cases (%.1f s)\n", f.ID, f.Property, s.Seed, s.Cases, s.Seconds)
		return
	}
	for _, line := range s.Shrunk {
		fmt.Fprintf(w, "    %s\n", line)
	}
	if s.Replay != "" {
		fmt.Fprintf(w, "    replay: %s\n", s.Replay)
	}
}
