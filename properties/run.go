package properties

import (
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/verify"
	"pgregory.net/rapid"
)

// MaxSteps bounds the steps per case a command asks Run for (replay's and
// report's --steps, a campaign plan's suites.steps): 100 times their
// default. rapid's cases grow with it: a case of 10000 steps of the slowest
// suite (cgroups) takes about 1.5 s on two cores, and one of 10000000 had
// not ended after 100 s, without a word on the terminal.
const MaxSteps = 10_000

// CheckSteps refuses steps beyond MaxSteps; the caller names the flag or
// field.
func CheckSteps(steps int) error {
	if steps > MaxSteps {
		return fmt.Errorf("%d exceeds the bound of %d", steps, MaxSteps)
	}
	return nil
}

// RunOptions configures one in-process run of a suite.
type RunOptions struct {
	// Checks is the number of generated cases; 0 keeps rapid's -rapid.checks.
	// Unlike `go test -short`, Run never divides it: the report states what ran.
	Checks int
	// Steps is rapid's average number of actions per case; 0 keeps -rapid.steps.
	// A seed reproduces a case only with the same Steps.
	Steps int
	// Seed is the base seed; 0 derives one from the clock and reports it in Result.Seed.
	Seed uint64
	// FailFile is a rapid fail file to replay; empty for none. With one, Run
	// replays that case alone and generates no new ones (Checks is ignored):
	// rapid would otherwise go on to random cases, whose verdict could pass
	// for the file's.
	FailFile string
	// Replay, when set, builds the command that reproduces a failing case
	// from its seed, in place of `nodeproof replay` and `go test`: for
	// properties that are not a registered suite, such as plugincheck's.
	Replay func(seed uint64) string
	// Enforce names contract properties whose breaches fail the case even
	// though a known finding explains them: `nodeproof findings` searches
	// for one finding this way. EnforceAll does so for every contract
	// property, as a replay does, so that the case it replays fails as it
	// did when it was found.
	Enforce    []string
	EnforceAll bool
	// ShrinkTime bounds rapid's minimization of a failing case; 0 keeps
	// -rapid.shrinktime (30 s by default).
	ShrinkTime time.Duration
	// Progress, when set, is called every few completed cases with the number done
	// and the number requested. It runs on the caller's goroutine.
	Progress func(done, total int)
}

// Failure describes the counterexample rapid found and shrank.
type Failure struct {
	// Invariant is the violated invariant's ID, or "panic" or "error" when the
	// failure is not attributed to one of the suite's invariants.
	Invariant string
	// Message is the failure text, followed by the two replay commands.
	Message string
	// Steps are the shrunk case's `step N: ...` lines (with the indented detail
	// lines under them), then the failure line.
	Steps []string
	// Replay is the nodeproof command that reproduces the failure.
	Replay string
	// Seed is the seed of the failing case; 0 when it came from a fail file.
	Seed uint64
}

// Result is the outcome of Run.
type Result struct {
	Suite Suite
	// Tally counts the generated cases up to and including the first failing one;
	// rapid's reproduction and shrinking runs are not counted.
	Tally   *Tally
	Seconds float64
	Passed  bool
	Failure *Failure
	// Seed is the base seed the run used.
	Seed uint64
	// FoundAfter is the seconds from the start to the end of the first
	// failing case, before rapid shrank it: how long the search took to
	// find the failure. 0 when the run passed.
	FoundAfter float64
	// FailFileIgnored is rapid's reason for not replaying RunOptions.FailFile,
	// such as draws that no longer fit the suite; empty when it replayed it,
	// a case that no longer fails included: every step the file recorded
	// ran and passed, and Tally.Steps counts them.
	FailFileIgnored string
}

// ClockSeed derives a base seed from the clock, as Run does when given
// none; a command prints it before it starts, so that an interrupted run
// can be repeated. It stays within 53 bits, so that report.json readers
// that hold numbers as float64 still see the exact seed.
func ClockSeed() uint64 {
	return uint64(time.Now().UnixNano())&(1<<53-1) | 1
}

// runMu serialises Run: rapid reads its settings from process-wide flags.
var runMu sync.Mutex

