package main

import (
	"bytes"
	"context"
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

func TestPlanInterleavesCeilingsAndSharesThemBetweenTargetsOfOneType(t *testing.T) {
	runs, targetAt := plan([]target{
		{"./fuzz/a", "FuzzA", "FuzzEmptyBytes"},
		{"./fuzz/b", "FuzzB", "FuzzEmptyBytes"},
		{"./fuzz/c", "FuzzC", "FuzzEmptyThreeStrings"},
	})
	bytesCeiling := run{ceilingPackage, "FuzzEmptyBytes", ceilingTag}
	stringsCeiling := run{ceilingPackage, "FuzzEmptyThreeStrings", ceilingTag}
	assert.Equal(t, []run{
		bytesCeiling, {"./fuzz/a", "FuzzA", ""}, bytesCeiling, {"./fuzz/b", "FuzzB", ""}, bytesCeiling,
		stringsCeiling, {"./fuzz/c", "FuzzC", ""}, stringsCeiling,
	}, runs)
	assert.Equal(t, []int{1, 3, 6}, targetAt)
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

// fakeTools answer each run with a rate, ceilings at ceilingRate and the
// targets at their entry in rates, using one CPU second per second, and
// size every ceiling's counters at 5000 bytes and every target's at 10000.
func fakeTools(ceilingRate int, rates map[string]int, calls *[]run) tools {
	counters := func(_ context.Context, _ string, r run) (int, error) {
		if r.Tags == ceilingTag {
			return 5000, nil
		}
		return 10000, nil
	}
	return tools{counters: counters, fuzz: func(_ context.Context, _ string, r run, d time.Duration) ([]line, time.Duration, error) {
		*calls = append(*calls, r)
		rate := rates[r.Name]
		if r.Tags == ceilingTag {
			rate = ceilingRate
			ceilingRate += 2000 // load drifts during the measurement
		}
		return []line{
			{At: time.Second, Text: "fuzz: elapsed: 1s, gathering baseline coverage: 10/10 completed, now fuzzing with 1 workers"},
			{At: 3 * time.Second, Text: "fuzz: elapsed: 3s, execs: 100 (50/sec), new interesting: 0 (total: 10)"},
			{At: time.Second + d, Text: "fuzz: elapsed: 10s, execs: " + strconv.Itoa(10+rate*int(d/time.Second)) + " (1/sec), new interesting: 2 (total: 12)"},
		}, d, nil
	}}
}

func TestCommandPrintsEachTargetAgainstTheCeilingAroundIt(t *testing.T) {
	var calls []run
	var stdout, stderr bytes.Buffer
	status := runCommand([]string{"--run", "Checkpoint|AllocResp", "--time", "2s"}, &stdout, &stderr,
		fakeTools(40000, map[string]int{"FuzzCheckpointDecode": 34000, "FuzzAllocRespUnmarshal": 21000}, &calls))
	require.Equal(t, 0, status, stderr.String())
	assert.Len(t, calls, 5)
	table := stdout.String()[strings.Index(stdout.String(), "| target"):]
	// Per CPU second the 10 executions of the baseline count too:
	// 68010 / 2 s against (80010 / 2 s + 84010 / 2 s) / 2.
	assert.Equal(t, "| target | exec/s | ceiling exec/s (before, after) | ratio | ratio per CPU second | coverage counters, target / ceiling |\n"+
		"|---|---:|---:|---:|---:|---:|\n"+
		"| `FuzzCheckpointDecode` (fuzz/checkpointdecode) | 34000 | 41000 (40000, 42000) `FuzzEmptyBytes` | 82.9 % | 82.9 % | 10000 / 5000 B (×2.0) |\n"+
		"| `FuzzAllocRespUnmarshal` (fuzz/allocresp) | 21000 | 43000 (42000, 44000) `FuzzEmptyBytes` | 48.8 % | 48.8 % | 10000 / 5000 B (×2.0) |\n", table)
	assert.Contains(t, stdout.String(), "5 runs of 2s each (go test -fuzz -parallel 1 -fuzzminimizetime 0); load average ")
}

func TestCommandRefusesBadFlags(t *testing.T) {
	for args, want := range map[string]string{
		"--time 500ms": "fuzzspeed: --time 500ms: must be at least 1s, the engine's clock reports whole seconds of warm-up\n",
		"--run (":      "fuzzspeed: --run \"(\": not a regular expression: error parsing regexp: missing closing ): `(`\n",
		"--run NoSuch": "fuzzspeed: --run \"NoSuch\": matches none of the decoder targets\n",
	} {
		var calls []run
		var stdout, stderr bytes.Buffer
		status := runCommand(strings.Fields(args), &stdout, &stderr, fakeTools(1, nil, &calls))
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
	assert.Contains(t, stderr.String(), "run 2/3 ./fuzz/checkpointdecode FuzzCheckpointDecode: "+assert.AnError.Error()+"\n  --- FAIL")
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
