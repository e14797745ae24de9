package speed

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// at builds a run's output, one line per second from the first.
func at(texts ...string) []Line {
	lines := make([]Line, len(texts))
	for i, t := range texts {
		lines[i] = Line{At: time.Duration(i) * time.Second, Text: t}
	}
	return lines
}

func TestParseTakesOffTheBaselineCoverage(t *testing.T) {
	s, err := parse(at(
		"fuzz: elapsed: 0s, gathering baseline coverage: 0/81 completed",
		"fuzz: elapsed: 1s, gathering baseline coverage: 81/81 completed, now fuzzing with 1 workers",
		"fuzz: elapsed: 3s, execs: 30081 (10000/sec), new interesting: 3 (total: 84)",
		"fuzz: elapsed: 4s, execs: 40081 (10000/sec), new interesting: 5 (total: 86)",
		"PASS",
	))
	require.NoError(t, err)
	assert.Equal(t, Result{Execs: 40000, Fuzzing: 2 * time.Second, NewInteresting: 5, WarmupExecs: 81}, s)
	assert.InDelta(t, 20000, s.PerSecond(), 0.001)
}

func TestParseOfAnEmptyCorpusStartsAtTheFirstProgressLine(t *testing.T) {
	s, err := parse(at(
		"warning: starting with empty corpus",
		"fuzz: elapsed: 0s, execs: 0 (0/sec), new interesting: 0 (total: 0)",
		"fuzz: elapsed: 3s, execs: 170657 (56880/sec), new interesting: 1 (total: 1)",
		"fuzz: elapsed: 4s, execs: 229898 (61425/sec), new interesting: 1 (total: 1)",
	))
	require.NoError(t, err)
	assert.Equal(t, Result{Execs: 229898, Fuzzing: 2 * time.Second, NewInteresting: 1}, s)
}

func TestParseRefusesARunThatNeverFuzzed(t *testing.T) {
	_, err := parse(at(
		"fuzz: elapsed: 0s, gathering baseline coverage: 0/81 completed",
		"fuzz: elapsed: 3s, gathering baseline coverage: 40/81 completed",
	))
	assert.EqualError(t, err, `no "now fuzzing" line: the run did not get past the baseline coverage`)
	_, err = parse(at("fuzz: elapsed: 1s, gathering baseline coverage: 81/81 completed, now fuzzing with 1 workers"))
	assert.EqualError(t, err, `no "execs: N (X/sec)" line after the baseline coverage`)
}

func TestPlanPutsBothCeilingsAroundEachTargetAndSharesTheLeanOneBetweenTargetsOfOneType(t *testing.T) {
	runs, targetAt := plan([]Target{
		{"./fuzz/a", "FuzzA", "FuzzEmptyBytes"},
		{"./fuzz/b", "FuzzB", "FuzzEmptyBytes"},
		{"./fuzz/c", "FuzzC", "FuzzEmptyThreeStrings"},
	})
	leanBytes := Run{CeilingPackage, "FuzzEmptyBytes", ceilingTag}
	leanStrings := Run{CeilingPackage, "FuzzEmptyThreeStrings", ceilingTag}
	sameA := Run{"./fuzz/a", "FuzzEmptyBytes", ceilingTag}
	sameB := Run{"./fuzz/b", "FuzzEmptyBytes", ceilingTag}
	sameC := Run{"./fuzz/c", "FuzzEmptyThreeStrings", ceilingTag}
	assert.Equal(t, []Run{
		leanBytes, sameA, {"./fuzz/a", "FuzzA", ceilingTag}, sameA, leanBytes,
		sameB, {"./fuzz/b", "FuzzB", ceilingTag}, sameB, leanBytes,
		leanStrings, sameC, {"./fuzz/c", "FuzzC", ceilingTag}, sameC, leanStrings,
	}, runs)
	assert.Equal(t, []placed{
		{Target: 2, LeanBefore: 0, LeanAfter: 4, SameBefore: 1, SameAfter: 3},
		{Target: 6, LeanBefore: 4, LeanAfter: 8, SameBefore: 5, SameAfter: 7},
		{Target: 11, LeanBefore: 9, LeanAfter: 13, SameBefore: 10, SameAfter: 12},
	}, targetAt)
}