// Run checks one suite in-process with rapid, as `go test ./properties/suites`
// does, and returns what ran and the shrunk counterexample, if any. It works
// both in a test binary and in a plain program such as the nodeproof CLI.
//
// A suite's Property must not skip a whole case (t.Skip outside Repeat's
// actions): the tally cannot tell a skipped case from a failed one and stops
// counting at the first of either.
func Run(s Suite, opts RunOptions) Result {
	runMu.Lock()
	defer runMu.Unlock()

	if opts.Seed == 0 {
		opts.Seed = ClockSeed()
	}
	prepareFlags()
	settings := map[string]string{
		"rapid.seed":     strconv.FormatUint(opts.Seed, 10),
		"rapid.failfile": opts.FailFile,
		// Run reports seeds, so it never leaves testdata/rapid files behind,
		// neither in the CLI's working directory nor in the source tree.
		"rapid.nofailfile": "true",
		// -short would divide checks and steps behind the caller's back, and a
		// replayed seed would no longer generate the same case.
		"test.short": "false",
	}
	switch {
	case opts.FailFile != "":
		settings["rapid.checks"] = "0"
	case opts.Checks > 0:
		settings["rapid.checks"] = strconv.Itoa(opts.Checks)
	}
	if opts.Steps > 0 {
		settings["rapid.steps"] = strconv.Itoa(opts.Steps)
	}
	if opts.ShrinkTime > 0 {
		settings["rapid.shrinktime"] = opts.ShrinkTime.String()
	}
	defer setFlags(settings)()
	checks := flagInt("rapid.checks")
	steps := flagInt("rapid.steps")

	tally := NewTally()
	tally.enforceAll = opts.EnforceAll
	tally.enforced = map[string]bool{}
	for _, id := range opts.Enforce {
		tally.enforced[id] = true
	}
	rec := &recorder{name: "nodeproof/" + s.Name, outputFrom: -1}
	start := time.Now()
	var foundAfter float64
	found := func() { foundAfter = time.Since(start).Seconds() }
	rapid.Check(rec, countingProperty(s, tally, checks, opts.Progress, found))
	res := Result{
		Suite:   s,
		Tally:   tally,
		Seconds: time.Since(start).Seconds(),
		Passed:  !rec.failed,
		Seed:    opts.Seed,
	}
	if rec.failed {
		res.FoundAfter = foundAfter
	}
	if opts.FailFile != "" && !rec.failed {
		res.FailFileIgnored = rec.failFileIgnored()
		if res.FailFileIgnored != "" && noLongerFails(opts.FailFile, tally) {
			res.FailFileIgnored = ""
		}
	}
	if rec.failed {
		res.Failure = rec.failure(s, steps, opts.Replay)
	}
	return res
}

// prepareFlags makes rapid's flags usable outside `go test`: rapid calls
// testing.Short, which needs the testing flags defined and flag.CommandLine parsed.
func prepareFlags() {
	if flag.Lookup("test.short") == nil {
		testing.Init()
	}
	if !flag.CommandLine.Parsed() {
		// With no arguments Parse cannot fail.
		_ = flag.CommandLine.Parse(nil)
	}
}

// setFlags sets the named flags and returns a function that restores them.
func setFlags(settings map[string]string) (restore func()) {
	saved := map[string]string{}
	for name, value := range settings {
		saved[name] = flag.Lookup(name).Value.String()
		mustSet(name, value)
	}
	return func() {
		for name, value := range saved {
			mustSet(name, value)
		}
	}
}

// mustSet sets a flag to a value Run produced itself, so a failure is a bug in Run.
func mustSet(name, value string) {
	if err := flag.Set(name, value); err != nil {
		panic(fmt.Sprintf("properties: set -%s=%q: %v", name, value, err))
	}
}

func flagInt(name string) int {
	n, err := strconv.Atoi(flag.Lookup(name).Value.String())
	if err != nil {
		panic(fmt.Sprintf("properties: -%s is not an integer: %v", name, err))
	}
	return n
}

