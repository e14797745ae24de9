package devicemanager_test

import (
	"testing"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckpointCopiesShareNothingWritable: Checkpoint's ID lists and
// answers share backing arrays (one allocation each), so each is capped at
// its own end. A caller appending to or writing into one list or answer
// must change neither its neighbours nor the manager's next checkpoint.
func TestCheckpointCopiesShareNothingWritable(t *testing.T) {
	m, _ := specReady(t, 6, dm.PluginOptions{})
	active := []string{"a", "b", "c"}
	specAllocate(t, m, specPod("a", 2), "app", active)
	specAllocate(t, m, specPod("b", 1), "app", active)
	specAllocate(t, m, specPod("c", 2), "app", active)
	want := m.Checkpoint()
	require.Len(t, want.PodDeviceEntries, 3)

	got := m.Checkpoint()
	require.True(t, checkpoint.Equal(want, got), "two checkpoints of one state differ:\n%+v\n%+v", want, got)
	for i := range got.PodDeviceEntries {
		e := &got.PodDeviceEntries[i]
		for node, ids := range e.DeviceIDs {
			_ = append(ids, "scribbled")
			ids[0] = "overwritten"
			e.DeviceIDs[node] = ids
		}
		_ = append(e.AllocResp, 0xff)
	}
	for r, ids := range got.RegisteredDevices {
		_ = append(ids, "scribbled")
		got.RegisteredDevices[r] = ids
	}
	for i, e := range got.PodDeviceEntries {
		for node, ids := range e.DeviceIDs {
			assert.Equal(t, "overwritten", ids[0], "entry %d node %d", i, node)
			assert.Equal(t, want.PodDeviceEntries[i].DeviceIDs[node][1:], ids[1:], "entry %d node %d: a neighbour's append wrote into this list", i, node)
		}
		assert.Equal(t, want.PodDeviceEntries[i].AllocResp, e.AllocResp, "entry %d: a neighbour's append wrote into this answer", i)
	}
	assert.Equal(t, want.RegisteredDevices, got.RegisteredDevices, "an entry's append wrote into the registered devices")
	assert.True(t, checkpoint.Equal(want, m.Checkpoint()), "writing into a checkpoint changed the manager's next one")
}
