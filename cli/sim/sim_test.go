package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/simreport"
	"github.com/nodeproof/nodeproof/verify"
)

// TestSimFlagErrors: every bad flag is exit 2 with the flag named, before
// anything runs.
func TestSimFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args string
		want string
	}{
		{"--seed 1 --seeds 1..2", "nodeproof sim: --seed and --seeds are mutually exclusive"},
		{"--seeds 5..2", `nodeproof sim: --seeds "5..2": the range's end 2 is below its start 5`},
		{"--seeds 7", `nodeproof sim: --seeds must be a range A..B of seeds (whole numbers from 0), got "7"`},
		{"--seeds 1..2 --jobs 0", "nodeproof sim: --jobs: 0 is not a number of seeds to run at once (at least 1)"},
		{"--seeds 1..x", `--seeds must be a range A..B`},
		{"--seeds -1..2", `--seeds must be a range A..B`},
		{"--hours 0", "nodeproof sim: --hours must be more than 0 and at most 8760, got 0"},
		{"--hours -3", "--hours must be more than 0"},
		{"--hours NaN", "--hours must be more than 0"},
		{"--hours 9000", "--hours must be more than 0 and at most 8760, got 9000"},
		{"--pods 0", "nodeproof sim: --pods: 0 must be between 1 and"},
		{"--pods 1000", "nodeproof sim: --pods: 1000 must be between 1 and"},
		{"--max-pods -1", "nodeproof sim: --max-pods: -1 must be between 0 (the default, 110) and 110"},
		{"--max-pods 111", "nodeproof sim: --max-pods: 111 must be between 0"},
		{"--faults nope=0.1", `nodeproof sim: --faults: "nope": unknown fault kind; known kinds: plugin-crash`},
		{"--faults plugin-crash=2", "nodeproof sim: --faults: plugin-crash: rate 2 must be in [0, 1]"},
		{"--faults plugin-crash", `nodeproof sim: --faults: "plugin-crash": want kind=rate`},
		{"--faults=", "nodeproof sim: --faults: empty: give default, none (every kind off) or kind=rate,... of the kinds plugin-crash, "},
		{"--hours x", `nodeproof sim: invalid argument "x" for "--hours" flag`},
		{"extra", `nodeproof sim: unexpected argument "extra"`},
	} {
		t.Run(tc.args, func(t *testing.T) {
			ran := false
			root := cli.NewRoot(NewCommand(func(cfg sim.Config, _ func(sim.Stats)) sim.Summary {
				ran = true
				return sim.Summary{Config: cfg}
			}))
			code, stdout, stderr := runRoot(root, "", append([]string{"sim"}, strings.Fields(tc.args)...)...)
			assert.Equal(t, cli.StatusUsage, code)
			assert.Contains(t, stderr, tc.want)
			assert.Empty(t, stdout)
			assert.False(t, ran, "a simulation ran despite the bad flag")
		})
	}
}

