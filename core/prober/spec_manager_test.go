package prober_test

import (
	"errors"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/core/prober"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func allProbes(name string) prober.Container {
	return prober.Container{Name: name, LivenessProbe: execProbe(), ReadinessProbe: execProbe(), StartupProbe: execProbe()}
}

func keys(uid, container string, types ...prober.ProbeType) []prober.WorkerKey {
	var out []prober.WorkerKey
	for _, t := range types {
		out = append(out, prober.WorkerKey{PodUID: uid, ContainerName: container, Type: t})
	}
	return out
}

// TestAddPodOrder: containers then sidecars, each startup, readiness,
// liveness; regular init containers get none.
func TestAddPodOrder(t *testing.T) {
	pod := prober.Pod{UID: "u",
		InitContainers: []prober.Container{{Name: "init"}, {Name: "side", RestartPolicy: prober.RestartAlways, ReadinessProbe: execProbe(), StartupProbe: execProbe()}},
		Containers:     []prober.Container{allProbes("a"), {Name: "b", LivenessProbe: execProbe()}},
	}
	m := newManager(t)
	res, err := m.AddPod(later, pod, nil)
	require.NoError(t, err)
	want := append(append(keys("u", "a", prober.Startup, prober.Readiness, prober.Liveness), keys("u", "b", prober.Liveness)...), keys("u", "side", prober.Startup, prober.Readiness)...)
	assert.Equal(t, prober.AddPodResult{Added: want}, res)
}

// TestAddPodEarlyReturn: upstream's observed behaviour, kept on purpose:
// the first probe whose worker exists ends AddPod, so a pod update that
// adds probes (here a readiness probe on "a" and a new container "b")
// starts none of them; at most one worker per key.
func TestAddPodEarlyReturn(t *testing.T) {
	m := newManager(t)
	first := prober.Pod{UID: "u", Containers: []prober.Container{{Name: "a", LivenessProbe: execProbe()}}}
	_, err := m.AddPod(later, first, nil)
	require.NoError(t, err)
	updated := prober.Pod{UID: "u", Containers: []prober.Container{{Name: "a", LivenessProbe: execProbe(), ReadinessProbe: execProbe()}, allProbes("b")}}
	res, err := m.AddPod(later, updated, nil)
	require.NoError(t, err)
	// startup of a: none; readiness of a: created; liveness of a: exists → return.
	stop := keys("u", "a", prober.Liveness)[0]
	assert.Equal(t, prober.AddPodResult{Added: keys("u", "a", prober.Readiness), EarlyReturn: &stop}, res)
	assert.Len(t, m.Workers(), 2)
	res, err = m.AddPod(later, updated, nil)
	require.NoError(t, err)
	readiness := keys("u", "a", prober.Readiness)[0]
	assert.Equal(t, prober.AddPodResult{EarlyReturn: &readiness}, res)
	assert.Len(t, m.Workers(), 2)
}

// TestStops: StopLivenessAndStartup reaches the containers' liveness and
// startup workers, not the sidecars'; RemovePod every worker of the pod;
// CleanupPods every worker of an undesired pod. A stopped worker removes
// its container's result without publishing.
func TestStops(t *testing.T) {
	pod := prober.Pod{UID: "u",
		InitContainers: []prober.Container{{Name: "side", RestartPolicy: prober.RestartAlways, LivenessProbe: execProbe(), StartupProbe: execProbe()}},
		Containers:     []prober.Container{allProbes("a")},
	}
	m := newManager(t)
	_, err := m.AddPod(later, pod, nil)
	require.NoError(t, err)
	stepDue(t, m, keys("u", "a", prober.Liveness)[0], &prober.PodStatus{Phase: prober.PodRunning, ContainerStatuses: []prober.ContainerStatus{{Name: "a", ContainerID: "containerd://a",
		State: prober.ContainerState{Running: &prober.Running{StartedAt: later}}}}})
	require.Len(t, m.Results(prober.Liveness), 1)

	res := m.StopLivenessAndStartup(later, pod)
	assert.Equal(t, prober.StopResult{Exited: keys("u", "a", prober.Liveness, prober.Startup)}, res)
	assert.Empty(t, m.Results(prober.Liveness))
	assert.Equal(t, append(keys("u", "a", prober.Readiness), keys("u", "side", prober.Liveness, prober.Startup)...), workerKeys(m))

	other := prober.Pod{UID: "v", Containers: []prober.Container{allProbes("x")}}
	_, err = m.AddPod(later, other, nil)
	require.NoError(t, err)
	res = m.CleanupPods(later, map[string]bool{"u": true})
	assert.Equal(t, prober.StopResult{Exited: keys("v", "x", prober.Liveness, prober.Readiness, prober.Startup)}, res)
	res = m.RemovePod(later, pod)
	assert.Equal(t, prober.StopResult{Exited: append(keys("u", "a", prober.Readiness), keys("u", "side", prober.Liveness, prober.Startup)...)}, res)
	assert.Empty(t, m.Workers())
}

