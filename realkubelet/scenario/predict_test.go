package scenario

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/sim"
)

// The differential on observations made by hand: the scripted simulation
// plays the steps, and the comparison must find nothing on a node that
// shows what upstream's kubelet does, and name each thing a node shows
// otherwise.

// The PodSpec's core pod has the QoS class the manifest has.
func TestCorePod(t *testing.T) {
	for _, qos := range []corev1.PodQOSClass{corev1.PodQOSGuaranteed, corev1.PodQOSBurstable, corev1.PodQOSBestEffort} {
		spec := PodSpec{Name: "p", QOS: qos, Critical: true, MainDevices: 2, Init: true, InitDevices: 1, Sidecar: true, SidecarDevice: 1}
		p := spec.CorePod()
		assert.Equal(t, string(qos), string(p.QOS()))
		require.Len(t, p.InitContainers, 2)
		assert.Equal(t, []string{"init", "sidecar"}, []string{p.InitContainers[0].Name, p.InitContainers[1].Name})
		assert.False(t, p.InitContainers[0].IsSidecar())
		assert.True(t, p.InitContainers[1].IsSidecar())
		assert.Equal(t, int64(2), p.Containers[0].Limits[Resource])
		assert.Equal(t, criticalPriority, *p.Priority)
		assert.True(t, p.IsStatic())
	}
	plain := PodSpec{Name: "q", QOS: corev1.PodQOSBestEffort}.CorePod()
	assert.Empty(t, plain.InitContainers)
	assert.Nil(t, plain.Priority)
}

// sidecarPod is a Guaranteed pod whose init container asks for 2 devices,
// its sidecar for 1 and its app container for 2: 3 devices in all.
var sidecarPod = PodSpec{Name: "p0", QOS: corev1.PodQOSGuaranteed, MainDevices: 2, Init: true, InitDevices: 2, Sidecar: true, SidecarDevice: 1}

// sidecarNode is what upstream's kubelet shows once sidecarPod runs: the
// sidecar takes one of the init container's devices, the app container
// the other and a new one (devicesToAllocate takes the reusable devices
// first; a sidecar's stop being reusable).
func sidecarNode() *Observation {
	return &Observation{
		Pods:        map[string]corev1.Pod{"p0": runningPod("u0", corev1.PodQOSGuaranteed, 0, "main")},
		Held:        map[string]map[string][]string{"p0": {"main": {"d0", "d2"}, "sidecar": {"d1"}}},
		Allocatable: []string{"d0", "d1", "d2", "d3"},
		Checkpoint:  []checkpoint.PodDevicesEntry{entry("u0", "init", "d0", "d1"), entry("u0", "sidecar", "d1"), entry("u0", "main", "d0", "d2")},
		Cgroups:     map[string]PodCgroup{"p0": {Path: "kubepods/podu0", MemoryLimit: "33554432", CPUQuota: "10000"}},
	}
}

func played(t *testing.T, steps ...Step) *Predictor {
	t.Helper()
	p, err := NewPredictor()
	require.NoError(t, err)
	for _, s := range steps {
		_, err := p.Play(s, &Observation{})
		require.NoError(t, err)
	}
	return p
}

func predictState(t *testing.T, p *Predictor, step Step, before, after *Observation, specs map[string]PodSpec) *State {
	t.Helper()
	pred, err := p.Play(step, before)
	require.NoError(t, err)
	return &State{Step: step, Before: before, After: after, Specs: specs, Healthy: Devices, Watching: 1, Predicted: &pred}
}

func divergences(t *testing.T, s *State) Diverged {
	t.Helper()
	err := check(t, SimPredicts, s)
	if err == nil {
		return nil
	}
	var d Diverged
	require.True(t, errors.As(err, &d), "%v", err)
	return d
}

func TestPredictsAgreeingNode(t *testing.T) {
	p := played(t)
	s := predictState(t, p, Step{Kind: AddPod, Pod: sidecarPod}, &Observation{}, sidecarNode(), map[string]PodSpec{"p0": sidecarPod})
	require.Empty(t, divergences(t, s))
	// Device IDs are the node's own choice: others, with the same
	// structure, agree as well.
	renamed := sidecarNode()
	renamed.Held["p0"] = map[string][]string{"main": {"d1", "d3"}, "sidecar": {"d2"}}
	renamed.Checkpoint = []checkpoint.PodDevicesEntry{entry("u0", "init", "d3", "d2"), entry("u0", "sidecar", "d2"), entry("u0", "main", "d1", "d3")}
	s.After = renamed
	require.Empty(t, divergences(t, s))
	// A step the nodes had parted before is not compared.
	s.Predicted = nil
	require.NoError(t, check(t, SimPredicts, s))
}

