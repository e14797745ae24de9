package reportview

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/realkubelet/sweep"
	"github.com/nodeproof/nodeproof/verify"
)

// TestLoadNode: the sweep nodeproof node --json writes reads back as it
// was; a file that is not one, holds none, or whose totals disagree with
// what they count is refused, naming the file and what is wrong.
func TestLoadNode(t *testing.T) {
	dir := t.TempDir()
	write := func(t *testing.T, data string) string {
		path := filepath.Join(dir, filepath.Base(t.Name())+".json")
		require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
		return path
	}
	encode := func(s *sweep.Summary) string {
		data, err := json.Marshal(s)
		require.NoError(t, err)
		return string(data)
	}
	t.Run("good", func(t *testing.T) {
		got, err := LoadNode(write(t, encode(syntheticNode())))
		require.NoError(t, err)
		assert.Equal(t, syntheticNode(), got)
	})
	for name, tc := range map[string]struct{ data, want string }{
		"bad JSON":      {`{"first_seed": 1,`, "want the JSON object nodeproof node --json writes: unexpected EOF"},
		"unknown field": {`{"first_seed": 1, "seeds": 3}`, `want the JSON object nodeproof node --json writes: json: unknown field "seeds"`},
		"array":         {`[]`, "want the JSON object nodeproof node --json writes"},
		"null":          {`null`, NoResults},
		"empty":         {`{}`, NoResults},
	} {
		t.Run(name, func(t *testing.T) {
			path := write(t, tc.data)
			_, err := LoadNode(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), path+": ")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	for name, tc := range map[string]struct {
		change func(*sweep.Summary)
		want   string
	}{
		"seed 0":                  {func(s *sweep.Summary) { s.FirstSeed = 0 }, "first_seed 0, last_seed 10: not a range of seeds from 1"},
		"range backwards":         {func(s *sweep.Summary) { s.LastSeed = 0 }, "not a range of seeds from 1"},
		"fewer scenarios":         {func(s *sweep.Summary) { s.Scenarios = 9 }, "scenarios: 9, fewer than the 10 seeds"},
		"steps not the kinds'":    {func(s *sweep.Summary) { s.Steps = 41 }, "steps is 41 but kinds add up to 42"},
		"no checks":               {func(s *sweep.Summary) { s.Checks = nil }, "checks: none"},
		"applied beyond checked":  {func(s *sweep.Summary) { s.Checks[1].Applied = 43 }, `checks[1]: id "RK-RESTART-KEEPS", applied 43 of 42 checked`},
		"passed with a violation": {func(s *sweep.Summary) { s.Violations = []sweep.Violation{{Seed: 3, Report: "x", Replay: "y"}} }, "passed is true with 1 violations"},
		"passed with a fidelity bug": {func(s *sweep.Summary) { s.Divergences = map[string]int{sweep.FidelityBug: 2} },
			`passed is true with 0 violations and 2 divergences of class "fidelity bug"`},
		"violation without replay": {func(s *sweep.Summary) {
			s.Passed, s.Violations = false, []sweep.Violation{{Seed: 3, Report: "RK-X: broken"}}
		}, "violations[0]: report and replay are required"},
	} {
		t.Run(name, func(t *testing.T) {
			s := syntheticNode()
			tc.change(s)
			_, err := LoadNode(write(t, encode(s)))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestNodeViolationFailsTheReport: a sweep with a violation makes the
// verdict red, naming the seed and its replay line, and both renderings
// show the report with both replay lines; without the file, the section
// is listed as not run.
func TestNodeViolationFailsTheReport(t *testing.T) {
	r := &Report{Version: "test", Node: syntheticNode()}
	r.Node.Passed = false
	r.Node.Violations = []sweep.Violation{{Seed: 3, Report: "RK-C-NOT-SHARED: d1 held by p0 and p1\nsteps:\n  1. add-pod p0",
		Replay: "nodeproof node --seed 3 --steps 8", TestReplay: "sudo go test -tags nodee2e ./realkubelet/scenario/ -rapid.seed=3"}}
	r.Finish(testInventory, []verify.Finding{}, 0)
	assert.False(t, r.Passed)
	assert.Contains(t, r.Verdict().Problems, "real kubelet: seed 3 violated a property; replay: nodeproof node --seed 3 --steps 8")
	for _, n := range r.NotRun {
		assert.NotEqual(t, coverage.NodeID, n.ID, "the sweep was given")
	}

	md := RenderMarkdown(r, MarkdownLimit)
	assert.Contains(t, md, "Seed 3 violated a property; replay: `nodeproof node --seed 3 --steps 8` or `sudo go test -tags nodee2e ./realkubelet/scenario/ -rapid.seed=3`\n\n```text\nRK-C-NOT-SHARED: d1 held by p0 and p1\nsteps:\n  1. add-pod p0\n```")
	var page bytes.Buffer
	require.NoError(t, WriteHTML(&page, r))
	assert.Contains(t, page.String(), `<code class="replay">nodeproof node --seed 3 --steps 8</code>`)
	assert.Contains(t, page.String(), "<pre>RK-C-NOT-SHARED: d1 held by p0 and p1\nsteps:\n  1. add-pod p0</pre>")

	// A divergence of the simulation that no known limit explains is a
	// problem too; one a known limit explains is shown and is not.
	r.Node = syntheticNode()
	r.Node.Passed = false
	r.Node.Divergences = map[string]int{"readmission-race": 2, sweep.FidelityBug: 1}
	r.Finish(testInventory, []verify.Finding{}, 0)
	assert.False(t, r.Passed)
	assert.Contains(t, r.Verdict().Problems, "real kubelet: the simulation diverged from the node 1 times where no known limit explains it (a fidelity bug)")
	assert.Contains(t, RenderMarkdown(r, MarkdownLimit), "The simulation's divergences from the node (RK-SIM-PREDICTS), by class: fidelity bug 1, readmission-race 2.")

	r.Node = nil
	r.Finish(testInventory, []verify.Finding{}, 0)
	assert.Contains(t, r.NotRun, coverage.NotRun{ID: coverage.NodeID, Section: "real kubelet", Command: "make node-e2e", Writes: DefaultNodeFile})
	page.Reset()
	require.NoError(t, WriteHTML(&page, r))
	assert.Contains(t, page.String(), "<h2>Real kubelet</h2>\n<p>real kubelet not run: run it with <code>make node-e2e</code>, which writes <code>report/node.json</code>.</p>")
}
