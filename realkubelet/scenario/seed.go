package scenario

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/realkubelet"
)

// ImageGCNotCovered says what of image garbage collection the scenarios do
// not put to the test, for every summary of a sweep to repeat.
const ImageGCNotCovered = "the kubelet's image garbage collection: it runs every 5 minutes, a period fixed in the kubelet " +
	"(no configuration field or flag sets it), and a scenario lasts seconds, so the kubelet never collects an image in one; " +
	"nodeproof's image GC is tested against the same private containerd instead (agent/containerd, nodeproof imagegc)"

// Violation is a scenario that broke a property: its seed, rapid's report
// (the message and the shrunk steps), and the two lines that replay it.
type Violation struct {
	Seed       uint64 `json:"seed"`
	Report     string `json:"report"`
	Replay     string `json:"replay"`
	TestReplay string `json:"test_replay"`
}

// Replay is the nodeproof command line that plays seed's scenario again.
func Replay(seed uint64, maxSteps int) string {
	return fmt.Sprintf("nodeproof node --seed %d --steps %d", seed, maxSteps)
}

// TestReplay is the go test command line that plays seed's scenario again:
// TestScenarios, one check, from the same seed and with the same bound on
// steps, draws the same steps.
func TestReplay(seed uint64, maxSteps int) string {
	return fmt.Sprintf("sudo NODEPROOF_SCENARIO_STEPS=%d go test -tags nodee2e ./realkubelet/scenario/ -run '^TestScenarios$' -rapid.checks=1 -rapid.seed=%d", maxSteps, seed)
}

// PlaySeed plays the scenario rapid draws from seed (not 0, which rapid
// takes for "random"), on a node started with opts, as TestScenarios does
// given the flags of TestReplay; a violation is shrunk, as there, and
// returned, nil when every property held. ctx ends the scenario early, as a
// failure; its node is stopped either way.
//
// rapid reads its seed and number of checks from its command-line flags
// only, so PlaySeed sets them for the call and puts them back after it; it
// is not safe to call from more than one goroutine.
func PlaySeed(ctx context.Context, seed uint64, maxSteps int, opts realkubelet.Options, tally *Tally) *Violation {
	// rapid asks testing.Short, which panics before testing.Init (a no-op
	// in a test binary).
	testing.Init()
	restore := setFlags(map[string]string{"rapid.seed": strconv.FormatUint(seed, 10), "rapid.checks": "1", "rapid.nofailfile": "true"})
	defer restore()
	r := &recorder{}
	rapid.Check(r, func(t *rapid.T) { play(ctx, t, opts, maxSteps, tally) })
	if !r.failed {
		return nil
	}
	return &Violation{Seed: seed, Report: strings.TrimSpace(r.report.String()), Replay: Replay(seed, maxSteps), TestReplay: TestReplay(seed, maxSteps)}
}

// setFlags sets the flags of flag.CommandLine named in values and returns
// the function that sets them back.
func setFlags(values map[string]string) (restore func()) {
	old := map[string]string{}
	for name, v := range values {
		f := flag.Lookup(name)
		old[name] = f.Value.String()
		// The values are rapid's own types' (uint64, int, bool), written
		// by strconv: they parse.
		_ = f.Value.Set(v)
	}
	return func() {
		for name, v := range old {
			_ = flag.Lookup(name).Value.Set(v)
		}
	}
}

// recorder is the rapid.TB of PlaySeed: rapid reports a failure on it,
// then plays the shrunk scenario once more, logging its steps and its
// message; the recorder keeps all of that as the violation's report.
type recorder struct {
	failed bool
	report strings.Builder
}

// Name is the test the replay line names: rapid says "-run=TestScenarios".
func (r *recorder) Name() string { return "TestScenarios" }
func (r *recorder) Helper()      {}
func (r *recorder) Logf(format string, args ...any) {
	if r.failed {
		fmt.Fprintf(&r.report, format+"\n", args...)
	}
}
func (r *recorder) Log(args ...any) { r.Logf("%s", fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.Logf(format, args...)
}
func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
}
func (r *recorder) Fatal(args ...any) { r.Error(args...) }