// Each way a node can show something else is a divergence naming it, a
// fidelity bug.
func TestPredictsNamesEachDivergence(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(o *Observation)
		want   string
	}{
		"a container holds a device more": {func(o *Observation) {
			o.Held["p0"]["sidecar"] = []string{"d1", "d3"}
		}, "p0 held devices of sidecar: the simulation predicts 1, the node shows 2"},
		"the app container reuses none of the init container's devices": {func(o *Observation) {
			o.Checkpoint[2] = entry("u0", "main", "d2", "d3")
		}, "p0 devices in common of p0/init and p0/main: the simulation predicts 1, the node shows 0"},
		"refused": {func(o *Observation) {
			o.Pods["p0"] = refusedPod("u0", "Allocate failed due to requested number of devices unavailable for nodeproof.io/dev. Requested: 2, Available: 1, which is unexpected")
		}, "p0 outcome: the simulation predicts running, the node shows refused: devices unavailable"},
		"another QoS class": {func(o *Observation) {
			o.Pods["p0"] = runningPod("u0", corev1.PodQOSBurstable, 0, "main")
		}, "p0 qos: the simulation predicts Guaranteed, the node shows Burstable"},
		"restarted": {func(o *Observation) {
			o.Pods["p0"] = runningPod("u0", corev1.PodQOSGuaranteed, 1, "main")
		}, "p0 restarts: the simulation predicts 0, the node shows 1"},
		"not ready": {func(o *Observation) {
			p := runningPod("u0", corev1.PodQOSGuaranteed, 0, "main")
			p.Status.ContainerStatuses[0].Ready = false
			o.Pods["p0"] = p
		}, "p0 ready: the simulation predicts true, the node shows false"},
		"the init container's limits in the pod cgroup": {func(o *Observation) {
			o.Cgroups["p0"] = PodCgroup{Path: "kubepods/podu0", MemoryLimit: "50331648", CPUQuota: "15000"}
		}, "p0 cgroup: the simulation predicts memory 33554432, cpu quota 10000, the node shows memory 50331648, cpu quota 15000"},
		"a device fewer allocatable": {func(o *Observation) {
			o.Allocatable = o.Allocatable[1:]
		}, "node allocatable: the simulation predicts 4, the node shows 3"},
	} {
		t.Run(name, func(t *testing.T) {
			o := sidecarNode()
			tc.change(o)
			d := divergences(t, predictState(t, played(t), Step{Kind: AddPod, Pod: sidecarPod}, &Observation{}, o, map[string]PodSpec{"p0": sidecarPod}))
			require.NotEmpty(t, d)
			assert.Contains(t, d.Error(), tc.want+" ("+FidelityBug+")")
		})
	}
}

// A BestEffort pod's cgroup has no limits: cgroup v1's largest page
// counter and a quota of -1 on the node, none in the simulation.
func TestPredictsBestEffortCgroup(t *testing.T) {
	spec := PodSpec{Name: "p0", QOS: corev1.PodQOSBestEffort, MainDevices: 1}
	o := &Observation{
		Pods:        map[string]corev1.Pod{"p0": runningPod("u0", corev1.PodQOSBestEffort, 0, "main")},
		Held:        map[string]map[string][]string{"p0": {"main": {"d3"}}},
		Allocatable: []string{"d0", "d1", "d2", "d3"},
		Checkpoint:  []checkpoint.PodDevicesEntry{entry("u0", "main", "d3")},
		Cgroups:     map[string]PodCgroup{"p0": {Path: "kubepods/besteffort/podu0", MemoryLimit: "9223372036854771712", CPUQuota: "-1"}},
	}
	require.Empty(t, divergences(t, predictState(t, played(t), Step{Kind: AddPod, Pod: spec}, &Observation{}, o, map[string]PodSpec{"p0": spec})))
}

