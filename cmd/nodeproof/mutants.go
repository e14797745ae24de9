package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/agent/outpath"
	"github.com/nodeproof/nodeproof/agent/plugincheck"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/mutants"
	"github.com/nodeproof/nodeproof/properties"
)

// mutantsOptions are the flags of `nodeproof mutants`.
// defaultMutantSeed is the rapid seed `make mutants` runs every property
// with. A fixed seed makes the kill matrix, and which check each kill is
// attributed to, the same on every run; --seed tries others.
const defaultMutantSeed = 1

type mutantsOptions struct {
	dir      string // "" is mutants/ under the module root
	jsonPath string
	filter   *regexp.Regexp
	list     bool
	seed     uint64
	// shrinkTime bounds rapid's minimization of a failing case; 0 keeps
	// rapid's own bound.
	shrinkTime time.Duration
}

func newMutantsCommand() *cobra.Command {
	var (
		opts       mutantsOptions
		runPattern string
	)
	cmd := &cobra.Command{
		Use:   "mutants [--dir DIR] [--json FILE] [--run REGEX] [--seed SEED] [--shrink-time DURATION] [--list]",
		Short: "apply each seeded bug in mutants/ and check that the tests catch it",
		Long: `Applies each mutants/*.patch to a scratch copy of the module, runs the packages named
in its header and fails unless every mutant is killed. Run it from inside the module.
Exit status: 1 when a mutant survives, does not apply or does not compile; 2 for bad flags,
a --dir without patches, or a --run that selects none.`,
		DisableFlagsInUseLine: true,
		Args:                  cli.NoArguments,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if opts.filter, err = regexp.Compile(runPattern); err != nil {
				return cli.UsageError(fmt.Errorf("--run: %v", err))
			}
			if opts.shrinkTime < 0 {
				return cli.UsageError(fmt.Errorf("--shrink-time: %v is negative", opts.shrinkTime))
			}
			return runMutants(opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.dir, "dir", "", "directory `DIR` of mutant patches (default: mutants/ under the module root)")
	fl.StringVar(&opts.jsonPath, "json", "", "write the kill matrix as JSON to this `FILE`, creating its directory")
	fl.StringVar(&runPattern, "run", "", "run only mutants whose ID matches this `REGEX`")
	fl.BoolVar(&opts.list, "list", false, "list the mutants without running them")
	fl.Uint64Var(&opts.seed, "seed", defaultMutantSeed, "base `SEED` of every rapid property the tests run, so that kills repeat run after run; 0 lets rapid pick one per property")
	fl.DurationVar(&opts.shrinkTime, "shrink-time", 0, "bound rapid's minimization of each failing case to `DURATION` (a kill needs the failure, not its smallest case); 0 keeps rapid's own bound, 30s")
	_ = cmd.MarkFlagDirname("dir")
	return cmd
}

func runMutants(opts mutantsOptions, stdout, stderr io.Writer) error {
	root, err := findModuleRoot()
	if err != nil {
		return cli.UsageError(err)
	}
	if opts.dir == "" {
		opts.dir = filepath.Join(root, "mutants")
	}
	all, err := mutants.Load(opts.dir)
	if err != nil {
		return cli.UsageError(fmt.Errorf("--dir: %v", err))
	}
	var selected []mutants.Mutant
	for _, m := range all {
		if opts.filter.MatchString(m.ID) {
			selected = append(selected, m)
		}
	}
	if len(selected) == 0 {
		if len(all) == 0 {
			return cli.UsageError(fmt.Errorf("no mutants: %s holds no *.patch files", opts.dir))
		}
		return cli.UsageError(fmt.Errorf("none of the %d mutants matches --run %q", len(all), opts.filter))
	}

	ids := attributableCheckIDs()
	if err := mutants.Check(root, selected, ids); err != nil {
		// A header naming a missing package or an unknown check is a
		// mutant file that cannot be used: bad input.
		return cli.UsageError(err)
	}
	if opts.list {
		w := &cli.Writer{W: stdout}
		for _, m := range selected {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n\t%s\n", m.ID, strings.Join(m.Checks, ","), m.Source, selectionLabel(m.Packages, m.Tests), m.Bug)
		}
		return w.Err
	}
	if opts.jsonPath != "" {
		// Before any mutant runs: a path that cannot be written must not
		// cost the whole run and then pass for a survivor (exit 1).
		if err := outpath.Dir(filepath.Dir(opts.jsonPath)); err != nil {
			return cli.UsageError(fmt.Errorf("--json: %v", err))
		}
	}

	// Interrupting stops the running go command, so the scratch copy is
	// still removed.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runOpts := mutants.Options{InvariantIDs: ids, Seed: opts.seed, ShrinkTime: opts.shrinkTime}

	// A kill means something only where the same tests pass without the
	// patch: run each package set once on the unpatched tree first.
	if !baselinesPass(ctx, root, selected, runOpts, stdout, stderr) {
		return cli.Exit(cli.StatusFailed)
	}

	width := 0
	for _, m := range selected {
		width = max(width, len(m.ID))
	}
	start := time.Now()
	counts := map[string]int{}
	rows := make([]mutantRow, 0, len(selected))
	for i, m := range selected {
		r := mutants.Run(ctx, root, m, runOpts)
		counts[r.Status]++
		rows = append(rows, mutantRow{
			ID: r.ID, Subsystem: r.Subsystem, Source: r.Source, Killed: r.Killed,
			KilledBy: r.KilledBy, AlsoFailed: r.AlsoFailed, Seed: r.Seed, Rerun: r.Rerun, Seconds: centiseconds(r.Seconds),
			Phases: &mutantPhases{
				Copy: centiseconds(r.Phases.Copy), Apply: centiseconds(r.Phases.Apply), Build: centiseconds(r.Phases.Build),
				Test: centiseconds(r.Phases.Test), Rerun: centiseconds(r.Phases.Rerun),
			},
		})
		fmt.Fprintf(stdout, "[%d/%d] %-*s  %s  (%.1fs: copy %.1f, build %.1f, test %.1f, re-run %.1f)\n", i+1, len(selected), width, m.ID, mutantVerdict(r, m),
			r.Seconds, r.Phases.Copy+r.Phases.Apply, r.Phases.Build, r.Phases.Test, r.Phases.Rerun)
		if r.Status != mutants.StatusKilled {
			fmt.Fprintf(stderr, "%s: %s\n%s\n", m.ID, m.Bug, indentBlock(r.Output))
		}
		if ctx.Err() != nil {
			return &cli.ExitError{Status: cli.StatusFailed, Err: errors.New("interrupted")}
		}
	}
	fmt.Fprintf(stdout, "mutants: %d run, %d killed, %d survived, %d killed by a check the header does not name, %d not killed again on re-run, "+
		"%d timed out, %d do not apply, %d do not compile, %d errors (%.1fs, rapid base seed %d)\n",
		len(selected), counts[mutants.StatusKilled], counts[mutants.StatusSurvived], counts[mutants.StatusMisattributed],
		counts[mutants.StatusNotReproduced], counts[mutants.StatusTimedOut], counts[mutants.StatusDoesNotApply],
		counts[mutants.StatusDoesNotCompile], counts[mutants.StatusError], time.Since(start).Seconds(), opts.seed)

	if opts.jsonPath != "" {
		if err := writeKillMatrix(opts.jsonPath, rows); err != nil {
			return &cli.ExitError{Status: cli.StatusFailed, Err: fmt.Errorf("--json: %v", err)}
		}
	}
	if counts[mutants.StatusKilled] != len(selected) {
		return cli.Exit(cli.StatusFailed)
	}
	return nil
}

// centiseconds rounds seconds to hundredths for the kill matrix.
func centiseconds(seconds float64) float64 {
	return math.Round(seconds*100) / 100
}

// mutantVerdict is the verdict column of a progress line.
func mutantVerdict(r mutants.Result, m mutants.Mutant) string {
	expected := strings.Join(m.Checks, " or ")
	switch r.Status {
	case mutants.StatusKilled:
		also := ""
		if len(r.AlsoFailed) > 0 {
			also = "; also failed: " + strings.Join(r.AlsoFailed, ", ")
		}
		if r.Seed != 0 {
			return fmt.Sprintf("killed by %s (seed %d)%s", r.KilledBy, r.Seed, also)
		}
		return "killed by " + r.KilledBy + also
	case mutants.StatusMisattributed:
		return fmt.Sprintf("MISATTRIBUTED: failed %s, expected %s", r.KilledBy, expected)
	case mutants.StatusNotReproduced:
		return fmt.Sprintf("NOT REPRODUCED: %s failed, but not again on `%s`", r.KilledBy, r.Rerun)
	case mutants.StatusTimedOut:
		return "TIMED OUT (a hang is not a kill)"
	case mutants.StatusSurvived:
		return "SURVIVED (expected " + expected + " to catch it)"
	case mutants.StatusDoesNotApply:
		return "DOES NOT APPLY"
	case mutants.StatusDoesNotCompile:
		return "DOES NOT COMPILE"
	default:
		return "ERROR"
	}
}

// baselinesPass runs, on the unpatched tree, every test some selected
// mutant runs, and reports whether all passed. A mutant is judged against
// the tests of its own selection (its packages and Tests pattern): they
// must pass without the patch, and tests it does not run need not be paid
// for. Each package's tests run in a binary of their own, so a selection
// passes when each of its packages passes with its pattern: one go test per
// Tests pattern, over every package the mutants with that pattern name,
// covers them all, and runs a package shared by many selections (the
// integration tests) once rather than once per package set. A pattern's
// packages that all run whole anyway need no run of their own.
func baselinesPass(ctx context.Context, root string, selected []mutants.Mutant, opts mutants.Options, stdout, stderr io.Writer) bool {
	packagesByTests := map[string][]string{}
	for _, m := range selected {
		packagesByTests[m.Tests] = append(packagesByTests[m.Tests], m.Packages...)
	}
	// The baseline without a pattern runs first ("" sorts first): every
	// test of its packages passing, a pattern's tests of those packages
	// pass too (rapid starts each property from the same base seed,
	// whatever ran before), so a pattern's baseline over them only repeats
	// it.
	whole := packagesByTests[""]
	for _, tests := range slices.Sorted(maps.Keys(packagesByTests)) {
		packages := slices.Compact(slices.Sorted(slices.Values(packagesByTests[tests])))
		key := selectionLabel(packages, tests)
		if tests != "" && !slices.ContainsFunc(packages, func(p string) bool { return !slices.Contains(whole, p) }) {
			fmt.Fprintf(stdout, "baseline %s: passed within the baseline of every test of %s\n", key, strings.Join(packages, " "))
			continue
		}
		start := time.Now()
		status, out := mutants.Baseline(ctx, root, packages, tests, opts)
		if status != mutants.StatusSurvived {
			fmt.Fprintf(stdout, "baseline %s: FAILED without any patch (%.1fs)\n", key, time.Since(start).Seconds())
			fmt.Fprintf(stderr, "nodeproof mutants: the tests of %s fail on the unpatched tree (%s), so no failure with a patch could count as a kill:\n%s\n",
				key, status, indentBlock(out))
			return false
		}
		fmt.Fprintf(stdout, "baseline %s: passed (%.1fs)\n", key, time.Since(start).Seconds())
	}
	return true
}

// selectionLabel names the tests a mutant runs: its packages, and its -run
// pattern when it has one.
func selectionLabel(packages []string, tests string) string {
	label := strings.Join(packages, " ")
	if tests != "" {
		label += " -run=" + tests
	}
	return label
}

func indentBlock(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "    (no output)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

func writeKillMatrix(path string, rows []mutantRow) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// findModuleRoot walks up from the working directory to the directory holding go.mod.
func findModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod in the working directory or above it; run from inside the nodeproof module")
		}
		dir = parent
	}
}

// attributableCheckIDs are the IDs a mutant's header may name besides test
// functions: every suite's invariants, and the plugin checker's checks,
// which attribute its mutants (mutants/pc-*).
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
