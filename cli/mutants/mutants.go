package mutants

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/agent/outpath"
	"github.com/nodeproof/nodeproof/agent/plugincheck"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/mutants"
	"github.com/nodeproof/nodeproof/properties"
	// The suites register themselves with properties when imported.
	_ "github.com/nodeproof/nodeproof/properties/suites"
)

// defaultSeed is the rapid seed `make mutants` runs every property with. A
// fixed seed makes the kill matrix, and which check each kill is attributed
// to, the same on every run; --seed tries others.
const defaultSeed = 1

// Options are the flags of `nodeproof mutants`.
type Options struct {
	// Dir holds the patches; Complete sets mutants/ under the module root
	// when it is empty.
	Dir      string
	JSONPath string
	// Pattern is --run as typed, Filter the expression Complete compiles.
	Pattern string
	Filter  *regexp.Regexp
	List    bool
	Seed    uint64
	// ShrinkTime bounds rapid's minimization of a failing case; 0 keeps
	// rapid's own bound.
	ShrinkTime time.Duration
	// Jobs is how many mutants run at once (mutants.RunAll: those whose
	// tests touch the host or bound their calls' time run alone).
	Jobs int

	// root is the module's directory and selected the mutants --run
	// selects, both set by Complete; checkIDs are the IDs a header may
	// name besides test functions.
	root     string
	selected []mutants.Mutant
	checkIDs []string
}

