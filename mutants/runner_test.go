package mutants

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	tinySource = `package tiny

// Add returns the sum of a and b.
func Add(a, b int) int {
	return a + b
}
`
	tinyTest = `package tiny

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Fatalf("TINY-SUM: Add(2, 3) = %d, want 5", got)
	}
}
`
	header = "# Bug: %s\n# Source: seeded\n# Invariant: TINY-SUM\n# Packages: ./...\n"
)

// newModule writes a dependency-free module to a fresh directory. With git,
// the directory is a repository without commits holding an ignored file that
// does not compile, so a build only passes if the copy honours .gitignore.
func newModule(t *testing.T, git bool) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":       "module example.com/tiny\n\ngo 1.26\n",
		"tiny.go":      tinySource,
		"tiny_test.go": tinyTest,
	}
	if git {
		files[".gitignore"] = "broken.go\n"
		files["broken.go"] = "package tiny\n\nvar broken int = \"not an int\"\n"
	}
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	if git {
		out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput()
		require.NoError(t, err, "git init: %v\n%s", err, out)
	}
	return dir
}

// replaceLine returns a git-style diff of tiny.go that replaces the line old
// with new, with the whole file as context. before is the file the diff
// claims to start from.
func replaceLine(before, old, new string) string {
	return replaceLineIn("tiny.go", before, old, new)
}

// failsOnceTest fails the first time it runs in a directory and passes
// after: a flaky test, made deterministic.
const failsOnceTest = `package tiny

import (
	"os"
	"testing"
)

func TestAdd(t *testing.T) {
	if _, err := os.Stat("ran"); err != nil {
		os.WriteFile("ran", nil, 0o644)
		t.Fatal("TINY-SUM: the first run fails")
	}
}
`

