package node

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
	"github.com/nodeproof/nodeproof/realkubelet"
	"github.com/nodeproof/nodeproof/realkubelet/scenario"
	"github.com/nodeproof/nodeproof/realkubelet/sweep"
)

// fakeHost is a host that can run a node, whose scenarios play nothing but
// note their seeds; violated seeds violate a property.
type fakeHost struct {
	played   []uint64
	violated map[uint64]bool
	// diverged: the seed's scenario met a divergence of the simulation
	// from the node of this class.
	diverged map[uint64]string
	kubelet  string
}

func (h *fakeHost) deps() Deps {
	return Deps{
		Unavailable: func() string { return "" },
		Find:        func() (string, error) { return "/bin/kubelet-test", nil },
		Play: func(_ context.Context, seed uint64, maxSteps int, opts realkubelet.Options, tally *scenario.Tally) *sweep.Violation {
			h.played = append(h.played, seed)
			h.kubelet = opts.Kubelet
			tally.Scenarios++
			tally.Log("  step 1: kill-kubelet")
			if class, ok := h.diverged[seed]; ok {
				tally.Divergences[class]++
				tally.Diverged = append(tally.Diverged, "node allocatable: the simulation predicts 4, the node shows 3 ("+class+")")
			}
			if h.violated[seed] {
				return &sweep.Violation{Seed: seed, Report: "RK-X: broken\nsteps:\n  1. kill-kubelet", Replay: scenario.Replay(seed, maxSteps), TestReplay: scenario.TestReplay(seed, maxSteps)}
			}
			return nil
		},
	}
}

