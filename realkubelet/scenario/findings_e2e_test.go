//go:build nodee2e

package scenario

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/nodeproof/nodeproof/agent/cri"
	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
	"github.com/nodeproof/nodeproof/realkubelet"
)

// SIM-F2 on the real kubelet, through the way in of kubernetes issue
// #138446: a running pod whose regular init container held a device (it
// has exited) is refused when the kubelet, killed with SIGKILL and started
// again, admits it anew before the plugin has registered again, and its
// running app container is killed. The plugin is stopped before the kill,
// so that the window before its new registration, which the sweep hits
// most of the time, lasts.
func TestFindingSIMRestartRejectsRunning(t *testing.T) {
	ctx := context.Background()
	n := findingNode(t)
	plugin := startPlugin(t, n, "nodeproof-dev.sock", testplugin.Healthy(Devices...))

	spec := PodSpec{Name: "p0", QOS: corev1.PodQOSBestEffort, Init: true, InitDevices: 1}
	require.NoError(t, n.WriteStaticPod(spec.Pod()))
	before, err := n.WaitPod(ctx, spec.Name, settleLimit, running)
	require.NoError(t, err)
	require.True(t, mainRunning(ctx, t, n))

	plugin.Stop()
	require.NoError(t, n.RestartKubelet(ctx))
	after, err := n.WaitPod(ctx, spec.Name, settleLimit, ended)
	require.NoError(t, err, "the pod ran on: SIM-F2 is not shown")
	assert.Equal(t, before.UID, after.UID)
	assert.Equal(t, "UnexpectedAdmissionError", after.Status.Reason)
	assert.Contains(t, after.Status.Message, "no healthy devices present; cannot allocate unhealthy devices "+Resource)
	// Its app container, which asked no device, is killed: CRI no longer
	// has it running.
	ctx, cancel := context.WithTimeout(ctx, settleLimit)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for mainRunning(ctx, t, n) {
		select {
		case <-ctx.Done():
			t.Fatal("the refused pod's app container still runs")
		case <-tick.C:
		}
	}
}

// D1 of docs/deviations.md on the real kubelet: the late-disconnect race
// of v1.36 (kubernetes issues #127803 and #121994, fixed on master by PR
// #135437). A plugin instance's ListAndWatch stream that ends after a new
// instance of the same resource registered makes the kubelet deregister
// the new one: it closes the new instance's stream, and nothing that
// instance reports reaches the node any more. The sweep meets it by chance
// (restart-plugin: the crashed instance's stream ends late); here the old
// instance, on a socket of its own, crashes only once the new one is
// watched, so the order is certain.
func TestD1LateDisconnectDropsSuccessor(t *testing.T) {
	n := findingNode(t)
	old := startPlugin(t, n, "old.sock", testplugin.Healthy(Devices...))
	watched(t, old, 1)
	successor := startPlugin(t, n, "new.sock", testplugin.Healthy(Devices...))
	watched(t, successor, 1)

	old.Crash()
	watched(t, successor, 0)
	assert.Equal(t, 1, successor.Registrations(), "the successor registered once and was dropped without registering again")
}

// mainRunning says whether CRI lists a container named main running.
func mainRunning(ctx context.Context, t *testing.T, n *realkubelet.Node) bool {
	containers, err := n.Containerd.CRI.ListContainers(ctx)
	require.NoError(t, err)
	for _, c := range containers {
		if c.Name == "main" && c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			return true
		}
	}
	return false
}

// CG-F1 on the real kubelet: a Guaranteed pod whose container's cpu limit
// is 1m gets a pod cgroup with cpu.cfs_quota_us 1000 per 100000 µs
// period: 10m of CPU, ten times its limit (1m is 100 µs a period, below
// the 1 ms floor the kubelet raises every quota to).
func TestFindingCGQuotaFloorOnNode(t *testing.T) {
	ctx := context.Background()
	n := findingNode(t)
	spec := PodSpec{Name: "tiny", QOS: corev1.PodQOSGuaranteed}
	manifest := spec.Pod()
	limits := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse(containerMemory)}
	manifest.Spec.Containers[0].Resources = corev1.ResourceRequirements{Limits: limits, Requests: limits.DeepCopy()}
	require.NoError(t, n.WriteStaticPod(manifest))
	p, err := n.WaitPod(ctx, spec.Name, settleLimit, running)
	require.NoError(t, err)
	require.Equal(t, corev1.PodQOSGuaranteed, p.Status.QOSClass)

	cgroup := realkubelet.PodCgroup(p)
	period, err := n.CgroupValue("cpu", cgroup, "cpu.cfs_period_us")
	require.NoError(t, err)
	require.Equal(t, "100000", period)
	quota, err := n.CgroupValue("cpu", cgroup, "cpu.cfs_quota_us")
	require.NoError(t, err)
	assert.Equal(t, "1000", quota, "a 1m limit is 100 µs of a 100 ms period; CG-F1 raises it to the 1 ms floor")
}

