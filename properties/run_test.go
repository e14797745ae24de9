package properties

import (
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// counterSuite is a throwaway suite: a counter that goes up and down. When
// limit > 0 its invariant claims the counter stays below limit, which rapid
// refutes with `limit` increments. It is passed to Run directly and never
// registered, so TestSuites does not run it.
func counterSuite(limit int) Suite {
	const id = "TEST-BELOW-LIMIT"
	return Suite{
		Name:      "counter",
		Subsystem: "test",
		Invariants: []Invariant{
			{ID: id, Subsystem: "test", Statement: "The counter stays below the limit.", Source: "run_test.go"},
		},
		Property: func(t *rapid.T, tally *Tally) {
			n, step := 0, 0
			action := func(name string, delta int) func(*rapid.T) {
				return func(t *rapid.T) {
					if n+delta < 0 {
						t.Skip("the counter cannot go below zero")
					}
					step++
					t.Logf("step %d: %s", step, name)
					tally.Action(name)
					n += delta
					tally.Observe("counter after a step", float64(n))
				}
			}
			t.Repeat(map[string]func(*rapid.T){
				"inc": action("inc", 1),
				"dec": action("dec", -1),
				"": func(t *rapid.T) {
					tally.Check(id)
					if limit > 0 && n >= limit {
						t.Fatalf("%s: counter is %d, limit %d", id, n, limit)
					}
				},
			})
		},
	}
}

func TestRunPassing(t *testing.T) {
	checksBefore := flag.Lookup("rapid.checks").Value.String()
	var progress [][2]int
	res := Run(counterSuite(0), RunOptions{Checks: 40, Steps: 10, Progress: func(done, total int) {
		progress = append(progress, [2]int{done, total})
	}})

	if !res.Passed || res.Failure != nil {
		t.Fatalf("Passed = %v, Failure = %+v; want a pass", res.Passed, res.Failure)
	}
	if res.Seed == 0 {
		t.Error("Seed = 0; want the derived seed")
	}
	if res.Tally.Cases != 40 {
		t.Errorf("Tally.Cases = %d, want 40", res.Tally.Cases)
	}
	if res.Tally.Steps == 0 || res.Tally.Steps != res.Tally.Actions["inc"]+res.Tally.Actions["dec"] {
		t.Errorf("Tally.Steps = %d, Actions = %v; want the sum of the actions, more than 0", res.Tally.Steps, res.Tally.Actions)
	}
	// The check runs once before the first action and once after each.
	if got, want := res.Tally.Checked["TEST-BELOW-LIMIT"], res.Tally.Cases+res.Tally.Steps; got != want {
		t.Errorf("Checked = %d, want %d", got, want)
	}
	// Statistics from every case are merged: one sample per step.
	if st := res.Tally.Stats["counter after a step"]; st == nil || st.Samples != res.Tally.Steps || st.Max < 1 || st.Mean() > st.Max || st.Nonzero > st.Samples {
		t.Errorf("Stats = %+v; want one sample per step, max at least 1", st)
	}
	if len(progress) == 0 || progress[len(progress)-1] != [2]int{40, 40} {
		t.Errorf("progress calls = %v; want them to end with [40 40]", progress)
	}
	if got := flag.Lookup("rapid.checks").Value.String(); got != checksBefore {
		t.Errorf("-rapid.checks = %s after Run, want it restored to %s", got, checksBefore)
	}
}

func TestRunFailingReplays(t *testing.T) {
	s := counterSuite(3)
	res := Run(s, RunOptions{Checks: 100, Steps: 20, Seed: 12345})
	f := res.Failure
	if res.Passed || f == nil {
		t.Fatalf("Passed = %v, Failure = %v; want a failure", res.Passed, f)
	}
	if f.Invariant != "TEST-BELOW-LIMIT" {
		t.Errorf("Invariant = %q, want TEST-BELOW-LIMIT", f.Invariant)
	}
	// Shrinking leaves the three increments that reach the limit.
	wantSteps := []string{"step 1: inc", "step 2: inc", "step 3: inc", "TEST-BELOW-LIMIT: counter is 3, limit 3"}
	if !slices.Equal(f.Steps, wantSteps) {
		t.Errorf("Steps = %q, want %q", f.Steps, wantSteps)
	}
	if res.Seed != 12345 || f.Seed < 12345 {
		t.Errorf("Seed = %d, Failure.Seed = %d; want 12345 and a failing seed derived from it", res.Seed, f.Seed)
	}
	wantReplay := fmt.Sprintf("nodeproof replay --suite counter --seed %d --steps 20", f.Seed)
	if f.Replay != wantReplay {
		t.Errorf("Replay = %q, want %q", f.Replay, wantReplay)
	}
	wantGoTest := fmt.Sprintf("go test ./properties -run 'TestSuites/counter$' -rapid.seed=%d -rapid.steps=20", f.Seed)
	if !strings.HasPrefix(f.Message, "TEST-BELOW-LIMIT: ") || !strings.Contains(f.Message, wantGoTest) {
		t.Errorf("Message = %q; want the invariant ID first and %q", f.Message, wantGoTest)
	}
	if res.Tally.Cases == 0 || res.Tally.Cases > 100 {
		t.Errorf("Tally.Cases = %d; want the cases up to the failing one", res.Tally.Cases)
	}

	again := Run(s, RunOptions{Checks: 1, Steps: 20, Seed: f.Seed})
	if again.Passed || again.Failure == nil {
		t.Fatalf("replay with seed %d passed; want the same failure", f.Seed)
	}
	if again.Failure.Invariant != f.Invariant || !slices.Equal(again.Failure.Steps, f.Steps) || again.Failure.Seed != f.Seed {
		t.Errorf("replay failed with %+v; want %+v", again.Failure, f)
	}
	if again.Tally.Cases != 1 {
		t.Errorf("replay Tally.Cases = %d, want 1", again.Tally.Cases)
	}
}

func TestRunAttributesUndeclaredFailures(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		property   func(*rapid.T, *Tally)
	}{
		{"panic", "panic", func(*rapid.T, *Tally) { panic("boom") }},
		{"undeclared ID", "error", func(t *rapid.T, _ *Tally) { t.Fatalf("NOT-DECLARED: boom") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Suite{Name: "broken", Invariants: counterSuite(0).Invariants, Property: tc.property}
			res := Run(s, RunOptions{Checks: 5, Seed: 1})
			if res.Passed || res.Failure == nil {
				t.Fatal("Run passed; want a failure")
			}
			if res.Failure.Invariant != tc.want {
				t.Errorf("Invariant = %q, want %q (message %q)", res.Failure.Invariant, tc.want, res.Failure.Message)
			}
			if !strings.Contains(res.Failure.Message, "boom") || !strings.Contains(res.Failure.Replay, "--seed 1 ") {
				t.Errorf("Failure = %+v; want the message and a replay with seed 1", res.Failure)
			}
		})
	}
}

