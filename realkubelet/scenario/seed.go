package scenario

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/realkubelet"
	"github.com/nodeproof/nodeproof/realkubelet/sweep"
)

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
func PlaySeed(ctx context.Context, seed uint64, maxSteps int, opts realkubelet.Options, tally *Tally) *sweep.Violation {
	// rapid asks testing.Short, which panics before testing.Init and
	// before the command line's flags are parsed: both done already in a
	// test binary, neither in nodeproof, whose flags are cobra's.
	testing.Init()
	if !flag.Parsed() {
		_ = flag.CommandLine.Parse(nil)
	}
	restore := setFlags(map[string]string{"rapid.seed": strconv.FormatUint(seed, 10), "rapid.checks": "1", "rapid.nofailfile": "true"})
	defer restore()
	r := &recorder{}
	rapid.Check(r, func(t *rapid.T) { play(ctx, t, opts, maxSteps, tally) })
	if !r.failed {
		return nil
	}
	return &sweep.Violation{Seed: seed, Report: strings.TrimSpace(r.report.String()), Replay: Replay(seed, maxSteps), TestReplay: TestReplay(seed, maxSteps)}
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

// Sweep summarises the tally of the seeds first..last.
func (t *Tally) Sweep(first, last uint64, maxSteps int, violations []sweep.Violation, took time.Duration) sweep.Summary {
	s := sweep.Summary{FirstSeed: first, LastSeed: last, MaxSteps: maxSteps, Scenarios: t.Scenarios, Steps: len(t.Steps),
		Kinds: map[string]int{}, Checks: []sweep.Check{}, Known: []sweep.Known{}, Violations: violations,
		StepMedianSeconds: percentile(t.Steps, 50).Seconds(), StepP95Seconds: percentile(t.Steps, 95).Seconds(),
		RestartMedianSeconds: percentile(t.Restarts, 50).Seconds(), RestartP95Seconds: percentile(t.Restarts, 95).Seconds(),
		Seconds: took.Round(time.Millisecond).Seconds(), NotCovered: []string{sweep.ImageGCNotCovered},
		Divergences: maps.Clone(t.Divergences), Diverged: slices.Clone(t.Diverged)}
	if s.Violations == nil {
		s.Violations = []sweep.Violation{}
	}
	if s.Divergences == nil {
		s.Divergences = map[string]int{}
	}
	if s.Diverged == nil {
		s.Diverged = []string{}
	}
	s.Passed = len(violations) == 0 && s.FidelityBugs() == 0
	for k, n := range t.Kinds {
		s.Kinds[string(k)] = n
	}
	for _, c := range append(slices.Clone(Checks), Predicts) {
		n := t.Counts[c.ID]
		s.Checks = append(s.Checks, sweep.Check{ID: c.ID, Checked: n.Checked, Applied: n.Applied})
	}
	for _, id := range sortedKeys(t.Explained) {
		s.Known = append(s.Known, sweep.Known{ID: id, Breaches: t.Explained[id], Shortest: t.Shortest[id]})
	}
	return s
}
