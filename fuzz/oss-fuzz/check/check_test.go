package check

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fuzzRuns is the fixed number of libFuzzer runs of each target after its
// seeds: enough to mutate every seed a few times, few enough to keep the
// check to seconds per target.
const fuzzRuns = 2000

// plantedTarget is a fuzz target in a package of its own, written into the
// scratch copy only: nothing lists it, so the build must find it by itself,
// and its harness panics on its one seed, so the check must fail it.
const plantedTarget = "FuzzPlantedPanic"

var plantedFiles = map[string]string{
	"fuzz/plantedpanic/planted_test.go": `package plantedpanic

import (
	"bytes"
	"testing"
)

func FuzzPlantedPanic(f *testing.F) {
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if name == "planted" && bytes.HasPrefix(data, []byte("boom")) {
			panic("planted panic: the check must fail this target")
		}
	})
}
`,
	"fuzz/plantedpanic/testdata/fuzz/FuzzPlantedPanic/boom": "go test fuzz v1\nstring(\"planted\")\n[]byte(\"boom!\")\n",
}

// tools finds what the build needs. It fails, never skips: `make oss-fuzz`
// installs go-118-fuzz-build and names it, and .ci/run installs clang and
// libclang-rt-14-dev (libFuzzer and the AddressSanitizer runtime).
func tools(t *testing.T) Tools {
	t.Helper()
	g := os.Getenv("NODEPROOF_GO118FUZZBUILD")
	require.NotEmpty(t, g, "NODEPROOF_GO118FUZZBUILD must name the go-118-fuzz-build binary: run `make oss-fuzz`")
	cxx, err := exec.LookPath("clang++")
	require.NoError(t, err, "clang++ is needed: apt-get install clang libclang-rt-14-dev")
	dir, err := filepath.Abs(filepath.Join("..", "local"))
	require.NoError(t, err)
	return Tools{Go118FuzzBuild: g, CXX: cxx, CompileScriptDir: dir}
}

// TestOSSFuzzBuild runs build.sh as OSS-Fuzz would on a scratch copy of the
// tree with a planted panicking target, runs every built target on its
// seeds and then fuzzes it for fuzzRuns runs, and lists every target with
// its status. Every real target must pass; the planted one must fail.
func TestOSSFuzzBuild(t *testing.T) {
	tl := tools(t)
	repoRoot, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	scratch := t.TempDir()
	start := time.Now()
	b, err := RunBuild(repoRoot, scratch, plantedFiles, tl)
	require.NoError(t, err)
	t.Logf("build.sh: %.1f s", time.Since(start).Seconds())
	targets, err := b.Targets()
	require.NoError(t, err)

	var failures []string
	plantedSeen := false
	built := 0
	for _, target := range targets {
		if target.Unsupported != "" {
			t.Logf("%-28s not built: %s", target.Name, target.Unsupported)
			assert.Contains(t, b.Log, target.Name+" ("+target.Package+"): not built: "+target.Unsupported)
			assert.NoFileExists(t, filepath.Join(b.Out, target.Name))
			continue
		}
		built++
		run, err := b.RunTarget(target.Name, fuzzRuns, scratch)
		if target.Func == plantedTarget {
			plantedSeen = true
			require.Error(t, err, "the planted target panics on its seed: the check must fail it")
			assert.Contains(t, err.Error(), "planted panic")
			t.Logf("%-28s planted: failed as it must (%d seeds)", target.Name, run.Seeds)
			continue
		}
		if err != nil {
			failures = append(failures, err.Error())
			t.Logf("%-28s FAILED", target.Name)
			continue
		}
		t.Logf("%-28s built: %d/%d seeds executed, %d fuzz runs, %.1f s", target.Name, run.Executed, run.Seeds, run.FuzzRuns, run.Seconds)
		assert.Equal(t, fuzzRuns, run.FuzzRuns, target.Name)
	}
	require.True(t, plantedSeen, "build.sh did not find the planted target %s by itself", plantedTarget)
	assert.Empty(t, failures)
	assert.Greater(t, built, 1, "no real target built")
	assert.Contains(t, b.Log, "targets built")
	t.Logf("total: %d targets, %d built (one planted), %.1f s", len(targets), built, time.Since(start).Seconds())
}

// TestBuildFailsWhenATargetIsSkipped: OSS-Fuzz's compile_native_go_fuzzer
// prints a line and exits 0 when it does not recognise the function, so
// build.sh must notice the missing fuzzer itself. A stand-in that skips
// every target must fail the build.
func TestBuildFailsWhenATargetIsSkipped(t *testing.T) {
	tl := tools(t)
	tl.CompileScriptDir = t.TempDir()
	skipper := "#!/bin/bash\necho \"Could not find the function: func $2(f *testing.F)\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(tl.CompileScriptDir, "compile_native_go_fuzzer"), []byte(skipper), 0o755))
	repoRoot, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	_, err = RunBuild(repoRoot, t.TempDir(), nil, tl)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "compile_native_go_fuzzer left no")
}

// TestOneGo118FuzzBuildVersion: build.sh's go get, the Makefile's install
// and this module's go.mod pin the same go-118-fuzz-build, so the binary
// and the testing package the harnesses import come from one commit.
func TestOneGo118FuzzBuildVersion(t *testing.T) {
	goMod, err := os.ReadFile("go.mod")
	require.NoError(t, err)
	required := regexp.MustCompile(`(?m)^\s*github\.com/AdamKorcz/go-118-fuzz-build (\S+)$`).FindSubmatch(goMod)
	require.NotNil(t, required, "go.mod does not require go-118-fuzz-build")
	want := string(required[1])
	for file, pattern := range map[string]string{
		"../build.sh":       `(?m)^go118fuzzbuild_version=(\S+)$`,
		"../../../Makefile": `(?m)^GO118FUZZBUILD_VERSION := (\S+)$`,
	} {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		m := regexp.MustCompile(pattern).FindSubmatch(data)
		require.NotNil(t, m, "%s: no version line", file)
		assert.Equal(t, want, string(m[1]), file)
	}
}
