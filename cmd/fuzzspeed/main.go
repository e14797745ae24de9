// Command fuzzspeed measures how close each decoder fuzz target comes to the
// fuzzing engine's ceiling, and where the rest goes. In one run it fuzzes,
// for the same time and with the same flags, the lean ceiling (the empty
// target of fuzz/ceiling with the target's argument types), the same-binary
// ceiling (the empty target of those types in the target's own package, so
// in the target's test binary, with its coverage counters), the target, the
// same-binary ceiling again, the lean ceiling again, and so on, so load that
// drifts during the run hits all three. It prints each target's executions
// per second and its ratio to each ceiling (the mean of the runs before and
// after it): against the lean ceiling, what issue #17 asks of it; against
// the same-binary ceiling, what its own body costs, the rest being the
// engine's cost of the counters the binary links.
//
// Every run is `go test -run '^$' -fuzz '^Name$' -fuzztime T -parallel 1
// -fuzzminimizetime 0` with a fuzz cache of its own. One worker makes the
// ratio per core. Minimization is off because the engine reports a
// minimization's executions only when it ends, and drops them when the run
// stops first: one of those in a short run would count seconds of
// executions as none. The fresh cache makes every run start from the
// checked-in seed corpus, and keeps the unminimized inputs out of the
// cache `make fuzz` uses.
//
// Exit status: 0 when every run was measured, 1 when one failed, 2 for bad
// flags.
package main

import (
	"bufio"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func main() {
	os.Exit(runCommand(os.Args[1:], os.Stdout, os.Stderr, tools{fuzz: goTest, counters: goCounters}))
}

// tools are how the command fuzzes and sizes test binaries; tests fake
// them.
type tools struct {
	// fuzz runs one fuzzing run for d and returns its output's lines and
	// the CPU time of the go command and everything it waited for (the
	// test binary, which waits for its worker).
	fuzz func(ctx context.Context, goCmd string, r run, d time.Duration) ([]line, time.Duration, error)
	// counters returns the size in bytes of the coverage counters of the
	// run's test binary built for fuzzing.
	counters func(ctx context.Context, goCmd string, r run) (int, error)
}

// runCommand is the command with its arguments, output and tools,
// returning the exit status.
func runCommand(args []string, stdout, stderr io.Writer, with tools) int {
	var (
		each    time.Duration
		pattern string
		goCmd   string
	)
	status := 0
	cmd := &cobra.Command{
		Use:           "fuzzspeed [--time 10s] [--run REGEXP]",
		Short:         "measure each decoder fuzz target against the fuzzing engine's ceiling and an empty target in its own binary, side by side",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(*cobra.Command, []string) error {
			if each < time.Second {
				return fmt.Errorf("--time %v: must be at least 1s, the engine's clock reports whole seconds of warm-up", each)
			}
			match, err := regexp.Compile(pattern)
			if err != nil {
				return fmt.Errorf("--run %q: not a regular expression: %v", pattern, err)
			}
			var targets []target
			for _, t := range decoderTargets {
				if match.MatchString(t.Name) {
					targets = append(targets, t)
				}
			}
			if len(targets) == 0 {
				return fmt.Errorf("--run %q: matches none of the decoder targets", pattern)
			}
			loadBefore := loadAverage()
			rows, runs, failed := measure(targets, each, goCmd, with, stderr)
			fmt.Fprintf(stdout, "%d runs of %v each (go test -fuzz -parallel 1 -fuzzminimizetime 0); load average %s before, %s after\n\n",
				runs, each, loadBefore, loadAverage())
			printTable(stdout, rows)
			if failed {
				status = 1
			}
			return nil
		},
	}
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	fl := cmd.Flags()
	fl.DurationVar(&each, "time", 10*time.Second, "how long each run fuzzes (-fuzztime)")
	fl.StringVar(&pattern, "run", "", "measure only the decoder targets whose name matches this `REGEXP`")
	fl.StringVar(&goCmd, "go", "go", "the go `COMMAND`")
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(stderr, "fuzzspeed: %v\n", err)
		return 2
	}
	return status
}

