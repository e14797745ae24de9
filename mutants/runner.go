package mutants

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Mutant is one seeded bug, as described by the header of its patch file.
type Mutant struct {
	// ID is the file name without .patch, for example "devicemanager-init-reuse".
	ID string
	// Subsystem is the part of the ID before the first dash.
	Subsystem string
	// Bug is the one-sentence description from the "# Bug:" header.
	Bug string
	// Source is the upstream issue or pull request the bug comes from, or "seeded".
	Source string
	// Checks name what is expected to catch the bug: invariant IDs from the
	// registry or test function names, in the header's order. A kill counts
	// only when one of them failed.
	Checks []string
	// Packages are the go test package patterns to run, relative to the module root.
	Packages []string
	// Tests is the optional go test -run pattern from the "# Tests:" header:
	// when set, the mutant's run and its baseline run only the tests it
	// selects, so a mutant only one suite can kill costs that suite's time,
	// not its packages'. Empty runs every test of Packages.
	Tests string
	// Path is the absolute path of the patch file.
	Path string
}

// Status values of a Result.
const (
	StatusKilled         = "killed"
	StatusSurvived       = "survived"
	StatusDoesNotApply   = "does-not-apply"
	StatusDoesNotCompile = "does-not-compile"
	// StatusMisattributed is a failure of the tests that none of the
	// header's checks explains: the bug is caught, but not by what the
	// header claims, so the claim about the tests' power is wrong.
	StatusMisattributed = "misattributed"
	// StatusTimedOut is a test run that hit its timeout: a hang is not a kill.
	StatusTimedOut = "timed-out"
	// StatusNotReproduced is a kill that did not happen again when the
	// killing test was re-run alone with the seed it printed.
	StatusNotReproduced = "not-reproduced"
	StatusError         = "error"
)

const (
	defaultTimeout = 10 * time.Minute
	// toolchainGrace is how long the go command may outlive the test timeout
	// (compiling, then reporting the timed-out binary) before it is killed.
	toolchainGrace = time.Minute
	// outputTailBytes bounds Result.Output; the report shows it per mutant.
	outputTailBytes  = 8 << 10
	fallbackKilledBy = "build/test failure"
	scratchPattern   = "nodeproof-mutant-*"
)

// Result is the outcome of running one mutant.
type Result struct {
	ID, Subsystem, Source string
	// Killed is true when the tests failed with the patch applied, the
	// failure is one of the header's checks, and re-running the killing test
	// with its seed failed again.
	Killed bool
	// KilledBy names what failed: one of the header's checks when Killed;
	// for a misattributed failure, what failed instead (an invariant ID,
	// else a test name, else "build/test failure").
	KilledBy string
	// AlsoFailed are the header's other checks that failed in the same run,
	// in header order: a bug several checks should catch shows here that
	// each of them did, not only the first.
	AlsoFailed []string
	// Seed is the rapid seed of the killing case, 0 when the killing test is
	// not a rapid property (it then fails deterministically).
	Seed uint64
	// Rerun is the go test command, run in the patched tree, that repeats
	// the kill; the runner ran it and saw it fail.
	Rerun string
	// Seconds is the wall time of the whole run: copy, apply, build and test.
	Seconds float64
	// Phases says where Seconds went, so a slow run can be cut where it is
	// slow rather than where it is thought to be.
	Phases Phases
	// Status is one of the Status constants.
	Status string
	// Output is the tail of the output of the step that decided Status, for the report.
	Output string
}

// Phases are the wall times, in seconds, of the steps of one mutant's run; a
// step that did not run is zero.
type Phases struct {
	// Copy is the scratch copy of the module; Apply the git apply of the patch.
	Copy  float64 `json:"copy"`
	Apply float64 `json:"apply"`
	// Build is compiling the packages the patch changes.
	Build float64 `json:"build"`
	// Test is go test of the mutant's packages (compiling and linking the
	// test binaries, then running them); Rerun the killing test alone.
	Test  float64 `json:"test"`
	Rerun float64 `json:"rerun"`
}