// NewCommand is `nodeproof mutants`.
func NewCommand() *cobra.Command {
	var o Options
	cmd := &cobra.Command{
		Use:   "mutants [--dir DIR] [--json FILE] [--run REGEX] [--seed SEED] [--shrink-time DURATION] [--jobs N] [--list]",
		Short: "apply each seeded bug in mutants/ and check that the tests catch it",
		Long: `Applies each mutants/*.patch to a scratch copy of the module, runs the packages named
in its header and fails unless every mutant is killed. Run it from inside the module.
Exit status: 1 when a mutant survives, does not apply or does not compile; 2 for bad flags,
a --dir without patches, or a --run that selects none.`,
		DisableFlagsInUseLine: true,
		Args:                  cli.NoArguments,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Complete(); err != nil {
				return cli.UsageError(err)
			}
			if err := o.Validate(); err != nil {
				return cli.UsageError(err)
			}
			// Interrupting stops the running go command, so the scratch
			// copy is still removed.
			ctx, stop := cli.InterruptContext(context.Background())
			defer stop()
			return o.Run(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Dir, "dir", "", "directory `DIR` of mutant patches (default: mutants/ under the module root)")
	fl.StringVar(&o.JSONPath, "json", "", "write the kill matrix as JSON to this `FILE`, creating its directory")
	fl.StringVar(&o.Pattern, "run", "", "run only mutants whose ID matches this `REGEX`")
	fl.BoolVar(&o.List, "list", false, "list the mutants without running them")
	fl.Uint64Var(&o.Seed, "seed", defaultSeed, "base `SEED` of every rapid property the tests run, so that kills repeat run after run; 0 lets rapid pick one per property")
	fl.IntVar(&o.Jobs, "jobs", 1, "run up to `N` mutants at once; a mutant whose tests bound their calls' time or use the host's cgroups, sockets or runtime still runs alone")
	fl.DurationVar(&o.ShrinkTime, "shrink-time", 0, "bound rapid's minimization of each failing case to `DURATION` (a kill needs the failure, not its smallest case); 0 keeps rapid's own bound, 30s")
	_ = cmd.MarkFlagDirname("dir")
	return cmd
}

// Complete compiles --run, finds the module and its patches, and selects
// the mutants --run names.
func (o *Options) Complete() error {
	var err error
	if o.Filter, err = regexp.Compile(o.Pattern); err != nil {
		return fmt.Errorf("--run: %v", err)
	}
	if o.ShrinkTime < 0 {
		return fmt.Errorf("--shrink-time: %v is negative", o.ShrinkTime)
	}
	if o.Jobs < 1 {
		return fmt.Errorf("--jobs: %d is not a number of mutants to run at once (at least 1)", o.Jobs)
	}
	if o.root, err = mutants.ModuleRoot(); err != nil {
		return err
	}
	if o.Dir == "" {
		o.Dir = filepath.Join(o.root, "mutants")
	}
	all, err := mutants.Load(o.Dir)
	if err != nil {
		return fmt.Errorf("--dir: %v", err)
	}
	o.selected = nil
	for _, m := range all {
		if o.Filter.MatchString(m.ID) {
			o.selected = append(o.selected, m)
		}
	}
	if len(o.selected) == 0 {
		if len(all) == 0 {
			return fmt.Errorf("no mutants: %s holds no *.patch files", o.Dir)
		}
		return fmt.Errorf("none of the %d mutants matches --run %q", len(all), o.Filter)
	}
	o.checkIDs = attributableCheckIDs()
	return nil
}

// Validate refuses a header naming a missing package or an unknown check (a
// mutant file that cannot be used: bad input) and, before any mutant runs,
// a --json path that cannot be written: it must not cost the whole run and
// then pass for a survivor (exit 1).
func (o *Options) Validate() error {
	if err := mutants.Check(o.root, o.selected, o.checkIDs); err != nil {
		return err
	}
	if o.JSONPath != "" && !o.List {
		if err := outpath.Dir(filepath.Dir(o.JSONPath)); err != nil {
			return fmt.Errorf("--json: %v", err)
		}
	}
	return nil
}

// Run lists the selected mutants with --list, and otherwise runs them.
func (o *Options) Run(ctx context.Context, stdout, stderr io.Writer) error {
	if o.List {
		return o.list(stdout)
	}
	return o.runMutants(ctx, stdout, stderr)
}

// list prints the selected mutants: ID, checks, source, the tests they run
// and the bug.
func (o *Options) list(stdout io.Writer) error {
	w := &cli.Writer{W: stdout}
	for _, m := range o.selected {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n\t%s\n", m.ID, strings.Join(m.Checks, ","), m.Source, mutants.Label(m.Packages, m.Tests), m.Bug)
	}
	return w.Err
}

// runMutants runs the baselines, then every selected mutant, prints a line
// per mutant and the counts, and writes the kill matrix. It fails unless
// every mutant was killed.
func (o *Options) runMutants(ctx context.Context, stdout, stderr io.Writer) error {
	runOpts := mutants.Options{InvariantIDs: o.checkIDs, Seed: o.Seed, ShrinkTime: o.ShrinkTime}
	// A kill means something only where the same tests pass without the
	// patch: run each package set once on the unpatched tree first.
	if err := runBaselines(ctx, o.root, o.selected, runOpts, stdout); err != nil {
		return err
	}
	width := 0
	for _, m := range o.selected {
		width = max(width, len(m.ID))
	}
	start := time.Now()
	counts := map[string]int{}
	rows := make([]mutants.Row, len(o.selected))
	finished := 0
	mutants.RunAll(ctx, o.root, o.selected, runOpts, o.Jobs, func(i int, r mutants.Result) {
		m := o.selected[i]
		finished++
		counts[r.Status]++
		rows[i] = mutants.NewRow(r)
		fmt.Fprintf(stdout, "[%d/%d] %-*s  %s  (%.1fs: copy %.1f, build %.1f, test %.1f, re-run %.1f)\n", finished, len(o.selected), width, m.ID, r.Verdict(m),
			r.Seconds, r.Phases.Copy+r.Phases.Apply, r.Phases.Build, r.Phases.Test, r.Phases.Rerun)
		if r.Status != mutants.StatusKilled {
			fmt.Fprintf(stderr, "%s: %s\n%s\n", m.ID, m.Bug, indentBlock(r.Output))
		}
	})
	if ctx.Err() != nil {
		return cli.Failed(errors.New("interrupted"))
	}
	fmt.Fprintf(stdout, "mutants: %d run, %d killed, %d survived, %d killed by a check the header does not name, %d not killed again on re-run, "+
		"%d timed out, %d do not apply, %d do not compile, %d errors (%.1fs, rapid base seed %d)\n",
		len(o.selected), counts[mutants.StatusKilled], counts[mutants.StatusSurvived], counts[mutants.StatusMisattributed],
		counts[mutants.StatusNotReproduced], counts[mutants.StatusTimedOut], counts[mutants.StatusDoesNotApply],
		counts[mutants.StatusDoesNotCompile], counts[mutants.StatusError], time.Since(start).Seconds(), o.Seed)

	if o.JSONPath != "" {
		if err := cli.WriteJSONFile(o.JSONPath, rows); err != nil {
			return cli.Failed(fmt.Errorf("--json: %v", err))
		}
	}
	if counts[mutants.StatusKilled] != len(o.selected) {
		return cli.Exit(cli.StatusFailed)
	}
	return nil
}

// runBaselines runs mutants.Baselines' plan on the unpatched tree, a line
// each, and fails at the first whose tests fail: no failure with a patch
// could then count as a kill.
func runBaselines(ctx context.Context, root string, selected []mutants.Mutant, opts mutants.Options, stdout io.Writer) error {
	for _, b := range mutants.Baselines(selected) {
		if b.Within {
			fmt.Fprintf(stdout, "baseline %s: passed within the baseline of every test of %s\n", b.Label(), strings.Join(b.Packages, " "))
			continue
		}
		start := time.Now()
		status, out := mutants.Baseline(ctx, root, b.Packages, b.Tests, opts)
		if status != mutants.StatusSurvived {
			fmt.Fprintf(stdout, "baseline %s: FAILED without any patch (%.1fs)\n", b.Label(), time.Since(start).Seconds())
			return cli.Failed(fmt.Errorf("the tests of %s fail on the unpatched tree (%s), so no failure with a patch could count as a kill:\n%s",
				b.Label(), status, indentBlock(out)))
		}
		fmt.Fprintf(stdout, "baseline %s: passed (%.1fs)\n", b.Label(), time.Since(start).Seconds())
	}
	return nil
}

// indentBlock indents a go test output under the line that names it.
func indentBlock(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "    (no output)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// attributableCheckIDs are the IDs a mutant's header may name besides test functions:
// every suite's invariants, and the plugin checker's checks, which
// attribute its mutants (mutants/pc-*).
func attributableCheckIDs() []string {
	var ids []string
	for _, inv := range properties.Invariants() {
		ids = append(ids, inv.ID)
	}
	for _, c := range plugincheck.Checks() {
		ids = append(ids, c.ID)
	}
	return ids
}
