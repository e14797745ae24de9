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
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if git {
		if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
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
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	ms, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
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
			if r.Status != c.status || r.KilledBy != c.killedBy || r.Killed != (c.status == StatusKilled) {
				t.Fatalf("got status %q, killed %v by %q; want %q by %q\noutput:\n%s", r.Status, r.Killed, r.KilledBy, c.status, c.killedBy, r.Output)
			}
			if r.ID != m.ID || r.Subsystem != "tiny" || r.Source != "seeded" || r.Seconds <= 0 {
				t.Errorf("result does not describe the mutant: %+v", r)
			}
		})
	}
	left, err := filepath.Glob(filepath.Join(tmp, scratchPattern))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("scratch copies left behind: %v", left)
	}
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
	if fmt.Sprint(m) != fmt.Sprint(want) {
		t.Errorf("Load = %+v, want %+v", m, want)
	}
	// A plain unified diff (diff -u with a/ and b/ labels) is a patch too.
	plainDir := t.TempDir()
	plain := writeMutant(t, plainDir, "tiny-plain.patch", strings.Replace(valid, "diff --git a/tiny.go b/tiny.go\n", "", 1))
	if plain.Invariant != "TINY-SUM" {
		t.Errorf("Load of a plain unified diff = %+v", plain)
	}

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
			if err := os.WriteFile(filepath.Join(one, b.name), []byte(b.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(one)
			if err == nil || !strings.Contains(err.Error(), b.name) || !strings.Contains(err.Error(), b.wantErr) {
				t.Fatalf("Load error = %v; want one naming %s and %s", err, b.name, b.wantErr)
			}
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
		if got := killedBy(c.output, ids); got != c.want {
			t.Errorf("killedBy(%q) = %q, want %q", c.output, got, c.want)
		}
	}
}
