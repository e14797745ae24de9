package scenario

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	"github.com/nodeproof/nodeproof/verify"
)

// The checks, on observations made by hand: each must hold on a node that
// keeps its promises and name what is wrong on one that does not.

func runningPod(uid string, qos corev1.PodQOSClass, restarts int32, containers ...string) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}}
	p.Status.Phase, p.Status.QOSClass = corev1.PodRunning, qos
	for _, c := range containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c, Ready: true, RestartCount: restarts, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		})
	}
	return p
}

func refusedPod(uid, message string) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}}
	p.Status.Phase, p.Status.Reason, p.Status.Message = corev1.PodFailed, "UnexpectedAdmissionError", message
	return p
}

func entry(uid, container string, ids ...string) checkpoint.PodDevicesEntry {
	return checkpoint.PodDevicesEntry{PodUID: uid, ContainerName: container, ResourceName: Resource, DeviceIDs: checkpoint.DevicesPerNUMA{-1: ids}}
}

func check(t *testing.T, id string, s *State) error {
	t.Helper()
	for _, c := range append(slices.Clone(Checks), Predicts) {
		if c.ID == id {
			counts := verify.Counts{}
			err := c.Evaluate(s, counts)
			require.Equal(t, 1, counts[id].Checked)
			return err
		}
	}
	t.Fatalf("no check %s", id)
	return nil
}

func TestNotShared(t *testing.T) {
	o := &Observation{
		Pods: map[string]corev1.Pod{"a": runningPod("ua", corev1.PodQOSBestEffort, 0, "main"), "b": runningPod("ub", corev1.PodQOSBestEffort, 0, "main")},
		Held: map[string]map[string][]string{"a": {"main": {"d0"}}, "b": {"main": {"d1"}}},
	}
	require.NoError(t, check(t, NotShared, &State{After: o}))
	o.Held["b"]["main"] = []string{"d0", "d2"}
	assert.ErrorContains(t, check(t, NotShared, &State{After: o}), "device d0 is held by a/main and b/main")
}

func TestCheckpointAgrees(t *testing.T) {
	o := &Observation{
		Pods:       map[string]corev1.Pod{"a": runningPod("ua", corev1.PodQOSBestEffort, 0, "main")},
		Held:       map[string]map[string][]string{"a": {"main": {"d0", "d1"}}},
		Checkpoint: []checkpoint.PodDevicesEntry{entry("ua", "main", "d1", "d0"), entry("ua", "init", "d3"), entry("gone", "main", "d2")},
	}
	require.NoError(t, check(t, CheckpointAgrees, &State{After: o}))
	o.Checkpoint[0] = entry("ua", "main", "d0")
	assert.ErrorContains(t, check(t, CheckpointAgrees, &State{After: o}), "PodResources List shows a/main holding [d0 d1]; the checkpoint has [d0]")
	o.Held = map[string]map[string][]string{}
	assert.ErrorContains(t, check(t, CheckpointAgrees, &State{After: o}), "the checkpoint gives a/main [d0]; PodResources List shows []")
}

func TestAllocatableHealthy(t *testing.T) {
	s := &State{After: &Observation{Allocatable: []string{"d0", "d2"}}, Healthy: []string{"d0", "d2"}, Watching: 1}
	require.NoError(t, check(t, AllocatableHealth, s))
	s.Healthy = []string{"d0"}
	err := check(t, AllocatableHealth, s)
	assert.ErrorContains(t, err, "lists [d0 d2]")
	var explained Explained
	assert.False(t, errors.As(err, &explained))
	s.Watching = 0
	require.ErrorAs(t, check(t, AllocatableHealth, s), &explained, "the kubelet dropped the plugin that registered last")
	assert.Equal(t, "D1", explained.Known)
}

