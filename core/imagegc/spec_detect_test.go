package imagegc_test

import (
	"errors"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/core/imagegc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpecDetect: new records first detected at the detection time, in-use
// images last used then, size and pinning refreshed, unlisted dropped
// (spec/imagegc.md §2.2).
func TestSpecDetect(t *testing.T) {
	m, err := imagegc.NewManager(imagegc.DefaultPolicy(), imagegc.Options{})
	require.NoError(t, err)
	t1, t2 := t0.Add(time.Minute), t0.Add(2*time.Minute)

	require.NoError(t, m.Detect(t0, imagegc.RuntimeView{
		Images:     []imagegc.Image{img("a", 10), img("b", 20), img("c", 30)},
		Containers: []imagegc.Container{ctr("c1", "a")},
	}))
	assert.Equal(t, []imagegc.Record{
		{Key: "a", FirstDetected: t0, LastUsed: t0, SizeBytes: 10},
		{Key: "b", FirstDetected: t0, SizeBytes: 20},
		{Key: "c", FirstDetected: t0, SizeBytes: 30},
	}, m.Records())

	// b is now used through an image volume only; a's container exited but
	// is still listed (GetPods(all=true)); c is gone; d is new; sizes and
	// pinning change.
	vol := ctr("c2", "d")
	vol.MountedImageIDs = []string{"b", "not-listed"}
	require.NoError(t, m.Detect(t1, imagegc.RuntimeView{
		Images:     []imagegc.Image{img("a", 11), img("b", 20), {ID: "d", SizeBytes: 40, Pinned: true}},
		Containers: []imagegc.Container{ctr("c1", "a"), vol},
	}))
	assert.Equal(t, []imagegc.Record{
		{Key: "a", FirstDetected: t0, LastUsed: t1, SizeBytes: 11},
		{Key: "b", FirstDetected: t0, LastUsed: t1, SizeBytes: 20},
		{Key: "d", FirstDetected: t1, LastUsed: t1, SizeBytes: 40, Pinned: true},
	}, m.Records())

	// Nothing in use: lastUsed stays.
	require.NoError(t, m.Detect(t2, imagegc.RuntimeView{Images: []imagegc.Image{img("a", 11), img("b", 20), img("d", 40)}}))
	assert.Equal(t, []imagegc.Record{
		{Key: "a", FirstDetected: t0, LastUsed: t1, SizeBytes: 11},
		{Key: "b", FirstDetected: t0, LastUsed: t1, SizeBytes: 20},
		{Key: "d", FirstDetected: t1, LastUsed: t1, SizeBytes: 40},
	}, m.Records())
}

// TestSpecDetectErrors: a listing error, or GetContainerStatus's error for
// any container, is returned before any record changes.
func TestSpecDetectErrors(t *testing.T) {
	boom := errors.New("rpc error: code = NotFound desc = container gone")
	base := imagegc.RuntimeView{Images: []imagegc.Image{img("a", 1)}}
	gone := ctr("c2", "new")
	gone.StatusErr = boom
	tests := []struct {
		name string
		view imagegc.RuntimeView
		want string
	}{
		{"ListImages", imagegc.RuntimeView{Images: []imagegc.Image{img("new", 1)}, ListImagesErr: boom, GetPodsErr: errors.New("not reached")}, boom.Error()},
		{"GetPods", imagegc.RuntimeView{Images: []imagegc.Image{img("new", 1)}, GetPodsErr: boom}, boom.Error()},
		{"GetContainerStatus", imagegc.RuntimeView{Images: []imagegc.Image{img("new", 1)},
			Containers: []imagegc.Container{ctr("c1", "new"), gone}}, "get container status: " + boom.Error()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := imagegc.NewManager(imagegc.DefaultPolicy(), imagegc.Options{})
			require.NoError(t, err)
			require.NoError(t, m.Detect(t0, base))
			before := m.Records()
			err = m.Detect(t0.Add(time.Minute), tc.view)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
			assert.ErrorIs(t, err, boom)
			assert.Equal(t, before, m.Records(), "records unchanged")
		})
	}
}

