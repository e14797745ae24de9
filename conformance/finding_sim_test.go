package conformance

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
)

// Findings of the node simulation (verify/findings_sim.go), confirmed on
// the v1.36.3 kubelet's own code.

// restartReadyScenario is SIM-F1's case as the prober harness plays it: a
// pod whose one container has a readiness probe that always succeeds is
// added, its container starts, the probe succeeds and the status sync
// makes the container Ready, and the API pod's Ready condition is True.
// The kubelet restarts sinceStart after the container started: a new
// prober manager, the pod added again, and the new kubelet's first status
// sync, before its readiness worker has probed (its start-up jitter, from
// seed 1, is 6 s).
func restartReadyScenario(sinceStart time.Duration) prScenario {
	always := &prProbe{Timeout: 1, Period: 10, Success: 1, Failure: 3, Script: []prOutcome{prOK}}
	return prScenario{
		Pods: []prPod{{UID: "pod-000001", RestartPolicy: "Always", Containers: []prContainer{{Name: "c0", Readiness: always}}}},
		Steps: []prStep{
			// The first kubelet: its worker's jitter (seed 9) is 36 ms; a
			// readiness worker waits for the container's Started, which
			// the first sync writes and whose manual trigger makes it
			// probe at once; the second sync finds the probe's success.
			{Op: "add", Seed: 9},
			{Op: "start", Container: "c0"},
			{Op: "phase", Phase: "Running"},
			{Op: "wait", Wait: time.Second},
			{Op: "sync"},
			{Op: "wait", Wait: time.Second},
			{Op: "sync"},
			{Op: "ready", Flag: true},
			{Op: "wait", Wait: sinceStart - 2*time.Second},
			// The restart, and the new kubelet's first sync.
			{Op: "restart"},
			{Op: "add", Seed: 1},
			{Op: "sync"},
		},
	}
}

// TestFindingSIMRestartReady confirms SIM-F1 on upstream's prober manager
// (pkg/kubelet/prober at v1.36.3), driven through the calls the
// simulation's kubelet makes around a restart: AddPod, the container's
// start, UpdatePodStatus after the readiness probe succeeded; then a new
// manager (the restarted kubelet), AddPod and UpdatePodStatus with the API
// pod's Ready condition True.
//
// The promise (Kubernetes documentation, Pod Lifecycle, "Detection of
// kubelet restarts"; What Happens After A Node Restart, "Impact of a
// kubelet restart"; KEP-4781): by default the kubelet does not change
// container statuses after a restart; a container that was ready: true
// stays ready.
//
// It covers the prober's part of the path: how the restarted kubelet
// computes the container's Ready from the status it finds. The rest of the
// kubelet's restart (the status manager publishing the result, the
// endpoints following it) is not exercised here.
//
// The test passes while the bug is present: a container that started 3 s
// before the restart is reported not ready by the new kubelet's first sync,
// although no readiness probe ran since the restart; one that started 15 s
// before it keeps ready: true, since v1.36.3 keeps the readiness only of
// containers started more than 10 s before the kubelet.
func TestFindingSIMRestartReady(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sinceStart time.Duration
		wantReady  bool
	}{
		{"a container started 3 s before the restart loses ready", 3 * time.Second, false},
		{"a container started 15 s before the restart keeps it", 15 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := runTheirProber(t, restartReadyScenario(tc.sinceStart))
			require.Empty(t, out.Setup)
			require.Len(t, out.Syncs, 3, "two syncs before the restart, one after")
			assert.Equal(t, []string{"c0:true:true"}, out.Syncs[1].App, "Ready before the restart")
			assert.Empty(t, runsAfter(out, tc.sinceStart), "no readiness probe ran between the restart and its first sync")
			// The 3 s container losing ready is the bug; the 15 s one
			// keeping it is the rule's other side, which a fix keeps.
			want, check := "c0:true:true", assert.TestingT(t)
			if !tc.wantReady {
				want, check = "c0:true:false", bugOutcome(t, "SIM-F1")
			}
			assert.Equal(check, []string{want}, out.Syncs[2].App, "Started and Ready after the restart")
		})
	}
}

// runsAfter are the probes upstream ran from the restart at, on.
func runsAfter(out prResult, at time.Duration) []prRun {
	var runs []prRun
	for _, r := range out.Runs {
		if r.At >= at {
			runs = append(runs, r)
		}
	}
	return runs
}

// notReadySources is the restarted kubelet's pod sources before it has
// handled the API server's first pods: upstream adds the source only after
// HandlePodAdditions returns.
type notReadySources struct{}

