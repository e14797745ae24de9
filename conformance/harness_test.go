package conformance

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	setFlag(t, "rapid.nofailfile", "true")
}

// setFlag sets a command-line flag for the test and puts back the value it
// had, which the command line may have given (the release matrix runs with
// -rapid.checks and -rapid.nofailfile): a fixed value put back would undo
// it for every test after this one.
func setFlag(t *testing.T, name, value string) {
	t.Helper()
	f := flag.Lookup(name)
	require.NotNil(t, f, "no flag %s", name)
	old := f.Value.String()
	require.NoError(t, flag.Set(name, value))
	t.Cleanup(func() { _ = flag.Set(name, old) })
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
// comparison with a predicate that misses the case, or with an Explain that
// finds a difference the deviation cannot make, fails.
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
		Name:   name,
		Gen:    rapid.Int64Range(0, 100),
		Ours:   func(m int64) int64 { return m },
		Theirs: wrongBelow10,
		Deviations: []Deviation[int64, int64]{
			{ID: "X1", Applies: func(m int64) bool { return m >= 1 && m < 10 }},
			{ID: "X2", Applies: func(m int64) bool { return m > 1000 }},
		},
	}
	rec := &recorder{}
	res := Compare(rec, cmp)
	require.False(t, rec.failed, rec.out.String())
	assert.Zero(t, res.Mismatches)
	assert.Positive(t, res.Excluded)
	assert.Equal(t, map[string]int{"X1": res.Excluded, "X2": 0}, res.ExcludedBy, "every listed deviation is counted, 0 included")

	cmp.Deviations[0].Applies = func(m int64) bool { return m >= 2 && m < 10 } // misses 1
	rec = &recorder{}
	res = Compare(rec, cmp)
	assert.True(t, rec.failed, "a mismatch outside the deviation passed: %+v\n%s", *res, rec.out.String())
	assert.Positive(t, res.Mismatches)
	assert.Contains(t, rec.out.String(), "why:       no listed deviation applies to the input")

	// A deviation confined to outputs of at most 5 does not explain the
	// mismatches at 6 to 9, though it applies to their inputs.
	cmp.Deviations[0].Applies = func(m int64) bool { return m >= 1 && m < 10 }
	cmp.Explain = func(m, ours, theirs int64) ([]string, error) {
		if ours > 5 {
			return nil, fmt.Errorf("X1 leaves outputs above 5 alone, got %d against %d", ours, theirs)
		}
		return []string{"X1"}, nil
	}
	rec = &recorder{}
	res = Compare(rec, cmp)
	assert.True(t, rec.failed, "a mismatch the deviation is not confined to passed: %+v\n%s", *res, rec.out.String())
	assert.Contains(t, rec.out.String(), "X1 leaves outputs above 5 alone, got 6 against -6")

	// Explain may name only deviations that apply to the input.
	cmp.Explain = func(int64, int64, int64) ([]string, error) { return []string{"X2"}, nil }
	rec = &recorder{}
	Compare(rec, cmp)
	assert.True(t, rec.failed, "a deviation that does not apply excused a mismatch:\n%s", rec.out.String())
	assert.Contains(t, rec.out.String(), "Explain named X2, which does not apply to the input")
}
