package imagegc_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/core/imagegc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpecDeleteUnusedImages ignores the thresholds and MaxAge but obeys
// MinAge, pinning and use; it reads no filesystem stats and records no
// FreeDiskSpaceFailed event.
func TestSpecDeleteUnusedImages(t *testing.T) {
	policy := imagegc.Policy{HighThresholdPercent: 100, LowThresholdPercent: 100, MinAge: 2 * time.Minute, MaxAge: time.Hour}
	m, err := imagegc.NewManager(policy, imagegc.Options{})
	require.NoError(t, err)
	require.NoError(t, m.Detect(t0, imagegc.RuntimeView{Images: []imagegc.Image{img("old", 1), img("used", 2), pinned("pause", 3)}}))
	rt := &fakeRuntime{view: imagegc.RuntimeView{
		Images:     []imagegc.Image{img("old", 1), img("used", 2), pinned("pause", 3), img("young", 4)},
		Containers: []imagegc.Container{ctr("c1", "used")},
	}}
	out, err := m.RunDeleteUnusedImages(rt, t0.Add(2*time.Minute))
	require.NoError(t, err)
	assert.Equal(t, []string{"old space"}, attempts(out))
	assert.Equal(t, []string{"young"}, out.RemainingImages)
	assert.True(t, out.HooksRan)
	assert.NoError(t, out.Err)
	assert.Empty(t, out.Events)
	assert.Nil(t, out.Usage)
	assert.Equal(t, int64(1), out.FreedBytes)
	assert.Zero(t, rt.fsReads)

	rt.view.Images = []imagegc.Image{img("used", 2), pinned("pause", 3), img("young", 4)}
	rt.removeErrs = map[string]error{"young": errors.New("in use by a pod")}
	out, err = m.RunDeleteUnusedImages(rt, t0.Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, []string{"young space failed"}, attempts(out))
	assert.Equal(t, fmt.Sprintf("wanted to free %d bytes, but freed 0 bytes space with errors in image deletion: in use by a pod", int64(1<<63-1)), errText(out.Err))
	assert.False(t, out.HooksRan)
}

// TestSpecEvictionOrder: lastUsed ascending, then firstDetected ascending,
// then (where upstream's sort.Sort is arbitrary) the record key.
func TestSpecEvictionOrder(t *testing.T) {
	m, err := imagegc.NewManager(imagegc.Policy{}, imagegc.Options{})
	require.NoError(t, err)
	all := []imagegc.Image{img("z", 1), img("y", 1), img("x", 1), img("w", 1), img("v", 1)}
	require.NoError(t, m.Detect(t0, imagegc.RuntimeView{Images: all[:3]}))
	require.NoError(t, m.Detect(t0.Add(time.Second), imagegc.RuntimeView{Images: all[:4]}))
	require.NoError(t, m.Detect(t0.Add(2*time.Second), imagegc.RuntimeView{Images: all, Containers: []imagegc.Container{ctr("c", "z")}}))
	require.NoError(t, m.Detect(t0.Add(3*time.Second), imagegc.RuntimeView{Images: all, Containers: []imagegc.Container{ctr("c", "y")}}))
	// z used at +2s, y at +3s; x first detected t0, w +1s, v +2s, none used.
	out, err := m.RunDeleteUnusedImages(&fakeRuntime{view: imagegc.RuntimeView{Images: all}}, t0.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, []string{"x", "w", "v", "z", "y"}, attemptIDs(out))

	// Ties on both times fall back to the key.
	m, err = imagegc.NewManager(imagegc.Policy{}, imagegc.Options{})
	require.NoError(t, err)
	require.NoError(t, m.Detect(t0, imagegc.RuntimeView{Images: all}))
	out, err = m.RunDeleteUnusedImages(&fakeRuntime{view: imagegc.RuntimeView{Images: all}}, t0)
	require.NoError(t, err)
	assert.Equal(t, []string{"v", "w", "x", "y", "z"}, attemptIDs(out))
}

// TestSpecRestart: a kubelet restart is a new Manager: the records are lost,
// so an image used before the restart but not at the first detection after
// it has a zero lastUsed and goes by MaxAge once the new loop has waited one
// MaxAge, even though the image was used minutes before the restart.
func TestSpecRestart(t *testing.T) {
	policy := imagegc.Policy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: 2 * time.Minute, MaxAge: time.Hour}
	view := imagegc.RuntimeView{Images: []imagegc.Image{img("a", 1)}}
	used := imagegc.RuntimeView{Images: view.Images, Containers: []imagegc.Container{ctr("c", "a")}}
	fs := imagegc.FsStats{CapacityBytes: 100, AvailableBytes: 100}

	before, err := imagegc.NewManager(policy, imagegc.Options{})
	require.NoError(t, err)
	require.NoError(t, before.Detect(t0, used))
	// Before the restart: used 30 minutes ago, within MaxAge, kept.
	out, err := before.RunGarbageCollect(&fakeRuntime{view: view, fs: fs}, t0.Add(30*time.Minute), t0.Add(-2*time.Hour))
	require.NoError(t, err)
	assert.Empty(t, out.Attempts)
	restart := t0.Add(5 * time.Minute)
	after, err := imagegc.NewManager(policy, imagegc.Options{})
	require.NoError(t, err)
	require.NoError(t, after.Detect(restart, view))
	assert.Equal(t, []imagegc.Record{{Key: "a", FirstDetected: restart, SizeBytes: 1}}, after.Records())
	out, err = after.RunGarbageCollect(&fakeRuntime{view: view, fs: fs}, restart.Add(time.Hour), restart)
	require.NoError(t, err)
	assert.Empty(t, out.Attempts, "the start-up wait")
	out, err = after.RunGarbageCollect(&fakeRuntime{view: view, fs: fs}, restart.Add(time.Hour+time.Second), restart)
	require.NoError(t, err)
	assert.Equal(t, []string{"a age"}, attempts(out))
}