// rewriteFile returns a git-style diff that replaces the whole of file.
func rewriteFile(file, before, after string) string {
	old := strings.Split(strings.TrimSuffix(before, "\n"), "\n")
	neu := strings.Split(strings.TrimSuffix(after, "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%[1]s b/%[1]s\n--- a/%[1]s\n+++ b/%[1]s\n@@ -1,%[2]d +1,%[3]d @@\n", file, len(old), len(neu))
	for _, l := range old {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range neu {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

// replaceLineIn is replaceLine for any file of the module.
func replaceLineIn(file, before, old, new string) string {
	lines := strings.Split(strings.TrimSuffix(before, "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%[1]s b/%[1]s\n--- a/%[1]s\n+++ b/%[1]s\n@@ -1,%[2]d +1,%[2]d @@\n", file, len(lines))
	for _, l := range lines {
		if l == old {
			fmt.Fprintf(&b, "-%s\n+%s\n", l, new)
		} else {
			fmt.Fprintf(&b, " %s\n", l)
		}
	}
	return b.String()
}

func writeMutant(t *testing.T, dir, name, content string) Mutant {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	ms, err := Load(dir)
	require.NoError(t, err)
	for _, m := range ms {
		if m.ID == strings.TrimSuffix(name, ".patch") {
			return m
		}
	}
	t.Fatalf("Load did not return %s", name)
	return Mutant{}
}

func TestRun(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed: the runner applies patches with git apply")
	}
	// Scratch copies go to TMPDIR; a private one shows that each is removed.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	patches := t.TempDir()
	opts := Options{Timeout: 5 * time.Second, InvariantIDs: []string{"TINY-OTHER", "TINY-SUM"}}

	cases := []struct {
		name, patch, status, killedBy string
		git                           bool
		alsoFailed                    []string
	}{
		{"tiny-subtract.patch",
			fmt.Sprintf(header, "Add subtracts.") + replaceLine(tinySource, "\treturn a + b", "\treturn a - b"),
			StatusKilled, "TINY-SUM", false, nil},
		{"tiny-comment.patch",
			fmt.Sprintf(header, "Only a comment changes.") + replaceLine(tinySource, "// Add returns the sum of a and b.", "// Add adds."),
			StatusSurvived, "", true, nil},
		{"tiny-stale.patch",
			fmt.Sprintf(header, "The context is not in the file.") + replaceLine(strings.Replace(tinySource, "a + b", "a * b", 1), "\treturn a * b", "\treturn a - b"),
			StatusDoesNotApply, "", false, nil},
		{"tiny-type.patch",
			fmt.Sprintf(header, "Add returns a string.") + replaceLine(tinySource, "\treturn a + b", "\treturn a + \"b\""),
			StatusDoesNotCompile, "", false, nil},
		// go build skips tests: a patch that breaks only a test must not
		// pass for a kill.
		{"tiny-testonly.patch",
			fmt.Sprintf(header, "The test no longer compiles.") + replaceLineIn("tiny_test.go", tinyTest, "\tif got := Add(2, 3); got != 5 {", "\tif got := Add(2, 3); got != \"5\" {"),
			StatusDoesNotCompile, "", false, nil},
		// The tests fail, but not through the check the header names.
		{"tiny-wrongcheck.patch",
			strings.Replace(fmt.Sprintf(header, "Add subtracts."), "TINY-SUM", "TINY-OTHER", 1) + replaceLine(tinySource, "\treturn a + b", "\treturn a - b"),
			StatusMisattributed, "TINY-SUM", false, nil},
		// A test function is a check too, and several may be named.
		{"tiny-bytest.patch",
			strings.Replace(fmt.Sprintf(header, "Add subtracts."), "TINY-SUM", "TINY-OTHER, TestAdd", 1) + replaceLine(tinySource, "\treturn a + b", "\treturn a - b"),
			StatusKilled, "TestAdd", false, nil},
		// Every named check that failed is recorded, the first as the kill.
		{"tiny-bothchecks.patch",
			strings.Replace(fmt.Sprintf(header, "Add subtracts."), "TINY-SUM", "TestAdd, TINY-OTHER, TINY-SUM", 1) + replaceLine(tinySource, "\treturn a + b", "\treturn a - b"),
			StatusKilled, "TestAdd", false, []string{"TINY-SUM"}},
		// A hang is not a kill.
		{"tiny-hang.patch",
			fmt.Sprintf(header, "Add never returns.") + replaceLine(tinySource, "\treturn a + b", "\tselect {}"),
			StatusTimedOut, "", false, nil},
		// A failure that does not happen again when the killing test is
		// re-run is not a kill: the test fails only on its first run.
		{"tiny-once.patch",
			fmt.Sprintf(header, "The test fails once.") + rewriteFile("tiny_test.go", tinyTest, failsOnceTest),
			StatusNotReproduced, "TINY-SUM", false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := writeMutant(t, patches, c.name, c.patch)
			r := Run(context.Background(), newModule(t, c.git), m, opts)
			require.Equal(t, []any{c.status, c.killedBy, c.status == StatusKilled}, []any{r.Status, r.KilledBy, r.Killed},
				"status, killed by, killed; output:\n%s", r.Output)
			assert.Equal(t, c.alsoFailed, r.AlsoFailed, "the other named checks that failed")
			if r.Killed {
				assert.Equal(t, "go test -count=1 example.com/tiny -run=^TestAdd$", r.Rerun, "the command that repeats the kill")
				assert.Zero(t, r.Seed, "a plain test has no seed")
			}
			assert.Equal(t, m.ID, r.ID, "result does not describe the mutant: %+v", r)
			assert.Equal(t, "tiny", r.Subsystem, "result does not describe the mutant: %+v", r)
			assert.Equal(t, "seeded", r.Source, "result does not describe the mutant: %+v", r)
			assert.Greater(t, r.Seconds, 0.0, "result does not describe the mutant: %+v", r)
		})
	}
	left, err := filepath.Glob(filepath.Join(tmp, scratchPattern))
	require.NoError(t, err)
	assert.Empty(t, left, "scratch copies left behind")
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	valid := "# Bug: Add subtracts.\n# The rest is free text: it explains the bug.\n# Source: kubernetes/kubernetes#56022\n" +
		"# Invariant: TINY-SUM\n# Packages: ./properties/... ./core/tiny/...\n" + replaceLine(tinySource, "\treturn a + b", "\treturn a - b")
	m := writeMutant(t, dir, "tiny-subtract.patch", valid)
	want := Mutant{
		ID: "tiny-subtract", Subsystem: "tiny", Bug: "Add subtracts.", Source: "kubernetes/kubernetes#56022",
		Checks: []string{"TINY-SUM"}, Packages: []string{"./properties/...", "./core/tiny/..."}, Path: filepath.Join(dir, "tiny-subtract.patch"),
	}
	assert.Equal(t, want, m, "Load")
	// A plain unified diff (diff -u with a/ and b/ labels) is a patch too.
	plainDir := t.TempDir()
	plain := writeMutant(t, plainDir, "tiny-plain.patch", strings.Replace(valid, "diff --git a/tiny.go b/tiny.go\n", "", 1))
	assert.Equal(t, []string{"TINY-SUM"}, plain.Checks, "Load of a plain unified diff = %+v", plain)
	// Tests is optional: absent above, read when present.
	selectiveDir := t.TempDir()
	selective := writeMutant(t, selectiveDir, "tiny-selective.patch", strings.Replace(valid, "# Packages:", "# Tests: ^TestSuites$/^sim$\n# Packages:", 1))
	assert.Equal(t, "^TestSuites$/^sim$", selective.Tests, "Load of a Tests field")

	bad := []struct{ name, content, wantErr string }{
		{"tiny-noinvariant.patch", strings.Replace(valid, "# Invariant: TINY-SUM\n", "", 1), `"Invariant" is missing`},
		{"tiny-typo.patch", strings.Replace(valid, "# Invariant:", "# Invarient:", 1), `unknown header field "Invarient"`},
		{"tiny-twice.patch", "# Bug: again\n" + valid, `"Bug" repeated`},
		{"tiny-badid.patch", strings.Replace(valid, "TINY-SUM", "tiny-sum", 1), `"tiny-sum" is neither an invariant ID`},
		{"tiny-flag.patch", strings.Replace(valid, "./properties/...", "-exec=evil", 1), `"-exec=evil" must start with "./"`},
		{"tiny-nodiff.patch", strings.Split(valid, "diff --git")[0], `no diff`},
		{"tiny-badtests.patch", strings.Replace(valid, "# Packages:", "# Tests: ^Test(Add$\n# Packages:", 1), `header field "Tests": "^Test(Add$" must be a go test -run regexp`},
		{"tiny-emptytests.patch", strings.Replace(valid, "# Packages:", "# Tests:\n# Packages:", 1), `header field "Tests" is empty`},
		{"Tiny_Name.patch", valid, "file name must be"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			one := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(one, b.name), []byte(b.content), 0o644))
			_, err := Load(one)
			require.Error(t, err, "Load error = %v; want one naming %s and %s", err, b.name, b.wantErr)
			require.Contains(t, err.Error(), b.name, "Load error = %v; want one naming %s and %s", err, b.name, b.wantErr)
			require.Contains(t, err.Error(), b.wantErr, "Load error = %v; want one naming %s and %s", err, b.name, b.wantErr)
		})
	}
}

