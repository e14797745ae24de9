package integration

import (
	"context"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeproof/nodeproof/agent/cri"
	"github.com/nodeproof/nodeproof/core/imagegc"
	"github.com/nodeproof/nodeproof/integration/containerdtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gcStart is the injected clock's kubelet start; every time a GC test
// passes is an offset from it.
var gcStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// gcImage is an image of the GC tests and its ID.
type gcImage struct {
	containerdtest.Image
	id string
}

func newGCImage(t *testing.T, name string, layers ...containerdtest.Layer) gcImage {
	img := containerdtest.Image{Name: "nodeproof.test/" + name + ":1", Layers: layers, Cmd: []string{"/bin/sleep", "3600"}}
	return gcImage{Image: img, id: imageID(t, img)}
}

// gcNode is a containerd with a pod running: a sandbox (of the pause
// image) and a container of app = busybox + 1 MiB. The pause image shares
// its one layer, busybox, with app.
type gcNode struct {
	ctrd       *containerdtest.Containerd
	rt         *cri.GCRuntime
	app, pause gcImage
	pod        containerdtest.Pod
}

func startGCNode(t *testing.T, fsSizeBytes int64) *gcNode {
	ctrd := containerdtest.Start(t, containerdtest.Options{FsSizeBytes: fsSizeBytes})
	bb, err := containerdtest.BusyboxLayer()
	require.NoError(t, err)
	n := &gcNode{ctrd: ctrd, rt: cri.NewGCRuntime(context.Background(), ctrd.CRI),
		app: newGCImage(t, "app", bb, dataLayer(t, "app", 1*MiB, 30))}
	pause := mustSandboxImage(t)
	n.pause = gcImage{Image: pause, id: imageID(t, pause)}
	ctrd.Import(n.app.Image)
	n.pod, err = ctrd.RunPod(context.Background(), "app", n.app.Name, "/bin/sleep", "3600")
	require.NoError(t, err)
	return n
}

// sizes are the CRI sizes of the images containerd lists, by ID.
func (n *gcNode) sizes(t *testing.T) map[string]int64 {
	images, err := n.ctrd.CRI.ListImages(context.Background())
	require.NoError(t, err)
	out := map[string]int64{}
	for _, img := range images {
		out[img.ID] = img.SizeBytes
	}
	return out
}

// podRuns checks that the pod's sandbox and container still run.
func (n *gcNode) podRuns(t *testing.T) {
	ctx := context.Background()
	sandboxes, err := n.ctrd.CRI.ListPodSandbox(ctx)
	require.NoError(t, err)
	require.Len(t, sandboxes, 1)
	assert.Equal(t, runtimeapi.PodSandboxState_SANDBOX_READY, sandboxes[0].State)
	containers, err := n.ctrd.CRI.ListContainers(ctx)
	require.NoError(t, err)
	require.Len(t, containers, 1)
	assert.Equal(t, runtimeapi.ContainerState_CONTAINER_RUNNING, containers[0].State)
}

// measuringRuntime is the CRI adapter with statfs read around each
// RemoveImage, so a test sees what each removal really freed.
type measuringRuntime struct {
	*cri.GCRuntime
	root  string
	freed map[string]int64
}

func (r *measuringRuntime) RemoveImage(imageID, handler string) error {
	_, before, err := cri.Statfs(r.root)
	if err != nil {
		return err
	}
	if err := r.GCRuntime.RemoveImage(imageID, handler); err != nil {
		return err
	}
	_, after, err := cri.Statfs(r.root)
	r.freed[imageID] = after - before
	return err
}

// removed lists the IDs of a pass's attempts, with their reasons.
func removed(out imagegc.Outcome) (ids, reasons []string) {
	for _, a := range out.Attempts {
		ids = append(ids, a.ImageID)
		reasons = append(reasons, a.Reason)
		if a.Err != nil {
			ids[len(ids)-1] += " failed: " + a.Err.Error()
		}
	}
	return ids, reasons
}

// TestContainerdImageGCSpacePass runs the kubelet's GarbageCollect through
// the CRI adapter against the real containerd, on an injected clock, with
// the image filesystem (a 64 MiB tmpfs) filled above the high threshold.
//
// Images, first detected a minute apart so the eviction order is decided by
// firstDetected, not by digests: the pause image and app (in use) at the
// kubelet's start t0, c = 6 MiB alone at t0+1m, a = base 4 MiB + 3 MiB at
// t0+2m, b = the same base + 2 MiB at t0+3m.
//
// The pause image is in the eviction list: the kubelet sees no container
// use it (a sandbox is not one of a pod's containers in GetPods) and, since
// ~1.29, protects it only through CRI's pinned flag (#111796), which
// containerd 1.6 never sets. So on containerd 1.6 the v1.36 kubelet removes
// the pause image first, while its sandbox runs, and containerd lets it
// (the running sandbox keeps its snapshot and goes on). On containerd 1.7+
// it is pinned and stays.
func TestContainerdImageGCSpacePass(t *testing.T) {
	const fsSize = 64 * MiB
	n := startGCNode(t, fsSize)
	pinned := sandboxImagePinned(t, n.ctrd)
	ctx := context.Background()

	m, err := imagegc.NewManager(imagegc.DefaultPolicy(), imagegc.Options{})
	require.NoError(t, err)
	minAge := imagegc.DefaultPolicy().MinAge
	require.NoError(t, m.Detect(gcStart, n.rt.View()))

	base := dataLayer(t, "base", 4*MiB, 31)
	c := newGCImage(t, "c", dataLayer(t, "c", 6*MiB, 32))
	a := newGCImage(t, "a", base, dataLayer(t, "a", 3*MiB, 33))
	b := newGCImage(t, "b", base, dataLayer(t, "b", 2*MiB, 34))
	for i, img := range []gcImage{c, a, b} {
		n.ctrd.Import(img.Image)
		require.NoError(t, m.Detect(gcStart.Add(time.Duration(i+1)*time.Minute), n.rt.View()))
	}
	sizes := n.sizes(t)
	all := []string{n.pause.id, n.app.id, c.id, a.id, b.id}
	require.ElementsMatch(t, all, n.ctrd.ImageIDs())

	// 87%: at or above high (85), the space pass must free down to low
	// (80): capacity*20/100 - available, about 4.5 MiB, less than c alone.
	require.NoError(t, n.ctrd.FillTo(87))

	// One nanosecond before the pause image (and app) are MinAge old:
	// nothing is eligible, nothing is removed, and the kubelet says so.
	out, err := m.RunGarbageCollect(n.rt, gcStart.Add(minAge-time.Nanosecond), gcStart)
	require.NoError(t, err)
	assert.Empty(t, out.Attempts)
	require.NotNil(t, out.Usage)
	assert.Equal(t, 87, out.Usage.UsagePercent)
	assert.True(t, out.Usage.AboveHigh)
	require.Len(t, out.Events, 1)
	assert.Equal(t, imagegc.ReasonFreeDiskSpaceFailed, out.Events[0].Reason)
	assert.EqualError(t, out.Err, out.Events[0].Message)
	assert.Contains(t, out.Err.Error(), "(87% of 64.0 MiB used)")
	assert.ElementsMatch(t, all, n.ctrd.ImageIDs())

	// At t0+3m c is exactly MinAge old (eligible), a and b are younger.
	// The pause image goes first on containerd 1.6; c then frees enough.
	before := availableBytes(t, n.ctrd)
	measured := &measuringRuntime{GCRuntime: n.rt, root: n.ctrd.Root, freed: map[string]int64{}}
	out, err = m.RunGarbageCollect(measured, gcStart.Add(3*time.Minute), gcStart)
	require.NoError(t, err)
	require.NoError(t, out.Err)
	wantIDs := []string{c.id}
	if !pinned {
		wantIDs = []string{n.pause.id, c.id}
	}
	ids, reasons := removed(out)
	assert.Equal(t, wantIDs, ids, "removal order")
	assert.Equal(t, []string{imagegc.RemovedForSpace}, reasons[:1])
	freed := availableBytes(t, n.ctrd) - before
	var counted int64
	for _, id := range wantIDs {
		counted += sizes[id]
	}
	assert.Equal(t, counted, out.FreedBytes, "the kubelet counts CRI's sizes")
	assert.GreaterOrEqual(t, out.FreedBytes, out.Usage.AmountToFreeBytes)
	t.Logf("round at t0+3m: usage %d%%, to free %d B; kubelet counted %d B, statfs freed %d B (gap %+d B)",
		out.Usage.UsagePercent, out.Usage.AmountToFreeBytes, out.FreedBytes, freed, freed-out.FreedBytes)
	// c shares nothing: its blob and its snapshot go (twice its size). The
	// pause image's only layer is busybox, which app still holds: removing
	// it frees its config and manifest only.
	assert.InDelta(t, 2*sizes[c.id], freed, sizeSlack)
	assert.InDelta(t, 2*sizes[c.id], measured.freed[c.id], sizeSlack)
	if !pinned {
		t.Logf("pause image: kubelet counted %d B, statfs freed %d B", sizes[n.pause.id], measured.freed[n.pause.id])
		assert.Less(t, measured.freed[n.pause.id], int64(sizeSlack), "the pause image's layer is app's too: nothing of it comes free")
		assert.Greater(t, sizes[n.pause.id], int64(1*MiB), "while the kubelet counts busybox's size")
	}
	wantHeld := []string{n.app.id, a.id, b.id}
	if pinned {
		wantHeld = append(wantHeld, n.pause.id)
	}
	assert.ElementsMatch(t, wantHeld, n.ctrd.ImageIDs(), "containerd holds the image in use, the ones not yet MinAge old (and a pinned pause image)")
	n.podRuns(t)

	// Five minutes on (the GC period), filled to 95%: a and b are old
	// enough and removed in firstDetected order. They share the base: the
	// kubelet counts it twice (in both sizes), containerd frees it once,
	// with b, the base's last user, and frees each unpacked layer too.
	require.NoError(t, n.ctrd.FillTo(95))
	before = availableBytes(t, n.ctrd)
	measured.freed = map[string]int64{}
	out, err = m.RunGarbageCollect(measured, gcStart.Add(8*time.Minute), gcStart)
	require.NoError(t, err)
	require.NoError(t, out.Err)
	ids, _ = removed(out)
	assert.Equal(t, []string{a.id, b.id}, ids, "removal order")
	freed = availableBytes(t, n.ctrd) - before
	assert.Equal(t, sizes[a.id]+sizes[b.id], out.FreedBytes)
	t.Logf("round at t0+8m: usage %d%%, to free %d B; kubelet counted %d B, statfs freed %d B (gap %+d B, #68203)",
		out.Usage.UsagePercent, out.Usage.AmountToFreeBytes, out.FreedBytes, freed, freed-out.FreedBytes)
	// Real: base, a's and b's own layers, each blob and snapshot once =
	// 2*(4+3+2) MiB. Counted: (4+3) + (4+2) MiB. The gap is the unpacked
	// snapshots less the base counted twice: 2*9 - 13 = +5 MiB.
	assert.InDelta(t, 2*(base.SizeBytes()+sizes[a.id]-base.SizeBytes()+sizes[b.id]-base.SizeBytes()), freed, 2*sizeSlack)
	assert.InDelta(t, 5*MiB, freed-out.FreedBytes, 2*sizeSlack, "statfs frees about 5 MiB more than the kubelet counts")
	t.Logf("a: counted %d B, freed %d B; b: counted %d B, freed %d B", sizes[a.id], measured.freed[a.id], sizes[b.id], measured.freed[b.id])
	assert.Less(t, measured.freed[a.id], sizes[a.id], "a over-counted: the base stays for b")
	assert.Greater(t, measured.freed[b.id], sizes[b.id], "b under-counted: the base and the unpacked snapshots go")
	wantHeld = []string{n.app.id}
	if pinned {
		wantHeld = append(wantHeld, n.pause.id)
	}
	assert.ElementsMatch(t, wantHeld, n.ctrd.ImageIDs())
	n.podRuns(t)
	require.NoError(t, n.ctrd.RemovePod(ctx, n.pod))
}

// TestContainerdImageGCMaxAgeAndDeleteUnused: the MaxAge pass waits one
// MaxAge after the kubelet's start, then removes every unused image whose
// last use is older (a zero last use always is), whatever the usage; then
// DeleteUnusedImages, the eviction manager's call, removes every unused
// image MinAge old with the filesystem far below both thresholds.
func TestContainerdImageGCMaxAgeAndDeleteUnused(t *testing.T) {
	n := startGCNode(t, 64*MiB)
	pinned := sandboxImagePinned(t, n.ctrd)
	policy := imagegc.DefaultPolicy()
	policy.MaxAge = 10 * time.Minute
	m, err := imagegc.NewManager(policy, imagegc.Options{})
	require.NoError(t, err)

	x := newGCImage(t, "x", dataLayer(t, "x", 2*MiB, 40))
	n.ctrd.Import(x.Image)
	require.NoError(t, m.Detect(gcStart, n.rt.View()))

	// Exactly MaxAge after the start: the wait is not over (upstream's <=).
	out, err := m.RunGarbageCollect(n.rt, gcStart.Add(policy.MaxAge), gcStart)
	require.NoError(t, err)
	require.NoError(t, out.Err)
	assert.Empty(t, out.Attempts)
	require.NotNil(t, out.Usage)
	assert.False(t, out.Usage.AboveHigh, "usage %d%%", out.Usage.UsagePercent)

	// One nanosecond later: x and (on containerd 1.6) the pause image go,
	// for age; the space pass does not run, so nothing counts as freed.
	out, err = m.RunGarbageCollect(n.rt, gcStart.Add(policy.MaxAge+time.Nanosecond), gcStart)
	require.NoError(t, err)
	require.NoError(t, out.Err)
	want := []string{x.id}
	if !pinned {
		// Both zero lastUsed and first detected at t0: the key decides.
		want = []string{n.pause.id, x.id}
		if x.id < n.pause.id {
			want = []string{x.id, n.pause.id}
		}
	}
	ids, reasons := removed(out)
	assert.Equal(t, want, ids)
	for _, r := range reasons {
		assert.Equal(t, imagegc.RemovedForAge, r)
	}
	assert.Zero(t, out.FreedBytes, "upstream counts only the space pass's removals")
	wantHeld := []string{n.app.id}
	if pinned {
		wantHeld = append(wantHeld, n.pause.id)
	}
	assert.ElementsMatch(t, wantHeld, n.ctrd.ImageIDs())

	// DeleteUnusedImages: y is new (first detected at t1), so MinAge
	// protects it until t1+MinAge; then it goes, though the usage is far
	// below the low threshold.
	y := newGCImage(t, "y", dataLayer(t, "y", 3*MiB, 41))
	n.ctrd.Import(y.Image)
	t1 := gcStart.Add(20 * time.Minute)
	require.NoError(t, m.Detect(t1, n.rt.View()))
	out, err = m.RunDeleteUnusedImages(n.rt, t1.Add(policy.MinAge-time.Nanosecond))
	require.NoError(t, err)
	require.NoError(t, out.Err)
	assert.Empty(t, out.Attempts)
	assert.Equal(t, []string{y.id}, out.RemainingImages)

	stats, err := n.rt.ImageFsStats()
	require.NoError(t, err)
	usage := 100 - stats.AvailableBytes*100/stats.CapacityBytes
	require.Less(t, usage, int64(policy.LowThresholdPercent))
	sizeY := n.sizes(t)[y.id]
	before := availableBytes(t, n.ctrd)
	out, err = m.RunDeleteUnusedImages(n.rt, t1.Add(policy.MinAge))
	require.NoError(t, err)
	require.NoError(t, out.Err)
	ids, _ = removed(out)
	assert.Equal(t, []string{y.id}, ids, "removed at %d%% usage", usage)
	assert.Equal(t, sizeY, out.FreedBytes)
	freed := availableBytes(t, n.ctrd) - before
	t.Logf("DeleteUnusedImages at %d%% usage: kubelet counted %d B, statfs freed %d B", usage, out.FreedBytes, freed)
	assert.InDelta(t, 2*sizeY, freed, sizeSlack, "an unshared image frees its blob and its snapshot")
	assert.ElementsMatch(t, wantHeld, n.ctrd.ImageIDs())
	n.podRuns(t)
	require.NoError(t, n.ctrd.RemovePod(context.Background(), n.pod))
}
