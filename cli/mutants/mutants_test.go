package mutants

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/mutants"
)

// baselineModule writes a module of two packages, a and b, each with one
// test; b's fails when failB is set.
func baselineModule(t *testing.T, failB bool) string {
	t.Helper()
	root := t.TempDir()
	verdict := ""
	if failB {
		verdict = `t.Fatal("b fails without any patch")`
	}
	files := map[string]string{
		"go.mod":      "module example.com/baseline\n\ngo 1.26\n",
		"a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n\nfunc TestOther(t *testing.T) {}\n",
		"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) { " + verdict + " }\n",
	}
	for name, content := range files {
		path := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	return root
}

// baselineLines are the baseline lines of runBaselines's output without
// their timings.
func baselineLines(stdout string) []string {
	timing := regexp.MustCompile(` \([0-9.]+s\)$`)
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		lines = append(lines, timing.ReplaceAllString(line, ""))
	}
	return lines
}

// TestBaselinesRunEachPatternOnce: mutants that share a Tests pattern share
// one baseline over all their packages, so a package two package sets name
// is tested once; a mutant with another pattern gets a baseline of its own.
// (Before, each distinct package set ran its own baseline: three here.)
func TestBaselinesRunEachPatternOnce(t *testing.T) {
	selected := []mutants.Mutant{
		{ID: "x-a", Packages: []string{"./a"}},
		{ID: "x-ab", Packages: []string{"./b", "./a"}},
		{ID: "x-b", Packages: []string{"./b"}},
		{ID: "x-only-a", Packages: []string{"./a/..."}, Tests: "^TestA$"},
	}
	var stdout bytes.Buffer
	err := runBaselines(context.Background(), baselineModule(t, false), selected, mutants.Options{}, &stdout)
	require.NoError(t, err, "baselines of passing tests")
	assert.Equal(t, []string{
		"baseline ./a ./b: passed",
		"baseline ./a/... -run=^TestA$: passed",
	}, baselineLines(stdout.String()), "one baseline per Tests pattern")
}

// TestBaselinesFailOnAnyPackage: a package that fails without a patch fails
// the merged baseline it belongs to, naming the packages, and stops the run.
func TestBaselinesFailOnAnyPackage(t *testing.T) {
	selected := []mutants.Mutant{
		{ID: "x-a", Packages: []string{"./a"}},
		{ID: "x-b", Packages: []string{"./b"}},
	}
	var stdout bytes.Buffer
	err := runBaselines(context.Background(), baselineModule(t, true), selected, mutants.Options{}, &stdout)
	require.Error(t, err, "a failing package must fail the baseline")
	assert.Equal(t, cli.StatusFailed, err.(*cli.ExitError).Status)
	assert.Equal(t, []string{"baseline ./a ./b: FAILED without any patch"}, baselineLines(stdout.String()))
	assert.Contains(t, err.Error(), "the tests of ./a ./b fail on the unpatched tree (", "the message names the packages")
	assert.Contains(t, err.Error(), "b fails without any patch", "the failing test's output")
}

// TestBaselinesPatternWithinWhole: a pattern's tests of packages whose every
// test runs in the baseline anyway are not run a second time.
func TestBaselinesPatternWithinWhole(t *testing.T) {
	selected := []mutants.Mutant{
		{ID: "x-a", Packages: []string{"./a"}},
		{ID: "x-only-a", Packages: []string{"./a"}, Tests: "^TestA$"},
		{ID: "x-only-b", Packages: []string{"./b"}, Tests: "^TestB$"},
	}
	var stdout bytes.Buffer
	err := runBaselines(context.Background(), baselineModule(t, false), selected, mutants.Options{}, &stdout)
	require.NoError(t, err, "baselines of passing tests")
	assert.Equal(t, []string{
		"baseline ./a: passed",
		"baseline ./a -run=^TestA$: passed within the baseline of every test of ./a",
		"baseline ./b -run=^TestB$: passed",
	}, baselineLines(stdout.String()), "the pattern over ./a is covered by ./a's whole baseline")
}

// TestTreeMutantsApplyAndCheck keeps the seeded bugs usable while the code
// they patch moves on: every patch in mutants/ must apply to the tree as it
// is and pass Check (packages, named checks, Tests patterns). Without it, a
// patch whose context lines changed is found only by `make mutants`, as
// "does not apply", half an hour into CI.
func TestTreeMutantsApplyAndCheck(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	all, err := mutants.Load(filepath.Join(root, "mutants"))
	require.NoError(t, err)
	require.NotEmpty(t, all)
	require.NoError(t, mutants.Check(root, all, attributableCheckIDs()))
	for _, m := range all {
		patch, err := filepath.Abs(m.Path)
		require.NoError(t, err)
		out, err := exec.Command("git", "-C", root, "apply", "--check", patch).CombinedOutput()
		assert.NoError(t, err, "%s does not apply to the tree: %s", m.ID, out)
	}
}