// DM-F2 on the real kubelet: while the plugin reports no healthy device,
// a pod whose container asks for 0 devices of its resource is refused,
// and the same pod without that 0 entry runs.
func TestFindingDMZeroRequestRejectedOnNode(t *testing.T) {
	ctx := context.Background()
	n := findingNode(t)
	unhealthy := testplugin.Healthy(Devices...)
	for i := range unhealthy {
		unhealthy[i].Health = v1beta1.Unhealthy
	}
	plugin := startPlugin(t, n, "nodeproof-dev.sock", unhealthy)
	watched(t, plugin, 1)

	zero := PodSpec{Name: "zero", QOS: corev1.PodQOSBestEffort}
	manifest := zero.Pod()
	none := *resource.NewQuantity(0, resource.DecimalSI)
	manifest.Spec.Containers[0].Resources = corev1.ResourceRequirements{
		Limits: corev1.ResourceList{Resource: none}, Requests: corev1.ResourceList{Resource: none},
	}
	require.NoError(t, n.WriteStaticPod(manifest))
	p, err := n.WaitPod(ctx, zero.Name, settleLimit, ended)
	require.NoError(t, err, "the pod asking for 0 devices ran: DM-F2 is not shown")
	assert.Equal(t, "UnexpectedAdmissionError", p.Status.Reason)
	assert.Contains(t, p.Status.Message, "no healthy devices present; cannot allocate unhealthy devices "+Resource)

	plain := PodSpec{Name: "plain", QOS: corev1.PodQOSBestEffort}
	require.NoError(t, n.WriteStaticPod(plain.Pod()))
	_, err = n.WaitPod(ctx, plain.Name, settleLimit, running)
	require.NoError(t, err, "the same pod without the 0 entry must run")
}

// DM-F1 on the real kubelet: a plugin instance that a second instance of
// the same resource replaced keeps its ListAndWatch stream open, and its
// update (d0 unhealthy) becomes what the node advertises while the
// registered instance reports five devices healthy. The successor reports
// a fifth device, d4, so that the node is seen to have taken its list
// before the replaced instance speaks (the two lists would otherwise
// race).
func TestFindingDMReplacedPluginUpdateOnNode(t *testing.T) {
	n := findingNode(t)
	old := startPlugin(t, n, "old.sock", testplugin.Healthy(Devices...))
	watched(t, old, 1)
	successorDevices := append(slices.Clone(Devices), "d4")
	successor := startPlugin(t, n, "new.sock", testplugin.Healthy(successorDevices...))
	advertises(t, n, successorDevices, "the successor's list did not reach the node")
	require.Equal(t, 1, old.Watching(), "the replaced instance's stream stays open")

	sick := testplugin.Healthy(Devices...)
	sick[0].Health = v1beta1.Unhealthy
	old.Update(sick)
	advertises(t, n, Devices[1:], "the replaced instance's update did not reach the node: DM-F1 is not shown")
	assert.Equal(t, 1, successor.Watching(), "the registered instance is still watched")
	assert.Equal(t, 1, successor.Registrations())
}

// PR-F1 on the real kubelet: a static pod marked as critical (its
// priority set directly to 2000000000, as the documentation tells static
// pods to) is preempted to admit a static pod of priority 2000001000 that
// does not fit beside it. Each asks for 60% of the node's CPUs, so either
// fits alone and the two do not fit together.
func TestFindingPRStaticCriticalOnNode(t *testing.T) {
	ctx := context.Background()
	n := findingNode(t)
	marked := PodSpec{Name: "marked", QOS: corev1.PodQOSGuaranteed}
	require.NoError(t, n.WriteStaticPod(cpuPod(marked, 60, 60, 2000000000)))
	before, err := n.WaitPod(ctx, marked.Name, settleLimit, running)
	require.NoError(t, err, "the static pod asking for 60%% of the node's CPUs must run alone")

	preemptor := PodSpec{Name: "preemptor", QOS: corev1.PodQOSGuaranteed, Critical: true}
	require.NoError(t, n.WriteStaticPod(cpuPod(preemptor, 60, 60, criticalPriority)))
	_, err = n.WaitPod(ctx, preemptor.Name, settleLimit, running)
	require.NoError(t, err, "the pod of priority %d was not admitted", criticalPriority)
	after, err := n.WaitPod(ctx, marked.Name, settleLimit, ended)
	require.NoError(t, err, "the static critical pod runs on: PR-F1 is not shown")
	assert.Equal(t, before.UID, after.UID)
	assert.Equal(t, "Preempting", after.Status.Reason, "the static critical pod was preempted")
}

