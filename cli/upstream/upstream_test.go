package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/upstream"
	"github.com/nodeproof/nodeproof/verify"
)

// module is a conformance module directory with a go.mod and every
// release's module file.
func module(t *testing.T) string {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "releases"), 0o755))
	for _, r := range upstream.Releases {
		if r.ModFile != "" {
			require.NoError(t, os.WriteFile(filepath.Join(dir, r.ModFile), []byte("module x\n"), 0o644))
		}
	}
	return dir
}

// stand is a runner that plays every finding's test, showing each bug on
// the modelled release and none on the others, and one comparison that
// differs off the modelled release.
type stand struct {
	ran    []string
	env    map[string][]string
	checks map[string]int
}

func (s *stand) deps() Deps {
	return Deps{Run: func(_ context.Context, _ string, r upstream.Release, opts upstream.RunOptions) (upstream.Column, error) {
		s.ran = append(s.ran, r.Version)
		s.env[r.Version] = opts.Env
		if s.checks != nil {
			s.checks[r.Version] = opts.Checks
		}
		col := upstream.Column{Release: r.Version, BuildSeconds: 1, RunSeconds: 2, Checks: opts.Checks}
		for _, f := range verify.Findings() {
			name := strings.TrimPrefix(f.Confirmation, "conformance: ")
			v := upstream.Verdict{Finding: f.ID, Release: r.Version, Present: r.Version == upstream.Modelled}
			if !v.Present {
				v.Detail = "kept"
			}
			col.Tests = append(col.Tests, upstream.Test{Name: name, Passed: true, Verdicts: []upstream.Verdict{v}})
		}
		compare := upstream.Test{Name: "TestCompare", Passed: r.Version == upstream.Modelled}
		if !compare.Passed {
			compare.Failure = "    harness.go:1: \n        Error: mismatch"
		}
		col.Tests = append(col.Tests, compare)
		for _, t := range col.Tests {
			opts.Done(t)
		}
		_, err := opts.Events.Write([]byte("{}\n"))
		return col, err
	}}
}

func run(t *testing.T, deps Deps, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := cli.Execute(cli.NewRoot(NewCommand(deps)), append([]string{"upstream"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestUpstreamFlagErrors: every bad flag is exit 2 naming it, before any
// release is built.
func TestUpstreamFlagErrors(t *testing.T) {
	mod := module(t)
	bare := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bare, "go.mod"), []byte("module x\n"), 0o644))
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct{ args, want string }{
		{"--releases v1.99.0 --module " + mod, `nodeproof upstream: --releases: release "v1.99.0": not one the matrix covers`},
		{"--releases v1.37.2,v1.37.2 --module " + mod, "nodeproof upstream: --releases: v1.37.2 given twice"},
		{"--module " + t.TempDir(), "nodeproof upstream: --module "},
		{"--releases v1.37.2 --module " + bare, "nodeproof upstream: --releases: v1.37.2: its module file releases/v1.37.2.mod is missing from "},
		{"--module " + mod + " --json " + filepath.Join(file, "m.json"), "nodeproof upstream: --json: "},
		{"--module " + mod + " extra", `nodeproof upstream: unexpected argument "extra"`},
		{"--module " + mod + " --checks -1", "nodeproof upstream: --checks: -1 is not a number of cases"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			s := &stand{env: map[string][]string{}}
			code, stdout, stderr := run(t, s.deps(), strings.Fields(tc.args)...)
			assert.Equal(t, cli.StatusUsage, code)
			assert.Contains(t, stderr, tc.want)
			assert.Empty(t, stdout)
			assert.Empty(t, s.ran)
		})
	}
}

// TestUpstreamMatrix: the releases run in the order given, each test
// printed as it ends; the matrix names every finding, present on the
// modelled release and absent on the other with its replay line; the
// comparison that differs is not a failure; the files are written; the
// modelled release alone gets the report's result files.
func TestUpstreamMatrix(t *testing.T) {
	mod := module(t)
	out := t.TempDir()
	s := &stand{env: map[string][]string{}, checks: map[string]int{}}
	// The stand's records say "fixed", the findings' records say "still
	// present in v1.37.2" for most: the run fails on the contradiction.
	code, stdout, stderr := run(t, s.deps(), "--module", mod, "--releases", "v1.37.2,v1.36.3", "--dir", filepath.Join(out, "up"),
		"--checks", "1000", "--json", filepath.Join(out, "upstream.json"), "--conformance", filepath.Join(out, "c.json"), "--plugin-check", filepath.Join(out, "p.json"))
	assert.Equal(t, []string{"v1.37.2", "v1.36.3"}, s.ran)
	assert.Empty(t, s.env["v1.37.2"])
	assert.Equal(t, map[string]int{"v1.37.2": 1000, "v1.36.3": 0}, s.checks, "the modelled release runs the module's own budget")
	assert.Equal(t, []string{"NODEPROOF_CONFORMANCE_JSON=" + filepath.Join(out, "c.json"), "NODEPROOF_PLUGINCHECK_JSON=" + filepath.Join(out, "p.json")}, s.env["v1.36.3"])
	assert.Contains(t, stdout, "  v1.37.2 FAIL TestCompare (0.0 s)\n")
	assert.Contains(t, stdout, "v1.37.2: built in 1 s, ran 17 tests in 2 s (1000 cases a comparison), 1 failed\n")
	assert.Contains(t, stdout, "finding  v1.36.3  v1.37.2\n")
	assert.Contains(t, stdout, "GC-F1    present  absent\n")
	assert.Contains(t, stdout, "GC-F1 on v1.37.2: absent: kept\n  replay: cd conformance && go test -count=1 -modfile=releases/v1.37.2.mod -tags=kubelet1.37 -run '^TestFindingGCMaxAgeIgnoresMinAge$' .\n")
	assert.Contains(t, stdout, "TestCompare on v1.37.2: differs: mismatch\n")
	assert.Contains(t, stdout, "0 of 1 other conformance tests agree on every release run\n")
	assert.Contains(t, stdout, `GC-F1: the record says "still present in v1.37.2`)
	assert.Equal(t, cli.StatusFailed, code, "stderr: %s", stderr)

	raw, err := os.ReadFile(filepath.Join(out, "upstream.json"))
	require.NoError(t, err)
	var m upstream.Matrix
	require.NoError(t, json.Unmarshal(raw, &m))
	assert.Len(t, m.Findings, len(verify.Findings()))
	assert.Equal(t, upstream.Modelled, m.Columns[0].Release)
	for _, name := range []string{"v1.37.2.json", "v1.37.2.jsonl", "v1.36.3.json", "v1.36.3.jsonl"} {
		assert.FileExists(t, filepath.Join(out, "up", name))
	}
}

// TestUpstreamModelledOnly: the modelled release alone, every finding
// present and every test passing, is a pass.
func TestUpstreamModelledOnly(t *testing.T) {
	mod := module(t)
	out := t.TempDir()
	s := &stand{env: map[string][]string{}}
	code, stdout, stderr := run(t, s.deps(), "--module", mod, "--dir", out, "--conformance", "", "--plugin-check", "")
	assert.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Equal(t, []string{upstream.Modelled}, s.ran)
	assert.Contains(t, stdout, "1 of 1 other conformance tests agree on every release run\n")
	assert.NotContains(t, stdout, "failures")
}