// Options tunes Run. The zero value is ready to use.
type Options struct {
	// Timeout bounds the test command; go test gets it as -timeout, so a hang
	// fails the tests with a goroutine dump. Zero means 10 minutes.
	Timeout time.Duration
	// InvariantIDs are the IDs Run looks for in a failing test's output to
	// name the invariant that killed the mutant.
	InvariantIDs []string
	// Seed is the base seed of every rapid property the tests run (through
	// RAPID_SEED), so a run's kills and their attribution do not change
	// from one run to the next; 0 lets rapid pick a seed per property, as
	// go test does.
	Seed uint64
	// ShrinkTime bounds rapid's minimization of each failing case (through
	// RAPID_SHRINKTIME); 0 keeps rapid's own bound, 30 s. A kill needs the
	// failure, not its smallest case, and a suite that fails on its first
	// case otherwise spends the whole bound shrinking it.
	ShrinkTime time.Duration
}

// env is the environment the tests run with, beyond the process's own.
func (o Options) env() []string {
	var env []string
	if o.Seed != 0 {
		env = append(env, "RAPID_SEED="+strconv.FormatUint(o.Seed, 10))
	}
	if o.ShrinkTime > 0 {
		env = append(env, "RAPID_SHRINKTIME="+o.ShrinkTime.String())
	}
	return env
}

func (o Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return defaultTimeout
	}
	return o.Timeout
}

var (
	fileNamePattern  = regexp.MustCompile(`^([a-z0-9]+)-([a-z0-9]+(?:-[a-z0-9]+)*)\.patch$`)
	headerPattern    = regexp.MustCompile(`^#\s*([A-Za-z]+):\s*(.*?)\s*$`)
	invariantPattern = regexp.MustCompile(`^[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+$`)
	failedTest       = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)
	testFuncPattern  = regexp.MustCompile(`^(Test|Fuzz)[A-Za-z0-9_]*$`)
	testFuncDecl     = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)[A-Za-z0-9_]*)\(`)
	buildFailed      = regexp.MustCompile(`(?m)^FAIL\s+\S+ \[(build|setup) failed\]$`)
	failedPackage    = regexp.MustCompile(`(?m)^FAIL\t(\S+)\t`)
	testTimedOut     = regexp.MustCompile(`(?m)^panic: test timed out after `)
	// rapid ends a failure with `To reproduce, specify -run="T/sub" -rapid.seed=N`
	// (or a fail file first, the seed in parentheses).
	rapidReproduce = regexp.MustCompile(`To reproduce, specify -run="([^"]+)" [^\n]*?-rapid\.seed=([0-9]+)`)
	headerFields   = []string{"Bug", "Source", "Invariant", "Packages"}
	// optionalFields may be absent; when present they must not be empty.
	optionalFields = []string{"Tests"}
)

// Load parses every *.patch file in dir, sorted by ID. A file with a missing,
// empty, repeated or unknown header field is an error naming the file and
// the field. Header lines of the form "# Field: value" are fields; other
// comment lines are free text, so a typo in a field name is caught rather
// than read as prose.
func Load(dir string) ([]Mutant, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.patch"))
	if err != nil {
		return nil, err
	}
	mutants := make([]Mutant, 0, len(paths))
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		m, err := parsePatch(abs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		mutants = append(mutants, m)
	}
	sort.Slice(mutants, func(i, j int) bool { return mutants[i].ID < mutants[j].ID })
	return mutants, nil
}