func TestKilledBy(t *testing.T) {
	ids := []string{"DM-INIT", "DM-EXCLUSIVE", "DM-INIT-REUSE"}
	cases := []struct{ output, want string }{
		{"--- FAIL: TestDM (0.1s)\n    DM-INIT-REUSE: device reused\n  later DM-EXCLUSIVE\n", "DM-INIT-REUSE"},
		{"DM-EXCLUSIVE first, then DM-INIT", "DM-EXCLUSIVE"},
		{"XDM-INIT and DM-INITS are other words\n--- FAIL: TestA (0.0s)\n    --- FAIL: TestA/b (0.0s)\n", "TestA"},
		{"FAIL\texample.com/tiny [build failed]\n", "build/test failure"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, killedBy(c.output, ids), "killedBy(%q)", c.output)
	}
}

func TestCheck(t *testing.T) {
	root := newModule(t, false)
	// A nested module's tests are not run by the mutants' go test, so its
	// test functions are no checks.
	nested := filepath.Join(root, "nested")
	require.NoError(t, os.MkdirAll(nested, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(nested, "go.mod"), []byte("module example.com/nested\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(nested, "n_test.go"), []byte("package nested\n\nfunc TestNested(t *testing.T) {}\n"), 0o644))

	require.NoError(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "other_test.go"), []byte("package tiny\n\nfunc TestSub(t *testing.T) {}\n"), 0o644))
	good := Mutant{ID: "tiny-good", Checks: []string{"TINY-SUM", "TestAdd"}, Packages: []string{"./...", "./"}}
	require.NoError(t, Check(root, []Mutant{good}, []string{"TINY-SUM"}))
	// The first element of a slash-separated pattern names the function;
	// the rest are subtests, which only a run can list.
	for _, tests := range []string{"^TestAdd$/^sim$", "Add", "^TestSub$"} {
		selective := Mutant{ID: "tiny-selective", Checks: []string{"TINY-SUM"}, Packages: []string{"./"}, Tests: tests}
		assert.NoError(t, Check(root, []Mutant{selective}, []string{"TINY-SUM"}), "Tests %q", tests)
	}

	bad := []struct {
		m       Mutant
		wantErr string
	}{
		{Mutant{ID: "tiny-nodir", Checks: []string{"TINY-SUM"}, Packages: []string{"./missing/..."}},
			`tiny-nodir: header field "Packages": "./missing/..." is not a directory of the module`},
		{Mutant{ID: "tiny-noinv", Checks: []string{"TINY-GONE"}, Packages: []string{"./..."}},
			`tiny-noinv: header field "Invariant": TINY-GONE is not an invariant of any suite`},
		{Mutant{ID: "tiny-notest", Checks: []string{"TestGone"}, Packages: []string{"./..."}},
			`tiny-notest: header field "Invariant": no test function TestGone in the module`},
		{Mutant{ID: "tiny-nested", Checks: []string{"TestNested"}, Packages: []string{"./..."}},
			`tiny-nested: header field "Invariant": no test function TestNested in the module`},
		// A Tests pattern that selects nothing would make the baseline and
		// the patched run pass alike: the mutant would survive untested.
		{Mutant{ID: "tiny-runsnothing", Checks: []string{"TINY-SUM"}, Packages: []string{"./..."}, Tests: "^TestSuites$/^sim$"},
			`tiny-runsnothing: header field "Tests": "^TestSuites$/^sim$" selects no test function of ./...`},
		// A test function of another package is not one the mutant runs.
		{Mutant{ID: "tiny-otherpackage", Checks: []string{"TINY-SUM"}, Packages: []string{"./sub/..."}, Tests: "^TestSub$"},
			`tiny-otherpackage: header field "Tests": "^TestSub$" selects no test function of ./sub/...`},
	}
	for _, b := range bad {
		assert.EqualError(t, Check(root, []Mutant{b.m}, []string{"TINY-SUM"}), b.wantErr)
	}
}

func TestBaseline(t *testing.T) {
	opts := Options{Timeout: 5 * time.Second}
	status, out := Baseline(context.Background(), newModule(t, false), []string{"./..."}, "", opts)
	assert.Equal(t, StatusSurvived, status, "the unpatched tests pass; output:\n%s", out)

	// A test that fails on the unpatched tree would pass off every mutant
	// as killed.
	flaky := newModule(t, false)
	require.NoError(t, os.WriteFile(filepath.Join(flaky, "tiny_test.go"), []byte(failsOnceTest), 0o644))
	status, out = Baseline(context.Background(), flaky, []string{"./..."}, "", opts)
	assert.Equal(t, StatusKilled, status, "a failing baseline; output:\n%s", out)
	assert.Contains(t, out, "TINY-SUM: the first run fails")
}

func TestKillingTest(t *testing.T) {
	// Two suites fail; the kill is attributed to the second one's invariant,
	// so its test and seed are the ones to re-run.
	rapid := "--- FAIL: TestSuites (0.20s)\n    --- FAIL: TestSuites/admission (0.10s)\n" +
		"        suites_test.go:21: [rapid] failed after 3 tests: AD-FIT: wrong reasons\n" +
		"            To reproduce, specify -run=\"TestSuites/admission\" -rapid.seed=42\n" +
		"    --- FAIL: TestSuites/devicemanager (0.19s)\n" +
		"        suites_test.go:21: [rapid] failed after 12 tests: DM-EXCLUSIVE: d1 held twice\n" +
		"            To reproduce, specify -run=\"TestSuites/devicemanager\" -rapid.failfile=\"testdata/rapid/x.fail\" (or -rapid.seed=1234567890123)\n" +
		"FAIL\nFAIL\tgithub.com/nodeproof/nodeproof/properties\t0.3s\n"
	name, seed := killingTest(rapid, "DM-EXCLUSIVE")
	assert.Equal(t, "TestSuites/devicemanager", name)
	assert.Equal(t, uint64(1234567890123), seed)
	assert.Equal(t, "^TestSuites$/^devicemanager$", anchored(name))
	assert.Equal(t, "github.com/nodeproof/nodeproof/properties", testPackage(rapid, name, []string{"./properties/..."}))
	name, seed = killingTest(rapid, "AD-FIT")
	assert.Equal(t, []any{"TestSuites/admission", uint64(42)}, []any{name, seed})

	// A plain test that names an invariant has no seed, and a rapid line of
	// a later test is not its seed.
	plain := "--- FAIL: TestAllocate (0.01s)\n    alloc_test.go:9: AGENT-X: reservation kept\n" +
		"--- FAIL: TestOther (0.01s)\n    x_test.go:3: To reproduce, specify -run=\"TestOther\" -rapid.seed=7\nFAIL\nFAIL\texample.com/tiny\t0.1s\n"
	name, seed = killingTest(plain, "AGENT-X")
	assert.Equal(t, []any{"TestAllocate", uint64(0)}, []any{name, seed})
	name, seed = killingTest(plain, "TestOther")
	assert.Equal(t, []any{"TestOther", uint64(7)}, []any{name, seed})
}

// TestRunRapidKill: a kill by a rapid property records the seed rapid
// printed, and the runner repeats it with that seed. Rapid's flags must
// follow the package on the go test command line (go test ends its own
// flags at the first it does not know), which only a real rapid test shows.
func TestRunRapidKill(t *testing.T) {
	dir := t.TempDir()
	rapidSum, err := os.ReadFile("../go.sum")
	require.NoError(t, err)
	var sum strings.Builder
	for _, line := range strings.Split(string(rapidSum), "\n") {
		if strings.HasPrefix(line, "pgregory.net/rapid v1.3.0") {
			sum.WriteString(line + "\n")
		}
	}
	files := map[string]string{
		"go.mod": "module example.com/tiny\n\ngo 1.26\n\nrequire pgregory.net/rapid v1.3.0\n",
		"go.sum": sum.String(),
		// The package is not the module's root, so a go test that lost its
		// package argument (and so tests ".") fails to build.
		"sub/tiny.go": tinySource,
		"sub/tiny_test.go": `package tiny

import (
	"testing"

	"pgregory.net/rapid"
)

func TestAddGrows(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.IntRange(0, 100).Draw(t, "a")
		b := rapid.IntRange(1, 100).Draw(t, "b")
		if Add(a, b) <= a {
			t.Fatalf("TINY-SUM: Add(%d, %d) = %d", a, b, Add(a, b))
		}
	})
}
`,
	}
	for name, content := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	m := writeMutant(t, t.TempDir(), "tiny-subtract.patch", fmt.Sprintf(header, "Add subtracts.")+replaceLineIn("sub/tiny.go", tinySource, "\treturn a + b", "\treturn a - b"))
	r := Run(context.Background(), dir, m, Options{Timeout: time.Minute, InvariantIDs: []string{"TINY-SUM"}})
	require.Equal(t, StatusKilled, r.Status, "output:\n%s", r.Output)
	assert.Equal(t, "TINY-SUM", r.KilledBy)
	assert.NotZero(t, r.Seed, "the seed rapid printed")
	assert.Equal(t, fmt.Sprintf("go test -count=1 example.com/tiny/sub -run=^TestAddGrows$ -rapid.seed=%d", r.Seed), r.Rerun)

	// With a base seed the kill is the same on every run.
	seeded := Options{Timeout: time.Minute, InvariantIDs: []string{"TINY-SUM"}, Seed: 7}
	first, again := Run(context.Background(), dir, m, seeded), Run(context.Background(), dir, m, seeded)
	require.Equal(t, StatusKilled, first.Status, "output:\n%s", first.Output)
	assert.Equal(t, first.Seed, again.Seed, "the failing case under base seed 7")
	assert.Equal(t, first.Rerun, again.Rerun)
}

// otherTest is a second test of the tiny module, outside a "^TestAdd$"
// selection, that fails with both subtractPatch and sevenPatch.
const otherTest = `package tiny

import "testing"

func TestOther(t *testing.T) {
	if Add(7, 0) != 7 || Add(0, 7) != 7 {
		t.Fatalf("TINY-OTHER: Add(7, 0) = %d, Add(0, 7) = %d, want 7", Add(7, 0), Add(0, 7))
	}
}
`

// TestRunSelectedTests: a mutant with a Tests pattern runs only the tests it
// selects, and is judged by them alone; so is its baseline.
func TestRunSelectedTests(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed: the runner applies patches with git apply")
	}
	newTwoTestModule := func(t *testing.T) string {
		dir := newModule(t, false)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "other_test.go"), []byte(otherTest), 0o644))
		return dir
	}
	selected := strings.Replace(header, "# Packages:", "# Tests: ^TestAdd$\n# Packages:", 1)
	opts := Options{Timeout: 5 * time.Second, InvariantIDs: []string{"TINY-OTHER", "TINY-SUM"}}
	patches := t.TempDir()

	// Both tests fail with the patch, but TestOther is not run at all.
	subtract := writeMutant(t, patches, "tiny-subtract.patch", fmt.Sprintf(selected, "Add subtracts.")+replaceLine(tinySource, "\treturn a + b", "\treturn a - b"))
	require.Equal(t, "^TestAdd$", subtract.Tests)
	r := Run(context.Background(), newTwoTestModule(t), subtract, opts)
	require.Equal(t, []any{StatusKilled, "TINY-SUM"}, []any{r.Status, r.KilledBy}, "output:\n%s", r.Output)
	assert.NotContains(t, r.Output, "TestOther", "a test outside the Tests pattern ran")
	assert.Equal(t, "go test -count=1 example.com/tiny -run=^TestAdd$", r.Rerun, "the command that repeats the kill")

	// Only TestOther catches this bug: run whole, the package fails by
	// TINY-OTHER (misattributed); with the selection the mutant survives,
	// which is the truth about TestAdd.
	seven := writeMutant(t, patches, "tiny-seven.patch", fmt.Sprintf(selected, "Add is off by one when a >= 7.")+replaceLine(tinySource, "\treturn a + b", "\treturn a + b + a/7"))
	r = Run(context.Background(), newTwoTestModule(t), seven, opts)
	assert.Equal(t, StatusSurvived, r.Status, "output:\n%s", r.Output)

	// The baseline runs the same selection: a failing test outside it does
	// not fail the baseline, and one inside it does.
	broken := newTwoTestModule(t)
	require.NoError(t, os.WriteFile(filepath.Join(broken, "tiny.go"), []byte(strings.Replace(tinySource, "a + b", "a + b + a/7", 1)), 0o644))
	status, out := Baseline(context.Background(), broken, []string{"./..."}, "^TestAdd$", opts)
	assert.Equal(t, StatusSurvived, status, "TestOther is outside the selection; output:\n%s", out)
	status, out = Baseline(context.Background(), broken, []string{"./..."}, "^TestOther$", opts)
	assert.Equal(t, StatusKilled, status, "TestOther is the selection; output:\n%s", out)
}

