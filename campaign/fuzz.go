package campaign

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/nodeproof/nodeproof/agent/tail"
	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/verify"
)

// A campaign fuzzes without a Go toolchain: the image holds each fuzz
// package's test binary, built with `go test -c -fuzz=.` (so it carries the
// coverage instrumentation fuzzing needs), at the package's directory in the
// module under a binaries directory, with the package's testdata/fuzz seed
// corpus beside it:
//
//	BINARIES/fuzz/registration/registration.test
//	BINARIES/fuzz/registration/testdata/fuzz/FuzzRegisterRequest/...

// FuzzTarget is one Fuzz function: its package's directory in the module
// (where its test binary and testdata sit under the binaries directory).
type FuzzTarget struct {
	Package string `json:"package"`
	Name    string `json:"name"`
}

// FuzzResult is one fuzz target's run, as a shard file and the merged
// report hold it.
type FuzzResult struct {
	Package string       `json:"package"`
	Target  string       `json:"target"`
	Shard   int          `json:"shard"`
	Seconds float64      `json:"seconds"`
	Passed  bool         `json:"passed"`
	Failure *FuzzFailure `json:"failure"`
}

// FuzzFailure is what a failing fuzz run printed and the input it failed on.
type FuzzFailure struct {
	Message string `json:"message"`
	// Input is the failing input's file, relative to the directory holding
	// the shard file; empty when the run failed without one (a crash of
	// the binary, a timeout).
	Input string `json:"input"`
	// Replay reruns the input from a nodeproof checkout.
	Replay string `json:"replay"`
}

// fuzzBinarySuffix names the test binaries a campaign looks for.
const fuzzBinarySuffix = ".test"

// fuzzGrace is how long a fuzz target may run past its duration before it is
// stopped: the fuzzer's own minimisation of a failing input (60 s by
// default) and the start of its workers.
const fuzzGrace = 3 * time.Minute

// fuzzOutputLimit bounds the output of a fuzz run kept for its report.
const fuzzOutputLimit = 16 << 10