func TestAdmission(t *testing.T) {
	before := &Observation{
		Pods:        map[string]corev1.Pod{"a": runningPod("ua", corev1.PodQOSBestEffort, 0, "main")},
		Allocatable: []string{"d0", "d1", "d2", "d3"},
		Checkpoint:  []checkpoint.PodDevicesEntry{entry("ua", "init", "d0")},
	}
	require.Equal(t, []string{"d1", "d2", "d3"}, Free(before), "a finished init container's devices stay its pod's")
	add := func(spec PodSpec, p corev1.Pod) *State {
		return &State{Step: Step{Kind: AddPod, Pod: spec}, Before: before, After: &Observation{Pods: map[string]corev1.Pod{"a": before.Pods["a"], spec.Name: p}}, Watching: 1}
	}
	fits := PodSpec{Name: "b", Init: true, InitDevices: 3, Sidecar: true, SidecarDevice: 1, MainDevices: 2}
	require.Equal(t, 3, fits.Need())
	require.NoError(t, check(t, Admission, add(fits, runningPod("ub", corev1.PodQOSBestEffort, 0, "main"))))
	assert.ErrorContains(t, check(t, Admission, add(fits, refusedPod("ub", "Allocate failed due to requested number of devices unavailable for nodeproof.io/dev. Requested: 3, Available: 2, which is unexpected"))),
		"pod b (needs 3) refused while 3 devices were held by no pod at all")
	dropped := add(fits, refusedPod("ub", "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices nodeproof.io/dev, which is unexpected"))
	var explained Explained
	require.False(t, errors.As(check(t, Admission, dropped), &explained))
	dropped.Watching = 0
	require.ErrorAs(t, check(t, Admission, dropped), &explained, "the kubelet had dropped the plugin")
	assert.Equal(t, "D1", explained.Known)
	greedy := PodSpec{Name: "b", MainDevices: 4}
	require.NoError(t, check(t, Admission, add(greedy, refusedPod("ub", "Requested: 4, Available: 3"))))
	assert.ErrorContains(t, check(t, Admission, add(greedy, runningPod("ub", corev1.PodQOSBestEffort, 0, "main"))), "admitted (Running) while only 3 devices were free")
	assert.ErrorContains(t, check(t, Admission, add(greedy, refusedPod("ub", "Requested: 2, Available: 3"))), "although Requested 2 does not exceed Available 3")
	assert.ErrorContains(t, check(t, Admission, add(greedy, refusedPod("ub", "something else"))), "names neither")
	require.NoError(t, check(t, Admission, add(greedy, refusedPod("ub", "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices nodeproof.io/dev, which is unexpected"))))

	// A refused pod's devices may still be held: a pod that only they
	// would let in may go either way, and only more than every device
	// no active pod holds must be refused.
	before.Pods["r"] = refusedPod("ur", "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices nodeproof.io/dev, which is unexpected")
	before.Checkpoint = append(before.Checkpoint, entry("ur", "main", "d1"), entry("ur", "main", "d2"))
	require.Equal(t, []string{"d1", "d2", "d3"}, Free(before), "a refused pod's devices count as free")
	require.Equal(t, []string{"d3"}, Unclaimed(before), "but not as unclaimed")
	afterWith := func(st *State) *State { st.After.Pods["r"] = before.Pods["r"]; return st }
	require.NoError(t, check(t, Admission, afterWith(add(fits, refusedPod("ub", "Allocate failed due to requested number of devices unavailable for nodeproof.io/dev. Requested: 3, Available: 1, which is unexpected")))))
	require.NoError(t, check(t, Admission, afterWith(add(fits, runningPod("ub", corev1.PodQOSBestEffort, 0, "main")))))
	assert.ErrorContains(t, check(t, Admission, afterWith(add(greedy, runningPod("ub", corev1.PodQOSBestEffort, 0, "main")))), "admitted (Running) while only 3 devices were free")
	one := PodSpec{Name: "b", MainDevices: 1}
	assert.ErrorContains(t, check(t, Admission, afterWith(add(one, refusedPod("ub", "Requested: 1, Available: 0")))), "refused while 1 devices were held by no pod at all")
}

