package integration

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeproof/nodeproof/agent/cri"
	"github.com/nodeproof/nodeproof/integration/containerdtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// MiB is a mebibyte, the unit of the images' chosen sizes.
const MiB = 1 << 20

// sizeSlack bounds what tmpfs accounting adds to a removal's bytes beyond
// the files themselves: page rounding, directories, the metadata database.
const sizeSlack = 256 << 10

func dataLayer(t *testing.T, name string, sizeBytes int64, seed uint64) containerdtest.Layer {
	t.Helper()
	l, err := containerdtest.DataLayer(name, sizeBytes, seed)
	require.NoError(t, err)
	return l
}

func imageID(t *testing.T, img containerdtest.Image) string {
	t.Helper()
	id, err := img.ID()
	require.NoError(t, err)
	return id
}

// availableBytes is the kernel's count of the image filesystem's free bytes.
func availableBytes(t *testing.T, ctrd *containerdtest.Containerd) int64 {
	t.Helper()
	_, available, err := cri.Statfs(ctrd.Root)
	require.NoError(t, err)
	return available
}

// imageIDs lists the IDs of the images containerd holds.

// sandboxImagePinned reads whether the runtime pins its sandbox image
// through CRI (the image's pinned flag in ListImages) and holds it to what
// the version promises: containerd 1.7 and later pin it; 1.6 has no pinning
// at all (#111796's protection is then missing). The tests that follow
// branch on what the runtime really said.
func sandboxImagePinned(t *testing.T, ctrd *containerdtest.Containerd) bool {
	t.Helper()
	ctx := context.Background()
	v, err := ctrd.CRI.Version(ctx)
	require.NoError(t, err)
	images, err := ctrd.CRI.ListImages(ctx)
	require.NoError(t, err)
	i := slices.IndexFunc(images, func(img cri.Image) bool {
		return slices.Contains(img.RepoTags, containerdtest.SandboxImageName)
	})
	require.GreaterOrEqual(t, i, 0, "the sandbox image %s is not listed", containerdtest.SandboxImageName)
	pinned := images[i].Pinned
	t.Logf("runtime %s %s (CRI %s): sandbox image pinned: %v", v.RuntimeName, v.RuntimeVersion, v.RuntimeAPIVersion, pinned)
	require.Equal(t, !strings.HasPrefix(v.RuntimeVersion, "1.6."), pinned,
		"containerd %s: 1.7 and later pin the sandbox image, 1.6 never does", v.RuntimeVersion)
	return pinned
}

// TestContainerdImageFsIsTheTmpfs: the image filesystem image GC reads is
// the tmpfs of the chosen size, and the runtime's used bytes count an
// imported image's unpacked layers.
func TestContainerdImageFsIsTheTmpfs(t *testing.T) {
	const fsSize = 48 * MiB
	ctrd := containerdtest.Start(t, containerdtest.Options{FsSizeBytes: fsSize})
	ctx := context.Background()

	layer := dataLayer(t, "big", 8*MiB, 1)
	ctrd.Import(containerdtest.Image{Name: "nodeproof.test/big:1", Layers: []containerdtest.Layer{layer}})
	available := availableBytes(t, ctrd)
	stats, err := ctrd.CRI.ImageFsStats(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(fsSize), stats.CapacityBytes, "capacity is the tmpfs's size")
	assert.Equal(t, available, stats.AvailableBytes, "available bytes are the kernel's")
	assert.True(t, strings.HasPrefix(stats.Mountpoint, ctrd.Root+"/"), "mountpoint %s is under containerd's root %s", stats.Mountpoint, ctrd.Root)
	assert.GreaterOrEqual(t, fsSize-available, 2*layer.SizeBytes(), "the import holds the layer twice: its blob and its unpacked snapshot")

	// containerd counts snapshot usage every stats_collect_period (1s here):
	// wait, bounded, for the count to include the unpacked layer.
	deadline := time.Now().Add(waitLimit)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for stats.UsedBytes < 8*MiB && time.Now().Before(deadline) {
		<-tick.C
		stats, err = ctrd.CRI.ImageFsStats(ctx)
		require.NoError(t, err)
	}
	assert.GreaterOrEqual(t, stats.UsedBytes, int64(8*MiB), "ImageFsInfo counts the unpacked layer within %v", waitLimit)
	assert.LessOrEqual(t, stats.UsedBytes, fsSize-stats.AvailableBytes, "the runtime's count stays within what the kernel sees used")
}