// PR-F2 on the real kubelet, the finding's case scaled to the node's
// CPUs: a Burstable pod (5% requested) and two Guaranteed pods, 20% at
// priority 0 and 10% at priority 5, run; a pod of priority 2000001000
// asking for 80% is 15% short. The kubelet preempts the Burstable pod and
// the priority-5 Guaranteed pod, and spares the priority-0 one, which
// alone would have freed enough: "Guaranteed ... not to be killed until
// ... there are no lower-priority Pods that can be preempted".
func TestFindingPRGuaranteedLowestOnNode(t *testing.T) {
	ctx := context.Background()
	n := findingNode(t)
	burstable := PodSpec{Name: "burstable", QOS: corev1.PodQOSBurstable}
	lowest := PodSpec{Name: "guaranteed-0", QOS: corev1.PodQOSGuaranteed}
	higher := PodSpec{Name: "guaranteed-5", QOS: corev1.PodQOSGuaranteed}
	for _, p := range []*corev1.Pod{cpuPod(burstable, 5, 10, 0), cpuPod(lowest, 20, 20, 0), cpuPod(higher, 10, 10, 5)} {
		require.NoError(t, n.WriteStaticPod(p))
		_, err := n.WaitPod(ctx, p.Name, settleLimit, running)
		require.NoError(t, err)
	}

	preemptor := PodSpec{Name: "preemptor", QOS: corev1.PodQOSGuaranteed, Critical: true}
	require.NoError(t, n.WriteStaticPod(cpuPod(preemptor, 80, 80, criticalPriority)))
	_, err := n.WaitPod(ctx, preemptor.Name, settleLimit, running)
	require.NoError(t, err, "the pod of priority %d was not admitted", criticalPriority)
	for _, victim := range []string{burstable.Name, higher.Name} {
		p, err := n.WaitPod(ctx, victim, settleLimit, ended)
		require.NoError(t, err, "%s was not preempted", victim)
		assert.Equal(t, "Preempting", p.Status.Reason, victim)
	}
	spared, found, err := n.Pod(ctx, lowest.Name)
	require.NoError(t, err)
	require.True(t, found)
	assert.True(t, running(spared), "the priority-0 Guaranteed pod was preempted: PR-F2 is not shown (%s)", spared.Status.Reason)
}

// cpuPod is spec's static pod whose app container requests request% of
// the node's CPUs (runtime.NumCPU, as the kubelet counts them) with a
// limit of limit%, and 16Mi of memory, at the given priority.
func cpuPod(spec PodSpec, request, limit int, priority int32) *corev1.Pod {
	share := func(percent int) resource.Quantity {
		return *resource.NewMilliQuantity(int64(runtime.NumCPU())*10*int64(percent), resource.DecimalSI)
	}
	memory := resource.MustParse(containerMemory)
	p := spec.Pod()
	p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceCPU: share(limit), corev1.ResourceMemory: memory},
		Requests: corev1.ResourceList{corev1.ResourceCPU: share(request), corev1.ResourceMemory: memory},
	}
	p.Spec.Priority = &priority
	return p
}

