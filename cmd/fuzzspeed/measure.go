package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// run is one invocation of `go test -fuzz`: a decoder target or an empty
// target. Every run builds with Tags ceilingTag, so a target and the
// same-binary ceiling in its package run the one test binary.
type run struct {
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
func plan(targets []target) (runs []run, at []placed) {
	for _, t := range targets {
		lean := run{ceilingPackage, t.Ceiling, ceilingTag}
		same := run{t.Package, t.Ceiling, ceilingTag}
		if len(runs) == 0 || runs[len(runs)-1] != lean {
			runs = append(runs, lean)
		}
		n := len(runs)
		at = append(at, placed{Target: n + 1, LeanBefore: n - 1, LeanAfter: n + 3, SameBefore: n, SameAfter: n + 2})
		runs = append(runs, same, run{t.Package, t.Name, ceilingTag}, same, lean)
	}
	return runs, at
}

// line is one line of a fuzzing run's output and when it was read, from
// the start of the run.
type line struct {
	At   time.Duration
	Text string
}

// speed is what one fuzzing run measured.
type speed struct {
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
func (s speed) PerSecond() float64 { return float64(s.Execs) / s.Fuzzing.Seconds() }

// PerCPUSecond is the run's executions, the baseline coverage's included,
// per second of CPU time. On a loaded machine it varies less than
// PerSecond: a worker waiting for a CPU, or for its coordinator to take a
// new interesting input, spends wall time but no CPU time.
func (s speed) PerCPUSecond() float64 {
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
func parse(lines []line) (speed, error) {
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
		return speed{}, fmt.Errorf("no %q line: the run did not get past the baseline coverage", "now fuzzing")
	case !sawExecs:
		return speed{}, fmt.Errorf("no %q line after the baseline coverage", "execs: N (X/sec)")
	case end <= start:
		return speed{}, fmt.Errorf("no time between the end of the baseline coverage and the last progress line")
	case execs < warmup:
		return speed{}, fmt.Errorf("%d executions reported, fewer than the %d of the baseline coverage", execs, warmup)
	}
	return speed{Execs: execs - warmup, Fuzzing: end - start, NewInteresting: interesting, WarmupExecs: warmup}, nil
}

// ceiling is the two runs of one empty target around a target.
type ceiling struct {
	Before, After speed
}

// PerSecond is the mean of the two runs' rates.
func (c ceiling) PerSecond() float64 { return (c.Before.PerSecond() + c.After.PerSecond()) / 2 }

// PerCPUSecond is the mean of the two runs' executions per CPU second.
func (c ceiling) PerCPUSecond() float64 {
	return (c.Before.PerCPUSecond() + c.After.PerCPUSecond()) / 2
}

// row is one target's line of the table.
type row struct {
	Target target
	Speed  speed
	// Lean is the empty target of fuzz/ceiling, a package that links
	// nothing else: the engine's ceiling, which issue #17 measures the
	// targets against.
	Lean ceiling
	// SameBinary is the empty target in the target's package, run from the
	// target's test binary: what the target would reach if its body cost
	// nothing, with the coverage counters its binary links.
	SameBinary ceiling
	// Counters and LeanCounters are the sizes in bytes of the coverage
	// counters of the target's test binary (the same-binary ceiling's too)
	// and the lean ceiling's, 0 where they could not be read.
	Counters, LeanCounters int
}

// LeanRatio is the target's rate as a fraction of the lean ceiling's.
func (r row) LeanRatio() float64 { return r.Speed.PerSecond() / r.Lean.PerSecond() }

// SameBinaryRatio is the target's rate as a fraction of the same-binary
// ceiling's: the share its own body leaves.
func (r row) SameBinaryRatio() float64 { return r.Speed.PerSecond() / r.SameBinary.PerSecond() }

// deadlineRace reports whether a failed run failed only by the engine's
// race at the -fuzztime deadline (go.dev/issue/75804, fixed in Go 1.27):
// the target's only failure is "context deadline exceeded" and no failing
// input was written. Its progress lines are complete, so it is measured.
func deadlineRace(lines []line, name string) bool {
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