// TestSimCleanRun runs the real simulation of seed 1 for half an hour: it
// passes and prints the seed's line and the totals, with every invariant.
func TestSimCleanRun(t *testing.T) {
	code, stdout, stderr := runRoot(cli.NewRoot(NewCommand(sim.Run)), "", "sim", "--seed", "1", "--hours", "0.5")
	require.Equal(t, cli.StatusOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Empty(t, stderr, "no progress off a terminal")
	assert.Regexp(t, `^seed 1  passed  \d+ events, 30m0s simulated, `, stdout)
	assert.Regexp(t, `\ntotal: 1 seed, passed; \d+ events, 0\.5 simulated hours in `, stdout)
	assert.Contains(t, stdout, "\nfaults injected:\n")
	assert.Contains(t, stdout, "\ninvariants (checked / applied):\n")
	for _, inv := range sim.Invariants() {
		assert.Regexp(t, `\n  `+inv.ID+` +\d+ / \d+\n`, stdout, "the totals list %s", inv.ID)
	}
	assert.NotContains(t, stdout, "violation")
}

// TestSimSweep runs three seeds and reads --json: one run per seed, each
// with its replay line, and totals that are the runs' sums.
func TestSimSweep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out", "sim.json")
	code, stdout, stderr := runRoot(cli.NewRoot(NewCommand(sim.Run)), "", "sim", "--seeds", "3..5", "--hours", "0.25", "--pods", "5", "--faults", "plugin-crash=0.2,kubelet-restart=0.01", "--json", path)
	require.Equal(t, cli.StatusOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	for _, seed := range []string{"3", "4", "5"} {
		assert.Contains(t, stdout, "seed "+seed+"  passed  ")
	}
	assert.Contains(t, stdout, "total: 3 seeds, passed; ")

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var got simreport.Section
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&got), "%s", raw)
	assert.Equal(t, []any{3, uint64(3), uint64(5), 0.25, 5, "kubelet-restart=0.01,plugin-crash=0.2", true},
		[]any{got.Seeds, got.FirstSeed, got.LastSeed, got.Hours, got.Pods, got.Faults, got.Passed})
	assert.Empty(t, got.Violations)
	require.Len(t, got.Runs, 3)
	events, injected, checked := 0, map[string]int{}, map[string]int{}
	for i, r := range got.Runs {
		seed := uint64(3 + i)
		assert.Equal(t, seed, r.Seed)
		assert.Equal(t, fmt.Sprintf("nodeproof sim --seed %d --hours 0.25 --pods 5 --faults kubelet-restart=0.01,plugin-crash=0.2", seed), r.Replay)
		assert.True(t, r.Passed)
		assert.Nil(t, r.Violation)
		assert.Positive(t, r.Events)
		assert.InDelta(t, 0.25, r.SimulatedHours, 0.01)
		events += r.Events
		for k, n := range r.Injected {
			injected[k] += n
		}
		for _, c := range r.Checks {
			checked[c.ID] += c.Checked
		}
	}
	assert.Equal(t, events, got.Events, "total events")
	assert.Equal(t, injected, got.Injected, "total faults injected")
	assert.Positive(t, got.Injected["plugin-crash"], "plugin crashes at rate 0.2 in three seeds")
	var ids []string
	for _, c := range got.Checks {
		ids = append(ids, c.ID)
		assert.Equal(t, checked[c.ID], c.Checked, "total checks of %s", c.ID)
		assert.NotEmpty(t, c.Statement, c.ID)
	}
	var want []string
	for _, inv := range sim.Invariants() {
		want = append(want, inv.ID)
	}
	assert.Equal(t, want, ids, "the totals list every invariant in the catalogue's order")
}

