//go:build nodee2e

// nodeproof node end to end on a real kubelet, built only with the nodee2e
// tag (make node-e2e), like realkubelet's own node tests.

package node

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	// The binary, not the command in this test binary: outside a test
	// nothing has parsed the flags rapid reads, and nodeproof must cope.
	dir := t.TempDir()
	bin, path := filepath.Join(dir, "nodeproof"), filepath.Join(dir, "node.json")
	build := exec.Command("go", "build", "-o", bin, "./cmd/nodeproof")
	build.Dir = "../.."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "node", "--seed", "1", "--steps", "3", "--json", path)
	cmd.Dir, cmd.Stdout, cmd.Stderr = "../..", &stdout, &stderr
	err = cmd.Run()
	t.Logf("stdout:\n%s", stdout.String())
	require.NoError(t, err, "stderr:\n%s", stderr.String())
	assert.Contains(t, stdout.String(), "seed 1:\nscenario 1: ")
	assert.Contains(t, stdout.String(), "  step 1: ")
	assert.Contains(t, stdout.String(), "seed 1: passed\n")
	assert.Contains(t, stdout.String(), "RK-")

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