func TestPodCgroups(t *testing.T) {
	spec := PodSpec{Name: "a", QOS: corev1.PodQOSBurstable, Sidecar: true}
	o := &Observation{
		Pods:    map[string]corev1.Pod{"a": runningPod("ua", corev1.PodQOSBurstable, 0, "main")},
		Cgroups: map[string]PodCgroup{"a": {Path: "kubepods/burstable/podua", MemoryLimit: "33554432", CPUQuota: "10000"}},
	}
	s := &State{After: o, Specs: map[string]PodSpec{"a": spec}}
	require.NoError(t, check(t, PodCgroups, s))
	o.Cgroups["a"] = PodCgroup{Path: "kubepods/burstable/podua", MemoryLimit: "16777216", CPUQuota: "10000"}
	assert.ErrorContains(t, check(t, PodCgroups, s), "memory.limit_in_bytes is 16777216, want 33554432")
	o.Cgroups["a"] = PodCgroup{Path: "kubepods/burstable/podua", MemoryLimit: "33554432", CPUQuota: "-1"}
	assert.ErrorContains(t, check(t, PodCgroups, s), "cpu.cfs_quota_us is -1, want 10000")
	o.Pods["a"] = runningPod("ua", corev1.PodQOSBestEffort, 0, "main")
	assert.ErrorContains(t, check(t, PodCgroups, s), "pod a is BestEffort; its requests and limits make it Burstable")
	s.Specs["a"] = PodSpec{Name: "a", QOS: corev1.PodQOSBestEffort}
	o.Cgroups["a"] = PodCgroup{Path: "kubepods/besteffort/podua", Err: errors.New("no such file")}
	assert.ErrorContains(t, check(t, PodCgroups, s), "no such file")
}

func TestRestartKeeps(t *testing.T) {
	before := &Observation{
		Pods: map[string]corev1.Pod{"a": runningPod("ua", corev1.PodQOSBestEffort, 0, "main")},
		Held: map[string]map[string][]string{"a": {"main": {"d0"}}},
	}
	s := func(after corev1.Pod, held []string, spec PodSpec) *State {
		return &State{Step: Step{Kind: KillKubelet}, Before: before, Specs: map[string]PodSpec{"a": spec},
			After: &Observation{Pods: map[string]corev1.Pod{"a": after}, Held: map[string]map[string][]string{"a": {"main": held}}}}
	}
	spec := PodSpec{Name: "a", MainDevices: 1}
	require.NoError(t, check(t, RestartKeeps, s(runningPod("ua", corev1.PodQOSBestEffort, 0, "main"), []string{"d0"}, spec)))
	assert.ErrorContains(t, check(t, RestartKeeps, s(runningPod("ua", corev1.PodQOSBestEffort, 1, "main"), []string{"d0"}, spec)), "0 restarts before the kubelet restart, 1 after")
	failed := s(runningPod("ua", corev1.PodQOSBestEffort, 1, "main"), []string{"d0"}, spec)
	failed.Failures = map[string]int{"a": 1}
	require.NoError(t, check(t, RestartKeeps, failed), "a pod whose liveness probe failed is RK-C-RESTARTS-EXPLAINED's to judge")
	assert.ErrorContains(t, check(t, RestartKeeps, s(runningPod("ua", corev1.PodQOSBestEffort, 0, "main"), []string{"d1"}, spec)), "held [d0] before the restart and [d1] after it")
	err := check(t, RestartKeeps, s(refusedPod("ua", "no healthy devices present"), nil, spec))
	require.Error(t, err)
	var explained Explained
	assert.False(t, errors.As(err, &explained), "a refusal SIM-F2 does not explain: %v", err)
	spec.Init, spec.InitDevices = true, 1
	err = check(t, RestartKeeps, s(refusedPod("ua", "no healthy devices present"), nil, spec))
	require.ErrorAs(t, err, &explained)
	assert.Equal(t, "SIM-F2", explained.Known)
	_, err = verify.ByID(explained.Known)
	require.NoError(t, err, "Explained names a confirmed finding")
}

