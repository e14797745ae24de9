package cri

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeproof/nodeproof/core/imagegc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gcNode is a runtime with three images: "sha256:used" run by an exited
// container, "sha256:vol" mounted as an image volume by a running one, and
// "sha256:idle" used by nothing; "sha256:pause" is pinned.
func gcNode(t *testing.T) *fakeRuntime {
	t.Helper()
	return &fakeRuntime{
		images: []*runtimeapi.Image{
			{Id: "sha256:used", RepoTags: []string{"x/used:1"}, Size: 300},
			{Id: "sha256:idle", Size: 200, Spec: &runtimeapi.ImageSpec{RuntimeHandler: "kata"}},
			{Id: "sha256:vol", Size: 100},
			{Id: "sha256:pause", Size: 50, Pinned: true},
		},
		sandboxes: []*runtimeapi.PodSandbox{{Id: "s1"}},
		containers: []*runtimeapi.Container{
			{Id: "c1", PodSandboxId: "s1", ImageRef: "sha256:used", State: runtimeapi.ContainerState_CONTAINER_EXITED},
			{Id: "c2", PodSandboxId: "s1", ImageRef: "sha256:other", State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		},
		mounts: map[string][]*runtimeapi.Mount{
			"c2": {{ContainerPath: "/data"}, {ContainerPath: "/models", Image: &runtimeapi.ImageSpec{Image: "sha256:vol"}}},
		},
		fs: []*runtimeapi.FilesystemUsage{{FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: t.TempDir()}, UsedBytes: &runtimeapi.UInt64Value{Value: 650}}},
	}
}

func TestGCRuntimeView(t *testing.T) {
	rt := NewGCRuntime(context.Background(), serve(t, gcNode(t), time.Second))
	assert.Equal(t, imagegc.RuntimeView{
		Images: []imagegc.Image{
			{ID: "sha256:used", SizeBytes: 300},
			{ID: "sha256:idle", SizeBytes: 200, RuntimeHandler: "kata"},
			{ID: "sha256:vol", SizeBytes: 100},
			{ID: "sha256:pause", SizeBytes: 50, Pinned: true},
		},
		Containers: []imagegc.Container{
			{PodID: "s1", ID: "c1", ImageID: "sha256:used"},
			{PodID: "s1", ID: "c2", ImageID: "sha256:other", MountedImageIDs: []string{"sha256:vol"}},
		},
	}, rt.View(), "exited containers count, image volumes come from ContainerStatus")
	assert.Equal(t, []string{"x/used:1"}, rt.Listed()[0].RepoTags)
}

// TestGCRuntimeRemovesWhatThePassChose: DeleteUnusedImages through the
// adapter removes only the image nothing uses and nothing pins, and the
// filesystem it reads is statfs of ImageFsInfo's mountpoint.
func TestGCRuntimeRemovesWhatThePassChose(t *testing.T) {
	node := gcNode(t)
	rt := NewGCRuntime(context.Background(), serve(t, node, time.Second))
	m, err := imagegc.NewManager(imagegc.DefaultPolicy(), imagegc.Options{})
	require.NoError(t, err)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, m.Detect(start, rt.View()))
	out, err := m.RunDeleteUnusedImages(rt, start.Add(imagegc.DefaultPolicy().MinAge))
	require.NoError(t, err)
	require.NoError(t, out.Err)
	assert.Equal(t, []string{"sha256:idle"}, node.removed)
	assert.Equal(t, []imagegc.Attempt{{Removal: imagegc.Removal{ImageID: "sha256:idle", RuntimeHandler: "kata", SizeBytes: 200, Reason: imagegc.RemovedForSpace}}}, out.Attempts)
	assert.Equal(t, int64(200), out.FreedBytes)

	stats, err := rt.ImageFsStats()
	require.NoError(t, err)
	capacity, _, err := Statfs(node.fs[0].FsId.Mountpoint)
	require.NoError(t, err)
	assert.Equal(t, capacity, stats.CapacityBytes)
	assert.Equal(t, node.fs[0].FsId.Mountpoint, rt.Filesystem().Mountpoint)
	assert.Equal(t, int64(650), rt.Filesystem().UsedBytes)
}

// TestGCRuntimeFailedCalls: each CRI call's failure reaches the pass where
// upstream's would: a failed listing ends it before anything is removed,
// with the call's error; a failed ContainerStatus as "get container
// status: %w"; a failed RemoveImage is recorded and the pass goes on.
func TestGCRuntimeFailedCalls(t *testing.T) {
	gone := status.Error(codes.NotFound, "gone")
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		rpc     string
		want    string
		removed []string
	}{
		{"ListImages", "cri: ListImages: rpc error: code = NotFound desc = gone", nil},
		{"ListPodSandbox", "cri: ListPodSandbox: rpc error: code = NotFound desc = gone", nil},
		{"ListContainers", "cri: ListContainers: rpc error: code = NotFound desc = gone", nil},
		{"ContainerStatus", "get container status: cri: ContainerStatus: rpc error: code = NotFound desc = gone", nil},
		{"RemoveImage", "wanted to free 9223372036854775807 bytes, but freed 0 bytes space with errors in image deletion: cri: RemoveImage: rpc error: code = NotFound desc = gone", nil},
		{"ImageFsInfo", "", []string{"sha256:idle"}}, // DeleteUnusedImages reads no stats
	} {
		t.Run(tc.rpc, func(t *testing.T) {
			node := gcNode(t)
			node.fail = map[string]error{tc.rpc: gone}
			rt := NewGCRuntime(context.Background(), serve(t, node, time.Second))
			m, err := imagegc.NewManager(imagegc.DefaultPolicy(), imagegc.Options{})
			require.NoError(t, err)
			out, err := m.RunDeleteUnusedImages(rt, start)
			require.NoError(t, err)
			// Detection at start, removal MinAge later: only a run that got
			// past detection has a record old enough.
			if out.Err == nil {
				out, err = m.RunDeleteUnusedImages(rt, start.Add(imagegc.DefaultPolicy().MinAge))
				require.NoError(t, err)
			}
			if tc.want == "" {
				assert.NoError(t, out.Err)
			} else {
				assert.EqualError(t, out.Err, tc.want)
				var rpcErr *RPCError
				assert.True(t, errors.As(out.Err, &rpcErr), "the CRI error stays reachable: %v", out.Err)
			}
			assert.Equal(t, tc.removed, node.removed)
		})
	}

	// GarbageCollect reads the filesystem after the MaxAge pass: its error
	// ends the pass with nothing removed.
	node := gcNode(t)
	node.fail = map[string]error{"ImageFsInfo": gone}
	rt := NewGCRuntime(context.Background(), serve(t, node, time.Second))
	m, err := imagegc.NewManager(imagegc.DefaultPolicy(), imagegc.Options{})
	require.NoError(t, err)
	out, err := m.RunGarbageCollect(rt, start, start)
	require.NoError(t, err)
	assert.EqualError(t, out.Err, "cri: ImageFsInfo: rpc error: code = NotFound desc = gone")
	assert.Nil(t, out.Usage)
}