func run(deps Deps, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = cli.Execute(cli.NewRoot(NewCommand(deps)), append([]string{"node"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestNodeFlagErrors: every bad flag is exit 2 with the flag named, before
// any scenario is played.
func TestNodeFlagErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct{ args, want string }{
		{"--seed 1 --seeds 1..2", "nodeproof node: --seed and --seeds are mutually exclusive"},
		{"--seeds 5..2", `nodeproof node: --seeds "5..2": the range's end 2 is below its start 5`},
		{"--seeds 7", `nodeproof node: --seeds must be a range A..B`},
		{"--seed 0", "nodeproof node: seed 0 is not a seed"},
		{"--seeds 0..3", "nodeproof node: seed 0 is not a seed"},
		{"--steps 0", "nodeproof node: --steps: 0 is not a number of steps (at least 1)"},
		{"--steps x", `nodeproof node: invalid argument "x" for "--steps" flag`},
		{"--json " + filepath.Join(file, "node.json"), "nodeproof node: --json: "},
		{"extra", `nodeproof node: unexpected argument "extra"`},
	} {
		t.Run(tc.args, func(t *testing.T) {
			h := &fakeHost{}
			code, stdout, stderr := run(h.deps(), strings.Fields(tc.args)...)
			assert.Equal(t, cli.StatusUsage, code)
			assert.Contains(t, stderr, tc.want)
			assert.Empty(t, stdout)
			assert.Empty(t, h.played, "a scenario was played despite the bad flag")
		})
	}
}

// TestNodeNeedsRootAndKubelet: a host that cannot run a node, or has no
// kubelet binary, is exit 2 with what is missing and how to get it.
func TestNodeNeedsRootAndKubelet(t *testing.T) {
	h := &fakeHost{}
	deps := h.deps()
	deps.Unavailable = func() string { return "not root" }
	code, _, stderr := run(deps, "--seed", "1")
	assert.Equal(t, cli.StatusUsage, code)
	assert.Contains(t, stderr, "this host cannot run a real kubelet: not root")
	assert.Contains(t, stderr, "make kubelet")

	deps = h.deps()
	deps.Find = func() (string, error) { return "", realkubelet.ErrNotBuilt }
	code, _, stderr = run(deps, "--seed", "1")
	assert.Equal(t, cli.StatusUsage, code)
	assert.Contains(t, stderr, "no kubelet binary")
	assert.Contains(t, stderr, "make kubelet")
	assert.Empty(t, h.played)
}

// TestNodeSweep: a sweep plays each seed once, in order, on the kubelet
// found; a violation is exit 1 with its report and both replay lines, and
// the summary names it.
func TestNodeSweep(t *testing.T) {
	h := &fakeHost{violated: map[uint64]bool{3: true}}
	path := filepath.Join(t.TempDir(), "out", "node.json")
	code, stdout, stderr := run(h.deps(), "--seeds", "2..4", "--steps", "5", "--json", path)
	assert.Equal(t, cli.StatusFailed, code, "stderr:\n%s", stderr)
	assert.Equal(t, []uint64{2, 3, 4}, h.played)
	assert.Equal(t, "/bin/kubelet-test", h.kubelet)
	assert.Contains(t, stdout, "seed 2:\n  step 1: kill-kubelet\nseed 2: passed\n")
	assert.Contains(t, stdout, "seed 3: VIOLATION\n  RK-X: broken\n  steps:\n    1. kill-kubelet\nreplay: nodeproof node --seed 3 --steps 5\n        sudo NODEPROOF_SCENARIO_STEPS=5 go test -tags nodee2e ./realkubelet/scenario/ -run '^TestScenarios$' -rapid.checks=1 -rapid.seed=3\n")
	assert.Contains(t, stdout, "seeds 2..4 in ")
	assert.Contains(t, stdout, ": 1 violations\n")
	// The violation again after the summary, where a log cut to its tail
	// still shows it.
	tail := stdout[strings.Index(stdout, "not covered: "):]
	assert.Contains(t, tail, "violated at seed 3:\n  RK-X: broken\n  steps:\n    1. kill-kubelet\nreplay: nodeproof node --seed 3 --steps 5\nseeds 2..4 in ")

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var sweep sweep.Summary
	require.NoError(t, json.Unmarshal(raw, &sweep))
	assert.False(t, sweep.Passed)
	assert.Equal(t, uint64(2), sweep.FirstSeed)
	assert.Equal(t, uint64(4), sweep.LastSeed)
	assert.Equal(t, 3, sweep.Scenarios)
	require.Len(t, sweep.Violations, 1)
	assert.Equal(t, "nodeproof node --seed 3 --steps 5", sweep.Violations[0].Replay)
	assert.Len(t, sweep.Checks, len(scenario.Checks)+1, "the RK-* checks and RK-SIM-PREDICTS")
	assert.Equal(t, scenario.SimPredicts, sweep.Checks[len(sweep.Checks)-1].ID)
	assert.NotEmpty(t, sweep.NotCovered)
}

// TestNodeFidelityBug: a divergence of the simulation from the node that no
// known limit explains fails the sweep (exit 1, passed false, said before
// the last line); one a known limit explains is counted and passes.
func TestNodeFidelityBug(t *testing.T) {
	h := &fakeHost{diverged: map[uint64]string{1: scenario.LimitReadmission, 2: scenario.FidelityBug}}
	path := filepath.Join(t.TempDir(), "node.json")
	code, stdout, stderr := run(h.deps(), "--seeds", "1..2", "--json", path)
	assert.Equal(t, cli.StatusFailed, code, "stderr:\n%s", stderr)
	assert.Contains(t, stdout, "the simulation diverged from the node 1 times where no known limit explains it")
	assert.Contains(t, stdout, ": 0 violations\n")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var got sweep.Summary
	require.NoError(t, json.Unmarshal(raw, &got))
	assert.False(t, got.Passed)
	assert.Equal(t, map[string]int{scenario.LimitReadmission: 1, scenario.FidelityBug: 1}, got.Divergences)
	assert.Len(t, got.Diverged, 2)

	h = &fakeHost{diverged: map[uint64]string{1: scenario.LimitReadmission}}
	code, stdout, _ = run(h.deps())
	assert.Equal(t, cli.StatusOK, code)
	assert.NotContains(t, stdout, "no known limit explains")
}

// TestNodePasses: a seed with no violation is exit 0.
func TestNodePasses(t *testing.T) {
	h := &fakeHost{}
	code, stdout, stderr := run(h.deps())
	assert.Equal(t, cli.StatusOK, code, "stderr:\n%s", stderr)
	assert.Equal(t, []uint64{1}, h.played, "--seed defaults to 1")
	assert.Contains(t, stdout, "seeds 1..1 in ")
}

// TestNodeInterrupted: a scenario that ends because the context did is
// exit 130, not a violation, and the sweep stops there.
func TestNodeInterrupted(t *testing.T) {
	h := &fakeHost{}
	deps := h.deps()
	ctx, cancel := context.WithCancel(context.Background())
	deps.Play = func(context.Context, uint64, int, realkubelet.Options, *scenario.Tally) *sweep.Violation {
		h.played = append(h.played, 0)
		cancel()
		return &sweep.Violation{Report: "starting the node: context canceled"}
	}
	cmd := NewCommand(deps)
	cmd.SetContext(ctx)
	var out, errOut bytes.Buffer
	code := cli.Execute(cli.NewRoot(cmd), []string{"node", "--seeds", "1..3"}, strings.NewReader(""), &out, &errOut)
	assert.Equal(t, cli.StatusInterrupted, code)
	assert.Len(t, h.played, 1)
	assert.NotContains(t, out.String(), "VIOLATION")
}

// TestHead: a long report is cut to its first lines, saying how many more
// there are; a short one is whole.
func TestHead(t *testing.T) {
	assert.Equal(t, "a\nb", head("a\nb", 2))
	assert.Equal(t, "a\nb\n... 2 more lines above, under the seed's verdict", head("a\nb\nc\nd", 2))
}