func parsePatch(path string) (Mutant, error) {
	name := filepath.Base(path)
	parts := fileNamePattern.FindStringSubmatch(name)
	if parts == nil {
		return Mutant{}, errors.New("file name must be <subsystem>-<slug>.patch in lower case letters, digits and dashes")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Mutant{}, err
	}
	fields := map[string]string{}
	sawDiff := false
	for i, line := range strings.Split(string(data), "\n") {
		// A git diff starts with "diff --git", a plain unified diff with
		// "--- a/"; git apply takes either.
		if strings.HasPrefix(line, "diff --git ") || strings.HasPrefix(line, "--- ") {
			sawDiff = true
			break
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !strings.HasPrefix(line, "#") {
			return Mutant{}, fmt.Errorf("line %d: header lines must start with #, got %q", i+1, line)
		}
		kv := headerPattern.FindStringSubmatch(line)
		if kv == nil {
			continue // free text explaining the bug
		}
		key, value := kv[1], kv[2]
		if !slices.Contains(headerFields, key) && !slices.Contains(optionalFields, key) {
			return Mutant{}, fmt.Errorf("line %d: unknown header field %q (want %s)", i+1, key, strings.Join(slices.Concat(headerFields, optionalFields), ", "))
		}
		if _, dup := fields[key]; dup {
			return Mutant{}, fmt.Errorf("line %d: header field %q repeated", i+1, key)
		}
		fields[key] = value
	}
	for _, key := range headerFields {
		if fields[key] == "" {
			return Mutant{}, fmt.Errorf("header field %q is missing or empty", key)
		}
	}
	for _, key := range optionalFields {
		if value, present := fields[key]; present && value == "" {
			return Mutant{}, fmt.Errorf("header field %q is empty (leave it out to run every test)", key)
		}
	}
	if !sawDiff {
		return Mutant{}, errors.New(`no diff ("diff --git" or "--- " line) after the header`)
	}
	// The field keeps its name, Invariant, but may list several checks:
	// invariant IDs or test functions, separated by commas or spaces.
	checks := strings.FieldsFunc(fields["Invariant"], func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	for _, c := range checks {
		if !invariantPattern.MatchString(c) && !testFuncPattern.MatchString(c) {
			return Mutant{}, fmt.Errorf("header field \"Invariant\": %q is neither an invariant ID such as DM-EXCLUSIVE nor a test or fuzz function such as TestAllocate", c)
		}
	}
	packages := strings.Fields(fields["Packages"])
	for _, p := range packages {
		// A pattern must not be mistaken for a go test flag, and a relative
		// pattern is what makes it resolve inside the scratch copy.
		if !strings.HasPrefix(p, "./") {
			return Mutant{}, fmt.Errorf("header field \"Packages\": %q must start with \"./\"", p)
		}
	}
	tests := fields["Tests"]
	if tests != "" {
		if _, err := regexp.Compile(tests); err != nil {
			return Mutant{}, fmt.Errorf("header field \"Tests\": %q must be a go test -run regexp: %v", tests, err)
		}
	}
	return Mutant{
		ID:        strings.TrimSuffix(name, ".patch"),
		Subsystem: parts[1],
		Bug:       fields["Bug"],
		Source:    fields["Source"],
		Checks:    checks,
		Packages:  packages,
		Tests:     tests,
		Path:      path,
	}, nil
}

// Check verifies what Load cannot see from the patch alone: that every
// package pattern names a directory of the module at root (go test would
// fail on a missing one, which would pass for a kill), that every check
// is a known invariant ID or a test function declared in the module, and
// that a Tests pattern selects a test function of the mutant's packages (one
// that selects nothing would pass the baseline and the mutant alike, so the
// mutant would survive for want of a test). It returns every problem, each
// naming the mutant.
func Check(root string, mutants []Mutant, invariantIDs []string) error {
	tests, err := testFunctions(root)
	if err != nil {
		return err
	}
	var problems []error
	for _, m := range mutants {
		for _, p := range m.Packages {
			dir := filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(strings.TrimSuffix(p, "..."), "/")))
			if info, err := os.Stat(dir); err != nil || !info.IsDir() {
				problems = append(problems, fmt.Errorf("%s: header field \"Packages\": %q is not a directory of the module", m.ID, p))
			}
		}
		for _, c := range m.Checks {
			switch {
			case testFuncPattern.MatchString(c) && len(tests[c]) == 0:
				problems = append(problems, fmt.Errorf("%s: header field \"Invariant\": no test function %s in the module", m.ID, c))
			case !testFuncPattern.MatchString(c) && !slices.Contains(invariantIDs, c):
				problems = append(problems, fmt.Errorf("%s: header field \"Invariant\": %s is not an invariant of any suite", m.ID, c))
			}
		}
		if m.Tests != "" && !selectsTest(m, tests) {
			problems = append(problems, fmt.Errorf("%s: header field \"Tests\": %q selects no test function of %s", m.ID, m.Tests, strings.Join(m.Packages, " ")))
		}
	}
	return errors.Join(problems...)
}

