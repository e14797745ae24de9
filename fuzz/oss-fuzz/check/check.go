// Package check builds nodeproof's fuzz targets the way OSS-Fuzz does
// (fuzz/oss-fuzz/build.sh, go-118-fuzz-build, clang's libFuzzer) and runs
// each on its seed corpus, so the build script cannot rot. It is a module of
// its own, run by `make oss-fuzz`: the root's `go test ./...` never pays for
// a libFuzzer build, and this module may require go-118-fuzz-build's
// testing package, which the root must not.
package check

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Tools are the programs the build needs besides Go.
type Tools struct {
	// Go118FuzzBuild is the go-118-fuzz-build binary.
	Go118FuzzBuild string
	// CXX is the C++ compiler that links a target with libFuzzer: clang++.
	CXX string
	// CompileScriptDir holds the local compile_native_go_fuzzer.
	CompileScriptDir string
}

// Build is one run of build.sh on a scratch copy of the tree.
type Build struct {
	// Src is the scratch copy, Out is $OUT, Work is $WORK.
	Src, Out, Work string
	// Log is build.sh's output.
	Log string
}

// Target is one line of `ossfuzzprep targets`.
type Target struct {
	Name, Package, Func string
	// Unsupported says why build.sh did not build the target.
	Unsupported string
}

// stepTimeout bounds every command the check runs.
const stepTimeout = 20 * time.Minute

// RunBuild copies repoRoot's tracked and untracked-but-not-ignored files
// (what `git ls-files -co --exclude-standard` lists) and the extra files
// (path relative to the root -> content) into scratch/src, so go.mod in the
// checkout is never touched, and runs fuzz/oss-fuzz/build.sh there with the
// environment OSS-Fuzz gives it for an AddressSanitizer libFuzzer build.
func RunBuild(repoRoot, scratch string, extra map[string]string, tools Tools) (Build, error) {
	b := Build{Src: filepath.Join(scratch, "src"), Out: filepath.Join(scratch, "out"), Work: filepath.Join(scratch, "work")}
	for _, dir := range []string{b.Src, b.Out, b.Work} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return b, err
		}
	}
	list, err := command(repoRoot, nil, "git", "ls-files", "-co", "--exclude-standard", "-z")
	if err != nil {
		return b, err
	}
	for _, rel := range strings.Split(strings.TrimRight(list, "\x00"), "\x00") {
		if err := copyFile(filepath.Join(repoRoot, rel), filepath.Join(b.Src, rel)); err != nil {
			return b, err
		}
	}
	for rel, content := range extra {
		path := filepath.Join(b.Src, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return b, err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return b, err
		}
	}
	env := append(os.Environ(),
		"SRC="+scratch, "OUT="+b.Out, "WORK="+b.Work,
		"SANITIZER=address", "FUZZING_ENGINE=libfuzzer", "FUZZING_LANGUAGE=go",
		"CXX="+tools.CXX, "CXXFLAGS=-fsanitize=address", "LIB_FUZZING_ENGINE=-fsanitize=fuzzer",
		"PATH="+tools.CompileScriptDir+string(os.PathListSeparator)+filepath.Dir(tools.Go118FuzzBuild)+string(os.PathListSeparator)+os.Getenv("PATH"),
	)
	// OSS-Fuzz's compile runs build.sh with bash -eu.
	b.Log, err = command(b.Src, env, "bash", "-eu", filepath.Join(b.Src, "fuzz", "oss-fuzz", "build.sh"))
	if err != nil {
		return b, fmt.Errorf("build.sh: %w\n%s", err, b.Log)
	}
	return b, nil
}

// Targets lists every target the build found, with the prep tool build.sh
// built.
func (b Build) Targets() ([]Target, error) {
	out, err := command(b.Src, nil, filepath.Join(b.Work, "ossfuzzprep"), "targets")
	if err != nil {
		return nil, err
	}
	var targets []Target
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		fields := strings.Split(line, "\t")
		if len(fields) != 4 {
			return nil, fmt.Errorf("ossfuzzprep targets: line %q has %d fields, want 4", line, len(fields))
		}
		targets = append(targets, Target{Name: fields[0], Package: fields[1], Func: fields[2], Unsupported: fields[3]})
	}
	return targets, nil
}

// Run is what running one built target showed.
type Run struct {
	// Seeds is how many inputs its seed corpus zip holds; Executed is how
	// many of them libFuzzer reported executing.
	Seeds, Executed int
	// FuzzRuns is how many runs the fuzzing pass completed.
	FuzzRuns int
	Seconds  float64
}

var (
	executedLine = regexp.MustCompile(`(?m)^Executed .* in \d+ ms$`)
	doneLine     = regexp.MustCompile(`(?m)^Done (\d+) runs in`)
)

// RunTarget runs the built target name: once on every input of its seed
// corpus zip (each must run, and the binary exit 0), then fuzzing from that
// corpus for runs runs with a fixed seed. A crash, a non-zero exit or an
// input not executed is an error, with libFuzzer's output.
func (b Build) RunTarget(name string, runs int, scratch string) (Run, error) {
	start := time.Now()
	var r Run
	bin := filepath.Join(b.Out, name)
	corpus := filepath.Join(scratch, name+"-corpus")
	if err := os.MkdirAll(corpus, 0o755); err != nil {
		return r, err
	}
	seeds, err := unzip(filepath.Join(b.Out, name+"_seed_corpus.zip"), corpus)
	if err != nil {
		return r, err
	}
	r.Seeds = len(seeds)
	if len(seeds) > 0 {
		out, err := command(scratch, nil, bin, append([]string{"-runs=1"}, seeds...)...)
		r.Executed = len(executedLine.FindAllString(out, -1))
		if err != nil {
			return r, fmt.Errorf("%s on its seeds: %w\n%s", name, err, out)
		}
		if r.Executed != len(seeds) {
			return r, fmt.Errorf("%s executed %d of its %d seeds\n%s", name, r.Executed, len(seeds), out)
		}
	}
	out, err := command(scratch, nil, bin, fmt.Sprintf("-runs=%d", runs), "-seed=1", corpus)
	if err != nil {
		return r, fmt.Errorf("%s fuzzing %d runs: %w\n%s", name, runs, err, out)
	}
	m := doneLine.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("%s fuzzing: no \"Done N runs\" line\n%s", name, out)
	}
	fmt.Sscan(m[1], &r.FuzzRuns)
	r.Seconds = time.Since(start).Seconds()
	return r, nil
}

// unzip extracts a seed corpus zip into dir and returns the files' paths,
// sorted; a missing zip (a target without seeds) gives none.
func unzip(zipPath, dir string) ([]string, error) {
	zr, err := zip.OpenReader(zipPath)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	var paths []string
	for _, f := range zr.File {
		if strings.Contains(f.Name, "/") || strings.Contains(f.Name, "..") {
			return nil, fmt.Errorf("%s: entry %q is not a plain file name", zipPath, f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, f.Name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	sort.Strings(paths)
	return paths, nil
}

// command runs name in dir with env (nil: this process's) under
// stepTimeout and returns its combined output.
func command(dir string, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %s", stepTimeout)
	}
	return out.String(), err
}

// copyFile copies one regular file, keeping its executable bit.
func copyFile(from, to string) error {
	info, err := os.Lstat(from)
	if os.IsNotExist(err) {
		return nil // tracked but deleted in the work tree
	}
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return nil
	}
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, data, info.Mode().Perm())
}
