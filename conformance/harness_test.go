package conformance

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/cgroups"
)

// recorder is a rapid.TB that keeps what a failing check reports instead of
// failing the test that runs it.
type recorder struct {
	failed bool
	out    strings.Builder
}

func (r *recorder) Helper()                   {}
func (r *recorder) Name() string              { return "conformance-selftest" }
func (r *recorder) Logf(f string, a ...any)   { fmt.Fprintf(&r.out, f+"\n", a...) }
func (r *recorder) Log(a ...any)              { fmt.Fprintln(&r.out, a...) }
func (r *recorder) Skipf(f string, a ...any)  { r.Logf(f, a...) }
func (r *recorder) Skip(a ...any)             { r.Log(a...) }
func (r *recorder) SkipNow()                  {}
func (r *recorder) Errorf(f string, a ...any) { r.failed = true; r.Logf(f, a...) }
func (r *recorder) Error(a ...any)            { r.failed = true; r.Log(a...) }
func (r *recorder) Fatalf(f string, a ...any) { r.failed = true; r.Logf(f, a...) }
func (r *recorder) Fatal(a ...any)            { r.failed = true; r.Log(a...) }
func (r *recorder) FailNow()                  { r.failed = true }
func (r *recorder) Fail()                     { r.failed = true }
func (r *recorder) Failed() bool              { return r.failed }

// withoutFailFile keeps the self-tests' deliberate failures out of
// testdata/rapid, where rapid saves failing cases for replay.
func withoutFailFile(t *testing.T) {
	if err := flag.Set("rapid.nofailfile", "true"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set("rapid.nofailfile", "false") })
}

// TestHarnessReportsMismatch shows that Compare fails, with the shrunk
// input and both outputs, when "upstream" differs: here a MilliCPUToShares
// that forgets the MinShares clamp.
func TestHarnessReportsMismatch(t *testing.T) {
	withoutFailFile(t)
	const name = "selftest.wrongShares"
	defer forget(name)
	rec := &recorder{}
	res := Compare(rec, Comparison[int64, uint64]{
		Name: name,
		Gen:  rapid.Int64Range(0, 1<<20),
		Ours: cgroups.MilliCPUToShares,
		Theirs: func(m int64) uint64 {
			if m == 0 {
				return cgroups.MinShares
			}
			return uint64(m * 1024 / 1000) // no clamp: 1m gives 1, not 2
		},
	})
	if !rec.failed {
		t.Fatalf("a wrong function passed the comparison; output:\n%s", rec.out.String())
	}
	if res.Mismatches == 0 {
		t.Errorf("no mismatch counted: %+v", *res)
	}
	// The smallest input that differs is 1 millicore: shares 2 against 1.
	for _, want := range []string{"nodeproof and upstream differ", "input:     1\n", "nodeproof: 2\n", "upstream:  1\n"} {
		if !strings.Contains(rec.out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, rec.out.String())
		}
	}
}

// TestHarnessExcludesOnlyNamedDeviation shows that a mismatch a deviation
// recognises is counted under its ID and does not fail, while the same
// comparison with a predicate that misses the case, or with outputs the
// deviation is not confined to, fails.
func TestHarnessExcludesOnlyNamedDeviation(t *testing.T) {
	withoutFailFile(t)
	const name = "selftest.deviation"
	defer forget(name)
	wrongBelow10 := func(m int64) int64 {
		if m < 10 {
			return -m
		}
		return m
	}
	cmp := Comparison[int64, int64]{
		Name:       name,
		Gen:        rapid.Int64Range(0, 100),
		Ours:       func(m int64) int64 { return m },
		Theirs:     wrongBelow10,
		Deviations: []Deviation[int64, int64]{{ID: "X1", Applies: func(m int64) bool { return m >= 1 && m < 10 }}},
	}
	rec := &recorder{}
	res := Compare(rec, cmp)
	if rec.failed || res.Mismatches != 0 || res.Excluded == 0 || res.ByDev["X1"] != res.Excluded {
		t.Fatalf("excluded cases: failed=%v %+v\n%s", rec.failed, *res, rec.out.String())
	}
	cmp.Deviations[0].Applies = func(m int64) bool { return m >= 2 && m < 10 } // misses 1
	rec = &recorder{}
	if res := Compare(rec, cmp); !rec.failed || res.Mismatches == 0 {
		t.Fatalf("a mismatch outside the deviation passed: %+v\n%s", *res, rec.out.String())
	}
	// A deviation confined to outputs of at most 5 does not explain the
	// mismatches at 6 to 9, though it applies to their inputs.
	cmp.Deviations[0].Applies = func(m int64) bool { return m >= 1 && m < 10 }
	cmp.Deviations[0].Confined = func(ours, theirs int64) bool { return ours <= 5 }
	rec = &recorder{}
	if res := Compare(rec, cmp); !rec.failed || res.Mismatches == 0 {
		t.Fatalf("a mismatch the deviation is not confined to passed: %+v\n%s", *res, rec.out.String())
	}
}