// selectsTest reports whether m.Tests selects a test function declared in
// one of m's packages. go test matches each slash-separated element of -run
// against one level of test names, so the first element is the one that
// must match a function; the levels below are subtests, which no scan of
// the source can list.
func selectsTest(m Mutant, tests map[string][]string) bool {
	first, err := regexp.Compile(strings.SplitN(m.Tests, "/", 2)[0])
	if err != nil {
		return false
	}
	for name, dirs := range tests {
		if !first.MatchString(name) {
			continue
		}
		for _, dir := range dirs {
			for _, p := range m.Packages {
				if packageCovers(p, dir) {
					return true
				}
			}
		}
	}
	return false
}

// packageCovers reports whether the go test package pattern p ("./x",
// "./x/...", "./...") names the package in dir, a slash path relative to
// the module root ("." for the root).
func packageCovers(p, dir string) bool {
	rest := strings.TrimPrefix(p, "./")
	if base, ok := strings.CutSuffix(rest, "..."); ok {
		base = strings.TrimSuffix(base, "/")
		return base == "" || dir == base || strings.HasPrefix(dir, base+"/")
	}
	rest = strings.TrimSuffix(rest, "/")
	if rest == "" {
		rest = "."
	}
	return dir == rest
}

// testFunctions returns the test functions declared in the module's
// _test.go files, each with the directories (slash paths relative to root)
// that declare it.
func testFunctions(root string) (map[string][]string, error) {
	names := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() && p != root {
			// A nested module (conformance/) is not built by the mutants' go test.
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		for _, m := range testFuncDecl.FindAllSubmatch(data, -1) {
			names[string(m[1])] = append(names[string(m[1])], filepath.ToSlash(rel))
		}
		return nil
	})
	return names, err
}

// Run applies m to a scratch copy of the module at root, builds it and runs
// m's packages' tests. A failure counts as a kill only when one of m's
// checks failed and the killing test, re-run alone with the seed it printed,
// fails again. The scratch copy is removed before Run returns. The
// environment is passed through, so RAPID_* variables and GOFLAGS apply.
func Run(ctx context.Context, root string, m Mutant, opts Options) Result {
	start := time.Now()
	r := Result{ID: m.ID, Subsystem: m.Subsystem, Source: m.Source}
	r.Status, r.Output = run(ctx, root, m, opts, &r)
	r.Output = tail(r.Output, outputTailBytes)
	r.Seconds = time.Since(start).Seconds()
	return r
}