// PB-F2 on the real kubelet: a container whose liveness probe failed
// twice (failureThreshold 3) crashes; its replacement is killed after one
// failed probe of its own, the run of failures carried over from the
// container it replaced. The probe's target is served by the test on
// 127.0.0.1 (the pod is on the host network), which counts the failures
// it answered; the container is stopped through CRI right after the
// second, a probe period (3 s) before the next.
func TestFindingPBFailureRunCarriedOverOnNode(t *testing.T) {
	ctx := context.Background()
	n := findingNode(t)
	target := newProbeTarget(t)
	spec := PodSpec{Name: "live", QOS: corev1.PodQOSBestEffort}
	manifest := spec.Pod()
	manifest.Spec.Containers[0].LivenessProbe = &corev1.Probe{
		ProbeHandler:     corev1.ProbeHandler{HTTPGet: target.Get("/live")},
		PeriodSeconds:    3,
		TimeoutSeconds:   1,
		FailureThreshold: 3,
	}
	require.NoError(t, n.WriteStaticPod(manifest))
	_, err := n.WaitPod(ctx, spec.Name, settleLimit, running)
	require.NoError(t, err)
	first := runningMain(ctx, t, n, "")

	failing := time.Now()
	target.Set("/live", false)
	require.Eventually(t, func() bool { return target.Failures("/live", failing) >= 2 }, settleLimit, 10*time.Millisecond,
		"the kubelet did not probe the failing target twice")
	require.NoError(t, n.Containerd.CRI.StopContainer(ctx, first, 0))
	crashed := time.Now()
	require.Equal(t, 2, target.Failures("/live", failing), "the container was stopped after its third failure: the test's timing failed it, not the kubelet")

	replacement := runningMain(ctx, t, n, first)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		containers, err := n.Containerd.CRI.ListContainers(ctx)
		require.NoError(c, err)
		i := slices.IndexFunc(containers, func(ct cri.Container) bool { return ct.ID == replacement })
		assert.True(c, i < 0 || containers[i].State != runtimeapi.ContainerState_CONTAINER_RUNNING, "the replacement runs")
	}, settleLimit, 50*time.Millisecond, "the replacement was not killed")
	assert.Contains(t, n.LogTail(), "failed liveness probe", "the replacement was killed for its liveness probe")
	own := target.Failures("/live", crashed)
	assert.Less(t, own, 3, "the replacement failed %d liveness probes of its own before it was killed: PB-F2 is not shown", own)
	t.Logf("the replacement was killed after %d failed liveness probes of its own", own)
}

// PB-F3 on the real kubelet: a container whose readiness probe
// (successThreshold 3, period 3 s) failed, then succeeded twice, crashes;
// its replacement is Ready after fewer than 3 successes of its own, the
// run carried over. The target answers 500 until the test turns it, so
// the run of successes starts after a failure ("after having failed").
func TestFindingPBSuccessRunCarriedOverOnNode(t *testing.T) {
	ctx := context.Background()
	n := findingNode(t)
	target := newProbeTarget(t)
	target.Set("/ready", false)
	spec := PodSpec{Name: "ready", QOS: corev1.PodQOSBestEffort}
	manifest := spec.Pod()
	manifest.Spec.Containers[0].ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: target.Get("/ready")},
		PeriodSeconds: 3, TimeoutSeconds: 1, SuccessThreshold: 3,
	}
	began := time.Now()
	require.NoError(t, n.WriteStaticPod(manifest))
	require.Eventually(t, func() bool { return target.Failures("/ready", began) >= 1 }, settleLimit, 10*time.Millisecond,
		"the readiness probe never ran")
	first := runningMain(ctx, t, n, "")

	passing := time.Now()
	target.Set("/ready", true)
	require.Eventually(t, func() bool { return len(target.Served("/ready", passing)) >= 2 }, settleLimit, 10*time.Millisecond,
		"the kubelet did not probe the passing target twice")
	require.NoError(t, n.Containerd.CRI.StopContainer(ctx, first, 0))
	crashed := time.Now()
	require.Len(t, target.Served("/ready", passing), 2, "the container was stopped after its third success: the test's timing failed it, not the kubelet")

	replacement := runningMain(ctx, t, n, first)
	var own int
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		p, found, err := n.Pod(ctx, spec.Name)
		require.NoError(c, err)
		require.True(c, found)
		own = len(target.Served("/ready", crashed))
		i := slices.IndexFunc(p.Status.ContainerStatuses, func(s corev1.ContainerStatus) bool { return strings.HasSuffix(s.ContainerID, replacement) })
		require.GreaterOrEqual(c, i, 0, "the replacement is not listed")
		assert.True(c, p.Status.ContainerStatuses[i].Ready, "the replacement is not Ready")
	}, settleLimit, 50*time.Millisecond, "the replacement never became Ready")
	assert.Less(t, own, 3, "the replacement was Ready after %d successful readiness probes of its own: PB-F3 is not shown", own)
	t.Logf("the replacement was seen Ready after %d successful readiness probes of its own", own)
}