// measure does every run of the plan in turn, telling stderr how each went,
// and returns a row for each target whose run and ceilings were measured,
// the number of runs, and whether any run failed.
func measure(targets []target, each time.Duration, goCmd string, with tools, stderr io.Writer) ([]row, int, bool) {
	runs, at := plan(targets)
	speeds := make([]*speed, len(runs))
	failed := false
	for i, r := range runs {
		// The bound covers a first build of the package with the
		// fuzzer's instrumentation, which takes minutes for the largest.
		ctx, cancel := context.WithTimeout(context.Background(), each+10*time.Minute)
		lines, cpu, err := with.fuzz(ctx, goCmd, r, each)
		timedOut := ctx.Err() != nil
		cancel()
		if err != nil && !timedOut && deadlineRace(lines, r.Name) {
			fmt.Fprintf(stderr, "run %d/%d %s %s: the engine's deadline race (go.dev/issue/75804) failed the run after its last progress line; measured\n",
				i+1, len(runs), r.Package, r.Name)
			err = nil
		}
		var s speed
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
	var rows []row
	for k, t := range targets {
		p := at[k]
		if speeds[p.Target] == nil || speeds[p.LeanBefore] == nil || speeds[p.LeanAfter] == nil ||
			speeds[p.SameBefore] == nil || speeds[p.SameAfter] == nil {
			continue
		}
		r := row{Target: t, Speed: *speeds[p.Target],
			Lean:       ceiling{*speeds[p.LeanBefore], *speeds[p.LeanAfter]},
			SameBinary: ceiling{*speeds[p.SameBefore], *speeds[p.SameAfter]}}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		var err error
		if r.Counters, err = with.counters(ctx, goCmd, runs[p.Target]); err == nil {
			r.LeanCounters, err = with.counters(ctx, goCmd, runs[p.LeanAfter])
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

// printTable writes the rows as a Markdown table: each target against the
// lean ceiling (issue #17's measure) and against the same-binary ceiling
// (what its own body costs).
func printTable(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| target | exec/s | lean ceiling exec/s (before, after) | ratio to lean | per CPU second | "+
		"same-binary ceiling exec/s (before, after) | ratio to same-binary | per CPU second | coverage counters, target / lean ceiling |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		counters := "unknown"
		if r.Counters > 0 && r.LeanCounters > 0 {
			counters = fmt.Sprintf("%d / %d B (×%.1f)", r.Counters, r.LeanCounters, float64(r.Counters)/float64(r.LeanCounters))
		}
		fmt.Fprintf(w, "| `%s` (%s) | %.0f | %.0f (%.0f, %.0f) | %.1f %% | %.1f %% | %.0f (%.0f, %.0f) | %.1f %% | %.1f %% | %s |\n",
			r.Target.Name, strings.TrimPrefix(r.Target.Package, "./"), r.Speed.PerSecond(),
			r.Lean.PerSecond(), r.Lean.Before.PerSecond(), r.Lean.After.PerSecond(),
			100*r.LeanRatio(), 100*r.Speed.PerCPUSecond()/r.Lean.PerCPUSecond(),
			r.SameBinary.PerSecond(), r.SameBinary.Before.PerSecond(), r.SameBinary.After.PerSecond(),
			100*r.SameBinaryRatio(), 100*r.Speed.PerCPUSecond()/r.SameBinary.PerCPUSecond(), counters)
	}
}

// tail is the last n lines, for a failure's message.
func tail(lines []line, n int) string {
	var b strings.Builder
	for _, l := range lines[max(0, len(lines)-n):] {
		b.WriteString("  " + l.Text + "\n")
	}
	return b.String()
}

// loadAverage is the machine's load over 1, 5 and 15 minutes, or "unknown"
// where /proc/loadavg cannot be read.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// goTest fuzzes with the go command, from the current directory (the
// module root), with a fuzz cache of its own.
func goTest(ctx context.Context, goCmd string, r run, d time.Duration) ([]line, time.Duration, error) {
	cache, err := os.MkdirTemp("", "fuzzspeed-cache-")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(cache)
	args := []string{"test"}
	if r.Tags != "" {
		args = append(args, "-tags", r.Tags)
	}
	// The package comes before the flags: the go command takes what
	// follows the first flag it passes to the test binary
	// (-test.fuzzcachedir) as that binary's arguments.
	args = append(args, r.Package, "-run", "^$", "-fuzz", "^"+r.Name+"$", "-fuzztime", d.String(),
		"-parallel", "1", "-fuzzminimizetime", "0", "-test.fuzzcachedir="+cache)
	cmd := exec.CommandContext(ctx, goCmd, args...)
	out, in, err := os.Pipe()
	if err != nil {
		return nil, 0, err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = in, in
	start := time.Now()
	err = cmd.Start()
	in.Close()
	if err != nil {
		return nil, 0, err
	}
	lines, readErr := readLines(out, start)
	err = cmd.Wait()
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if err != nil {
		if ctx.Err() != nil {
			err = errors.Join(err, ctx.Err())
		}
		return lines, cpu, fmt.Errorf("%s %s: %w", goCmd, strings.Join(args, " "), err)
	}
	return lines, cpu, readErr
}

// goCounters builds the run's test binary as `go test -fuzz` does and
// returns the size of its coverage counters (the ELF section
// .go.fuzzcntrs): the engine clears, copies and compares all of them around
// every execution, so they set a target's cost before its body runs.
func goCounters(ctx context.Context, goCmd string, r run) (int, error) {
	dir, err := os.MkdirTemp("", "fuzzspeed-bin-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "fuzz.test")
	args := []string{"test", "-c", "-fuzz", "^" + r.Name + "$", "-o", bin}
	if r.Tags != "" {
		args = append(args, "-tags", r.Tags)
	}
	if out, err := exec.CommandContext(ctx, goCmd, append(args, r.Package)...).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("%s %s: %v\n%s", goCmd, strings.Join(args, " "), err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sec := f.Section(".go.fuzzcntrs")
	if sec == nil {
		return 0, fmt.Errorf("%s has no .go.fuzzcntrs section", r.Package)
	}
	return int(sec.Size), nil
}

// readLines reads r to its end, timing each line from start as it arrives:
// the go command streams a fuzzing run's output.
func readLines(r io.Reader, start time.Time) ([]line, error) {
	var lines []line
	br := bufio.NewReader(r)
	for {
		text, err := br.ReadString('\n')
		if text != "" {
			lines = append(lines, line{At: time.Since(start), Text: strings.TrimSuffix(text, "\n")})
		}
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			return lines, err
		}
	}
}