// run returns the status and the output of the step that decided it, and
// fills in r's kill fields.
func run(ctx context.Context, root string, m Mutant, opts Options, r *Result) (status, output string) {
	step := time.Now()
	// lap returns the seconds since the previous lap, for r.Phases.
	lap := func() float64 {
		now := time.Now()
		seconds := now.Sub(step).Seconds()
		step = now
		return seconds
	}
	scratch, err := scratchCopy(ctx, root)
	r.Phases.Copy = lap()
	if err != nil {
		return StatusError, err.Error()
	}
	defer os.RemoveAll(scratch)

	out, err := command(ctx, scratch, gitApplyEnv(scratch), "git", "apply", m.Path)
	r.Phases.Apply = lap()
	if err != nil {
		return stepFailed(ctx, StatusDoesNotApply, out, err)
	}
	// The packages the patch changes must compile, tested or not. go list
	// -export compiles them as go build would, but links no program, and
	// leaves their dependents to go test: linking every command and
	// compiling every dependent of a core package (go build ./...) took
	// most of a mutant's time, and a dependent no test runs says nothing
	// about the kill. A scratch copy has no version control information to
	// stamp.
	patched, err := patchedPackages(m.Path, scratch)
	if err != nil {
		return StatusError, err.Error()
	}
	if len(patched) > 0 {
		out, err = command(ctx, scratch, nil, "go", append([]string{"list", "-trimpath", "-buildvcs=false", "-export", "-f="}, patched...)...)
	}
	r.Phases.Build = lap()
	if err != nil {
		return stepFailed(ctx, StatusDoesNotCompile, out, err)
	}
	status, out = goTest(ctx, scratch, opts, selection(m.Tests), m.Packages)
	r.Phases.Test = lap()
	if status != StatusKilled {
		return status, out
	}
	failed := failures(out, opts.InvariantIDs)
	r.KilledBy = firstNamed(m.Checks, failed)
	for _, c := range m.Checks {
		if c != r.KilledBy && slices.Contains(failed, c) {
			r.AlsoFailed = append(r.AlsoFailed, c)
		}
	}
	if r.KilledBy == "" {
		r.KilledBy = killedBy(out, opts.InvariantIDs)
		return StatusMisattributed, out
	}

	// The kill must repeat: the killing test alone, from the seed rapid
	// printed for the failing case (none for a plain test, which fails the
	// same way every time).
	testName, seed := killingTest(out, r.KilledBy)
	if testName == "" {
		return StatusError, out + "\nno failing test named in the output of a failed go test"
	}
	r.Seed = seed
	args := []string{"-run=" + anchored(testName)}
	if seed != 0 {
		args = append(args, "-rapid.seed="+strconv.FormatUint(seed, 10))
	}
	pkgs := []string{testPackage(out, testName, m.Packages)}
	r.Rerun = "go test -count=1 " + strings.Join(append(pkgs, args...), " ")
	again, againOut := goTest(ctx, scratch, opts, args, pkgs)
	r.Phases.Rerun = lap()
	switch {
	case again == StatusSurvived:
		return StatusNotReproduced, out + "\n--- re-run: " + r.Rerun + " passed:\n" + againOut
	case again != StatusKilled:
		return again, againOut
	case !slices.Contains(failures(againOut, opts.InvariantIDs), r.KilledBy):
		return StatusNotReproduced, out + "\n--- re-run: " + r.Rerun + " failed without " + r.KilledBy + ":\n" + againOut
	}
	r.Killed = true
	return StatusKilled, out
}

// patchedPackages returns the directories, as ./dir patterns, of the Go
// files the patch at path changes, adds or deletes, that exist in the
// patched tree at root (a patch may delete a whole package); "./." is the
// module root.
func patchedPackages(path, root string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, line := range strings.Split(string(data), "\n") {
		name, ok := strings.CutPrefix(line, "+++ b/")
		if !ok {
			name, ok = strings.CutPrefix(line, "--- a/")
		}
		// git quotes a name with unusual characters and may end it with a
		// tab; neither occurs in a Go package path worth building.
		name, _, _ = strings.Cut(name, "\t")
		if !ok || !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, `"`) {
			continue
		}
		dir := filepath.Dir(filepath.FromSlash(name))
		if info, err := os.Stat(filepath.Join(root, dir)); err == nil && info.IsDir() {
			dirs = append(dirs, "./"+filepath.ToSlash(dir))
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(dirs))), nil
}

// Baseline runs the tests of packages that the go test -run pattern tests
// selects (every test when it is empty) on an unpatched scratch copy of the
// module at root: the same selection as the mutants it stands for, since a
// mutant run means something only when these pass. A test that already
// fails, or fails now and then, would count as a kill. It returns
// StatusSurvived (the tests pass) or why they did not.
func Baseline(ctx context.Context, root string, packages []string, tests string, opts Options) (status, output string) {
	scratch, err := scratchCopy(ctx, root)
	if err != nil {
		return StatusError, err.Error()
	}
	defer os.RemoveAll(scratch)
	status, out := goTest(ctx, scratch, opts, selection(tests), packages)
	return status, tail(out, outputTailBytes)
}

// selection is the go test flag that runs only the tests a mutant's Tests
// pattern selects: none when it is empty, so every test runs.
func selection(tests string) []string {
	if tests == "" {
		return nil
	}
	return []string{"-run=" + tests}
}