func (notReadySources) AddSource(string) {}
func (notReadySources) AllReady() bool   { return false }

// restartRejectsPod is SIM-F2's case on upstream's device manager: a pod
// whose container c0 holds a device of example.com/dev-a (its image still
// being pulled, so it has no container yet) and whose container c1 runs is
// admitted by a first kubelet while the plugin is registered; the kubelet
// restarts before the plugin has registered again (the plugin is stopped,
// so that it cannot race the admission), and the new device manager, built
// from the checkpoint and the runtime's containers (c1 running, and c0 too
// when c0Running), admits the pod again as HandlePodAdditions does before
// the pod sources are ready. It returns the admission's message, "" when
// admitted, and the checkpoint's entries before the restart.
func restartRejectsPod(t *testing.T, c0Running bool) (string, []string) {
	dir, err := os.MkdirTemp(scratchDir(), "np-fsim-")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	first, err := startUpstream(dir)
	require.NoError(t, err)
	plugin, err := startTestPlugin(dir, "dev-a.sock", 0, []regDevice{{ID: "dev-0", Healthy: true}}, false)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, allocatable := first.capacity()
		return allocatable[regResources[0]] == 1
	}, waitLimit, time.Millisecond, "the plugin's device shows in the first kubelet's allocatable")

	limits := corev1.ResourceList{corev1.ResourceName(regResources[0]): resource.MustParse("1")}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "pod-000002", Name: "pod-000002", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "c0", Image: "gpu-workload", Resources: corev1.ResourceRequirements{Limits: limits, Requests: limits}},
			{Name: "c1", Image: "sidecar"},
		}}}
	require.Empty(t, first.admit(p), "the first kubelet admits the pod")
	_, entries, err := readCheckpoint(dir)
	require.NoError(t, err)

	// The kubelet restarts; the plugin has not registered again yet.
	first.close()
	plugin.stop()
	logger := klog.Background()
	m, err := newUpstreamManager(logger, filepath.Join(dir, kubeletSocket), nil, newFakeTopologyManager(logger))
	require.NoError(t, err)
	second := &upstreamSide{socketDir: dir, m: m}
	containers := containermap.NewContainerMap()
	containers.Add(string(p.UID), "c1", "c1-id")
	running := sets.New("c1-id")
	if c0Running {
		containers.Add(string(p.UID), "c0", "c0-id")
		running.Insert("c0-id")
	}
	require.NoError(t, m.Start(logger, second.activePods, notReadySources{}, containers, running))
	defer second.close()
	return second.admit(p), entries
}

// TestFindingSIMRestartRejectsRunning confirms SIM-F2 on upstream's device
// manager (pkg/kubelet/cm/devicemanager at v1.36.3), driven through the
// calls the simulation's kubelet makes: the first kubelet's Allocate for
// each container with the plugin registered (the checkpoint records c0's
// device); at the restart, Start from the checkpoint with the runtime's
// containers and the pod sources not ready, then the admission of the pod
// again, Allocate for each container, as the topology manager's admit
// handler does in HandlePodAdditions.
//
// The promise (Kubernetes documentation, What Happens After A Node
// Restart, "Impact of a kubelet restart"; Pod Lifecycle, "Pod behavior
// during kubelet restarts"): if only the kubelet restarts, the containers
// already running continue to run.
//
// It covers the device manager's part of the path, the admit handler's
// verdict; that the kubelet then rejects the pod (rejectPod, phase
// Failed) and kills its running containers is HandlePodAdditions' and the
// pod worker's, read, not run.
//
// The test passes while the bug is present: the restarted kubelet's
// admission of the pod fails with "no healthy devices present" because its
// container c0 is not running yet, so the pod is rejected with
// UnexpectedAdmissionError and its running container c1 is killed; with c0
// running too, the same admission passes (the kubelet-restart rule of
// PR #118635 applies to running containers only).
func TestFindingSIMRestartRejectsRunning(t *testing.T) {
	msg, entries := restartRejectsPod(t, false)
	require.Len(t, entries, 1, "the checkpoint holds c0's device")
	assert.Contains(t, entries[0], "pod-000002/c0 "+regResources[0]+" ")
	assert.Equal(bugOutcome(t, "SIM-F2"), "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices "+regResources[0]+", which is unexpected", msg,
		"the restarted kubelet rejects the running pod")

	msg, _ = restartRejectsPod(t, true)
	assert.Empty(t, msg, "with every container running the pod is admitted again")
}
