package speed

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
	"strings"
	"time"
)

// GoTest fuzzes with the go command, from the current directory (the
// module root), with a fuzz cache of its own.
func GoTest(ctx context.Context, goCmd string, r Run, d time.Duration) ([]Line, time.Duration, error) {
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

// GoCounters builds the run's test binary as `go test -fuzz` does and
// returns the size of its coverage counters (the ELF section
// .go.fuzzcntrs): the engine clears, copies and compares all of them around
// every execution, so they set a target's cost before its body runs.
func GoCounters(ctx context.Context, goCmd string, r Run) (int, error) {
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
func readLines(r io.Reader, start time.Time) ([]Line, error) {
	var lines []Line
	br := bufio.NewReader(r)
	for {
		text, err := br.ReadString('\n')
		if text != "" {
			lines = append(lines, Line{At: time.Since(start), Text: strings.TrimSuffix(text, "\n")})
		}
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			return lines, err
		}
	}
}

// LoadAverage is the machine's load over 1, 5 and 15 minutes, or "unknown"
// where /proc/loadavg cannot be read.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