// ListFuzzTargets finds every test binary under dir and asks each for its
// Fuzz functions (-test.list), in package order, then name order.
func ListFuzzTargets(dir string) ([]FuzzTarget, error) {
	var targets []FuzzTarget
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), fuzzBinarySuffix) {
			return nil
		}
		rel, err := filepath.Rel(dir, filepath.Dir(path))
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, path, "-test.list", "^Fuzz").Output()
		if err != nil {
			return fmt.Errorf("%s -test.list: %v", path, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if name := strings.TrimSpace(sc.Text()); strings.HasPrefix(name, "Fuzz") {
				targets = append(targets, FuzzTarget{Package: filepath.ToSlash(rel), Name: name})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(targets, func(a, b FuzzTarget) int {
		return cmp.Or(cmp.Compare(a.Package, b.Package), cmp.Compare(a.Name, b.Name))
	})
	return targets, nil
}

// FuzzJob is what one fuzz run needs to know beyond its target.
type FuzzJob struct {
	Target   FuzzTarget
	Duration time.Duration
	// Binaries is the plan's binaries directory.
	Binaries string
	// CacheDir keeps the interesting inputs the fuzzer finds, per package,
	// so that the next campaign starts from them.
	CacheDir string
	// InputsDir receives a failing input; InputsRel is the same directory
	// relative to the shard's results directory, as the shard file records
	// it.
	InputsDir, InputsRel string
}

// FuzzRunner fuzzes one target: RunFuzz, or a stand-in in tests.
type FuzzRunner func(job FuzzJob) FuzzResult

// fuzzFailingInputRE matches the line Go's fuzzer prints after writing a
// failing input (testing/fuzz.go).
var fuzzFailingInputRE = regexp.MustCompile(`(?m)^Failing input written to (\S+)$`)

// RunFuzz fuzzes one target for its duration. The binary runs in a
// scratch directory holding a copy of its seed corpus, because Go writes a
// failing input into testdata/ under the working directory and the image's
// own files are read-only; a failing input is then copied to the results.
func RunFuzz(job FuzzJob) (rep FuzzResult) {
	t := job.Target
	rep = FuzzResult{Package: t.Package, Target: t.Name, Passed: true}
	start := time.Now()
	// Named, so that every return below carries the time.
	defer func() { rep.Seconds = phrase.RoundMilli(time.Since(start).Seconds()) }()
	fail := func(msg string) FuzzResult {
		rep.Passed = false
		rep.Failure = &FuzzFailure{Message: msg}
		return rep
	}
	pkgDir := filepath.Join(job.Binaries, filepath.FromSlash(t.Package))
	binary, err := testBinary(pkgDir)
	if err != nil {
		return fail(err.Error())
	}
	work, err := os.MkdirTemp("", "nodeproof-fuzz-")
	if err != nil {
		return fail(fmt.Sprintf("scratch directory: %v", err))
	}
	defer os.RemoveAll(work)
	corpus := filepath.Join("testdata", "fuzz", t.Name)
	if err := copyTree(filepath.Join(pkgDir, corpus), filepath.Join(work, corpus)); err != nil {
		return fail(fmt.Sprintf("seed corpus: %v", err))
	}
	cache := filepath.Join(job.CacheDir, filepath.FromSlash(t.Package))
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return fail(fmt.Sprintf("fuzz cache: %v", err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), job.Duration+fuzzGrace)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "-test.run", "^$", "-test.fuzz", "^"+regexp.QuoteMeta(t.Name)+"$",
		"-test.fuzztime", job.Duration.String(), "-test.fuzzcachedir", cache)
	cmd.Dir = work
	out := &tail.Buffer{Limit: fuzzOutputLimit}
	cmd.Stdout, cmd.Stderr = out, out
	runErr := cmd.Run()
	if runErr == nil {
		return rep
	}
	kept, _ := out.Tail()
	output := string(kept)
	m := fuzzFailingInputRE.FindStringSubmatch(output)
	if m == nil {
		return fail(fmt.Sprintf("%s: %v\n%s", filepath.Base(binary), runErr, output))
	}
	name := filepath.Base(m[1])
	input, err := os.ReadFile(filepath.Join(work, m[1]))
	if err == nil {
		err = os.MkdirAll(job.InputsDir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(job.InputsDir, name), input, 0o644)
	}
	if err != nil {
		return fail(fmt.Sprintf("%s\nthe failing input %s could not be kept: %v", output, m[1], err))
	}
	rep = fail(output)
	rep.Failure.Input = filepath.ToSlash(filepath.Join(job.InputsRel, name))
	return rep
}

// testBinary is the one test binary in a package's directory.
func testBinary(pkgDir string) (string, error) {
	matches, err := filepath.Glob(filepath.Join(pkgDir, "*"+fuzzBinarySuffix))
	if err != nil || len(matches) != 1 {
		return "", fmt.Errorf("%s: want exactly one *%s test binary, found %d", pkgDir, fuzzBinarySuffix, len(matches))
	}
	return matches[0], nil
}

// FuzzReplay is the command that reruns a failing input kept at input (a
// path the reader can reach), from the root of a nodeproof checkout.
func FuzzReplay(t FuzzTarget, input string) string {
	dir := t.Package + "/testdata/fuzz/" + t.Name
	name := filepath.Base(input)
	return verify.CommandLine("mkdir", "-p", dir) + " && " + verify.CommandLine("cp", input, dir+"/") + " && " +
		verify.CommandLine("go", "test", "./"+t.Package, "-run", "^"+t.Name+"/"+name+"$")
}

// copyTree copies the regular files under src to dst; a missing src copies
// nothing (a target may have no seed files).
func copyTree(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if os.IsNotExist(err) {
		return nil
	}
	return err
}
