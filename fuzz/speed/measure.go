package speed

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Run is one invocation of `go test -fuzz`: a decoder target or an empty
// target. Every run builds with Tags ceilingTag, so a target and the
// same-binary ceiling in its package run the one test binary.
type Run struct {
	Package, Name, Tags string
}

// placed are the indexes in a plan of one target's run and of the ceiling
// runs around it.
type placed struct {
	Target int
	// LeanBefore and LeanAfter are the empty target of fuzz/ceiling.
	LeanBefore, LeanAfter int
	// SameBefore and SameAfter are the empty target in the target's own
	// package.
	SameBefore, SameAfter int
}

// plan interleaves the ceilings with the targets, lean ceiling,
// same-binary ceiling, target, same-binary ceiling, lean ceiling, ..., so
// load that drifts during the measurement hits all three, and both
// ceilings sit symmetrically around the target, so that drift which is
// linear in time cancels in the means. Two adjacent targets of the same
// argument types share the lean ceiling run between them. It returns the
// runs and where each target's runs are.
func plan(targets []Target) (runs []Run, at []placed) {
	for _, t := range targets {
		lean := Run{CeilingPackage, t.Ceiling, ceilingTag}
		same := Run{t.Package, t.Ceiling, ceilingTag}
		if len(runs) == 0 || runs[len(runs)-1] != lean {
			runs = append(runs, lean)
		}
		n := len(runs)
		at = append(at, placed{Target: n + 1, LeanBefore: n - 1, LeanAfter: n + 3, SameBefore: n, SameAfter: n + 2})
		runs = append(runs, same, Run{t.Package, t.Name, ceilingTag}, same, lean)
	}
	return runs, at
}

// Line is one line of a fuzzing run's output and when it was read, from
// the start of the run.
type Line struct {
	At   time.Duration
	Text string
}

// Result is what one fuzzing run measured.
type Result struct {
	// Execs are the executions after the baseline coverage was gathered.
	Execs int64
	// Fuzzing is the time from the end of the baseline coverage to the
	// last report of executions.
	Fuzzing time.Duration
	// NewInteresting are the inputs that widened coverage while fuzzing.
	NewInteresting int
	// WarmupExecs are the executions of the baseline coverage.
	WarmupExecs int64
	// CPU is the CPU time of the whole run: the go command, the engine's
	// coordinator and its worker, the baseline coverage included.
	CPU time.Duration
}

// PerSecond is the rate of executions while fuzzing.
func (s Result) PerSecond() float64 { return float64(s.Execs) / s.Fuzzing.Seconds() }

// PerCPUSecond is the run's executions, the baseline coverage's included,
// per second of CPU time. On a loaded machine it varies less than
// PerSecond: a worker waiting for a CPU, or for its coordinator to take a
// new interesting input, spends wall time but no CPU time.
func (s Result) PerCPUSecond() float64 {
	return float64(s.Execs+s.WarmupExecs) / s.CPU.Seconds()
}

var (
	// The engine's line when the seed and cached corpus have run once
	// each (one execution per entry): fuzzing starts.
	baselineLine = regexp.MustCompile(`^fuzz: elapsed: \S+, gathering baseline coverage: (\d+)/(\d+) completed, now fuzzing`)
	// The engine's progress line: "execs: N (X/sec)", where X is the rate
	// of the last three seconds only, so the rate of the run comes from N
	// and the times of the lines instead.
	execsLine = regexp.MustCompile(`^fuzz: elapsed: \S+, execs: (\d+) \(\d+/sec\)(?:, new interesting: (\d+))?`)
)

// parse reads a fuzzing run's output. The engine counts the executions of
// the baseline coverage in "execs", so they are taken off, and the clock
// starts when that phase ends: a target with a large corpus is not charged
// for running it. The last progress line is the engine's final one, printed
// after the workers stopped.
func parse(lines []Line) (Result, error) {
	var (
		warmup, execs int64
		start, end    time.Duration
		sawBaseline   bool
		sawWarmup     bool
		sawExecs      bool
		interesting   int
	)
	for _, l := range lines {
		if m := baselineLine.FindStringSubmatch(l.Text); m != nil {
			warmup, _ = strconv.ParseInt(m[2], 10, 64)
			start, sawBaseline, sawExecs = l.At, true, false
			continue
		}
		if strings.Contains(l.Text, "gathering baseline coverage") {
			sawWarmup = true
		}
		m := execsLine.FindStringSubmatch(l.Text)
		if m != nil && !sawBaseline && !sawWarmup {
			// No baseline phase at all (an empty corpus, as the empty
			// targets have): fuzzing starts with the first progress line.
			warmup, _ = strconv.ParseInt(m[1], 10, 64)
			start, sawBaseline = l.At, true
			continue
		}
		if m != nil && sawBaseline {
			execs, _ = strconv.ParseInt(m[1], 10, 64)
			if m[2] != "" {
				interesting, _ = strconv.Atoi(m[2])
			}
			end, sawExecs = l.At, true
		}
	}
	switch {
	case !sawBaseline:
		return Result{}, fmt.Errorf("no %q line: the run did not get past the baseline coverage", "now fuzzing")
	case !sawExecs:
		return Result{}, fmt.Errorf("no %q line after the baseline coverage", "execs: N (X/sec)")
	case end <= start:
		return Result{}, fmt.Errorf("no time between the end of the baseline coverage and the last progress line")
	case execs < warmup:
		return Result{}, fmt.Errorf("%d executions reported, fewer than the %d of the baseline coverage", execs, warmup)
	}
	return Result{Execs: execs - warmup, Fuzzing: end - start, NewInteresting: interesting, WarmupExecs: warmup}, nil
}

// Ceiling is the two runs of one empty target around a target.
type Ceiling struct {
	Before, After Result
}