// TestSimViolation: a seed that breaks an invariant is exit 1, with the
// invariant, the message, the trace and the replay line, and the sweep
// goes on to the next seed.
func TestSimViolation(t *testing.T) {
	trace := []sim.Event{{Seq: 1, At: time.Minute, Kind: "pod-arrive", Detail: "p1"}, {Seq: 2, At: 2 * time.Minute, Kind: "plugin-crash", Detail: "a.com/gpu"}}
	run := func(cfg sim.Config, progress func(sim.Stats)) sim.Summary {
		st := sim.Stats{Events: 2, Simulated: 2 * time.Minute, Faults: map[sim.Fault]int{sim.PluginCrash: 1},
			Checks: verify.Counts{"SIM-X": {Checked: 2, Applied: 1}}}
		progress(st)
		s := sim.Summary{Config: cfg, Stats: st, Replay: cfg.ReplayCommand()}
		if cfg.Seed == 8 {
			s.Violation = &sim.Violation{Invariant: "SIM-X", Message: "SIM-X: device d1 held twice", Event: trace[1], Trace: trace}
		}
		return s
	}
	path := filepath.Join(t.TempDir(), "sim.json")
	code, stdout, stderr := runRoot(cli.NewRoot(NewCommand(run)), "", "sim", "--seeds", "8..9", "--hours", "1", "--faults", "none", "--json", path)
	assert.Equal(t, cli.StatusFailed, code)
	assert.Empty(t, stderr)
	replay := "nodeproof sim --seed 8 --hours 1 --pods 20 --faults none"
	assert.Contains(t, stdout, "seed 8  FAILED  SIM-X after 2 events, 2m0s simulated, ")
	assert.Contains(t, stdout, "\n                SIM-X: device d1 held twice\n"+
		"                trace (the 2 events up to the violation, oldest first):\n"+
		"                  #1 1m0s pod-arrive: p1\n"+
		"                  #2 2m0s plugin-crash: a.com/gpu\n"+
		"                replay: "+replay+"\n")
	assert.Contains(t, stdout, "seed 9  passed  ")
	assert.Contains(t, stdout, "total: 2 seeds, FAILED (1 violation); 4 events, ")
	assert.Contains(t, stdout, "\n  SIM-X  4 / 2\n")
	assert.Contains(t, stdout, "\nviolation: seed 8: SIM-X; replay: "+replay+"\n")

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var got simreport.Section
	require.NoError(t, json.Unmarshal(raw, &got))
	assert.False(t, got.Passed)
	assert.Equal(t, []simreport.Violation{{Seed: 8, Invariant: "SIM-X", Message: "SIM-X: device d1 held twice", Event: "#2 2m0s plugin-crash: a.com/gpu",
		Trace: []string{"#1 1m0s pod-arrive: p1", "#2 2m0s plugin-crash: a.com/gpu"}, Replay: replay}}, got.Violations)
	require.Len(t, got.Runs, 2)
	assert.Equal(t, &got.Violations[0], got.Runs[0].Violation)
	assert.Nil(t, got.Runs[1].Violation)
	assert.Equal(t, map[string]int{"plugin-crash": 2}, got.Injected)
}

// countingSimRunner is a clean run that counts the seeds it ran.
func countingSimRunner(ran *int) Runner {
	return func(cfg sim.Config, _ func(sim.Stats)) sim.Summary {
		*ran++
		return sim.Summary{Config: cfg, Replay: cfg.ReplayCommand()}
	}
}

// TestSimJSONPathCheckedFirst: a --json that cannot be written is exit 2
// naming the flag before the first seed runs, not after the whole sweep.
func TestSimJSONPathCheckedFirst(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct{ path, want string }{
		{"/proc/nodeproof/sim.json", "nodeproof sim: --json: mkdir /proc/nodeproof"},
		{filepath.Join(file, "sim.json"), "nodeproof sim: --json: mkdir " + file + ": not a directory"},
		{t.TempDir(), "is a directory, not a file"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			ran := 0
			code, stdout, stderr := runRoot(cli.NewRoot(NewCommand(countingSimRunner(&ran))), "", "sim", "--seeds", "1..100", "--json", tc.path)
			assert.Equal(t, cli.StatusUsage, code)
			assert.Contains(t, stderr, tc.want)
			assert.Empty(t, stdout)
			assert.Zero(t, ran, "seeds ran before the output path was checked")
		})
	}
}

// TestSimJSONWriteFails: a --json that passed the check but cannot be
// written after the run (its directory replaced meanwhile) is output that
// was not delivered: exit 1, not a usage error.
func TestSimJSONWriteFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	run := func(cfg sim.Config, _ func(sim.Stats)) sim.Summary {
		require.NoError(t, os.RemoveAll(dir))
		require.NoError(t, os.WriteFile(dir, nil, 0o644))
		return sim.Summary{Config: cfg, Replay: cfg.ReplayCommand()}
	}
	code, stdout, stderr := runRoot(cli.NewRoot(NewCommand(run)), "", "sim", "--json", filepath.Join(dir, "sim.json"))
	assert.Equal(t, cli.StatusFailed, code)
	assert.Contains(t, stdout, "total: 1 seed, passed")
	assert.Contains(t, stderr, "nodeproof sim: writing the output: --json: mkdir "+dir+": not a directory")
}