// The two known limits, each by its rule; anything else stays a
// fidelity bug.
func TestPredictsKnownLimits(t *testing.T) {
	// SIM-F2's window: the simulation refuses the pod after the restart,
	// the plugin not having registered again; the node, whose plugin won
	// the race, runs it on.
	initOnly := PodSpec{Name: "p0", QOS: corev1.PodQOSBestEffort, Init: true, InitDevices: 1}
	specs := map[string]PodSpec{"p0": initOnly}
	p := played(t, Step{Kind: AddPod, Pod: initOnly})
	before := &Observation{
		Pods:        map[string]corev1.Pod{"p0": runningPod("u0", corev1.PodQOSBestEffort, 0, "main")},
		Allocatable: []string{"d0", "d1", "d2", "d3"},
		Checkpoint:  []checkpoint.PodDevicesEntry{entry("u0", "init", "d2")},
		Cgroups:     map[string]PodCgroup{"p0": {Path: "kubepods/besteffort/podu0", MemoryLimit: "9223372036854771712", CPUQuota: "-1"}},
	}
	s := predictState(t, p, Step{Kind: KillKubelet}, before, before, specs)
	d := divergences(t, s)
	require.Len(t, d, 1, "%v", d)
	assert.Equal(t, "p0 outcome: the simulation predicts refused: devices unhealthy, the node shows running ("+LimitReadmission+")", d[0].String())

	// The same divergence on a pod whose init container holds no device
	// is no race of SIM-F2's.
	s.Specs = map[string]PodSpec{"p0": {Name: "p0", QOS: corev1.PodQOSBestEffort, Init: true}}
	assert.Equal(t, FidelityBug, divergences(t, s)[0].class())
	// Nor after another step.
	s.Specs, s.Step = specs, Step{Kind: FlipHealth, Device: "d0"}
	assert.Equal(t, FidelityBug, divergences(t, s)[0].class())

	// A pod refused before the restart is admitted again: the node,
	// whose plugin won the race, runs it; the simulation refuses it.
	refusedBefore := &Observation{Pods: map[string]corev1.Pod{"p1": refusedPod("u1", "Requested: 1, Available: 0")}}
	again := &State{Step: Step{Kind: KillKubelet}, Before: refusedBefore, Watching: 1,
		After:     &Observation{Pods: map[string]corev1.Pod{"p1": runningPod("u1", corev1.PodQOSBestEffort, 0, "main")}},
		Specs:     map[string]PodSpec{"p1": {Name: "p1", QOS: corev1.PodQOSBestEffort, MainDevices: 1}},
		Predicted: &sim.Prediction{Pods: map[string]sim.PodPrediction{"p1": {Phase: pod.Failed, Reason: "UnexpectedAdmissionError", Message: "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices nodeproof.io/dev, which is unexpected"}}}}
	d = divergences(t, again)
	require.Len(t, d, 1, "%v", d)
	assert.Equal(t, LimitReadmission, d[0].class())
	// The plugin won the race, and the devices did not suffice.
	again.After.Pods["p1"] = refusedPod("u1", "Allocate failed due to requested number of devices unavailable for nodeproof.io/dev. Requested: 1, Available: 0, which is unexpected")
	assert.Equal(t, LimitReadmission, divergences(t, again)[0].class())
	again.Specs["p1"] = PodSpec{Name: "p1", QOS: corev1.PodQOSBestEffort}
	assert.Equal(t, FidelityBug, divergences(t, again)[0].class(), "a pod that asks for no device needs none again")

	// D1: the kubelet holds no stream on the plugin.
	s.Watching = 0
	assert.Equal(t, LimitD1, divergences(t, s)[0].class())
}

// S1, the refused pod's kill, is named by its rule and nothing wider: a
// checkpoint entry the node keeps and the simulation has collected, after
// a restart.
func TestPredictsRefusedPodKill(t *testing.T) {
	kept := Divergence{Pods: []string{"p0"}, What: "devices of p0/init in the checkpoint", Sim: "0", Node: "1"}
	common := Divergence{Pods: []string{"p0"}, What: "devices in common of p0/init and p0/main", Sim: "0", Node: "1"}
	restarted := &State{Step: Step{Kind: RestartPlugin}, Watching: 1, Restarted: true}
	assert.Equal(t, LimitRefusedPodKill, limit(restarted, kept))
	assert.Equal(t, LimitRefusedPodKill, limit(restarted, common))

	fewer := kept
	fewer.Sim, fewer.Node = "2", "1"
	assert.Empty(t, limit(restarted, fewer), "the node holding fewer devices than predicted is no such gap")
	held := kept
	held.What = "held devices of init"
	assert.Empty(t, limit(restarted, held), "what List shows is compared apart")
	never := *restarted
	never.Restarted = false
	assert.Empty(t, limit(&never, kept), "without a restart the node drops such entries too")
}

// A tally counts divergences by class and parts at the first.
func TestTallyDiverge(t *testing.T) {
	tally := NewTally()
	d := Diverged{{Pods: []string{"p0"}, What: "outcome", Sim: "running", Node: "refused: devices unhealthy", Limit: LimitReadmission},
		{What: "allocatable", Sim: "4", Node: "3"}}
	assert.Equal(t, LimitReadmission, tally.diverge(d, "steps:\n  1. kill-kubelet\n"))
	assert.Equal(t, map[string]int{LimitReadmission: 1, FidelityBug: 1}, tally.Divergences)
	assert.Contains(t, tally.Summary(), "the simulation's divergences from the node: 2 (fidelity bug 1, readmission-race 1) at 1 steps")
	assert.Contains(t, tally.Summary(), "node allocatable: the simulation predicts 4, the node shows 3 (fidelity bug)\nsteps:\n  1. kill-kubelet")
}

