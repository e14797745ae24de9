package linearizability

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"go.uber.org/goleak"

	"github.com/nodeproof/nodeproof/models/deviceagent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	linSeed      = flag.Uint64("lin.seed", 0, "record only the history with this seed (0: seeds 1 to -lin.histories)")
	linHistories = flag.Int("lin.histories", 3, "number of histories TestAgentHistoriesLinearizable records")
	linOps       = flag.Int("lin.ops", 30, "operations per client")
)

// checkTimeout bounds each porcupine check. A check that runs out of time
// answers Unknown, which fails the test: an undecided history proves nothing.
const checkTimeout = 20 * time.Second

// TestAgentHistoriesLinearizable records histories of ten concurrent
// clients driving a real agent and real plugins over Unix sockets (four
// plugin owners with snapshots, re-registrations, crashes and Allocate
// faults; six pod clients admitting, removing and reading) and checks each
// against models/deviceagent.
func TestAgentHistoriesLinearizable(t *testing.T) {
	defer goleak.VerifyNone(t)
	seeds := []uint64{*linSeed}
	if *linSeed == 0 {
		seeds = nil
		for i := range *linHistories {
			seeds = append(seeds, uint64(i+1))
		}
	}
	opsSeen := map[deviceagent.Op]int{}
	granted := 0
	for _, seed := range seeds {
		rec, err := Record(context.Background(), Workload{Seed: seed, OpsPerClient: *linOps})
		require.NoError(t, err, "recording the history of seed %d", seed)
		require.GreaterOrEqual(t, rec.Clients, 8, "clients: the history needs at least 8")
		for _, op := range rec.History {
			opsSeen[op.Input.(deviceagent.Input).Op]++
			if len(op.Output.(deviceagent.Output).Granted) > 0 {
				granted++
			}
		}
		checked := CheckRecording(rec, checkTimeout)
		assert.Equal(t, checkPorcupine(rec.Init, rec.History, checkTimeout), checked.Verdict, "seed %d: the frontier checker and porcupine disagree", seed)
		if checked.Verdict != porcupine.Ok {
			path, err := failureVisualization(&checked, "")
			assert.NoError(t, err, "writing the visualization")
			t.Errorf("the history of seed %d (%d operations, %d clients, %d faults) is %s after %.2fs: no order of its operations explains what the clients saw.\n"+
				"start: %s\nvisualization: %s\nreplay the operation mix: %s",
				seed, checked.Result.Operations, rec.Clients, len(rec.Faults), checked.Result.Result, checked.Result.CheckSeconds,
				rec.Init, path, ReplayCommand(seed, *linOps))
		}
		t.Logf("seed %d: %d operations from %d clients, %d partitions, %d unknown outcomes, %d faults: %s in %.3fs",
			seed, checked.Result.Operations, rec.Clients, checked.Result.Partitions, rec.Unknown, len(rec.Faults),
			checked.Result.Result, checked.Result.CheckSeconds)
	}
	// The owners' choices depend on the seed alone, so the default seeds
	// always exercise every plugin-side operation; a workload change that
	// stops doing so fails here rather than checking less in silence.
	if *linSeed == 0 {
		for _, op := range []deviceagent.Op{deviceagent.Update, deviceagent.Reregister, deviceagent.Crash, deviceagent.Admit, deviceagent.Remove, deviceagent.Capacity} {
			assert.NotZero(t, opsSeen[op], "no %s operation in %d histories: the workload no longer exercises it", op, len(seeds))
		}
		assert.NotZero(t, granted, "no admission recorded the devices it got: the model checks no device IDs")
	}
}

// failureVisualization writes a failed check's visualization where it
// outlives the test: in dir, or when dir is "" in a new directory under the
// system's temporary directory.
func failureVisualization(c *Checked, dir string) (string, error) {
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "nodeproof-linearizability-"); err != nil {
			return "", err
		}
	}
	path := filepath.Join(dir, fmt.Sprintf("linearizability-seed-%d.html", c.rec.Workload.Seed))
	return path, c.WriteVisualization(path)
}

// TestVisualizationShowsFaults checks the failure path: an illegal history
// is rendered with its fault annotation, at the path the result names.
func TestVisualizationShowsFaults(t *testing.T) {
	init := deviceagent.Init(map[string][]deviceagent.Device{"r/a": one("a0")})
	rec := Recording{
		Workload: Workload{Seed: 7},
		Init:     init,
		History:  []porcupine.Operation{admitOp(0, "p1", "r/a", 0, 10, "", "a0"), admitOp(1, "p2", "r/a", 5, 15, "", "a0")},
		Faults:   []porcupine.Annotation{{ClientId: 2, Tag: "fault", Start: 2, End: 8, Description: "r/a: Allocate hangs past the agent's deadline"}},
		Clients:  3,
	}
	checked := CheckRecording(rec, time.Second)
	require.Equal(t, porcupine.Illegal, checked.Verdict, "verdict %v (%q), want Illegal", checked.Verdict, checked.Result.Result)
	require.Equal(t, "Illegal", checked.Result.Result, "verdict %v (%q), want Illegal", checked.Verdict, checked.Result.Result)
	path, err := failureVisualization(&checked, t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, path, checked.Result.Visualization, "result names")
	html, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, want := range []string{"Allocate hangs past the agent", "Admit p2"} {
		assert.Contains(t, string(html), want, "the visualization does not mention %q", want)
	}
}