// TestContainerdTeardownsApart: go test runs packages in parallel, so this
// package's containerd and cmd/nodeproof's may run at once, their shims'
// sockets side by side in the host's /run/containerd/s. A teardown must
// remove and report only its own: tearing down a second containerd leaves
// alone the socket of a shim the first one started meanwhile (a teardown
// that took every socket new since its start for its own once failed a
// parallel test with "left behind: shim socket").
func TestContainerdTeardownsApart(t *testing.T) {
	ctx := context.Background()
	bb, err := containerdtest.BusyboxLayer()
	require.NoError(t, err)
	app := containerdtest.Image{Name: "nodeproof.test/app:1", Layers: []containerdtest.Layer{bb}}
	first := containerdtest.Start(t, containerdtest.Options{})
	first.Import(app)
	var socket string
	t.Run("second containerd", func(t *testing.T) {
		second := containerdtest.Start(t, containerdtest.Options{})
		second.Import(app)
		pod, err := first.RunPod(ctx, "app", app.Name, "/bin/sleep", "3600")
		require.NoError(t, err)
		socket = first.ShimSocket(pod.SandboxID)
		require.FileExists(t, socket, "the sandbox's shim socket is where the teardown looks for it")
		_, err = second.RunPod(ctx, "app", app.Name, "/bin/sleep", "3600")
		require.NoError(t, err)
	})
	assert.FileExists(t, socket, "the second containerd's teardown removed the first one's shim socket")
}

// TestContainerdImageInUse puts an image in use through CRI, as the kubelet
// does: a host-network sandbox and a container of the image.
func TestContainerdImageInUse(t *testing.T) {
	ctrd := containerdtest.Start(t, containerdtest.Options{FsSizeBytes: 64 * MiB})
	ctx := context.Background()
	bb, err := containerdtest.BusyboxLayer()
	require.NoError(t, err)
	app := containerdtest.Image{Name: "nodeproof.test/app:1", Layers: []containerdtest.Layer{bb, dataLayer(t, "app", 2*MiB, 2)}}
	idle := containerdtest.Image{Name: "nodeproof.test/idle:1", Layers: []containerdtest.Layer{dataLayer(t, "idle", 1*MiB, 3)}}
	ctrd.Import(app, idle)

	pod, err := ctrd.RunPod(ctx, "app", app.Name, "/bin/sleep", "3600")
	require.NoError(t, err)
	assert.FileExists(t, ctrd.ShimSocket(pod.SandboxID), "the sandbox's shim socket is where the teardown looks for it")

	containers, err := ctrd.CRI.ListContainers(ctx)
	require.NoError(t, err)
	require.Len(t, containers, 1, "the sandbox's pause container is not listed")
	assert.Equal(t, cri.Container{
		ID: pod.ContainerID, PodSandboxID: pod.SandboxID, Name: "app",
		ImageID: imageID(t, app), State: runtimeapi.ContainerState_CONTAINER_RUNNING,
	}, containers[0])
	sandboxes, err := ctrd.CRI.ListPodSandbox(ctx)
	require.NoError(t, err)
	assert.Equal(t, []cri.Sandbox{{ID: pod.SandboxID, Name: "app", Namespace: "nodeproof", UID: "uid-app", State: runtimeapi.PodSandboxState_SANDBOX_READY}}, sandboxes)

	status, found, err := ctrd.CRI.ImageStatus(ctx, app.Name)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, imageID(t, app), status.ID)
	assert.Equal(t, []string{app.Name}, status.RepoTags)

	pinned := sandboxImagePinned(t, ctrd)
	pause, found, err := ctrd.CRI.ImageStatus(ctx, containerdtest.SandboxImageName)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, pinned, pause.Pinned, "the sandbox image's CRI pinned flag while a sandbox runs")
	images, err := ctrd.CRI.ListImages(ctx)
	require.NoError(t, err)
	for _, img := range images {
		assert.Equal(t, pinned && img.ID == pause.ID, img.Pinned, "pinned flag of %v", img.RepoTags)
	}

	mounts, err := ctrd.CRI.ImageMounts(ctx, pod.ContainerID)
	require.NoError(t, err)
	assert.Empty(t, mounts, "containerd 1.6 has no image volumes")

	require.NoError(t, ctrd.RemovePod(ctx, pod))
	containers, err = ctrd.CRI.ListContainers(ctx)
	require.NoError(t, err)
	assert.Empty(t, containers)
}

