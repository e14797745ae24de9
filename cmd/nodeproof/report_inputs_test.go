package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/simreport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportRefusesEmptyResultFiles: a results file that holds no results
// (null, an empty array) is not a section that ran and found nothing. It
// would show a green 0/0 and take the section off the not-run list, which
// CI's "nothing left not run" check reads, so it is bad input (exit 2),
// named with its flag and file, before any suite runs.
func TestReportRefusesEmptyResultFiles(t *testing.T) {
	dir := t.TempDir()
	for _, flag := range []string{"mutants", "linearizability", "conformance", "plugin-check"} {
		for name, tc := range map[string]struct{ body, want string }{
			"null":  {"null", "no results"},
			"empty": {"[]", "no results"},
			// An empty file was refused before: it is not JSON.
			"blank": {"  \n", "unexpected end of JSON input"},
		} {
			t.Run(flag+"/"+name, func(t *testing.T) {
				path := filepath.Join(dir, flag+"-"+name+".json")
				require.NoError(t, os.WriteFile(path, []byte(tc.body), 0o644))
				status, stdout, stderr := runNodeproof("", "report", "--out", filepath.Join(dir, "out"), "--checks", "1", "--histories", "0", "--sim-seeds", "0", "--suite", "^preemption$", "--"+flag, path)
				assert.Equal(t, cli.StatusUsage, status, "stdout: %s", stdout)
				assert.Contains(t, stderr, "--"+flag+": "+path+": ")
				assert.Contains(t, stderr, tc.want)
			})
		}
	}
}

// TestLoadSimRefusesInconsistentSweeps: a sweep file whose runs disagree
// with its totals, or whose hours are not a duration, is bad input.
func TestLoadSimRefusesInconsistentSweeps(t *testing.T) {
	good := func() *simreport.Section {
		s := syntheticSim()
		s.Seeds, s.Events, s.SimulatedHours = 2, 30, 4
		s.Runs = []simreport.Run{
			{Seed: 42, Events: 10, SimulatedHours: 2, Passed: true},
			{Seed: 43, Events: 20, SimulatedHours: 2, Passed: true},
		}
		return s
	}
	dir := t.TempDir()
	write := func(t *testing.T, s *simreport.Section) string {
		data, err := json.Marshal(s)
		require.NoError(t, err)
		path := filepath.Join(dir, t.Name()[len("TestLoadSimRefusesInconsistentSweeps/"):]+".json")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		return path
	}
	t.Run("good", func(t *testing.T) {
		_, err := loadSim(write(t, good()))
		require.NoError(t, err)
	})
	for name, tc := range map[string]struct {
		change func(*simreport.Section)
		want   string
	}{
		"failed run under a passing total": {func(s *simreport.Section) { s.Runs[1].Passed = false }, "runs[1]: passed is false under a total that passed"},
		"negative hours":                   {func(s *simreport.Section) { s.Hours = -2 }, "hours: -2 is not a simulated duration (more than 0, at most"},
		"zero hours":                       {func(s *simreport.Section) { s.Hours = 0 }, "hours: 0 is not a simulated duration"},
		"negative run hours":               {func(s *simreport.Section) { s.Runs[0].SimulatedHours = -1 }, "runs[0].simulated_hours: -1 is negative"},
		"run beyond its hours":             {func(s *simreport.Section) { s.Runs[0].SimulatedHours = 3 }, "runs[0].simulated_hours: 3 exceeds the 2 hours a seed runs"},
	} {
		t.Run(name, func(t *testing.T) {
			s := good()
			tc.change(s)
			_, err := loadSim(write(t, s))
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// TestCountsAreBounded: a count flag beyond its bound is a usage error
// before any work, like --steps.
func TestCountsAreBounded(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--out", out, "--checks", "30001"}, "--checks: 30001 exceeds the bound of 30000"},
		{[]string{"report", "--out", out, "--histories", "1000000"}, "--histories: 1000000 exceeds the bound of 300"},
		{[]string{"report", "--out", out, "--sim-seeds", "1001"}, "--sim-seeds: 1001 exceeds the bound of 1000"},
		{[]string{"plugin-check", "--dir", out, "--checks", "10001"}, "--checks: 10001 exceeds the bound of 10000"},
	} {
		t.Run(tc.args[0]+" "+tc.args[len(tc.args)-2], func(t *testing.T) {
			status, stdout, stderr := runNodeproof("", tc.args...)
			assert.Equal(t, cli.StatusUsage, status)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// TestReportPrintsSeedFirst: the base seed is on stderr before the first
// suite's line, so that an interrupted report can be repeated.
func TestReportPrintsSeedFirst(t *testing.T) {
	status, _, stderr := runNodeproof("", "report", "--out", filepath.Join(t.TempDir(), "out"), "--checks", "1", "--histories", "0", "--sim-seeds", "0", "--suite", "^preemption$")
	assert.Equal(t, cli.StatusOK, status, stderr)
	first, _, _ := strings.Cut(stderr, "\n")
	assert.Regexp(t, `^base seed [1-9][0-9]* \(rerun with --seed [1-9][0-9]*\)$`, first)
}