// TestRunPatchedPackageMustCompile: a patch that breaks the package it
// changes does not compile even when no test of the mutant imports that
// package, so it can never pass for a survivor that was tested.
func TestRunPatchedPackageMustCompile(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed: the runner applies patches with git apply")
	}
	root := newModule(t, false)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "other"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "other", "other_test.go"),
		[]byte("package other\n\nimport \"testing\"\n\nfunc TestOther(t *testing.T) {}\n"), 0o644))
	patch := strings.Replace(fmt.Sprintf(header, "Add returns a string."), "./...", "./other", 1) +
		replaceLine(tinySource, "\treturn a + b", "\treturn a + \"b\"")
	m := writeMutant(t, t.TempDir(), "tiny-untested.patch", patch)
	r := Run(context.Background(), root, m, Options{Timeout: time.Minute, InvariantIDs: []string{"TINY-SUM"}})
	assert.Equal(t, StatusDoesNotCompile, r.Status, "output:\n%s", r.Output)
	assert.Zero(t, r.Phases.Test, "no test runs after a failed build")
}

func TestPatchedPackages(t *testing.T) {
	patch := "# Bug: b\n" +
		"diff --git a/core/x/x.go b/core/x/x.go\n--- a/core/x/x.go\n+++ b/core/x/x.go\n@@ -1 +1 @@\n-a\n+b\n" +
		"diff --git a/core/x/y.go b/core/x/y.go\n--- a/core/x/y.go\n+++ b/core/x/y.go\n@@ -1 +1 @@\n-a\n+b\n" +
		"diff --git a/gone/g.go b/gone/g.go\ndeleted file mode 100644\n--- a/gone/g.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n" +
		"diff --git a/agent/p/p_test.go b/agent/p/p_test.go\n--- a/agent/p/p_test.go\n+++ b/agent/p/p_test.go\n@@ -1 +1 @@\n-a\n+b\n" +
		"diff --git a/root.go b/root.go\n--- a/root.go\n+++ b/root.go\n@@ -1 +1 @@\n-a\n+b\n" +
		"diff --git a/docs/x.md b/docs/x.md\n--- a/docs/x.md\n+++ b/docs/x.md\n@@ -1 +1 @@\n-a\n+b\n"
	path := filepath.Join(t.TempDir(), "x-y.patch")
	require.NoError(t, os.WriteFile(path, []byte(patch), 0o644))
	// The patched tree: gone/ went with its only file.
	root := t.TempDir()
	for _, dir := range []string{"core/x", "agent/p", "docs"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, dir), 0o755))
	}
	got, err := patchedPackages(path, root)
	require.NoError(t, err)
	assert.Equal(t, []string{"./.", "./agent/p", "./core/x"}, got)
}

// TestOptionsEnv: the base seed and the shrink bound reach the tests as
// rapid's environment variables, and only when set.
func TestOptionsEnv(t *testing.T) {
	assert.Empty(t, Options{}.env())
	assert.Equal(t, []string{"RAPID_SEED=7", "RAPID_SHRINKTIME=5s"}, Options{Seed: 7, ShrinkTime: 5 * time.Second}.env())
	assert.Equal(t, []string{"RAPID_SHRINKTIME=1.5s"}, Options{ShrinkTime: 1500 * time.Millisecond}.env())
}