// TestContainerdRemoveImageFreedBytes measures #68203: the size CRI reports
// for an image (the sum of its blobs) against the bytes removing it really
// frees. Two images share a base layer; containerd keeps a layer's blob and
// its unpacked snapshot, so removing the first frees twice its own layer
// and nothing of the base, removing the second twice the base and its own.
func TestContainerdRemoveImageFreedBytes(t *testing.T) {
	ctrd := containerdtest.Start(t, containerdtest.Options{FsSizeBytes: 64 * MiB})
	ctx := context.Background()
	base := dataLayer(t, "base", 6*MiB, 10)
	ownX, ownY := dataLayer(t, "x", 3*MiB, 11), dataLayer(t, "y", 2*MiB, 12)
	x := containerdtest.Image{Name: "nodeproof.test/x:1", Layers: []containerdtest.Layer{base, ownX}}
	y := containerdtest.Image{Name: "nodeproof.test/y:1", Layers: []containerdtest.Layer{base, ownY}}
	ctrd.Import(x, y)

	reported := map[string]int64{}
	images, err := ctrd.CRI.ListImages(ctx)
	require.NoError(t, err)
	for _, img := range images {
		reported[img.ID] = img.SizeBytes
	}
	pauseID := imageID(t, mustSandboxImage(t))
	require.ElementsMatch(t, []string{pauseID, imageID(t, x), imageID(t, y)}, ctrd.ImageIDs())

	remove := func(img containerdtest.Image) int64 {
		before := availableBytes(t, ctrd)
		require.NoError(t, ctrd.CRI.RemoveImage(ctx, imageID(t, img)))
		return availableBytes(t, ctrd) - before
	}
	freedX := remove(x)
	assert.ElementsMatch(t, []string{pauseID, imageID(t, y)}, ctrd.ImageIDs())
	freedY := remove(y)
	assert.Equal(t, []string{pauseID}, ctrd.ImageIDs())

	sizeX, sizeY := reported[imageID(t, x)], reported[imageID(t, y)]
	t.Logf("x: CRI size %d, freed %d; y: CRI size %d, freed %d", sizeX, freedX, sizeY, freedY)
	// The reported size is the blobs: the layers, the config and the manifest.
	assert.InDelta(t, base.SizeBytes()+ownX.SizeBytes(), sizeX, 4096)
	assert.InDelta(t, base.SizeBytes()+ownY.SizeBytes(), sizeY, 4096)
	// Removal frees blob and snapshot of what no other image shares.
	assert.InDelta(t, 2*ownX.SizeBytes(), freedX, sizeSlack, "removing x frees its own layer twice, not the shared base")
	assert.InDelta(t, 2*(base.SizeBytes()+ownY.SizeBytes()), freedY, sizeSlack, "removing y, the base's last user, frees the base too")
	assert.Less(t, freedX, sizeX, "the kubelet's arithmetic over-counts x: the base stays")
	assert.Greater(t, freedY, sizeY, "and under-counts y: unpacked snapshots are not in CRI's size")
}

// TestContainerdRemovesImageInUse records the runtime's side of #123631:
// containerd 1.6 removes an image a running container uses when asked, so
// the kubelet's in-use check is the only protection. The blobs go, the
// container's snapshots stay, and the container keeps running with an image
// ListImages no longer shows.
func TestContainerdRemovesImageInUse(t *testing.T) {
	ctrd := containerdtest.Start(t, containerdtest.Options{FsSizeBytes: 64 * MiB})
	ctx := context.Background()
	bb, err := containerdtest.BusyboxLayer()
	require.NoError(t, err)
	own := dataLayer(t, "used", 4*MiB, 20)
	used := containerdtest.Image{Name: "nodeproof.test/used:1", Layers: []containerdtest.Layer{bb, own}}
	ctrd.Import(used)
	pod, err := ctrd.RunPod(ctx, "user", used.Name, "/bin/sleep", "3600")
	require.NoError(t, err)

	before := availableBytes(t, ctrd)
	require.NoError(t, ctrd.CRI.RemoveImage(ctx, imageID(t, used)), "containerd does not refuse")
	freed := availableBytes(t, ctrd) - before
	assert.InDelta(t, own.SizeBytes(), freed, sizeSlack, "only the unshared blob is freed; busybox's blob is the pause image's too, the snapshots are the container's")
	assert.Equal(t, []string{imageID(t, mustSandboxImage(t))}, ctrd.ImageIDs())

	containers, err := ctrd.CRI.ListContainers(ctx)
	require.NoError(t, err)
	require.Len(t, containers, 1)
	assert.Equal(t, runtimeapi.ContainerState_CONTAINER_RUNNING, containers[0].State)
	assert.Equal(t, imageID(t, used), containers[0].ImageID, "the container still names the removed image")
	require.NoError(t, ctrd.RemovePod(ctx, pod))
}

func mustSandboxImage(t *testing.T) containerdtest.Image {
	t.Helper()
	img, err := containerdtest.SandboxImage()
	require.NoError(t, err)
	return img
}
