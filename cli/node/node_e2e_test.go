//go:build nodee2e

// nodeproof node end to end on a real kubelet, built only with the nodee2e
// tag (make node-e2e), like realkubelet's own node tests.

package node

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/realkubelet"
	"github.com/nodeproof/nodeproof/realkubelet/sweep"
)

// TestNodeOnARealKubelet: `nodeproof node --seed 1 --steps 3` plays seed 1
// on a real node, prints its steps and checks, writes its summary, and
// leaves the host as it found it.
func TestNodeOnARealKubelet(t *testing.T) {
	if why := realkubelet.Unavailable(); why != "" {
		t.Fatalf("this host cannot run a real kubelet: %s", why)
	}
	before, err := realkubelet.CaptureHost()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "node.json")
	code, stdout, stderr := run(Production(), "--seed", "1", "--steps", "3", "--json", path)
	t.Logf("stdout:\n%s", stdout)
	require.Equal(t, cli.StatusOK, code, "stderr:\n%s", stderr)
	assert.Contains(t, stdout, "seed 1:\nscenario 1: ")
	assert.Contains(t, stdout, "  step 1: ")
	assert.Contains(t, stdout, "seed 1: passed\n")
	assert.Contains(t, stdout, "RK-")

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var sweep sweep.Summary
	require.NoError(t, json.Unmarshal(raw, &sweep))
	assert.True(t, sweep.Passed)
	assert.Equal(t, 1, sweep.Scenarios)
	assert.Positive(t, sweep.Steps)
	assert.LessOrEqual(t, sweep.Steps, 3)
	checked := 0
	for _, c := range sweep.Checks {
		checked += c.Checked
	}
	assert.Positive(t, checked, "no property was checked")

	after, err := realkubelet.CaptureHost()
	require.NoError(t, err)
	assert.Empty(t, realkubelet.Diff(before, after, ""))
}
