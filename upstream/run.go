package upstream

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Column is what one release's run of the conformance module said.
type Column struct {
	Release string `json:"release"`
	// BuildSeconds is the test binary's build, RunSeconds its run.
	BuildSeconds float64 `json:"build_seconds"`
	RunSeconds   float64 `json:"run_seconds"`
	// Checks is the generated cases per comparison the run drew (rapid's
	// -rapid.checks); 0 for the module's own default (10,000).
	Checks int `json:"checks,omitempty"`
	// Error, when set, says why the release's tests did not run: the
	// module did not build against it, or its test binary did not start.
	Error string `json:"error,omitempty"`
	Tests []Test `json:"tests"`
}

// Failed are the names of the column's failed tests.
func (c Column) Failed() []string {
	var names []string
	for _, t := range c.Tests {
		if !t.Passed {
			names = append(names, t.Name)
		}
	}
	return names
}

// RunOptions say how Run runs a release's tests.
type RunOptions struct {
	// Env are extra environment variables of the test binary (the
	// conformance module's result files).
	Env []string
	// Events, when set, receives the test binary's test2json stream.
	Events io.Writer
	// Done hears of each top-level test as it ends.
	Done func(Test)
	// Timeout bounds the test binary's run (its -test.timeout).
	Timeout time.Duration
	// Checks, when set, is the generated cases per comparison in place of
	// the module's default: a smaller budget for a release that is only
	// surveyed.
	Checks int
}

// Run builds the conformance module in dir against r and runs its tests.
// A release the module does not build against is a Column with Error, not
// an error: it is a cell of the matrix. The error is for what stops the
// run itself (ctx done, no go command).
func Run(ctx context.Context, dir string, r Release, opts RunOptions) (Column, error) {
	col := Column{Release: r.Version, Checks: opts.Checks, Tests: []Test{}}
	tmp, err := os.MkdirTemp("", "nodeproof-upstream-")
	if err != nil {
		return col, err
	}
	defer os.RemoveAll(tmp)
	binary := filepath.Join(tmp, "conformance.test")

	began := time.Now()
	build := exec.CommandContext(ctx, "go", append(append([]string{"test", "-c", "-o", binary}, r.BuildFlags()...), ".")...)
	build.Dir, build.Env = dir, r.env(os.Environ())
	out, err := build.CombinedOutput()
	col.BuildSeconds = time.Since(began).Round(time.Millisecond).Seconds()
	if ctx.Err() != nil {
		return col, ctx.Err()
	}
	if err != nil {
		col.Error = fmt.Sprintf("the conformance module does not build against %s: %v\n%s", r.Version, err, tail(string(out), failureLines))
		return col, nil
	}

	began = time.Now()
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 30 * time.Minute
	}
	// test2json turns the binary's -test.v=test2json output into the
	// events `go test -json` prints, with each test's output its own.
	// No rapid fail files: one release's counterexample, left in
	// testdata/rapid, would be replayed first by the next release's run,
	// which then tests a case the search did not draw for it.
	args := []string{"tool", "test2json", "-t", binary, "-test.v=test2json", "-test.count=1", "-test.timeout=" + timeout.String(), "-rapid.nofailfile"}
	if opts.Checks > 0 {
		args = append(args, "-rapid.checks="+strconv.Itoa(opts.Checks))
	}
	run := exec.CommandContext(ctx, "go", args...)
	run.Dir, run.Env = dir, r.env(append(os.Environ(), opts.Env...))
	var stderr bytes.Buffer
	run.Stderr = &stderr
	stream, err := run.StdoutPipe()
	if err != nil {
		return col, err
	}
	if err := run.Start(); err != nil {
		return col, fmt.Errorf("starting %s's tests: %w", r.Version, err)
	}
	events := NewEvents(opts.Done)
	var src io.Reader = stream
	if opts.Events != nil {
		src = io.TeeReader(stream, opts.Events)
	}
	readErr := events.Read(src)
	if readErr != nil {
		// Drain, so that the binary is not blocked writing.
		_, _ = io.Copy(io.Discard, stream)
	}
	waitErr := run.Wait()
	col.RunSeconds = time.Since(began).Round(time.Millisecond).Seconds()
	col.Tests = append(col.Tests, events.Tests()...)
	if ctx.Err() != nil {
		return col, ctx.Err()
	}
	if readErr != nil {
		return col, readErr
	}
	// A failed test makes the binary exit 1: that is the column's
	// content. No test at all with a failure is the binary's own failure.
	if waitErr != nil && len(col.Tests) == 0 {
		col.Error = fmt.Sprintf("the test binary for %s failed before any test ended: %v\n%s", r.Version, waitErr, tail(stderr.String(), failureLines))
	}
	return col, nil
}

// env is environ with the release's toolchain set, when it needs one.
func (r Release) env(environ []string) []string {
	if r.Toolchain == "" {
		return environ
	}
	return append(environ, "GOTOOLCHAIN="+r.Toolchain)
}

// tail is s's last n lines.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