// TestStopWhileProbing: a worker stopped while its probe runs finishes the
// doProbe (publishing its result) and exits when the probe is reported.
func TestStopWhileProbing(t *testing.T) {
	m := addOne(t, prober.Readiness, execProbe())
	k := key(prober.Readiness)
	step, err := m.Step(k, later, runningStatus("containerd://a", later, boolPtr(true)))
	require.NoError(t, err)
	require.Equal(t, prober.StepProbe, step.Kind)
	assert.Equal(t, prober.StopResult{Stopping: []prober.WorkerKey{k}}, m.RemovePod(later, podWith(prober.Readiness, nil)))
	step, err = m.ProbeDone(k, later.Add(time.Second), success)
	require.NoError(t, err)
	assert.Equal(t, prober.StepExit, step.Kind)
	assert.Equal(t, []prober.Result{prober.Success}, results(step.Updates))
	assert.Empty(t, m.Workers())
	assert.Empty(t, m.Results(prober.Readiness))
}

func workerKeys(m *prober.Manager) []prober.WorkerKey {
	var out []prober.WorkerKey
	for _, w := range m.Workers() {
		out = append(out, w.Key)
	}
	return out
}

// TestTiming: the first probe at AddPod (after the jitter only within one
// period of the kubelet's start), ticks every period from it, a tick that
// passes during a slow probe delivered at the probe's end, a manual
// trigger resetting the ticks.
func TestTiming(t *testing.T) {
	p := execProbe(func(p *prober.Probe) { p.PeriodSeconds = 10 })
	half := func(prober.WorkerKey) float64 { return 0.5 }

	m := newManager(t)
	_, err := m.AddPod(kubeletStart.Add(3*time.Second), podWith(prober.Readiness, p), half)
	require.NoError(t, err)
	w, _ := m.Worker(key(prober.Readiness))
	assert.Equal(t, kubeletStart.Add(8*time.Second), w.FirstProbeAt, "3 s after the start, period 10 s: jitter 5 s")

	m = newManager(t)
	_, err = m.AddPod(kubeletStart.Add(10*time.Second), podWith(prober.Readiness, p), half)
	require.NoError(t, err)
	w, _ = m.Worker(key(prober.Readiness))
	assert.Equal(t, kubeletStart.Add(10*time.Second), w.FirstProbeAt, "one period after the start: no jitter")

	m = addOne(t, prober.Readiness, p)
	k := key(prober.Readiness)
	status := runningStatus("containerd://a", later, boolPtr(true))
	step := stepDue(t, m, k, status, success)
	assert.Equal(t, later.Add(10*time.Second), step.NextDue)
	// A probe taking 12 s: the tick at +20 passed, so the next doProbe runs at its end.
	step, err = m.Step(k, later.Add(10*time.Second), status)
	require.NoError(t, err)
	step, err = m.ProbeDone(k, later.Add(22*time.Second), success)
	require.NoError(t, err)
	assert.Equal(t, later.Add(22*time.Second), step.NextDue)
	step = stepDue(t, m, k, status, success)
	assert.Equal(t, later.Add(30*time.Second), step.NextDue, "ticks stay on the grid")

	// Stepping early is refused.
	_, err = m.Step(k, later.Add(29*time.Second), status)
	var inputErr *prober.InputError
	require.True(t, errors.As(err, &inputErr))

	// A manual trigger at +25 (readiness not Success: fail it first).
	m = addOne(t, prober.Readiness, p)
	stepDue(t, m, k, status, failure)
	st, err := m.UpdatePodStatus(later.Add(5*time.Second), podWith(prober.Readiness, p), *status)
	require.NoError(t, err)
	assert.Equal(t, []prober.WorkerKey{k}, st.Triggered)
	w, _ = m.Worker(k)
	assert.Equal(t, later.Add(5*time.Second), w.NextDue)
	step = stepDue(t, m, k, status, failure)
	assert.Equal(t, later.Add(15*time.Second), step.NextDue, "the trigger reset the ticker")
}

