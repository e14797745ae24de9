package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/agent/cri"
	"github.com/nodeproof/nodeproof/core/imagegc"
	"github.com/nodeproof/nodeproof/integration/containerdtest"
	"github.com/stretchr/testify/require"
)

// BenchmarkContainerdGCReads measures the CRI reads of one image GC round
// against the real containerd: ListImages, ListContainers and ImageFsStats
// (ImageFsInfo and statfs), with 20 images and one running container.
func BenchmarkContainerdGCReads(b *testing.B) {
	ctrd := containerdtest.Start(b, containerdtest.Options{FsSizeBytes: 64 * MiB})
	ctx := context.Background()
	bb, err := containerdtest.BusyboxLayer()
	require.NoError(b, err)
	images := []containerdtest.Image{{Name: "nodeproof.test/app:1", Layers: []containerdtest.Layer{bb}}}
	for i := range 19 {
		l, err := containerdtest.DataLayer(fmt.Sprint("d", i), 64<<10, uint64(i))
		require.NoError(b, err)
		images = append(images, containerdtest.Image{Name: fmt.Sprintf("nodeproof.test/d%d:1", i), Layers: []containerdtest.Layer{l}})
	}
	ctrd.Import(images...)
	pod, err := ctrd.RunPod(ctx, "app", images[0].Name, "/bin/sleep", "3600")
	require.NoError(b, err)
	b.ResetTimer()
	for b.Loop() {
		imgs, err := ctrd.CRI.ListImages(ctx)
		require.NoError(b, err)
		require.Len(b, imgs, 21)
		cs, err := ctrd.CRI.ListContainers(ctx)
		require.NoError(b, err)
		require.Len(b, cs, 1)
		_, err = ctrd.CRI.ImageFsStats(ctx)
		require.NoError(b, err)
	}
	b.StopTimer()
	require.NoError(b, ctrd.RemovePod(ctx, pod))
}

// BenchmarkContainerdRemoveImage measures one RemoveImage of an unused 1 MiB
// image, content and snapshot removed synchronously; the import before each
// removal is not timed.
func BenchmarkContainerdRemoveImage(b *testing.B) {
	ctrd := containerdtest.Start(b, containerdtest.Options{FsSizeBytes: 64 * MiB})
	ctx := context.Background()
	i := 0
	for b.Loop() {
		b.StopTimer()
		id := importUnusedImage(b, ctrd, i)
		i++
		b.StartTimer()
		require.NoError(b, ctrd.CRI.RemoveImage(ctx, id))
	}
}

// BenchmarkContainerdGCRound measures one whole GarbageCollect through the
// CRI adapter against the real containerd: detection (ListImages,
// ListPodSandbox, ListContainers and ContainerStatus of the running
// container), ImageFsStats (ImageFsInfo + statfs), and the space pass
// removing one unused 1 MiB image. The thresholds (high 1, low 0) put every
// round in the space pass; importing the image and its first detection
// before each round are not timed.
func BenchmarkContainerdGCRound(b *testing.B) {
	ctrd := containerdtest.Start(b, containerdtest.Options{FsSizeBytes: 64 * MiB})
	ctx := context.Background()
	bb, err := containerdtest.BusyboxLayer()
	require.NoError(b, err)
	app := containerdtest.Image{Name: "nodeproof.test/app:1", Layers: []containerdtest.Layer{bb}}
	ctrd.Import(app)
	pod, err := ctrd.RunPod(ctx, "app", app.Name, "/bin/sleep", "3600")
	require.NoError(b, err)
	rt := cri.NewGCRuntime(ctx, ctrd.CRI)
	policy := imagegc.Policy{HighThresholdPercent: 1, LowThresholdPercent: 0, MinAge: 2 * time.Minute}
	m, err := imagegc.NewManager(policy, imagegc.Options{})
	require.NoError(b, err)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	// The first round removes the pause image (unpinned on containerd 1.6).
	require.NoError(b, m.Detect(now, rt.View()))
	now = now.Add(policy.MinAge)
	_, err = m.RunGarbageCollect(rt, now, now)
	require.NoError(b, err)
	i := 0
	for b.Loop() {
		b.StopTimer()
		importUnusedImage(b, ctrd, i)
		i++
		require.NoError(b, m.Detect(now, rt.View()))
		now = now.Add(policy.MinAge)
		b.StartTimer()
		out, err := m.RunGarbageCollect(rt, now, now)
		require.NoError(b, err)
		require.Len(b, out.Attempts, 1)
		require.NoError(b, out.Attempts[0].Err)
	}
	b.StopTimer()
	require.NoError(b, ctrd.RemovePod(ctx, pod))
}

// importUnusedImage imports the i-th image of one fresh 1 MiB layer, which
// no container uses, and returns its ID.
func importUnusedImage(b *testing.B, ctrd *containerdtest.Containerd, i int) string {
	b.Helper()
	l, err := containerdtest.DataLayer("r", 1*MiB, uint64(i))
	require.NoError(b, err)
	img := containerdtest.Image{Name: fmt.Sprintf("nodeproof.test/r%d:1", i), Layers: []containerdtest.Layer{l}}
	ctrd.Import(img)
	id, err := img.ID()
	require.NoError(b, err)
	return id
}