// scratchCopy copies the module at root into a fresh directory, which the
// caller removes.
func scratchCopy(ctx context.Context, root string) (string, error) {
	scratch, err := os.MkdirTemp("", scratchPattern)
	if err != nil {
		return "", err
	}
	if err := copyModule(ctx, root, scratch); err != nil {
		os.RemoveAll(scratch)
		return "", fmt.Errorf("copying the repository: %w", err)
	}
	return scratch, nil
}

// goTest runs go test in dir and classifies the outcome: StatusSurvived
// when the tests pass, StatusKilled when a test failed, and otherwise what
// stopped them (a package that does not compile, its tests included; a
// timeout; a toolchain that could not run).
func goTest(ctx context.Context, dir string, opts Options, extra, packages []string) (status, output string) {
	timeout := opts.timeout()
	// go test's own -timeout fires first and dumps the hung goroutines into
	// the output; the deadline only stops a toolchain that hangs itself.
	testCtx, cancel := context.WithTimeout(ctx, timeout+toolchainGrace)
	defer cancel()
	// Test binary flags such as -rapid.seed go after the packages: go test
	// takes the first flag it does not know as the end of its own.
	args := append([]string{"test", "-trimpath", "-buildvcs=false", "-count=1", "-timeout=" + timeout.String()}, packages...)
	out, err := command(testCtx, dir, opts.env(), "go", append(args, extra...)...)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return StatusSurvived, out
	case testCtx.Err() != nil:
		return StatusError, fmt.Sprintf("%s\ngo test did not finish: %v", out, testCtx.Err())
	case !errors.As(err, &exit):
		return StatusError, fmt.Sprintf("%s\n%v", out, err)
	case buildFailed.MatchString(out):
		// go build skips _test.go files: a patch that breaks only a test
		// surfaces here, and is no kill.
		return StatusDoesNotCompile, out
	case testTimedOut.MatchString(out):
		return StatusTimedOut, out
	}
	return StatusKilled, out
}

// stepFailed classifies a failed apply or build step: a command that ran and
// said no gives status, anything else (no git, cancelled) is an error.
func stepFailed(ctx context.Context, status, out string, err error) (string, string) {
	var exit *exec.ExitError
	if ctx.Err() != nil || !errors.As(err, &exit) {
		return StatusError, fmt.Sprintf("%s\n%v", out, err)
	}
	return status, out
}

// command runs name in dir with the process environment plus extraEnv and
// returns its combined output.
func command(ctx context.Context, dir string, extraEnv []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), extraEnv...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	// Test binaries outlive a killed go command while holding the output
	// pipe; do not wait for them forever.
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	return out.String(), err
}

// gitApplyEnv makes git treat the scratch directory as a plain directory:
// the ceiling stops git from finding a repository above it (git apply inside
// a repository would resolve paths against that repository's root), and
// variables that point git at a repository are cleared.
func gitApplyEnv(scratch string) []string {
	return []string{
		"GIT_CEILING_DIRECTORIES=" + filepath.Dir(scratch),
		"GIT_DIR=", "GIT_WORK_TREE=", "GIT_INDEX_FILE=",
	}
}

// copyModule copies the files of the module at root into dst.
func copyModule(ctx context.Context, root, dst string) error {
	files, err := moduleFiles(ctx, root)
	if err != nil {
		return err
	}
	for _, rel := range files {
		if err := copyFile(filepath.Join(root, rel), filepath.Join(dst, rel)); err != nil {
			return err
		}
	}
	return nil
}

// moduleFiles lists the files to copy, relative to root: tracked and
// untracked but not ignored files inside a git work tree, every file but .git
// outside one.
func moduleFiles(ctx context.Context, root string) ([]string, error) {
	inside, _ := command(ctx, root, nil, "git", "rev-parse", "--is-inside-work-tree")
	if strings.TrimSpace(inside) == "true" {
		cmd := exec.CommandContext(ctx, "git", "ls-files", "-z", "-co", "--exclude-standard")
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git ls-files: %w", err)
		}
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, filepath.FromSlash(f))
			}
		}
		return files, nil
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files = append(files, rel)
		return nil
	})
	return files, err
}

