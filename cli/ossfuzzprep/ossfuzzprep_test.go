package ossfuzzprep

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTargetsAndSeeds(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"go.mod":                             "module example.com/m\n\ngo 1.26\n",
		"p/p_test.go":                        "package p\n\nimport \"testing\"\n\nfunc FuzzP(f *testing.F) { f.Fuzz(func(t *testing.T, s string) {}) }\n\nfunc FuzzQ(f *testing.F) { f.Fuzz(g) }\n",
		"p/testdata/fuzz/FuzzP/seed":         "go test fuzz v1\nstring(\"hi\")\n",
		"p/testdata/fuzz/FuzzQ/ignored-seed": "go test fuzz v1\nstring(\"hi\")\n",
		// cmd/fuzzspeed's same-binary ceiling: not a target OSS-Fuzz builds.
		"p/ceiling_test.go": "//go:build fuzzceiling\n\npackage p\n\nimport \"testing\"\n\nfunc FuzzEmptyString(f *testing.F) { f.Fuzz(func(t *testing.T, s string) {}) }\n",
	}
	for rel, content := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, rel), []byte(content), 0o644))
	}
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, Run([]string{"targets", "--root", root}, &stdout, &stderr), stderr.String())
	assert.Equal(t, "FuzzP\texample.com/m/p\tFuzzP\t\n"+
		"FuzzQ\texample.com/m/p\tFuzzQ\tf.Fuzz gets g, not a function literal: a harness made elsewhere (rapid.MakeFuzz) takes the standard library's *testing.T, and go-118-fuzz-build's F.Fuzz calls it with its own *testing.T, so reflect panics on every input\n",
		stdout.String())

	out := filepath.Join(t.TempDir(), "out")
	stdout.Reset()
	require.Equal(t, 0, Run([]string{"seeds", "--root", root, "--out", out}, &stdout, &stderr), stderr.String())
	assert.FileExists(t, filepath.Join(out, "FuzzP_seed_corpus.zip"))
	assert.NoFileExists(t, filepath.Join(out, "FuzzQ_seed_corpus.zip"))
}

func TestBadArguments(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, Run([]string{"seeds"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "--out: required")
	stderr.Reset()
	assert.Equal(t, 2, Run([]string{"nonsense"}, &stdout, &stderr))
	stderr.Reset()
	assert.Equal(t, 1, Run([]string{"targets", "--root", t.TempDir()}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "go.mod")
}

// TestTheModulesCeilingsAreNotTargets lists the module's own targets:
// cmd/fuzzspeed's empty targets (in fuzz/ceiling and beside each decoder
// target, build tag fuzzceiling) test nothing, so OSS-Fuzz must not build
// them, while the decoder targets beside them are built.
func TestTheModulesCeilingsAreNotTargets(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, Run([]string{"targets", "--root", "../.."}, &stdout, &stderr), stderr.String())
	funcs := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
		fields := strings.Split(line, "\t")
		require.Len(t, fields, 4, line)
		funcs[fields[2]] = true
		assert.NotContains(t, fields[1], "/fuzz/ceiling", line)
	}
	for _, decoder := range []string{"FuzzCheckpointDecode", "FuzzRegisterRequest", "FuzzDecodeManifests"} {
		assert.True(t, funcs[decoder], "%s listed", decoder)
	}
	for _, ceiling := range []string{"FuzzEmptyBytes", "FuzzEmptyBytesBool", "FuzzEmptyByteBytes", "FuzzEmptyThreeStrings", "FuzzEmptyStringsBytes"} {
		assert.False(t, funcs[ceiling], "%s listed", ceiling)
	}
}