// PB-F1 on the real kubelet: a container's readiness probe, whose
// initialDelaySeconds is 5, first runs at once when its startup probe
// succeeds 7 s after the container started, not 5 s after that success
// ("If a startup probe is provided, all other probes are disabled until it
// succeeds"; the delays count from the container's start).
func TestFindingPBDelayAfterStartupOnNode(t *testing.T) {
	n := findingNode(t)
	target := newProbeTarget(t)
	target.Set("/startup", false)
	spec := PodSpec{Name: "slow", QOS: corev1.PodQOSBestEffort}
	manifest := spec.Pod()
	manifest.Spec.Containers[0].StartupProbe = &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: target.Get("/startup")}, PeriodSeconds: 1, TimeoutSeconds: 1, FailureThreshold: 60,
	}
	manifest.Spec.Containers[0].ReadinessProbe = &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: target.Get("/ready")}, InitialDelaySeconds: 5, PeriodSeconds: 1, TimeoutSeconds: 1,
	}
	began := time.Now()
	require.NoError(t, n.WriteStaticPod(manifest))
	require.Eventually(t, func() bool { return target.Failures("/startup", began) >= 7 }, settleLimit, 10*time.Millisecond,
		"the startup probe did not fail 7 times")
	target.Set("/startup", true)

	var started, firstReady time.Time
	require.Eventually(t, func() bool {
		startups, readies := target.Served("/startup", began), target.Served("/ready", began)
		i := slices.IndexFunc(startups, func(a Answer) bool { return a.OK })
		if i < 0 || len(readies) == 0 {
			return false
		}
		started, firstReady = startups[i].At, readies[0].At
		return true
	}, settleLimit, 10*time.Millisecond, "no readiness probe after the startup probe succeeded")
	require.False(t, firstReady.Before(started), "a readiness probe ran before the startup probe succeeded")
	assert.Less(t, firstReady.Sub(started), 5*time.Second,
		"the readiness probe waited its initialDelaySeconds after the startup probe succeeded: PB-F1 is not shown")
	t.Logf("startup probe succeeded %v after the manifest; first readiness probe %v after that",
		started.Sub(began).Round(time.Millisecond), firstReady.Sub(started).Round(time.Millisecond))
}

// newProbeTarget starts a probe target that stops when t ends.
func newProbeTarget(t *testing.T) *Target {
	target, err := StartTarget()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, target.Close()) })
	return target
}

// runningMain waits until CRI has a container named main running other
// than not, and returns its ID.
func runningMain(ctx context.Context, t *testing.T, n *realkubelet.Node, not string) string {
	t.Helper()
	var id string
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		containers, err := n.Containerd.CRI.ListContainers(ctx)
		require.NoError(c, err)
		id = ""
		for _, ct := range containers {
			if ct.Name == "main" && ct.ID != not && ct.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				id = ct.ID
			}
		}
		assert.NotEmpty(c, id, "no container main running other than %q", not)
	}, settleLimit, 50*time.Millisecond)
	return id
}

// advertises waits until GetAllocatableResources lists exactly healthy
// (sorted) for Resource.
func advertises(t *testing.T, n *realkubelet.Node, healthy []string, failure string) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		allocatable, err := n.Allocatable(context.Background())
		require.NoError(c, err)
		assert.Equal(c, healthy, allocatable[Resource])
	}, settleLimit, 50*time.Millisecond, failure)
}

// findingNode starts a node for t; the cleanup stops it, with the
// kubelet log's tail when t failed.
func findingNode(t *testing.T) *realkubelet.Node {
	t.Helper()
	if why := realkubelet.Unavailable(); why != "" {
		t.Fatalf("this host cannot run a real kubelet: %s", why)
	}
	n, err := realkubelet.Start(context.Background(), realkubelet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(n.LogTail())
		}
		assert.NoError(t, n.Stop())
	})
	return n
}

// startPlugin starts an instance of the test plugin of Resource on
// endpoint, reporting devices; the cleanup stops it.
func startPlugin(t *testing.T, n *realkubelet.Node, endpoint string, devices []testplugin.Device) *testplugin.Plugin {
	t.Helper()
	p, err := testplugin.Start(testplugin.Config{
		Dir: n.DevicePluginDir, Endpoint: endpoint, ResourceName: Resource,
		Devices: devices, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.NoError(t, err)
	t.Cleanup(p.Stop)
	return p
}

// watched waits until the kubelet holds streams ListAndWatch streams
// open on p.
func watched(t *testing.T, p *testplugin.Plugin, streams int) {
	t.Helper()
	require.Eventuallyf(t, func() bool { return p.Watching() == streams }, settleLimit, 50*time.Millisecond,
		"the kubelet did not come to hold %d ListAndWatch streams open on the plugin", streams)
}