// A step the simulated node cannot take is an error naming it.
func TestPredictorBadStep(t *testing.T) {
	p := played(t)
	_, err := p.Play(Step{Kind: RemovePod, Pod: PodSpec{Name: "nope"}}, &Observation{})
	assert.ErrorContains(t, err, `the simulated node, remove-pod nope: name: no pod "nope" on the node`)
	_, err = p.Play(Step{Kind: "jump"}, &Observation{})
	assert.ErrorContains(t, err, `step: unknown kind "jump"`)
}

// A health flip is played on the simulated device in the real one's
// place: here the one the app container of p0 holds, whatever its ID.
func TestPredictorFlipsTheCounterpart(t *testing.T) {
	spec := PodSpec{Name: "p0", QOS: corev1.PodQOSBestEffort, MainDevices: 1}
	p := played(t, Step{Kind: AddPod, Pod: spec})
	before := &Observation{Pods: map[string]corev1.Pod{"p0": runningPod("u0", corev1.PodQOSBestEffort, 0, "main")},
		Checkpoint: []checkpoint.PodDevicesEntry{entry("u0", "main", "d3")}}
	got, err := p.Play(Step{Kind: FlipHealth, Device: "d3"}, before)
	require.NoError(t, err)
	assert.Equal(t, int64(3), got.Allocatable)
	held := got.Pods["p0"].Held["main"]
	require.Len(t, held, 1)
	assert.False(t, p.simHealthy[held[0]], "the device p0 holds turned unhealthy")
	// Three healthy devices are free: a pod asking for them all fits.
	got, err = p.Play(Step{Kind: AddPod, Pod: PodSpec{Name: "p1", QOS: corev1.PodQOSBestEffort, MainDevices: 3}}, before)
	require.NoError(t, err)
	assert.Equal(t, pod.Running, got.Pods["p1"].Phase, "%s", got.Pods["p1"].Message)
}

// The kubelet's answer to a registration D1 broke, as seen in a sweep, and
// others that are not D1's.
func TestLateDisconnectAtRegistration(t *testing.T) {
	seen := errors.New("rpc error: code = Unknown desc = failed to get device plugin options: rpc error: code = Canceled desc = grpc: the client connection is closing")
	assert.True(t, lateDisconnectAtRegistration(seen))
	assert.True(t, lateDisconnectAtRegistration(fmt.Errorf("starting the device plugin: %w", seen)))
	for _, err := range []error{nil, errors.New("failed to get device plugin options: context deadline exceeded"),
		errors.New("rpc error: code = Unavailable desc = the client connection is closing")} {
		assert.False(t, lateDisconnectAtRegistration(err), "%v", err)
	}
}

// A crashed container is predicted restarted, its devices kept; a pod with
// a liveness probe, whose kills the simulation cannot time, has its
// restarts left out of the comparison, and a liveness flip changes nothing
// the simulation predicts.
func TestPredictsCrashesAndLiveness(t *testing.T) {
	p := played(t, Step{Kind: AddPod, Pod: sidecarPod})
	node := sidecarNode()
	node.Pods["p0"] = runningPod("u0", corev1.PodQOSGuaranteed, 1, "main")
	specs := map[string]PodSpec{"p0": sidecarPod}
	s := predictState(t, p, Step{Kind: CrashContainer, Pod: sidecarPod, Container: "sidecar"}, sidecarNode(), node, specs)
	require.Empty(t, divergences(t, s))
	assert.Equal(t, 1, s.Predicted.Pods["p0"].Restarts)

	probed := sidecarPod
	probed.Liveness = &Target{}
	node.Pods["p0"] = runningPod("u0", corev1.PodQOSGuaranteed, 7, "main")
	s = predictState(t, p, Step{Kind: FlipLiveness, Pod: probed}, sidecarNode(), node, map[string]PodSpec{"p0": probed})
	require.Empty(t, divergences(t, s), "a probed pod's restarts are not compared")
	assert.Equal(t, 1, s.Predicted.Pods["p0"].Restarts)

	probed.Readiness = probed.Liveness
	unready := runningPod("u0", corev1.PodQOSGuaranteed, 7, "main")
	unready.Status.ContainerStatuses[0].Ready = false
	node.Pods["p0"] = unready
	s = predictState(t, p, Step{Kind: FlipReadiness, Pod: probed}, sidecarNode(), node, map[string]PodSpec{"p0": probed})
	require.Empty(t, divergences(t, s), "a probed pod's readiness is not compared")

	_, err := p.Play(Step{Kind: CrashContainer, Pod: sidecarPod, Container: "init"}, node)
	assert.ErrorContains(t, err, `the simulated node, crash-container p0/init: container: init of pod "p0" is not running`)
}