// TestTriggerBuffer: a trigger to a probing worker waits in the 1-buffer
// and runs the next doProbe as soon as the probe ends; a further one is
// dropped.
func TestTriggerBuffer(t *testing.T) {
	p := execProbe()
	m := addOne(t, prober.Readiness, p)
	k := key(prober.Readiness)
	status := runningStatus("containerd://a", later, boolPtr(true))
	_, err := m.Step(k, later, status)
	require.NoError(t, err)
	st, err := m.UpdatePodStatus(later, podWith(prober.Readiness, p), *status)
	require.NoError(t, err)
	assert.Equal(t, []prober.WorkerKey{k}, st.Triggered)
	st, err = m.UpdatePodStatus(later, podWith(prober.Readiness, p), *status)
	require.NoError(t, err)
	assert.Equal(t, []prober.WorkerKey{k}, st.Dropped)
	step, err := m.ProbeDone(k, later.Add(time.Second), failure)
	require.NoError(t, err)
	assert.Equal(t, later.Add(time.Second), step.NextDue)
}

// TestBadInput: bad input names the field and the rule and changes nothing.
func TestBadInput(t *testing.T) {
	m := addOne(t, prober.Readiness, execProbe())
	k := key(prober.Readiness)
	before := m.Workers()
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"container ID without runtime", func() error {
			_, err := m.Step(k, later, runningStatus("abc", later, nil))
			return err
		}, `status.containerStatuses[0].containerID: "abc" must be <runtime>://<id>`},
		{"quoted container ID", func() error {
			_, err := m.UpdatePodStatus(later, podWith(prober.Readiness, execProbe()), *runningStatus(`"containerd://a"`, later, nil))
			return err
		}, `status.containerStatuses[0].containerID: "\"containerd://a\"" must be <runtime>://<id>`},
		{"unknown worker", func() error { _, err := m.Step(key(prober.Liveness), later, nil); return err }, "step(uid/c/Liveness): no such worker"},
		{"no outstanding probe", func() error { _, err := m.ProbeDone(k, later, success); return err }, "probeDone(uid/c/Readiness): no probe is outstanding"},
		{"jitter out of range", func() error {
			_, err := newManagerErr(kubeletStart).AddPod(kubeletStart, podWith(prober.Readiness, execProbe()), func(prober.WorkerKey) float64 { return 1 })
			return err
		}, "jitter(uid/c/Readiness): must be in [0, 1), got 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			var inputErr *prober.InputError
			require.True(t, errors.As(err, &inputErr), "%v", err)
			assert.EqualError(t, err, tc.want)
			assert.Equal(t, before, m.Workers())
		})
	}
	_, err := m.Step(k, later, runningStatus("containerd://a", later, boolPtr(true)))
	require.NoError(t, err)
	_, err = m.ProbeDone(k, later, prober.Outcome{Result: "maybe"})
	assert.EqualError(t, err, `outcome.result: must be success, warning, failure or unknown, got "maybe"`)
	_, err = m.Step(k, later, nil)
	assert.EqualError(t, err, "step(uid/c/Readiness): a probe is outstanding: report it with ProbeDone")
}

func newManagerErr(start time.Time) *prober.Manager {
	m, _ := prober.NewManager(prober.Options{KubeletStart: start})
	return m
}

// TestResultsCache: Set publishes only a change or a new entry; Remove
// publishes nothing.
func TestResultsCache(t *testing.T) {
	r := prober.NewResults(prober.Readiness)
	u, ok := r.Set("c://1", prober.Failure, "u")
	assert.True(t, ok)
	assert.Equal(t, prober.Update{Type: prober.Readiness, ContainerID: "c://1", Result: prober.Failure, PodUID: "u"}, u)
	_, ok = r.Set("c://1", prober.Failure, "u")
	assert.False(t, ok)
	_, ok = r.Set("c://1", prober.Success, "u")
	assert.True(t, ok)
	r.Remove("c://1")
	_, ok = r.Get("c://1")
	assert.False(t, ok)
	_, ok = r.Set("c://1", prober.Success, "u")
	assert.True(t, ok, "after Remove the result is new again")
	assert.Equal(t, "UNKNOWN", prober.Unknown.String())
	assert.Equal(t, "Failure", prober.Failure.String())
}