func TestRunReplaysFailFile(t *testing.T) {
	// Let rapid write a fail file, as `go test ./properties` does on a
	// failure, into a directory of the test's own.
	t.Chdir(t.TempDir())
	s := counterSuite(2)
	restore := setFlags(map[string]string{"rapid.nofailfile": "false", "rapid.seed": "5", "rapid.steps": "20"})
	rapid.Check(&recorder{name: "TestSuites/counter", outputFrom: -1}, func(rt *rapid.T) { s.Property(rt, NewTally()) })
	restore()
	files, err := filepath.Glob("testdata/rapid/*/*.fail")
	if err != nil || len(files) != 1 {
		t.Fatalf("fail files = %q, %v; want one", files, err)
	}

	res := Run(s, RunOptions{Checks: 1, Steps: 20, FailFile: files[0]})
	f := res.Failure
	if res.Passed || f == nil {
		t.Fatal("Run passed; want the fail file's failure")
	}
	if want := []string{"step 1: inc", "step 2: inc", "TEST-BELOW-LIMIT: counter is 2, limit 2"}; !slices.Equal(f.Steps, want) {
		t.Errorf("Steps = %q, want %q", f.Steps, want)
	}
	if f.Seed != 0 || f.Replay != "nodeproof replay --suite counter --failfile "+files[0]+" --steps 20" {
		t.Errorf("Seed = %d, Replay = %q; want the fail file to replay from", f.Seed, f.Replay)
	}
}

// TestRunFailFileOnly: a fail file is the one case Run replays. When rapid
// cannot replay it (here the suite changed: the limit moved, so the recorded
// draws end before the case does), Run says so and generates no other case,
// whose verdict would pass for the file's.
func TestRunFailFileOnly(t *testing.T) {
	t.Chdir(t.TempDir())
	restore := setFlags(map[string]string{"rapid.nofailfile": "false", "rapid.seed": "5", "rapid.steps": "20"})
	rapid.Check(&recorder{name: "TestSuites/counter", outputFrom: -1}, func(rt *rapid.T) { counterSuite(2).Property(rt, NewTally()) })
	restore()
	files, err := filepath.Glob("testdata/rapid/*/*.fail")
	require.NoError(t, err)
	require.Len(t, files, 1)

	for _, tc := range []struct {
		name    string
		limit   int
		ignored string
	}{
		{"the failure is gone and the draws end early", 0, "is no longer valid"},
		{"the failure comes sooner", 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, calls := counterSuite(tc.limit), 0
			property := s.Property
			s.Property = func(t *rapid.T, tally *Tally) { calls++; property(t, tally) }
			res := Run(s, RunOptions{Checks: 50, Steps: 20, FailFile: files[0]})
			if tc.ignored == "" {
				assert.Empty(t, res.FailFileIgnored)
				require.NotNil(t, res.Failure)
				assert.Equal(t, "TEST-BELOW-LIMIT", res.Failure.Invariant)
				return
			}
			assert.Contains(t, res.FailFileIgnored, tc.ignored)
			assert.Equal(t, 1, calls, "cases run: the fail file's alone, no new ones")
			assert.True(t, res.Passed)
		})
	}
}

func TestTallyObserve(t *testing.T) {
	tally := NewTally()
	for _, v := range []float64{0, 2, -1, 3, 0} {
		tally.Observe("x", v)
	}
	st := tally.Stats["x"]
	if st.Samples != 5 || st.Sum != 4 || st.Max != 3 || st.Nonzero != 3 || st.Mean() != 0.8 {
		t.Errorf("Stat = %+v, mean %v; want 5 samples, sum 4, max 3, 3 non-zero, mean 0.8", st, st.Mean())
	}
	neg := NewTally()
	neg.Observe("y", -2)
	if neg.Stats["y"].Max != -2 {
		t.Errorf("Max = %v; the first sample sets it even when negative", neg.Stats["y"].Max)
	}
	into := NewTally()
	merge(into, tally)
	merge(into, neg)
	if into.Stats["x"].Samples != 5 || into.Stats["y"].Max != -2 || (&Stat{}).Mean() != 0 {
		t.Errorf("merged = %+v %+v", into.Stats["x"], into.Stats["y"])
	}
}