// The manifest a PodSpec writes has the QoS class it was drawn with.
func TestPodSpecManifest(t *testing.T) {
	for _, qos := range []corev1.PodQOSClass{corev1.PodQOSGuaranteed, corev1.PodQOSBurstable, corev1.PodQOSBestEffort} {
		spec := PodSpec{Name: "p", QOS: qos, Critical: true, MainDevices: 2, Init: true, InitDevices: 1, Sidecar: true, SidecarDevice: 1}
		pod := spec.Pod()
		require.Len(t, pod.Spec.InitContainers, 2)
		assert.Nil(t, pod.Spec.InitContainers[0].RestartPolicy)
		assert.Equal(t, corev1.ContainerRestartPolicyAlways, *pod.Spec.InitContainers[1].RestartPolicy)
		assert.Equal(t, "system-node-critical", pod.Spec.PriorityClassName)
		assert.Equal(t, int64(2), pod.Spec.Containers[0].Resources.Limits.Name(Resource, "").Value())
		assert.Equal(t, qos, qosOf(pod), "%s", qos)
	}
}

// qosOf is the QoS class of a pod, by the rules of the Pod Quality of
// Service Classes page, for cpu and memory.
func qosOf(p *corev1.Pod) corev1.PodQOSClass {
	guaranteed, asks := true, false
	for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, hasReq := c.Resources.Requests[r]
			lim, hasLim := c.Resources.Limits[r]
			asks = asks || hasReq || hasLim
			guaranteed = guaranteed && hasLim && hasReq && req.Equal(lim)
		}
	}
	switch {
	case !asks:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// TestEnded keeps the cause of a CI failure of
// TestFindingSIMRestartRejectsRunning: it waited for a phase other than
// Running and took the empty status the kubelet lists just after its
// restart, before the pod was refused, for the refusal.
func TestEnded(t *testing.T) {
	listedAfterRestart := corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u0"}}
	assert.False(t, ended(listedAfterRestart), "an empty status is not an end")
	pending := listedAfterRestart
	pending.Status.Phase = corev1.PodPending
	assert.False(t, ended(pending))
	assert.False(t, ended(runningPod("u0", corev1.PodQOSBestEffort, 0, "main")))
	assert.True(t, ended(refusedPod("u0", "no healthy devices")))
	succeeded := listedAfterRestart
	succeeded.Status.Phase = corev1.PodSucceeded
	assert.True(t, ended(succeeded))
}

// instance is a running pod whose container c is the instance id, restarted
// restarts times.
func instance(c, id string, restarts int32) corev1.Pod {
	p := runningPod("ua", corev1.PodQOSBestEffort, restarts, c)
	p.Name = "a-" + "node"
	p.Status.ContainerStatuses[0].ContainerID = id
	return p
}

// A killed container, or one whose liveness target turned to failing, must
// be another instance, running, after the step.
func TestReplaced(t *testing.T) {
	spec := PodSpec{Name: "a"}
	for _, tc := range []struct {
		id   string
		step Step
	}{
		{RestartPolicy, Step{Kind: CrashContainer, Pod: spec, Container: "main", Killed: "containerd://1"}},
		{LivenessKills, Step{Kind: FlipLiveness, Pod: spec, Killed: "containerd://1"}},
	} {
		s := func(after corev1.Pod) *State {
			return &State{Step: tc.step, Specs: map[string]PodSpec{"a": spec}, Failures: map[string]int{"a": 1},
				After: &Observation{Pods: map[string]corev1.Pod{"a": after}}}
		}
		require.NoError(t, check(t, tc.id, s(instance("main", "containerd://2", 1))), tc.id)
		assert.ErrorContains(t, check(t, tc.id, s(instance("main", "containerd://1", 0))), "is still instance containerd://1", tc.id)
		waiting := instance("main", "containerd://2", 1)
		waiting.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
		assert.ErrorContains(t, check(t, tc.id, s(waiting)), "is not running", tc.id)
		assert.ErrorContains(t, check(t, tc.id, s(instance("other", "containerd://2", 0))), "lists no container main", tc.id)
	}
	healthy := &State{Step: Step{Kind: FlipLiveness, Pod: spec, Healthy: true}, After: &Observation{}}
	for _, c := range Checks {
		if c.ID == LivenessKills {
			assert.False(t, c.Applies(healthy), "a liveness target turning healthy kills nothing")
		}
	}
}

// Each restart is a kill by the harness or a liveness failure the target
// answered; only an app container's liveness failures count.
func TestRestartsExplained(t *testing.T) {
	target, err := StartTarget()
	require.NoError(t, err)
	defer func() { require.NoError(t, target.Close()) }()
	s := func(restarts int32, spec PodSpec, crashes, failures int) *State {
		return &State{Specs: map[string]PodSpec{"a": spec}, Crashes: map[string]int{"a/main": crashes}, Failures: map[string]int{"a": failures},
			After: &Observation{Pods: map[string]corev1.Pod{"a": instance("main", "containerd://3", restarts)}}}
	}
	probed := PodSpec{Name: "a", Liveness: target, LivenessThreshold: 1}
	require.NoError(t, check(t, RestartsExplained, s(2, probed, 1, 1)))
	assert.EqualError(t, check(t, RestartsExplained, s(2, probed, 1, 0)),
		"RK-C-RESTARTS-EXPLAINED: pod a container main restarted 2 times; the harness killed it 1 times and its liveness target answered 0 failures (failureThreshold 1)")
	// Each kill for liveness takes failureThreshold failures.
	probed.LivenessThreshold = 2
	require.NoError(t, check(t, RestartsExplained, s(3, probed, 1, 5)))
	assert.EqualError(t, check(t, RestartsExplained, s(3, probed, 1, 3)),
		"RK-C-RESTARTS-EXPLAINED: pod a container main restarted 3 times; the harness killed it 1 times and its liveness target answered 3 failures (failureThreshold 2)")
	assert.EqualError(t, check(t, RestartsExplained, s(2, PodSpec{Name: "a"}, 1, 5)),
		"RK-C-RESTARTS-EXPLAINED: pod a container main restarted 2 times; the harness killed it 1 times and it has no liveness probe",
		"a pod without a liveness probe has no failures to explain a restart")
}

// A pod drawn with a liveness probe asks its path of the target every
// second, with the failureThreshold drawn.
func TestPodSpecLiveness(t *testing.T) {
	target, err := StartTarget()
	require.NoError(t, err)
	defer func() { require.NoError(t, target.Close()) }()
	assert.Nil(t, PodSpec{Name: "p0"}.Pod().Spec.Containers[0].LivenessProbe)
	spec := PodSpec{Name: "p0", QOS: corev1.PodQOSBestEffort, Liveness: target, LivenessThreshold: 2}
	probe := spec.Pod().Spec.Containers[0].LivenessProbe
	require.NotNil(t, probe)
	assert.Equal(t, target.Get("/p0/live"), probe.HTTPGet)
	assert.Equal(t, int32(1), probe.PeriodSeconds)
	assert.Equal(t, int32(2), probe.FailureThreshold)
	assert.Equal(t, "p0 BestEffort main:0 liveness:2", spec.String())
	spec.LivenessThreshold = 0
	assert.Equal(t, int32(3), spec.Pod().Spec.Containers[0].LivenessProbe.FailureThreshold, "the API's default, written out")

	target.Set("/p0/live", false)
	assert.False(t, target.Healthy("/p0/live"))
	assert.True(t, target.Healthy("/p1/live"))
	began := time.Now()
	for path, want := range map[string]int{"/p0/live": http.StatusInternalServerError, "/p1/live": http.StatusOK} {
		resp, err := http.Get(fmt.Sprintf("http://%s:%d%s", probe.HTTPGet.Host, probe.HTTPGet.Port.IntValue(), path))
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, want, resp.StatusCode, path)
	}
	assert.Equal(t, 1, target.Failures("/p0/live", began))
	assert.Equal(t, 0, target.Failures("/p1/live", began))
	assert.Len(t, target.Served("/p1/live", began), 1)
	assert.Empty(t, target.Served("/p1/live", time.Now()))
}

