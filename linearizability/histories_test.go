package linearizability

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nodeproof/nodeproof/models/deviceagent"
)

// TestWriteVisualizationCreatesDirectory reproduces issue 11's first
// failure: on a fresh clone `make report` wrote the first visualization
// into report/ before anything had created it.
func TestWriteVisualizationCreatesDirectory(t *testing.T) {
	init := deviceagent.Init(map[string][]deviceagent.Device{"r/a": one("a0")})
	rec := Recording{Workload: Workload{Seed: 1}, Init: init,
		History: []porcupine.Operation{admitOp(0, "p1", "r/a", 0, 10, "", "a0")}, Clients: 1}
	checked := CheckRecording(rec, time.Second)
	path := filepath.Join(t.TempDir(), "report", "linearizability-seed-1.html")
	require.NoError(t, checked.WriteVisualization(path))
	assert.FileExists(t, path)
	assert.Equal(t, path, checked.Result.Visualization)
}

// TestRecordHistoriesWritesVisualizations runs what `nodeproof report` runs:
// every history is checked and its visualization lands in Dir, named
// relative to it.
func TestRecordHistoriesWritesVisualizations(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := filepath.Join(t.TempDir(), "fresh")
	var progress []int
	results, err := RecordHistories(context.Background(), Histories{Count: 2, OpsPerClient: 10, Dir: dir,
		Progress: func(done, total int) { progress = append(progress, done, total) }})
	require.NoError(t, err)
	require.Len(t, results, 2)
	assert.Equal(t, []int{1, 2, 2, 2}, progress)
	for i, r := range results {
		assert.Equal(t, fmt.Sprintf("seed %d", i+1), r.History)
		assert.True(t, r.Passed(), "history %s: %s", r.History, r.Result)
		assert.Empty(t, r.Replay, "a passing history has no replay line")
		assert.Equal(t, fmt.Sprintf("linearizability-seed-%d.html", i+1), r.Visualization)
		assert.FileExists(t, filepath.Join(dir, r.Visualization))
	}
}

// TestReplayCommand: the replay line is one a shell reads back as the go
// test command it names, the pattern quoted for its '$'.
func TestReplayCommand(t *testing.T) {
	assert.Equal(t, "go test ./linearizability -run 'TestAgentHistoriesLinearizable$' -lin.seed=3 -lin.ops=50", ReplayCommand(3, 50))
}
