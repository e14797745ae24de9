package findings

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/findings"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/verify"
)

// fakeSearch finds a finding from the seeds in found, reports other as
// failing first from seed 99, and finds nothing elsewhere.
func fakeSearch(found map[uint64]int) findings.Searcher {
	return func(f verify.Finding, seed uint64, checks, steps int, _ time.Duration) (properties.Search, error) {
		s := properties.Search{Finding: f, Seed: seed, Seconds: 2, Cases: checks}
		switch n, ok := found[seed]; {
		case ok:
			s.Found, s.FoundAfter, s.Steps, s.Cases = true, float64(seed), n, 3
			s.Failure = &properties.Failure{Invariant: f.Property, Steps: []string{"step 1: start", f.Property + ": broken"}, Replay: "nodeproof replay --suite x --seed 7 --steps 100"}
		case seed == 99:
			s.Other = "X-OTHER"
			s.Failure = &properties.Failure{Invariant: "X-OTHER", Steps: []string{"X-OTHER: broken"}}
		}
		return s, nil
	}
}

var testFinding = verify.Finding{ID: "T-F1", Suite: "x", Property: "T-C-PROMISE", Seed: 5}

func TestFindingsFromOwnSeed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "findings.json")
	var out, errOut bytes.Buffer
	err := (&Options{Findings: []verify.Finding{testFinding}, JSONPath: path}).Run(fakeSearch(map[uint64]int{5: 4}), &out, &errOut)
	require.NoError(t, err)
	assert.Contains(t, out.String(), "T-F1  T-C-PROMISE  seed 5: found after 5.00 s (3 cases), shrunk to 4 steps")
	assert.Contains(t, out.String(), "    step 1: start\n")
	assert.Contains(t, out.String(), "    replay: nodeproof replay --suite x --seed 7 --steps 100\n")
	assert.Contains(t, out.String(), "total: 1 of 1 finding reproduced")
	assert.Contains(t, errOut.String(), "searching for T-F1 (T-C-PROMISE) in suite x from seed 5")
	var file findings.File
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &file))
	require.Len(t, file.Findings, 1)
	assert.True(t, file.Findings[0].Reproduced)
	assert.Equal(t, 4.0, file.Findings[0].MedianSteps)
}

func TestFindingsNotReproducedFails(t *testing.T) {
	var out bytes.Buffer
	err := (&Options{Findings: []verify.Finding{testFinding}}).Run(fakeSearch(nil), &out, &bytes.Buffer{})
	assert.Equal(t, cli.StatusFailed, exitCode(err))
	assert.Contains(t, out.String(), "seed 5: NOT FOUND in 300 cases")
	assert.Contains(t, out.String(), "total: 0 of 1 finding reproduced")
}

func TestFindingsSweep(t *testing.T) {
	var out bytes.Buffer
	opts := Options{Findings: []verify.Finding{testFinding}, Sweep: true, First: 1, Last: 4}
	err := opts.Run(fakeSearch(map[uint64]int{1: 3, 2: 9, 4: 5}), &out, &bytes.Buffer{})
	require.NoError(t, err, "found from 3 of 4 seeds is reproduced")
	assert.Contains(t, out.String(), "T-F1: found from 3 of 4 seeds; median 2.00 s to find, median 5 shrunk steps")
}

func TestFindingsOtherFailureFails(t *testing.T) {
	var out bytes.Buffer
	opts := Options{Findings: []verify.Finding{testFinding}, Sweep: true, First: 98, Last: 99}
	err := opts.Run(fakeSearch(map[uint64]int{98: 3}), &out, &bytes.Buffer{})
	assert.Equal(t, cli.StatusFailed, exitCode(err))
	assert.Contains(t, out.String(), "seed 99: FAILED: X-OTHER failed first, which no known finding explains")
}

func TestFindingsBadArguments(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"unknown finding": {[]string{"findings", "NO-SUCH-F9"}, `finding "NO-SUCH-F9": no such finding`},
		"bad range":       {[]string{"findings", "--seeds", "5..1"}, "below its start"},
		"seed zero":       {[]string{"findings", "--seeds", "0..3"}, "start at 1"},
		"too many seeds":  {[]string{"findings", "--seeds", "1..1001"}, "--seeds 1..1001: 1001 seeds exceed the bound of 1000"},
		"list and json":   {[]string{"findings", "--list", "--json", "x.json"}, "--list takes no --seeds or --json"},
		"negative shrink": {[]string{"findings", "--shrink-time", "-1s"}, "--shrink-time: -1s is negative"},
		"unwritable json": {[]string{"findings", "--json", "/proc/nodeproof/findings.json"}, "--json:"},
	} {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			status := cli.Execute(cli.NewRoot(NewCommand(fakeSearch(nil))), tc.args, nil, &out, &errOut)
			assert.Equal(t, cli.StatusUsage, status)
			assert.Contains(t, errOut.String(), tc.want)
		})
	}
}

// TestFindingsFailedWrite: output that cannot be written fails the command.
func TestFindingsFailedWrite(t *testing.T) {
	err := (&Options{Findings: []verify.Finding{testFinding}}).Run(fakeSearch(map[uint64]int{5: 4}), failingWriter{}, &bytes.Buffer{})
	assert.ErrorContains(t, err, "writing the output")
	assert.Equal(t, cli.StatusFailed, exitCode(err))
}

func exitCode(err error) int {
	var e *cli.ExitError
	if errors.As(err, &e) {
		return e.Status
	}
	if err != nil {
		return -1
	}
	return cli.StatusOK
}

// TestFindingsJSONWriteFails: a --json that passed the check before the
// searches but cannot be written after them (its directory replaced
// meanwhile) is output that was not delivered: exit 1, not a usage error.
func TestFindingsJSONWriteFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	require.NoError(t, os.Mkdir(dir, 0o755))
	found := fakeSearch(map[uint64]int{5: 4})
	search := func(f verify.Finding, seed uint64, checks, steps int, shrink time.Duration) (properties.Search, error) {
		require.NoError(t, os.RemoveAll(dir))
		require.NoError(t, os.WriteFile(dir, nil, 0o644))
		return found(f, seed, checks, steps, shrink)
	}
	var stdout bytes.Buffer
	err := (&Options{Findings: []verify.Finding{testFinding}, JSONPath: filepath.Join(dir, "f.json")}).Run(search, &stdout, &bytes.Buffer{})
	assert.ErrorContains(t, err, "writing the output: --json")
	assert.Equal(t, cli.StatusFailed, exitCode(err))
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