// A container is ready as its readiness target answers, or always when it
// has no probe, and the pod's Ready condition follows its containers'.
func TestReadiness(t *testing.T) {
	target, err := StartTarget()
	require.NoError(t, err)
	defer func() { require.NoError(t, target.Close()) }()
	pod := func(ready, condition bool) corev1.Pod {
		p := runningPod("ua", corev1.PodQOSBestEffort, 0, "main")
		p.Status.ContainerStatuses[0].Ready = ready
		status := corev1.ConditionFalse
		if condition {
			status = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
		return p
	}
	s := func(p corev1.Pod, readiness map[string]bool) *State {
		return &State{Readiness: readiness, After: &Observation{Pods: map[string]corev1.Pod{"a": p}}}
	}
	require.NoError(t, check(t, Readiness, s(pod(true, true), nil)))
	require.NoError(t, check(t, Readiness, s(pod(false, false), map[string]bool{"a": false})))
	require.NoError(t, check(t, Readiness, s(pod(true, true), map[string]bool{"a": true})))
	assert.ErrorContains(t, check(t, Readiness, s(pod(true, true), map[string]bool{"a": false})), "pod a container main is ready=true; its readiness target answers healthy=false (probed: true)")
	assert.ErrorContains(t, check(t, Readiness, s(pod(false, false), nil)), "pod a container main is ready=false; its readiness target answers healthy=true (probed: false)")
	assert.ErrorContains(t, check(t, Readiness, s(pod(true, false), nil)), "pod a's Ready condition is false while its containers' readiness is true")
	killing := s(pod(true, false), map[string]bool{"a": false})
	killing.Killing = map[string]bool{"a": true}
	require.NoError(t, check(t, Readiness, killing), "a pod its liveness probe kills over and over is not judged")

	// A pod whose readiness fails still runs.
	assert.True(t, running(pod(false, false)))
	assert.False(t, ready(pod(false, false)))
	sidecar := pod(true, true)
	sidecar.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "sidecar", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	assert.True(t, running(sidecar))
	assert.False(t, ready(sidecar), "a sidecar that runs but is not ready")

	spec := PodSpec{Name: "p0", Readiness: target}
	probe := spec.Pod().Spec.Containers[0].ReadinessProbe
	require.NotNil(t, probe)
	assert.Equal(t, target.Get("/p0/ready"), probe.HTTPGet)
	assert.Equal(t, int32(1), probe.SuccessThreshold)
	assert.Equal(t, int32(1), probe.FailureThreshold)
	assert.Contains(t, spec.String(), " readiness")
}

// The replacement of a container crashed while its liveness target fails
// must fail failureThreshold probes of its own before it is killed; fewer
// is PB-F2, counted apart.
func TestLivenessOwnRun(t *testing.T) {
	spec := PodSpec{Name: "a", Liveness: &Target{}, LivenessThreshold: 3}
	s := func(killed bool, own int) *State {
		return &State{Step: Step{Kind: CrashContainer, Pod: spec, Container: "main", Killed: "containerd://1", Failing: true, ReplacementKilled: killed, OwnFailures: own},
			After: &Observation{}}
	}
	require.NoError(t, check(t, LivenessOwnRun, s(true, 3)))
	err := check(t, LivenessOwnRun, s(true, 1))
	var explained Explained
	require.ErrorAs(t, err, &explained)
	assert.Equal(t, "PB-F2", explained.Known)
	assert.ErrorContains(t, err, "pod a: the replacement of crashed instance containerd://1 was killed for liveness after 1 failures since the crash; failureThreshold is 3")
	_, err = verify.ByID(explained.Known)
	require.NoError(t, err, "Explained names a confirmed finding")
	err = check(t, LivenessOwnRun, s(false, 7))
	require.Error(t, err)
	assert.False(t, errors.As(err, &explained), "a replacement never killed is no known bug: %v", err)
	for _, c := range Checks {
		if c.ID == LivenessOwnRun {
			healthy := s(true, 0)
			healthy.Step.Failing = false
			assert.False(t, c.Applies(healthy), "a crash while the target answers success is not followed")
		}
	}
}
