package cri

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeRuntime answers with whatever a test put in it; block makes every
// call wait for its deadline.
type fakeRuntime struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer
	images     []*runtimeapi.Image
	image      *runtimeapi.Image
	containers []*runtimeapi.Container
	sandboxes  []*runtimeapi.PodSandbox
	fs         []*runtimeapi.FilesystemUsage
	// mounts are ContainerStatus's mounts by container ID.
	mounts map[string][]*runtimeapi.Mount
	// removed records RemoveImage's calls.
	removed []string
	// fail makes the named RPC answer with the error.
	fail  map[string]error
	block bool
	// exec is ExecSync's answer; execs records its requests.
	exec  *runtimeapi.ExecSyncResponse
	execs []*runtimeapi.ExecSyncRequest
}

func (f *fakeRuntime) wait(ctx context.Context, rpc string) error {
	if f.block {
		<-ctx.Done()
		return status.FromContextError(ctx.Err()).Err()
	}
	return f.fail[rpc]
}

func (f *fakeRuntime) ListImages(ctx context.Context, _ *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	return &runtimeapi.ListImagesResponse{Images: f.images}, f.wait(ctx, "ListImages")
}

func (f *fakeRuntime) ImageStatus(ctx context.Context, _ *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	return &runtimeapi.ImageStatusResponse{Image: f.image}, f.wait(ctx, "ImageStatus")
}

func (f *fakeRuntime) ListContainers(ctx context.Context, _ *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	return &runtimeapi.ListContainersResponse{Containers: f.containers}, f.wait(ctx, "ListContainers")
}

func (f *fakeRuntime) ListPodSandbox(ctx context.Context, _ *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	return &runtimeapi.ListPodSandboxResponse{Items: f.sandboxes}, f.wait(ctx, "ListPodSandbox")
}

func (f *fakeRuntime) ImageFsInfo(ctx context.Context, _ *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: f.fs}, f.wait(ctx, "ImageFsInfo")
}

func (f *fakeRuntime) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: req.ContainerId, Mounts: f.mounts[req.ContainerId]}}, f.wait(ctx, "ContainerStatus")
}

func (f *fakeRuntime) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	f.execs = append(f.execs, req)
	return f.exec, f.wait(ctx, "ExecSync")
}

func (f *fakeRuntime) RemoveImage(ctx context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	if err := f.wait(ctx, "RemoveImage"); err != nil {
		return nil, err
	}
	f.removed = append(f.removed, req.GetImage().GetImage())
	return &runtimeapi.RemoveImageResponse{}, nil
}

// serve starts f on a socket of its own and returns a client with timeout.
func serve(t *testing.T, f *fakeRuntime, timeout time.Duration) *Client {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
	dir, err := os.MkdirTemp("", "npcri")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "cri.sock")
	lis, err := net.Listen("unix", socket)
	require.NoError(t, err)
	srv := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(srv, f)
	runtimeapi.RegisterImageServiceServer(srv, f)
	served := make(chan struct{})
	go func() { defer close(served); srv.Serve(lis) }()
	t.Cleanup(func() { srv.Stop(); <-served })
	c, err := New(Options{Socket: socket, Timeout: timeout})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestOptionsRejected(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{}, `cri: Options.Socket "": must be an absolute path`},
		{Options{Socket: "run/c.sock"}, `cri: Options.Socket "run/c.sock": must be an absolute path`},
		{Options{Socket: "/run/c.sock", Timeout: -time.Second}, `cri: Options.Timeout "-1s": must not be negative`},
	} {
		_, err := New(tc.opts)
		var input *InputError
		require.ErrorAs(t, err, &input)
		assert.EqualError(t, err, tc.want)
	}
}

func TestListImagesConverts(t *testing.T) {
	c := serve(t, &fakeRuntime{images: []*runtimeapi.Image{
		{Id: "sha256:a", RepoTags: []string{"x:1"}, Size: 42, Pinned: true, Spec: &runtimeapi.ImageSpec{RuntimeHandler: "kata"}},
		{Id: "sha256:b", RepoDigests: []string{"x@sha256:b"}},
	}}, time.Second)
	images, err := c.ListImages(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []Image{
		{ID: "sha256:a", RepoTags: []string{"x:1"}, SizeBytes: 42, Pinned: true, RuntimeHandler: "kata"},
		{ID: "sha256:b", RepoDigests: []string{"x@sha256:b"}},
	}, images)
}

func TestListImagesRejectsBadAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		images []*runtimeapi.Image
		want   string
	}{
		{"empty id", []*runtimeapi.Image{{Id: "a"}, {Id: ""}}, "cri: ListImages: images[1].id: must not be empty"},
		{"absurd size", []*runtimeapi.Image{{Id: "a", Size: 1<<63 + 5}}, `cri: ListImages: images[0].size "9223372036854775813": must be at most 1125899906842624 bytes (1 PiB)`},
		{"duplicate", []*runtimeapi.Image{{Id: "a"}, {Id: "b"}, {Id: "a"}}, `cri: ListImages: images[2].id "a": must be unique (images[0] has it too)`},
		{"empty tag", []*runtimeapi.Image{{Id: "a", RepoTags: []string{"x:1", ""}}}, "cri: ListImages: images[0].repo_tags[1]: must not be empty"},
		{"nil image", []*runtimeapi.Image{{Id: "a"}, nil}, "cri: ListImages: images[1].id: must not be empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := serve(t, &fakeRuntime{images: tc.images}, time.Second)
			images, err := c.ListImages(context.Background())
			var resp *ResponseError
			require.ErrorAs(t, err, &resp)
			assert.EqualError(t, err, tc.want)
			assert.Nil(t, images, "no half-read list")
		})
	}
}

func TestImageStatus(t *testing.T) {
	c := serve(t, &fakeRuntime{}, time.Second)
	_, found, err := c.ImageStatus(context.Background(), "x:1")
	require.NoError(t, err)
	assert.False(t, found, "a nil image is an image the runtime does not hold")
	_, _, err = c.ImageStatus(context.Background(), "")
	assert.EqualError(t, err, `cri: ref "": must not be empty`)

	c = serve(t, &fakeRuntime{image: &runtimeapi.Image{Id: "", RepoTags: []string{"x:1"}}}, time.Second)
	_, _, err = c.ImageStatus(context.Background(), "x:1")
	assert.EqualError(t, err, "cri: ImageStatus: image.id: must not be empty")
}

func TestListContainers(t *testing.T) {
	ok := func(mutate func(*runtimeapi.Container)) *runtimeapi.Container {
		ct := &runtimeapi.Container{Id: "c1", PodSandboxId: "s1", ImageRef: "sha256:ref",
			Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, State: runtimeapi.ContainerState_CONTAINER_EXITED}
		mutate(ct)
		return ct
	}
	c := serve(t, &fakeRuntime{containers: []*runtimeapi.Container{
		ok(func(*runtimeapi.Container) {}),
		ok(func(ct *runtimeapi.Container) { ct.Id, ct.ImageId = "c2", "sha256:id" }),
	}}, time.Second)
	containers, err := c.ListContainers(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []Container{
		{ID: "c1", PodSandboxID: "s1", Name: "app", ImageID: "sha256:ref", State: runtimeapi.ContainerState_CONTAINER_EXITED},
		{ID: "c2", PodSandboxID: "s1", Name: "app", ImageID: "sha256:id", State: runtimeapi.ContainerState_CONTAINER_EXITED},
	}, containers, "image_id wins over image_ref where the runtime sets it")

	for _, tc := range []struct {
		name   string
		mutate func(*runtimeapi.Container)
		want   string
	}{
		{"no image", func(ct *runtimeapi.Container) { ct.ImageRef = "" }, "cri: ListContainers: containers[0].image_ref: must not be empty (nor image_id)"},
		{"no id", func(ct *runtimeapi.Container) { ct.Id = "" }, "cri: ListContainers: containers[0].id: must not be empty"},
		{"no sandbox", func(ct *runtimeapi.Container) { ct.PodSandboxId = "" }, "cri: ListContainers: containers[0].pod_sandbox_id: must not be empty"},
		{"unknown state", func(ct *runtimeapi.Container) { ct.State = 9 }, `cri: ListContainers: containers[0].state "9": must be a CRI ContainerState`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := serve(t, &fakeRuntime{containers: []*runtimeapi.Container{ok(tc.mutate)}}, time.Second)
			_, err := c.ListContainers(context.Background())
			assert.EqualError(t, err, tc.want)
		})
	}
}

