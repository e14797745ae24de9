package linearizability

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/models/deviceagent"
)

// TestWriteVisualizationCreatesDirectory reproduces issue 11's first
// failure: on a fresh clone `make report` wrote the first visualization
// into report/ before anything had created it.
func TestWriteVisualizationCreatesDirectory(t *testing.T) {
	init := deviceagent.Init(map[string][]deviceagent.Device{"r/a": one("a0")})
	rec := Recording{Workload: Workload{Seed: 1}, Init: init,
		History: []porcupine.Operation{admitOp(0, "p1", "r/a", 0, 10, "")}, Clients: 1}
	checked := CheckRecording(rec, time.Second)
	path := filepath.Join(t.TempDir(), "report", "linearizability-seed-1.html")
	require.NoError(t, checked.WriteVisualization(path))
	assert.FileExists(t, path)
	assert.Equal(t, path, checked.Result.Visualization)
}