// countingProperty wraps the suite's Property so that tally counts the cases
// rapid generates while it searches. Each case counts into a scratch tally,
// merged when the case ends; after the first case that does not return
// cleanly, rapid only reproduces and shrinks it, and those runs are not counted.
// found is called once, when the first failing case ends.
func countingProperty(s Suite, tally *Tally, total int, progress func(done, total int), found func()) func(*rapid.T) {
	every := max(1, total/100)
	searching := true
	return func(t *rapid.T) {
		scratch, returned := NewTally(), false
		scratch.enforced, scratch.enforceAll = tally.enforced, tally.enforceAll
		if searching {
			scratch.Case()
			defer func() {
				merge(tally, scratch)
				if !returned || t.Failed() {
					searching = false
					found()
					return
				}
				if progress != nil && (tally.Cases%every == 0 || tally.Cases == total) {
					progress(tally.Cases, total)
				}
			}()
		}
		// One call site for every run: rapid compares the tracebacks of the
		// search and of the reproduction, so a second call site would make
		// every failure look flaky.
		s.Property(t, scratch)
		returned = true
	}
}

func merge(into, from *Tally) {
	into.Cases += from.Cases
	into.Steps += from.Steps
	for name, n := range from.Actions {
		into.Actions[name] += n
	}
	for id, n := range from.Checked {
		into.Checked[id] += n
	}
	for id, n := range from.Applied {
		into.Applied[id] += n
	}
	for id, n := range from.Breaches {
		into.Breaches[id] += n
	}
	for id, msg := range from.FirstBreach {
		if _, seen := into.FirstBreach[id]; !seen {
			into.FirstBreach[id] = msg
		}
	}
	for name, st := range from.Stats {
		s := into.Stats[name]
		if s == nil {
			s = &Stat{}
			into.Stats[name] = s
		}
		if st.Samples > 0 && (s.Samples == 0 || st.Max > s.Max) {
			s.Max = st.Max
		}
		s.Samples += st.Samples
		s.Sum += st.Sum
		s.Nonzero += st.Nonzero
	}
}

// recorder is the rapid.TB that Run hands to rapid.Check. rapid calls the
// outer TB only after its search: Errorf with the verdict, Logf with the
// shrunk case's output, and FailNow to stop the test. Run owns the goroutine,
// so FailNow and Fatal record the failure and return instead of exiting it.
type recorder struct {
	name   string
	failed bool
	errors []string
	logs   []string
	// outputFrom indexes the first log line of the shrunk case's output, which
	// rapid prints after its verdict; -1 until then.
	outputFrom int
}