func TestListPodSandboxRejectsEmptyID(t *testing.T) {
	c := serve(t, &fakeRuntime{sandboxes: []*runtimeapi.PodSandbox{{Id: "s1"}, {}}}, time.Second)
	_, err := c.ListPodSandbox(context.Background())
	assert.EqualError(t, err, "cri: ListPodSandbox: items[1].id: must not be empty")
}

func TestImageFsInfoRejectsBadAnswers(t *testing.T) {
	good := func() *runtimeapi.FilesystemUsage {
		return &runtimeapi.FilesystemUsage{FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: "/var/lib/x"},
			UsedBytes: &runtimeapi.UInt64Value{Value: 7}, InodesUsed: &runtimeapi.UInt64Value{Value: 3}}
	}
	c := serve(t, &fakeRuntime{fs: []*runtimeapi.FilesystemUsage{good()}}, time.Second)
	fss, err := c.ImageFsInfo(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []Filesystem{{Mountpoint: "/var/lib/x", UsedBytes: 7, InodesUsed: 3}}, fss)

	relative, noUsed, absurd := good(), good(), good()
	relative.FsId.Mountpoint = "var/lib/x"
	noUsed.UsedBytes = nil
	absurd.UsedBytes.Value = 1 << 60
	for _, tc := range []struct {
		name string
		fs   []*runtimeapi.FilesystemUsage
		want string
	}{
		{"none", nil, "cri: ImageFsInfo: image_filesystems: must not be empty"},
		{"relative mountpoint", []*runtimeapi.FilesystemUsage{relative}, `cri: ImageFsInfo: image_filesystems[0].fs_id.mountpoint "var/lib/x": must be an absolute path`},
		{"no used bytes", []*runtimeapi.FilesystemUsage{noUsed}, "cri: ImageFsInfo: image_filesystems[0].used_bytes: must be set"},
		{"absurd used bytes", []*runtimeapi.FilesystemUsage{absurd}, `cri: ImageFsInfo: image_filesystems[0].used_bytes "1152921504606846976": must be at most 1125899906842624 bytes (1 PiB)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := serve(t, &fakeRuntime{fs: tc.fs}, time.Second)
			_, err := c.ImageFsInfo(context.Background())
			assert.EqualError(t, err, tc.want)
		})
	}
}

// TestTimeoutBoundsEveryRPC: a runtime that never answers costs each call
// the client's timeout, not the caller's patience.
func TestTimeoutBoundsEveryRPC(t *testing.T) {
	const timeout = 100 * time.Millisecond
	c := serve(t, &fakeRuntime{block: true}, timeout)
	ctx := context.Background()
	calls := map[string]func() error{
		"ListImages":     func() error { _, err := c.ListImages(ctx); return err },
		"ImageStatus":    func() error { _, _, err := c.ImageStatus(ctx, "x"); return err },
		"ListContainers": func() error { _, err := c.ListContainers(ctx); return err },
		"ListPodSandbox": func() error { _, err := c.ListPodSandbox(ctx); return err },
		"ImageFsInfo":    func() error { _, err := c.ImageFsInfo(ctx); return err },
	}
	for name, callFn := range calls {
		start := time.Now()
		err := callFn()
		elapsed := time.Since(start)
		var rpcErr *RPCError
		require.True(t, errors.As(err, &rpcErr), "%s: %v", name, err)
		assert.Equal(t, name, rpcErr.RPC)
		assert.Equal(t, codes.DeadlineExceeded, status.Code(err), name)
		assert.Less(t, elapsed, 10*timeout, "%s waited %v", name, elapsed)
	}
}
