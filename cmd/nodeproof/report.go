package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/properties"
)

// reportOptions are the validated flags of `nodeproof report`.
type reportOptions struct {
	out    string
	checks int
	steps  int
	seed   uint64
	suite  *regexp.Regexp
	// The optional sections to include, each already read and validated.
	mutants         []mutantRow
	linearizability *tableSection
	conformance     *tableSection
}

func newReportCommand() *cobra.Command {
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "report [--out DIR] [--checks N] [--steps N] [--seed N] [--suite REGEX] [--mutants FILE] [--linearizability FILE] [--conformance FILE]",
		Short: "run every invariant suite and write index.html, report.md and report.json",
		Long: `Runs every invariant suite in-process, shows each suite's progress on stderr and writes
index.html, report.md and report.json into --out. Exit status: 1 when an invariant fails,
2 for bad flags or a file that cannot be included or written.`,
		DisableFlagsInUseLine: true,
		Args:                  noArguments,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.options()
			if err != nil {
				return usageError(err)
			}
			suites, err := selectSuites(opts.suite, properties.Suites())
			if err != nil {
				return usageError(err)
			}
			return exitWith(report(opts, suites, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.out, "out", "report", "directory `DIR` to write index.html, report.md and report.json into")
	fl.IntVar(&f.checks, "checks", 300, "`N` generated cases per suite")
	fl.IntVar(&f.steps, "steps", 100, "`N` actions per case, on average")
	fl.Uint64Var(&f.seed, "seed", 0, "base seed `N`; 0 picks one and prints it")
	fl.StringVar(&f.suitePattern, "suite", "", "`REGEX` selecting suites by name (default all)")
	fl.StringVar(&f.mutantsFile, "mutants", "", "kill matrix `FILE` written by nodeproof mutants --json, to include")
	fl.StringVar(&f.linearizabilityFile, "linearizability", "", "`FILE` holding a JSON array of linearizability results, to include")
	fl.StringVar(&f.conformanceFile, "conformance", "", "`FILE` holding a JSON array of conformance results, to include")
	_ = cmd.MarkFlagDirname("out")
	for _, name := range []string{"mutants", "linearizability", "conformance"} {
		_ = cmd.MarkFlagFilename(name, "json")
	}
	return cmd
}

// report runs the suites, shows their progress on stderr, writes the report
// and returns the exit status: 1 when a suite failed.
func report(opts reportOptions, suites []properties.Suite, stdout, stderr io.Writer) int {
	started := time.Now()
	data := &reportData{
		Version:         version(),
		Started:         started.Format(time.RFC3339),
		Mutants:         opts.mutants,
		Linearizability: opts.linearizability,
		Conformance:     opts.conformance,
	}
	width := 0
	for _, s := range suites {
		width = max(width, len(s.Name))
	}
	tty := isTerminal(stderr)
	seed := opts.seed
	for _, s := range suites {
		res := properties.Run(s, properties.RunOptions{
			Checks:   opts.checks,
			Steps:    opts.steps,
			Seed:     seed,
			Progress: progressPrinter(stderr, tty, s.Name, width),
		})
		// Every suite runs from the same seed, so one number repeats the report.
		seed = res.Seed
		sr := newSuiteReport(res)
		printSuiteResult(stderr, tty, sr, width)
		data.Suites = append(data.Suites, sr)
	}
	data.Seconds = roundMillis(time.Since(started).Seconds())

	paths, err := writeReport(opts.out, data)
	if err != nil {
		fmt.Fprintf(stderr, "nodeproof report: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "seed %d (rerun with --seed %d)\n", seed, seed)
	for _, p := range paths {
		fmt.Fprintln(stdout, p)
	}
	for _, sr := range data.Suites {
		if !sr.Passed {
			return 1
		}
	}
	return 0
}

// reportFlags are the flags of `nodeproof report` as typed.
type reportFlags struct {
	out, suitePattern                                 string
	checks, steps                                     int
	seed                                              uint64
	mutantsFile, linearizabilityFile, conformanceFile string
}

// options validates the flags and reads the files to include.
func (f reportFlags) options() (reportOptions, error) {
	opts := reportOptions{out: f.out, checks: f.checks, steps: f.steps, seed: f.seed}
	switch {
	case opts.out == "":
		return opts, errors.New("--out must name a directory")
	case opts.checks <= 0:
		return opts, fmt.Errorf("--checks must be positive, got %d", opts.checks)
	case opts.steps <= 0:
		return opts, fmt.Errorf("--steps must be positive, got %d", opts.steps)
	case opts.steps > maxSteps:
		return opts, stepsBoundError(opts.steps)
	}
	re, err := regexp.Compile(f.suitePattern)
	if err != nil {
		return opts, fmt.Errorf("--suite: %v", err)
	}
	opts.suite = re
	if f.mutantsFile != "" {
		if opts.mutants, err = loadMutants(f.mutantsFile); err != nil {
			return opts, fmt.Errorf("--mutants: %v", err)
		}
	}
	if f.linearizabilityFile != "" {
		if opts.linearizability, err = loadTable(f.linearizabilityFile); err != nil {
			return opts, fmt.Errorf("--linearizability: %v", err)
		}
	}
	if f.conformanceFile != "" {
		if opts.conformance, err = loadTable(f.conformanceFile); err != nil {
			return opts, fmt.Errorf("--conformance: %v", err)
		}
	}
	return opts, nil
}

// selectSuites returns the suites whose name matches re, or an error listing
// every name when none does.
func selectSuites(re *regexp.Regexp, all []properties.Suite) ([]properties.Suite, error) {
	var selected []properties.Suite
	names := make([]string, 0, len(all))
	for _, s := range all {
		names = append(names, s.Name)
		if re.MatchString(s.Name) {
			selected = append(selected, s)
		}
	}
	if len(selected) == 0 {
		return nil, fmt.Errorf("--suite %q matches no suite; suites: %s", re, listOrNone(names))
	}
	return selected, nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "(none registered)"
	}
	return strings.Join(names, ", ")
}

// writeReport writes the three renderings into dir and returns their paths.
func writeReport(dir string, data *reportData) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	renderers := []struct {
		name   string
		render func(io.Writer, *reportData) error
	}{
		{"index.html", writeHTML},
		{"report.md", writeMarkdown},
		{"report.json", writeJSON},
	}
	var paths []string
	for _, r := range renderers {
		path := filepath.Join(dir, r.name)
		if err := writeFile(path, data, r.render); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func writeFile(path string, data *reportData, render func(io.Writer, *reportData) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := render(f, data); err != nil {
		f.Close()
		return fmt.Errorf("%s: %v", path, err)
	}
	return f.Close()
}

// isTerminal reports whether w is a character device, where progress can
// redraw one line instead of printing many.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// progressPrinter shows a suite's progress: one line redrawn in place on a
// terminal, otherwise a plain line at every tenth of the checks so that CI
// logs stay short.
func progressPrinter(w io.Writer, tty bool, name string, width int) func(done, total int) {
	lastTenth := 0
	return func(done, total int) {
		// rapid may run more cases than checks (it discards invalid ones).
		done = min(done, total)
		tenth := done * 10 / total
		line := fmt.Sprintf("%-*s  [%s%s] %d/%d checks", width, name,
			strings.Repeat("#", tenth), strings.Repeat(".", 10-tenth), done, total)
		switch {
		case tty:
			fmt.Fprint(w, "\r"+line)
		case tenth > lastTenth:
			fmt.Fprintln(w, line)
		}
		lastTenth = tenth
	}
}

func printSuiteResult(w io.Writer, tty bool, sr suiteReport, width int) {
	if tty {
		// Clear the progress line before the result replaces it.
		fmt.Fprint(w, "\r\033[K")
	}
	counts := fmt.Sprintf("%d checks, %d steps, %.1fs", sr.Checks, sr.Steps, sr.Seconds)
	if sr.Failure == nil {
		fmt.Fprintf(w, "%-*s  passed  %s\n", width, sr.Name, counts)
		return
	}
	fmt.Fprintf(w, "%-*s  FAILED  %s after %s\n", width, sr.Name, sr.Failure.Invariant, counts)
	first, _, _ := strings.Cut(sr.Failure.Message, "\n")
	fmt.Fprintf(w, "%-*s          %s\n", width, "", first)
	if sr.Failure.Replay != "" {
		fmt.Fprintf(w, "%-*s          replay: %s\n", width, "", sr.Failure.Replay)
	}
}