var _ rapid.TB = (*recorder)(nil)

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return r.name }
func (r *recorder) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recorder) Log(args ...any) {
	r.logs = append(r.logs, strings.TrimSuffix(fmt.Sprintln(args...), "\n"))
}
func (r *recorder) Errorf(format string, args ...any) { r.error(fmt.Sprintf(format, args...)) }
func (r *recorder) Error(args ...any)                 { r.error(fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) { r.error(fmt.Sprintf(format, args...)) }
func (r *recorder) Fatal(args ...any)                 { r.error(fmt.Sprint(args...)) }

// Skips count as failures: a run that did not check anything must not pass.
func (r *recorder) Skipf(format string, args ...any) {
	r.error("skipped: " + fmt.Sprintf(format, args...))
}
func (r *recorder) Skip(args ...any) { r.error("skipped: " + fmt.Sprint(args...)) }
func (r *recorder) SkipNow()         { r.error("skipped") }
func (r *recorder) FailNow()         { r.failed = true }
func (r *recorder) Fail()            { r.failed = true }
func (r *recorder) Failed() bool     { return r.failed }

func (r *recorder) error(msg string) {
	r.failed = true
	r.errors = append(r.errors, msg)
	if r.outputFrom < 0 && strings.Contains(msg, "Failed test output:") {
		r.outputFrom = len(r.logs)
	}
}

var (
	// verdictRE matches rapid's report of a reproduced failure (engine.go, checkTB).
	verdictRE   = regexp.MustCompile(`(?s)^\[rapid\] (failed|panic) after \d+ tests: (.*?)\nTo reproduce, specify `)
	tracebackRE = regexp.MustCompile(`(?s)\nTraceback:\n(.*?)Failed test output:`)
	seedRE      = regexp.MustCompile(`-rapid\.seed=(\d+)`)
	failFileRE  = regexp.MustCompile(`-rapid\.failfile=("(?:[^"\\]|\\.)*")`)
	// stepLineRE matches a suite's step lines and the indented detail lines
	// an action logs under its step.
	stepLineRE = regexp.MustCompile(`^(step \d+: |  \S)`)
)

// noLongerFails reports whether the replay of a fail file ran every step
// the file recorded and passed the checks after each. rapid then calls the
// file "no longer valid": the case, no longer failing, asked for a step
// beyond the recorded draws. That is a fixed bug, not a file that no longer
// fits the suite, whose draws give out or are refused before its steps
// ran.
func noLongerFails(failFile string, tally *Tally) bool {
	c, err := ReadFailFile(failFile)
	return err == nil && c.Steps > 0 && tally.Steps >= c.Steps
}

// failFileIgnored returns rapid's note that it did not replay the fail file
// (engine.go, checkFailFile: a file it cannot load, another version, or
// draws the property no longer accepts), without the "[rapid] " prefix; empty
// when there is none.
func (r *recorder) failFileIgnored() string {
	for _, line := range r.logs {
		msg, ok := strings.CutPrefix(line, "[rapid] ")
		if ok && (strings.HasPrefix(msg, "ignoring fail file") || strings.HasSuffix(msg, "is no longer valid")) {
			return msg
		}
	}
	return ""
}

// failure turns rapid's verdict into a Failure attributed to an invariant.
func (r *recorder) failure(s Suite, steps int, replay func(seed uint64) string) *Failure {
	verdict := strings.Join(r.errors, "\n")
	f := &Failure{Invariant: "error", Message: verdict}
	if m := verdictRE.FindStringSubmatch(verdict); m != nil {
		f.Message = m[2]
		if m[1] == "panic" {
			f.Invariant = "panic"
			f.Message = "panic: " + m[2]
		} else if id, _, ok := strings.Cut(m[2], ": "); ok && s.declares(id) {
			f.Invariant = id
		}
	}
	if m := seedRE.FindStringSubmatch(verdict); m != nil {
		f.Seed, _ = strconv.ParseUint(m[1], 10, 64)
	}
	failFile := ""
	if m := failFileRE.FindStringSubmatch(verdict); m != nil {
		failFile, _ = strconv.Unquote(m[1])
	}
	if r.outputFrom >= 0 {
		for _, line := range r.logs[r.outputFrom:] {
			if stepLineRE.MatchString(line) {
				f.Steps = append(f.Steps, line)
			}
		}
	}
	f.Steps = append(f.Steps, f.Message)

	var goTest string
	switch {
	case replay != nil:
		if f.Seed != 0 {
			f.Replay = replay(f.Seed)
		}
	case f.Seed != 0:
		seed := strconv.FormatUint(f.Seed, 10)
		f.Replay = verify.CommandLine("nodeproof", "replay", "--suite", s.Name, "--seed", seed, "--steps", strconv.Itoa(steps))
		goTest = verify.CommandLine("go", "test", "./properties/suites", "-run", "TestSuites/"+regexp.QuoteMeta(s.Name)+"$", "-rapid.seed="+seed, "-rapid.steps="+strconv.Itoa(steps))
	case failFile != "":
		f.Replay = verify.CommandLine("nodeproof", "replay", "--suite", s.Name, "--failfile", failFile, "--steps", strconv.Itoa(steps))
		goTest = verify.CommandLine("go", "test", "./properties/suites", "-run", "TestSuites/"+regexp.QuoteMeta(s.Name)+"$", "-rapid.failfile="+failFile, "-rapid.steps="+strconv.Itoa(steps))
	}
	if explained(f.Invariant) {
		// go test ./properties/suites counts a known finding's breaches and goes
		// on, so only nodeproof replay, which enforces every contract
		// property, reproduces such a failure.
		goTest = ""
	}
	if m := tracebackRE.FindStringSubmatch(verdict); m != nil && f.Invariant == "panic" {
		f.Message += "\ntraceback:\n" + m[1]
	}
	switch {
	case f.Replay != "" && goTest != "":
		f.Message = strings.TrimSuffix(f.Message, "\n") + "\nreplay: " + f.Replay + "\n    or: " + goTest
	case f.Replay != "":
		f.Message = strings.TrimSuffix(f.Message, "\n") + "\nreplay: " + f.Replay
	}
	return f
}

func (s Suite) declares(id string) bool {
	for _, inv := range s.Invariants {
		if inv.ID == id {
			return true
		}
	}
	return false
}