// TestSimStdoutWriteFails: stdout that cannot be written (`> /dev/full`)
// fails the command with status 1 at the first seed's line, instead of
// running every seed and exiting 0 with nothing delivered.
func TestSimStdoutWriteFails(t *testing.T) {
	ran := 0
	var stderr bytes.Buffer
	code := cli.Execute(cli.NewRoot(NewCommand(countingSimRunner(&ran))), []string{"sim", "--seeds", "1..3"}, strings.NewReader(""), failingWriter{}, &stderr)
	assert.Equal(t, cli.StatusFailed, code)
	assert.Equal(t, "nodeproof sim: writing the output: disk full\n", stderr.String())
	assert.Equal(t, 1, ran, "the sweep stops at the first line it cannot write")
}

// TestSimExplainsKnownFindings: every seed runs with the invariants of the
// sim's known findings explained, so that a known broken promise of
// upstream's kubelet is counted and printed, not stopped at.
func TestSimExplainsKnownFindings(t *testing.T) {
	var want []string
	for _, f := range verify.Findings() {
		if f.Suite == "sim" {
			want = append(want, f.Property)
		}
	}
	require.NotEmpty(t, want, "the sim has known findings")
	var got [][]string
	root := cli.NewRoot(NewCommand(func(cfg sim.Config, _ func(sim.Stats)) sim.Summary {
		got = append(got, cfg.Explained)
		return sim.Summary{Config: cfg, Stats: sim.Stats{Explained: map[string]int{want[0]: 3}}}
	}))
	code, stdout, stderr := runRoot(root, "", "sim", "--seeds", "1..2", "--hours", "0.1")
	require.Equal(t, cli.StatusOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Equal(t, [][]string{want, want}, got)
	assert.Contains(t, stdout, want[0]+" broken 3 times: a known finding (nodeproof findings --list)\n")
}

// runRoot runs a command line against root, as main does, and returns the
// exit status and what was printed.
func runRoot(root *cobra.Command, stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = cli.Execute(root, args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// failingWriter fails every write, as a full disk does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestSimJobsSameResults: a sweep run three seeds at a time prints its
// seeds in order and finds exactly what one seed after another finds, since
// each seed's run is deterministic whatever runs beside it.
func TestSimJobsSameResults(t *testing.T) {
	sweep := func(jobs string) (string, simreport.Section) {
		path := filepath.Join(t.TempDir(), "sim.json")
		code, stdout, stderr := runRoot(cli.NewRoot(NewCommand(sim.Run)), "", "sim", "--seeds", "1..6", "--hours", "0.1", "--pods", "4", "--jobs", jobs, "--json", path)
		require.Equal(t, cli.StatusOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		var s simreport.Section
		require.NoError(t, json.Unmarshal(raw, &s))
		return stdout, s
	}
	oneOut, one := sweep("1")
	threeOut, three := sweep("3")
	var seeds []string
	for _, line := range strings.Split(threeOut, "\n") {
		if strings.HasPrefix(line, "seed ") {
			seeds = append(seeds, strings.Fields(line)[1])
		}
	}
	assert.Equal(t, []string{"1", "2", "3", "4", "5", "6"}, seeds, "lines in seed order:\n%s", threeOut)
	require.Len(t, three.Runs, 6)
	for i := range one.Runs {
		one.Runs[i].Seconds, three.Runs[i].Seconds = 0, 0
	}
	assert.Equal(t, one.Runs, three.Runs, "the same runs, seed by seed")
	assert.Equal(t, one.Checks, three.Checks)
	assert.NotEmpty(t, oneOut)
}