// PerSecond is the mean of the two runs' rates.
func (c Ceiling) PerSecond() float64 { return (c.Before.PerSecond() + c.After.PerSecond()) / 2 }

// PerCPUSecond is the mean of the two runs' executions per CPU second.
func (c Ceiling) PerCPUSecond() float64 {
	return (c.Before.PerCPUSecond() + c.After.PerCPUSecond()) / 2
}

// Row is one target's line of the table.
type Row struct {
	Target Target
	Speed  Result
	// Lean is the empty target of fuzz/ceiling, a package that links
	// nothing else: the engine's ceiling, which issue #17 measures the
	// targets against.
	Lean Ceiling
	// SameBinary is the empty target in the target's package, run from the
	// target's test binary: what the target would reach if its body cost
	// nothing, with the coverage counters its binary links.
	SameBinary Ceiling
	// Counters and LeanCounters are the sizes in bytes of the coverage
	// counters of the target's test binary (the same-binary ceiling's too)
	// and the lean ceiling's, 0 where they could not be read.
	Counters, LeanCounters int
}

// LeanRatio is the target's rate as a fraction of the lean ceiling's.
func (r Row) LeanRatio() float64 { return r.Speed.PerSecond() / r.Lean.PerSecond() }

// SameBinaryRatio is the target's rate as a fraction of the same-binary
// ceiling's: the share its own body leaves.
func (r Row) SameBinaryRatio() float64 { return r.Speed.PerSecond() / r.SameBinary.PerSecond() }

// deadlineRace reports whether a failed run failed only by the engine's
// race at the -fuzztime deadline (go.dev/issue/75804, fixed in Go 1.27):
// the target's only failure is "context deadline exceeded" and no failing
// input was written. Its progress lines are complete, so it is measured.
func deadlineRace(lines []Line, name string) bool {
	race := false
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l.Text, "--- FAIL: "+name+" ") && i+1 < len(lines) &&
			strings.TrimSpace(lines[i+1].Text) == "context deadline exceeded":
			race = true
		case strings.Contains(l.Text, "Failing input written to"):
			return false
		}
	}
	return race
}

// Tools are how a measurement fuzzes and sizes test binaries: GoTest and
// GoCounters, which tests replace.
type Tools struct {
	// Fuzz runs one fuzzing run for d and returns its output's lines and
	// the CPU time of the go command and everything it waited for (the
	// test binary, which waits for its worker).
	Fuzz func(ctx context.Context, goCmd string, r Run, d time.Duration) ([]Line, time.Duration, error)
	// Counters returns the size in bytes of the coverage counters of the
	// run's test binary built for fuzzing.
	Counters func(ctx context.Context, goCmd string, r Run) (int, error)
}

// Measure does every run of the plan in turn, telling stderr how each went,
// and returns a row for each target whose run and ceilings were measured,
// the number of runs, and whether any run failed.
func Measure(targets []Target, each time.Duration, goCmd string, with Tools, stderr io.Writer) ([]Row, int, bool) {
	runs, at := plan(targets)
	speeds := make([]*Result, len(runs))
	failed := false
	for i, r := range runs {
		// The bound covers a first build of the package with the
		// fuzzer's instrumentation, which takes minutes for the largest.
		ctx, cancel := context.WithTimeout(context.Background(), each+10*time.Minute)
		lines, cpu, err := with.Fuzz(ctx, goCmd, r, each)
		timedOut := ctx.Err() != nil
		cancel()
		if err != nil && !timedOut && deadlineRace(lines, r.Name) {
			fmt.Fprintf(stderr, "run %d/%d %s %s: the engine's deadline race (go.dev/issue/75804) failed the run after its last progress line; measured\n",
				i+1, len(runs), r.Package, r.Name)
			err = nil
		}
		var s Result
		if err == nil {
			s, err = parse(lines)
			s.CPU = cpu
		}
		if err != nil {
			failed = true
			fmt.Fprintf(stderr, "run %d/%d %s %s: %v\n%s", i+1, len(runs), r.Package, r.Name, err, tail(lines, 20))
			continue
		}
		speeds[i] = &s
		fmt.Fprintf(stderr, "run %d/%d %s %s: %.0f exec/s (%d executions in %.1f s, %d new interesting), %.0f exec/CPU-s\n",
			i+1, len(runs), r.Package, r.Name, s.PerSecond(), s.Execs, s.Fuzzing.Seconds(), s.NewInteresting, s.PerCPUSecond())
	}
	var rows []Row
	for k, t := range targets {
		p := at[k]
		if speeds[p.Target] == nil || speeds[p.LeanBefore] == nil || speeds[p.LeanAfter] == nil ||
			speeds[p.SameBefore] == nil || speeds[p.SameAfter] == nil {
			continue
		}
		r := Row{Target: t, Speed: *speeds[p.Target],
			Lean:       Ceiling{*speeds[p.LeanBefore], *speeds[p.LeanAfter]},
			SameBinary: Ceiling{*speeds[p.SameBefore], *speeds[p.SameAfter]}}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		var err error
		if r.Counters, err = with.Counters(ctx, goCmd, runs[p.Target]); err == nil {
			r.LeanCounters, err = with.Counters(ctx, goCmd, runs[p.LeanAfter])
		}
		cancel()
		if err != nil {
			// The counters explain a ratio; without them the row still
			// stands.
			fmt.Fprintf(stderr, "%s: coverage counters: %v\n", t.Name, err)
		}
		rows = append(rows, r)
	}
	return rows, len(runs), failed
}

// tail is the last n lines, for a failure's message.
func tail(lines []Line, n int) string {
	var b strings.Builder
	for _, l := range lines[max(0, len(lines)-n):] {
		b.WriteString("  " + l.Text + "\n")
	}
	return b.String()
}
