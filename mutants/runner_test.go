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
	lines := strings.Split(strings.TrimSuffix(before, "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/tiny.go b/tiny.go\n--- a/tiny.go\n+++ b/tiny.go\n@@ -1,%d +1,%d @@\n", len(lines), len(lines))
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
	opts := Options{Timeout: time.Minute, InvariantIDs: []string{"TINY-OTHER", "TINY-SUM"}}

	cases := []struct {
		name, patch, status, killedBy string
		git                           bool
	}{
		{"tiny-subtract.patch",
			fmt.Sprintf(header, "Add subtracts.") + replaceLine(tinySource, "\treturn a + b", "\treturn a - b"),
			StatusKilled, "TINY-SUM", false},
		{"tiny-comment.patch",
			fmt.Sprintf(header, "Only a comment changes.") + replaceLine(tinySource, "// Add returns the sum of a and b.", "// Add adds."),
			StatusSurvived, "", true},
		{"tiny-stale.patch",
			fmt.Sprintf(header, "The context is not in the file.") + replaceLine(strings.Replace(tinySource, "a + b", "a * b", 1), "\treturn a * b", "\treturn a - b"),
			StatusDoesNotApply, "", false},
		{"tiny-type.patch",
			fmt.Sprintf(header, "Add returns a string.") + replaceLine(tinySource, "\treturn a + b", "\treturn a + \"b\""),
			StatusDoesNotCompile, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := writeMutant(t, patches, c.name, c.patch)
			r := Run(context.Background(), newModule(t, c.git), m, opts)
			require.Equal(t, c.status, r.Status, "got status %q, killed %v by %q; want %q by %q\noutput:\n%s", r.Status, r.Killed, r.KilledBy, c.status, c.killedBy, r.Output)
			require.Equal(t, c.killedBy, r.KilledBy, "got status %q, killed %v by %q; want %q by %q\noutput:\n%s", r.Status, r.Killed, r.KilledBy, c.status, c.killedBy, r.Output)
			require.Equal(t, (c.status == StatusKilled), r.Killed, "got status %q, killed %v by %q; want %q by %q\noutput:\n%s", r.Status, r.Killed, r.KilledBy, c.status, c.killedBy, r.Output)
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
		Invariant: "TINY-SUM", Packages: []string{"./properties/...", "./core/tiny/..."}, Path: filepath.Join(dir, "tiny-subtract.patch"),
	}
	assert.Equal(t, want, m, "Load")
	// A plain unified diff (diff -u with a/ and b/ labels) is a patch too.
	plainDir := t.TempDir()
	plain := writeMutant(t, plainDir, "tiny-plain.patch", strings.Replace(valid, "diff --git a/tiny.go b/tiny.go\n", "", 1))
	assert.Equal(t, "TINY-SUM", plain.Invariant, "Load of a plain unified diff = %+v", plain)

	bad := []struct{ name, content, wantErr string }{
		{"tiny-noinvariant.patch", strings.Replace(valid, "# Invariant: TINY-SUM\n", "", 1), `"Invariant" is missing`},
		{"tiny-typo.patch", strings.Replace(valid, "# Invariant:", "# Invarient:", 1), `unknown header field "Invarient"`},
		{"tiny-twice.patch", "# Bug: again\n" + valid, `"Bug" repeated`},
		{"tiny-badid.patch", strings.Replace(valid, "TINY-SUM", "tiny sum", 1), `"tiny sum" is not an invariant ID`},
		{"tiny-flag.patch", strings.Replace(valid, "./properties/...", "-exec=evil", 1), `"-exec=evil" must start with "./"`},
		{"tiny-nodiff.patch", strings.Split(valid, "diff --git")[0], `no diff`},
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