// copyFile copies one regular file or symbolic link. A listed path that is
// gone (deleted but not yet committed) or is a directory (a submodule) is
// skipped, as the build would not see it either.
func copyFile(src, dst string) error {
	info, err := os.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if info.IsDir() {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// failures lists what failed in a go test output: the invariant IDs that
// appear in it (a violation message starts with its ID) and the failing
// tests, each by its full name and by its top-level function.
func failures(output string, invariantIDs []string) []string {
	var failed []string
	for _, id := range invariantIDs {
		if wordIndex(output, id) >= 0 {
			failed = append(failed, id)
		}
	}
	for _, m := range failedTest.FindAllStringSubmatch(output, -1) {
		top, _, _ := strings.Cut(m[1], "/")
		failed = append(failed, m[1], top)
	}
	return failed
}

// firstNamed returns the first of checks that failed, or "".
func firstNamed(checks, failed []string) string {
	for _, c := range checks {
		if slices.Contains(failed, c) {
			return c
		}
	}
	return ""
}

// killingTest returns the test to re-run to repeat a kill by check (an
// invariant ID or a test function): the failing test whose output names the
// check, and the seed rapid printed for its failing case (0 when the test is
// not a rapid property). go test prints a failing test's header ("--- FAIL:
// T") before its log, and rapid ends its log with the seed, so both are
// found around the check's first mention.
func killingTest(output, check string) (name string, seed uint64) {
	at := -1
	if testFuncPattern.MatchString(check) {
		at = strings.Index(output, "--- FAIL: "+check)
	} else {
		at = wordIndex(output, check)
	}
	if at < 0 {
		return "", 0
	}
	for _, m := range failedTest.FindAllStringSubmatchIndex(output, -1) {
		if m[0] <= at {
			name = output[m[2]:m[3]]
		}
	}
	rest := output[at:]
	if next := failedTest.FindStringIndex(rest[1:]); next != nil {
		rest = rest[:next[0]+1]
	}
	if m := rapidReproduce.FindStringSubmatch(rest); m != nil {
		if seed, err := strconv.ParseUint(m[2], 10, 64); err == nil {
			return m[1], seed
		}
	}
	return name, 0
}

// anchored turns a test name as go test prints it ("TestA/sub_case") into a
// -run pattern that matches only that test.
func anchored(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// testPackage returns the package go test reported as failing after the
// test's failure, or the whole package list when the output does not say.
func testPackage(output, name string, packages []string) string {
	at := strings.Index(output, "--- FAIL: "+name)
	if at >= 0 {
		if m := failedPackage.FindStringSubmatch(output[at:]); m != nil {
			return m[1]
		}
	}
	return strings.Join(packages, " ")
}

// killedBy names what killed a mutant: the invariant ID that appears first
// in the output (a violation message starts with its ID, and go test prints
// the first failure first), else the first failing test, else a generic
// label. An ID only matches as a whole word, so DM-INIT does not match inside
// DM-INIT-REUSE; at the same position the longer ID wins.
func killedBy(output string, invariantIDs []string) string {
	best, bestAt := "", len(output)+1
	for _, id := range invariantIDs {
		if at := wordIndex(output, id); at >= 0 && (at < bestAt || at == bestAt && len(id) > len(best)) {
			best, bestAt = id, at
		}
	}
	if best != "" {
		return best
	}
	if m := failedTest.FindStringSubmatch(output); m != nil {
		return m[1]
	}
	return fallbackKilledBy
}

// wordIndex returns the first index of word in s that is not part of a
// longer identifier, or -1.
func wordIndex(s, word string) int {
	if word == "" {
		return -1
	}
	for from := 0; ; {
		i := strings.Index(s[from:], word)
		if i < 0 {
			return -1
		}
		at := from + i
		end := at + len(word)
		if (at == 0 || !isIDByte(s[at-1])) && (end == len(s) || !isIDByte(s[end])) {
			return at
		}
		from = at + 1
	}
}

func isIDByte(b byte) bool {
	return b == '-' || b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// tail keeps the last max bytes of s, starting at a line boundary.
func tail(s string, max int) string {
	if len(s) <= max {
		return s
	}
	s = s[len(s)-max:]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