// FailNow is rapid's last word on a failure already recorded; nothing is
// left to stop.
func (r *recorder) FailNow()     { r.failed = true }
func (r *recorder) Fail()        { r.failed = true }
func (r *recorder) Failed() bool { return r.failed }

// The scenarios never skip: a skip is a failure.
func (r *recorder) Skipf(format string, args ...any) { r.Errorf("skipped: "+format, args...) }
func (r *recorder) Skip(args ...any)                 { r.Error(append([]any{"skipped: "}, args...)...) }
func (r *recorder) SkipNow()                         { r.Error("skipped") }

// CheckCount is one property's counts over a sweep.
type CheckCount struct {
	ID      string `json:"id"`
	Checked int    `json:"checked"`
	Applied int    `json:"applied"`
}

// Known is what a sweep saw of one known kubelet bug: the breaches it
// explained, counted apart from violations, and the shortest scenario that
// showed it.
type Known struct {
	ID       string `json:"id"`
	Breaches int    `json:"breaches"`
	Shortest string `json:"shortest"`
}

// Sweep is a sweep's summary, as nodeproof node --json writes it and
// nodeproof report reads it (report/node.json).
type Sweep struct {
	FirstSeed uint64 `json:"first_seed"`
	LastSeed  uint64 `json:"last_seed"`
	MaxSteps  int    `json:"max_steps"`
	// Scenarios counts the scenarios played, shrinking's included; Steps
	// the steps, and Kinds the steps by kind.
	Scenarios  int            `json:"scenarios"`
	Steps      int            `json:"steps"`
	Kinds      map[string]int `json:"kinds"`
	Checks     []CheckCount   `json:"checks"`
	Known      []Known        `json:"known"`
	Violations []Violation    `json:"violations"`
	// The time of a step (action, settling and every observation) and of a
	// kill -9 restart cycle, in seconds, and of the whole sweep.
	StepMedianSeconds    float64 `json:"step_median_seconds"`
	StepP95Seconds       float64 `json:"step_p95_seconds"`
	RestartMedianSeconds float64 `json:"restart_median_seconds"`
	RestartP95Seconds    float64 `json:"restart_p95_seconds"`
	Seconds              float64 `json:"seconds"`
	// NotCovered says what of the node the scenarios do not test.
	NotCovered []string `json:"not_covered"`
	Passed     bool     `json:"passed"`
}

// Sweep summarises the tally of the seeds first..last.
func (t *Tally) Sweep(first, last uint64, maxSteps int, violations []Violation, took time.Duration) Sweep {
	s := Sweep{FirstSeed: first, LastSeed: last, MaxSteps: maxSteps, Scenarios: t.Scenarios, Steps: len(t.Steps),
		Kinds: map[string]int{}, Checks: []CheckCount{}, Known: []Known{}, Violations: violations,
		StepMedianSeconds: percentile(t.Steps, 50).Seconds(), StepP95Seconds: percentile(t.Steps, 95).Seconds(),
		RestartMedianSeconds: percentile(t.Restarts, 50).Seconds(), RestartP95Seconds: percentile(t.Restarts, 95).Seconds(),
		Seconds: took.Round(time.Millisecond).Seconds(), NotCovered: []string{ImageGCNotCovered}, Passed: len(violations) == 0}
	if s.Violations == nil {
		s.Violations = []Violation{}
	}
	for k, n := range t.Kinds {
		s.Kinds[string(k)] = n
	}
	for _, c := range Checks {
		n := t.Counts[c.ID]
		s.Checks = append(s.Checks, CheckCount{ID: c.ID, Checked: n.Checked, Applied: n.Applied})
	}
	for _, id := range sortedKeys(t.Explained) {
		s.Known = append(s.Known, Known{ID: id, Breaches: t.Explained[id], Shortest: t.Shortest[id]})
	}
	return s
}
