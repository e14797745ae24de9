package main

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// at builds a run's output, one line per second from the first.
func at(texts ...string) []line {
	lines := make([]line, len(texts))
	for i, t := range texts {
		lines[i] = line{At: time.Duration(i) * time.Second, Text: t}
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
	assert.Equal(t, speed{Execs: 40000, Fuzzing: 2 * time.Second, NewInteresting: 5, WarmupExecs: 81}, s)
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
	assert.Equal(t, speed{Execs: 229898, Fuzzing: 2 * time.Second, NewInteresting: 1}, s)
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
	runs, targetAt := plan([]target{
		{"./fuzz/a", "FuzzA", "FuzzEmptyBytes"},
		{"./fuzz/b", "FuzzB", "FuzzEmptyBytes"},
		{"./fuzz/c", "FuzzC", "FuzzEmptyThreeStrings"},
	})
	leanBytes := run{ceilingPackage, "FuzzEmptyBytes", ceilingTag}
	leanStrings := run{ceilingPackage, "FuzzEmptyThreeStrings", ceilingTag}
	sameA := run{"./fuzz/a", "FuzzEmptyBytes", ceilingTag}
	sameB := run{"./fuzz/b", "FuzzEmptyBytes", ceilingTag}
	sameC := run{"./fuzz/c", "FuzzEmptyThreeStrings", ceilingTag}
	assert.Equal(t, []run{
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

// fakeTools answer each run with a rate: lean ceilings (fuzz/ceiling) at
// leanRate, rising by 2000 a run as load drifts; the targets at their entry
// in rates; the same-binary ceilings at sameRate, rising by 1000 a run.
// Every run uses one CPU second per second. Every lean ceiling's counters
// are 5000 bytes, every other binary's 10000.
func fakeTools(leanRate, sameRate int, rates map[string]int, calls *[]run) tools {
	counters := func(_ context.Context, _ string, r run) (int, error) {
		if r.Package == ceilingPackage {
			return 5000, nil
		}
		return 10000, nil
	}
	return tools{counters: counters, fuzz: func(_ context.Context, _ string, r run, d time.Duration) ([]line, time.Duration, error) {
		*calls = append(*calls, r)
		rate, isTarget := rates[r.Name]
		switch {
		case r.Package == ceilingPackage:
			rate = leanRate
			leanRate += 2000
		case !isTarget:
			rate = sameRate
			sameRate += 1000
		}
		return []line{
			{At: time.Second, Text: "fuzz: elapsed: 1s, gathering baseline coverage: 10/10 completed, now fuzzing with 1 workers"},
			{At: 3 * time.Second, Text: "fuzz: elapsed: 3s, execs: 100 (50/sec), new interesting: 0 (total: 10)"},
			{At: time.Second + d, Text: "fuzz: elapsed: 10s, execs: " + strconv.Itoa(10+rate*int(d/time.Second)) + " (1/sec), new interesting: 2 (total: 12)"},
		}, d, nil
	}}
}

func TestCommandPrintsEachTargetAgainstBothCeilingsAroundIt(t *testing.T) {
	var calls []run
	var stdout, stderr bytes.Buffer
	status := runCommand([]string{"--run", "Checkpoint|AllocResp", "--time", "2s"}, &stdout, &stderr,
		fakeTools(40000, 30000, map[string]int{"FuzzCheckpointDecode": 24000, "FuzzAllocRespUnmarshal": 21000}, &calls))
	require.Equal(t, 0, status, stderr.String())
	assert.Equal(t, []run{
		{"./fuzz/ceiling", "FuzzEmptyBytes", "fuzzceiling"},
		{"./fuzz/checkpointdecode", "FuzzEmptyBytes", "fuzzceiling"},
		{"./fuzz/checkpointdecode", "FuzzCheckpointDecode", "fuzzceiling"},
		{"./fuzz/checkpointdecode", "FuzzEmptyBytes", "fuzzceiling"},
		{"./fuzz/ceiling", "FuzzEmptyBytes", "fuzzceiling"},
		{"./fuzz/allocresp", "FuzzEmptyBytes", "fuzzceiling"},
		{"./fuzz/allocresp", "FuzzAllocRespUnmarshal", "fuzzceiling"},
		{"./fuzz/allocresp", "FuzzEmptyBytes", "fuzzceiling"},
		{"./fuzz/ceiling", "FuzzEmptyBytes", "fuzzceiling"},
	}, calls)
	table := stdout.String()[strings.Index(stdout.String(), "| target"):]
	// Per CPU second the 10 executions of the baseline count too:
	// 48010 / 2 s against (80010 / 2 s + 84010 / 2 s) / 2 and against
	// (60010 / 2 s + 62010 / 2 s) / 2.
	assert.Equal(t, "| target | exec/s | lean ceiling exec/s (before, after) | ratio to lean | per CPU second | "+
		"same-binary ceiling exec/s (before, after) | ratio to same-binary | per CPU second | coverage counters, target / lean ceiling |\n"+
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"+
		"| `FuzzCheckpointDecode` (fuzz/checkpointdecode) | 24000 | 41000 (40000, 42000) | 58.5 % | 58.5 % | 30500 (30000, 31000) | 78.7 % | 78.7 % | 10000 / 5000 B (×2.0) |\n"+
		"| `FuzzAllocRespUnmarshal` (fuzz/allocresp) | 21000 | 43000 (42000, 44000) | 48.8 % | 48.8 % | 32500 (32000, 33000) | 64.6 % | 64.6 % | 10000 / 5000 B (×2.0) |\n", table)
	assert.Contains(t, stdout.String(), "9 runs of 2s each (go test -fuzz -parallel 1 -fuzzminimizetime 0); load average ")
}

// TestARowNeedsAllFiveRuns drops a target's row when one of its ceiling
// runs failed, since a ratio against one side alone would not cancel drift.
func TestARowNeedsAllFiveRuns(t *testing.T) {
	var calls []run
	fake := fakeTools(40000, 30000, map[string]int{"FuzzRegisterRequest": 10000}, &calls)
	measured := fake.fuzz
	fake.fuzz = func(ctx context.Context, goCmd string, r run, d time.Duration) ([]line, time.Duration, error) {
		lines, cpu, err := measured(ctx, goCmd, r, d)
		if len(calls) == 4 { // the same-binary ceiling after the target
			return at("--- FAIL: FuzzEmptyThreeStrings (0.1s)", "    x_test.go:9: boom"), cpu, assert.AnError
		}
		return lines, cpu, err
	}
	var stdout, stderr bytes.Buffer
	status := runCommand([]string{"--run", "Register", "--time", "1s"}, &stdout, &stderr, fake)
	assert.Equal(t, 1, status)
	assert.Contains(t, stderr.String(), "run 4/5 ./fuzz/registration FuzzEmptyThreeStrings: "+assert.AnError.Error())
	assert.NotContains(t, stdout.String(), "| `FuzzRegisterRequest`")
}

func TestCommandRefusesBadFlags(t *testing.T) {
	for args, want := range map[string]string{
		"--time 500ms": "fuzzspeed: --time 500ms: must be at least 1s, the engine's clock reports whole seconds of warm-up\n",
		"--run (":      "fuzzspeed: --run \"(\": not a regular expression: error parsing regexp: missing closing ): `(`\n",
		"--run NoSuch": "fuzzspeed: --run \"NoSuch\": matches none of the decoder targets\n",
	} {
		var calls []run
		var stdout, stderr bytes.Buffer
		status := runCommand(strings.Fields(args), &stdout, &stderr, fakeTools(1, 1, nil, &calls))
		assert.Equal(t, 2, status, args)
		assert.Equal(t, want, stderr.String(), args)
		assert.Empty(t, calls, args)
	}
}

func TestAFailedRunFailsTheCommandAndDropsItsRow(t *testing.T) {
	var stdout, stderr bytes.Buffer
	status := runCommand([]string{"--run", "Checkpoint", "--time", "1s"}, &stdout, &stderr, tools{
		fuzz: func(context.Context, string, run, time.Duration) ([]line, time.Duration, error) {
			return at("--- FAIL: FuzzCheckpointDecode (0.1s)", "    x_test.go:9: boom"), time.Second, assert.AnError
		},
		counters: func(context.Context, string, run) (int, error) { return 1, nil },
	})
	assert.Equal(t, 1, status)
	assert.Contains(t, stderr.String(), "run 3/5 ./fuzz/checkpointdecode FuzzCheckpointDecode: "+assert.AnError.Error()+"\n  --- FAIL")
	assert.NotContains(t, stdout.String(), "| `FuzzCheckpointDecode`")
}

// TestCountersOfTheCeiling builds the real empty target for fuzzing (from
// this package's directory) and reads its counters: the ELF section the
// engine scans must be found, and it holds at least the testing package's.
func TestCountersOfTheCeiling(t *testing.T) {
	n, err := goCounters(context.Background(), "go", run{Package: "../../fuzz/ceiling", Name: "FuzzEmptyBytes", Tags: ceilingTag})
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
	lean := fuzzHarnesses(t, filepath.Join(root, ceilingPackage))
	for _, target := range decoderTargets {
		own := fuzzHarnesses(t, filepath.Join(root, target.Package))
		require.Contains(t, own, target.Name, target.Package)
		assert.False(t, own[target.Name].Tagged, "%s is built without the %s tag", target.Name, ceilingTag)
		want := harness{Args: own[target.Name].Args, Tagged: true}
		assert.Equal(t, want, lean[target.Ceiling], "%s's lean ceiling %s in %s", target.Name, target.Ceiling, ceilingPackage)
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
