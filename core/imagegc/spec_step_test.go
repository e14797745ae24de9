package imagegc_test

import (
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/core/imagegc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStepping: Next repeats the outstanding step until its result comes
// back, each removal is handed out once, a Detect between steps (upstream's
// background detection) does not change the pass's list, and the outcome is
// what the driver gives for the same inputs.
func TestStepping(t *testing.T) {
	view := imagegc.RuntimeView{Images: []imagegc.Image{img("a", 100), img("b", 200), img("c", 300)}}
	newManager := func() *imagegc.Manager {
		m, err := imagegc.NewManager(imagegc.DefaultPolicy(), imagegc.Options{})
		require.NoError(t, err)
		require.NoError(t, m.Detect(t0, view))
		return m
	}
	now := t0.Add(10 * time.Minute)
	fs := imagegc.FsStats{CapacityBytes: 1000, AvailableBytes: 0}

	m := newManager()
	p, err := m.GarbageCollect(now, t0, view)
	require.NoError(t, err)
	require.Equal(t, imagegc.Step{Kind: imagegc.StepImageFsStats}, p.Next())
	require.Equal(t, imagegc.Step{Kind: imagegc.StepImageFsStats}, p.Next())
	require.NoError(t, p.ImageFsStatsDone(fs, nil))
	first := p.Next()
	require.Equal(t, imagegc.Step{Kind: imagegc.StepRemoveImage, Removal: imagegc.Removal{ImageID: "a", SizeBytes: 100, Reason: "space"}}, first)
	require.Equal(t, first, p.Next())
	// A pod starts using b between the decision and the removal (#123631):
	// the records see it, the pass's list does not.
	require.NoError(t, m.Detect(now, imagegc.RuntimeView{Images: view.Images, Containers: []imagegc.Container{ctr("c1", "b")}}))
	require.NoError(t, p.RemoveImageDone(nil))
	second := p.Next()
	assert.Equal(t, "b", second.Removal.ImageID, "upstream removes the image the pod now uses")
	require.NoError(t, p.RemoveImageDone(nil))
	require.Equal(t, imagegc.StepDone, p.Next().Kind)
	stepped := p.Outcome()

	driven, err := newManager().RunGarbageCollect(&fakeRuntime{view: view, fs: fs}, now, t0)
	require.NoError(t, err)
	assert.Equal(t, driven, stepped, "same inputs, same outcome")
	assert.Equal(t, []string{"a", "b"}, attemptIDs(stepped))
}