// TestSpecRuntimeClassInImageCriAPI: under the alpha gate records are keyed
// by "<id>,<handler>", containers match by the same tuple, image volumes by
// the plain ID, and a removal names the ID and the handler.
func TestSpecRuntimeClassInImageCriAPI(t *testing.T) {
	policy := imagegc.Policy{HighThresholdPercent: 0, LowThresholdPercent: 0}
	m, err := imagegc.NewManager(policy, imagegc.Options{RuntimeClassInImageCriAPI: true})
	require.NoError(t, err)
	used := imagegc.Container{ID: "c1", ImageID: "a", ImageRuntimeHandler: "kata"}
	vol := ctr("c2", "plain")
	vol.MountedImageIDs = []string{"b"}
	rt := &fakeRuntime{
		view: imagegc.RuntimeView{
			Images: []imagegc.Image{
				{ID: "a", SizeBytes: 1, RuntimeHandler: "kata"},
				{ID: "a", SizeBytes: 2},                         // same ID, no handler: its own record
				{ID: "b", SizeBytes: 4, RuntimeHandler: "kata"}, // mounted by plain ID: not matched
				{ID: "plain", SizeBytes: 8},
			},
			Containers: []imagegc.Container{used, vol},
		},
		fs: imagegc.FsStats{CapacityBytes: 100, AvailableBytes: 0},
	}
	require.NoError(t, m.Detect(t0, rt.view))
	assert.Equal(t, []string{"a", "a,kata", "b,kata", "plain"}, recordKeys(m))

	out, err := m.RunGarbageCollect(rt, t0.Add(time.Minute), t0)
	require.NoError(t, err)
	// a (no handler) and b,kata are unused; both first detected and never
	// used at t0: tie broken by key.
	assert.Equal(t, []imagegc.Attempt{
		{Removal: imagegc.Removal{ImageID: "a", SizeBytes: 2, Reason: "space"}},
		{Removal: imagegc.Removal{ImageID: "b", RuntimeHandler: "kata", SizeBytes: 4, Reason: "space"}},
	}, out.Attempts)
	assert.Equal(t, []string{"a,kata", "plain"}, recordKeys(m))
}

// TestSpecInvalidImageID: under the gate a record whose ID part is empty
// gets an InvalidImageID warning and is skipped.
func TestSpecInvalidImageID(t *testing.T) {
	m, err := imagegc.NewManager(imagegc.Policy{}, imagegc.Options{RuntimeClassInImageCriAPI: true})
	require.NoError(t, err)
	rt := &fakeRuntime{view: imagegc.RuntimeView{Images: []imagegc.Image{{ID: "", SizeBytes: 1, RuntimeHandler: "kata"}, img("x", 1)}}}
	out, err := m.RunDeleteUnusedImages(rt, t0)
	require.NoError(t, err)
	assert.Equal(t, []imagegc.Event{{Type: "Warning", Reason: "InvalidImageID", Message: "ImageID is not valid, skipping, image: ,kata"}}, out.Events)
	assert.Equal(t, []string{"x"}, attemptIDs(out))
}

// TestSpecBadInput: out-of-bounds input gets an *InputError naming the
// field and the rule, and changes nothing.
func TestSpecBadInput(t *testing.T) {
	m, err := imagegc.NewManager(imagegc.DefaultPolicy(), imagegc.Options{})
	require.NoError(t, err)
	require.NoError(t, m.Detect(t0, imagegc.RuntimeView{Images: []imagegc.Image{img("a", 1)}}))
	before := m.Records()

	err = m.Detect(t0, imagegc.RuntimeView{Images: []imagegc.Image{img("b", 1), img("c", -1)}})
	var in *imagegc.InputError
	require.ErrorAs(t, err, &in)
	assert.Equal(t, "images[1].sizeBytes", in.Field)
	assert.Equal(t, "images[1].sizeBytes: -1 must be between 0 and 1099511627776", err.Error())
	_, err = m.GarbageCollect(t0, t0, imagegc.RuntimeView{Containers: []imagegc.Container{{MountedImageIDs: make([]string, imagegc.MaxMountsPerContainer+1)}}})
	require.ErrorAs(t, err, &in)
	assert.Equal(t, "containers[0].mountedImageIDs", in.Field)
	assert.Equal(t, before, m.Records())

	// A filesystem reading out of bounds is refused; the pass still waits for it.
	p, err := m.GarbageCollect(t0, t0, imagegc.RuntimeView{Images: []imagegc.Image{img("a", 1)}})
	require.NoError(t, err)
	require.Equal(t, imagegc.StepImageFsStats, p.Next().Kind)
	require.ErrorAs(t, p.ImageFsStatsDone(imagegc.FsStats{CapacityBytes: -5}, nil), &in)
	assert.Equal(t, "capacityBytes", in.Field)
	require.Equal(t, imagegc.StepImageFsStats, p.Next().Kind)
	require.ErrorAs(t, p.RemoveImageDone(nil), &in, "no removal outstanding")
	require.NoError(t, p.ImageFsStatsDone(imagegc.FsStats{CapacityBytes: 10, AvailableBytes: 10}, nil))
	assert.Equal(t, imagegc.StepDone, p.Next().Kind)
}
