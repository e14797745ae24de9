package fuzzspeed

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/fuzz/speed"
)

// at builds a run's output, one line per second from the first.
func at(texts ...string) []speed.Line {
	lines := make([]speed.Line, len(texts))
	for i, t := range texts {
		lines[i] = speed.Line{At: time.Duration(i) * time.Second, Text: t}
	}
	return lines
}

// fakeTools answer each run with a rate: lean ceilings (fuzz/ceiling) at
// leanRate, rising by 2000 a run as load drifts; the targets at their entry
// in rates; the same-binary ceilings at sameRate, rising by 1000 a run.
// Every run uses one CPU second per second. Every lean ceiling's counters
// are 5000 bytes, every other binary's 10000.
func fakeTools(leanRate, sameRate int, rates map[string]int, calls *[]speed.Run) speed.Tools {
	counters := func(_ context.Context, _ string, r speed.Run) (int, error) {
		if r.Package == speed.CeilingPackage {
			return 5000, nil
		}
		return 10000, nil
	}
	return speed.Tools{Counters: counters, Fuzz: func(_ context.Context, _ string, r speed.Run, d time.Duration) ([]speed.Line, time.Duration, error) {
		*calls = append(*calls, r)
		rate, isTarget := rates[r.Name]
		switch {
		case r.Package == speed.CeilingPackage:
			rate = leanRate
			leanRate += 2000
		case !isTarget:
			rate = sameRate
			sameRate += 1000
		}
		return []speed.Line{
			{At: time.Second, Text: "fuzz: elapsed: 1s, gathering baseline coverage: 10/10 completed, now fuzzing with 1 workers"},
			{At: 3 * time.Second, Text: "fuzz: elapsed: 3s, execs: 100 (50/sec), new interesting: 0 (total: 10)"},
			{At: time.Second + d, Text: "fuzz: elapsed: 10s, execs: " + strconv.Itoa(10+rate*int(d/time.Second)) + " (1/sec), new interesting: 2 (total: 12)"},
		}, d, nil
	}}
}

func TestCommandPrintsEachTargetAgainstBothCeilingsAroundIt(t *testing.T) {
	var calls []speed.Run
	var stdout, stderr bytes.Buffer
	status := run([]string{"--run", "Checkpoint|AllocResp", "--time", "2s"}, &stdout, &stderr,
		fakeTools(40000, 30000, map[string]int{"FuzzCheckpointDecode": 24000, "FuzzAllocRespUnmarshal": 21000}, &calls))
	require.Equal(t, 0, status, stderr.String())
	assert.Equal(t, []speed.Run{
		{Package: "./fuzz/ceiling", Name: "FuzzEmptyBytes", Tags: "fuzzceiling"},
		{Package: "./fuzz/checkpointdecode", Name: "FuzzEmptyBytes", Tags: "fuzzceiling"},
		{Package: "./fuzz/checkpointdecode", Name: "FuzzCheckpointDecode", Tags: "fuzzceiling"},
		{Package: "./fuzz/checkpointdecode", Name: "FuzzEmptyBytes", Tags: "fuzzceiling"},
		{Package: "./fuzz/ceiling", Name: "FuzzEmptyBytes", Tags: "fuzzceiling"},
		{Package: "./fuzz/allocresp", Name: "FuzzEmptyBytes", Tags: "fuzzceiling"},
		{Package: "./fuzz/allocresp", Name: "FuzzAllocRespUnmarshal", Tags: "fuzzceiling"},
		{Package: "./fuzz/allocresp", Name: "FuzzEmptyBytes", Tags: "fuzzceiling"},
		{Package: "./fuzz/ceiling", Name: "FuzzEmptyBytes", Tags: "fuzzceiling"},
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
	var calls []speed.Run
	fake := fakeTools(40000, 30000, map[string]int{"FuzzRegisterRequest": 10000}, &calls)
	measured := fake.Fuzz
	fake.Fuzz = func(ctx context.Context, goCmd string, r speed.Run, d time.Duration) ([]speed.Line, time.Duration, error) {
		lines, cpu, err := measured(ctx, goCmd, r, d)
		if len(calls) == 4 { // the same-binary ceiling after the target
			return at("--- FAIL: FuzzEmptyThreeStrings (0.1s)", "    x_test.go:9: boom"), cpu, assert.AnError
		}
		return lines, cpu, err
	}
	var stdout, stderr bytes.Buffer
	status := run([]string{"--run", "Register", "--time", "1s"}, &stdout, &stderr, fake)
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
		var calls []speed.Run
		var stdout, stderr bytes.Buffer
		status := run(strings.Fields(args), &stdout, &stderr, fakeTools(1, 1, nil, &calls))
		assert.Equal(t, 2, status, args)
		assert.Equal(t, want, stderr.String(), args)
		assert.Empty(t, calls, args)
	}
}

func TestAFailedRunFailsTheCommandAndDropsItsRow(t *testing.T) {
	var stdout, stderr bytes.Buffer
	status := run([]string{"--run", "Checkpoint", "--time", "1s"}, &stdout, &stderr, speed.Tools{
		Fuzz: func(context.Context, string, speed.Run, time.Duration) ([]speed.Line, time.Duration, error) {
			return at("--- FAIL: FuzzCheckpointDecode (0.1s)", "    x_test.go:9: boom"), time.Second, assert.AnError
		},
		Counters: func(context.Context, string, speed.Run) (int, error) { return 1, nil },
	})
	assert.Equal(t, 1, status)
	assert.Contains(t, stderr.String(), "run 3/5 ./fuzz/checkpointdecode FuzzCheckpointDecode: "+assert.AnError.Error()+"\n  --- FAIL")
	assert.NotContains(t, stdout.String(), "| `FuzzCheckpointDecode`")
}