func TestDeadlineRaceIsMeasuredAndACrashIsNot(t *testing.T) {
	race := at("fuzz: elapsed: 4s, execs: 178648 (50042/sec), new interesting: 1 (total: 1)",
		"--- FAIL: FuzzEmptyBytes (4.09s)", "    context deadline exceeded", "FAIL")
	assert.True(t, deadlineRace(race, "FuzzEmptyBytes"))
	crash := at("--- FAIL: FuzzX (4.09s)", "    context deadline exceeded",
		"    Failing input written to testdata/fuzz/FuzzX/0123", "FAIL")
	assert.False(t, deadlineRace(crash, "FuzzX"))
	assert.False(t, deadlineRace(at("--- FAIL: FuzzX (0.1s)", "    x_test.go:9: boom"), "FuzzX"))
}

// TestCountersOfTheCeiling builds the real empty target for fuzzing (from
// this package's directory) and reads its counters: the ELF section the
// engine scans must be found, and it holds at least the testing package's.
func TestCountersOfTheCeiling(t *testing.T) {
	n, err := GoCounters(context.Background(), "go", Run{Package: "../../fuzz/ceiling", Name: "FuzzEmptyBytes", Tags: ceilingTag})
	require.NoError(t, err)
	assert.Greater(t, n, 1000, "coverage counters of the empty target")
}

// harness is what TestEveryTargetHasBothCeilings compares of a fuzz target.
type harness struct {
	// Args are the harness's argument types after *testing.T.
	Args string
	// Tagged is whether its file builds only with ceilingTag.
	Tagged bool
}

// TestEveryTargetHasBothCeilings reads the tree: every decoder target's
// ceiling is an empty target of the target's argument types both in
// fuzz/ceiling and in the target's own package, and both build only with
// ceilingTag, so that `make fuzz` and OSS-Fuzz never run them.
func TestEveryTargetHasBothCeilings(t *testing.T) {
	root := "../.."
	lean := fuzzHarnesses(t, filepath.Join(root, CeilingPackage))
	for _, target := range DecoderTargets {
		own := fuzzHarnesses(t, filepath.Join(root, target.Package))
		require.Contains(t, own, target.Name, target.Package)
		assert.False(t, own[target.Name].Tagged, "%s is built without the %s tag", target.Name, ceilingTag)
		want := harness{Args: own[target.Name].Args, Tagged: true}
		assert.Equal(t, want, lean[target.Ceiling], "%s's lean ceiling %s in %s", target.Name, target.Ceiling, CeilingPackage)
		assert.Equal(t, want, own[target.Ceiling], "%s's same-binary ceiling %s in %s", target.Name, target.Ceiling, target.Package)
	}
}

// fuzzHarnesses parses the test files of the package in dir and returns,
// for each fuzz target, its harness's argument types after *testing.T
// ("[]byte, bool, bool") and whether its file builds only with ceilingTag.
func fuzzHarnesses(t *testing.T, dir string) map[string]harness {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	require.NoError(t, err)
	found := map[string]harness{}
	for _, path := range files {
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		require.NoError(t, err)
		tagged := false
		for _, group := range file.Comments {
			for _, c := range group.List {
				tagged = tagged || (c.Pos() < file.Package && c.Text == "//go:build "+ceilingTag)
			}
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || !strings.HasPrefix(fn.Name.Name, "Fuzz") {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, isSel := call.Fun.(*ast.SelectorExpr)
				lit, isLit := func() (*ast.FuncLit, bool) {
					if len(call.Args) != 1 {
						return nil, false
					}
					l, ok := call.Args[0].(*ast.FuncLit)
					return l, ok
				}()
				if !isSel || sel.Sel.Name != "Fuzz" || !isLit {
					return true
				}
				var args []string
				for _, field := range lit.Type.Params.List[1:] {
					for range max(len(field.Names), 1) {
						args = append(args, types.ExprString(field.Type))
					}
				}
				found[fn.Name.Name] = harness{Args: strings.Join(args, ", "), Tagged: tagged}
				return false
			})
		}
	}
	return found
}
