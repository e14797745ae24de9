package prober_test

import (
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/core/prober"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// beforeRestart is a container start well before the kubelet's (more than
// the 10 s grace): the container survived a kubelet restart.
var beforeRestart = kubeletStart.Add(-time.Hour)

func readyStarted(t *testing.T, m *prober.Manager, pod prober.Pod, status *prober.PodStatus) (ready bool, started bool) {
	t.Helper()
	st, err := m.UpdatePodStatus(kubeletStart.Add(time.Second), pod, *status)
	require.NoError(t, err)
	c := st.Status.ContainerStatuses[0]
	require.NotNil(t, c.Started)
	return c.Ready, *c.Started
}

// TestUpdatePodStatus: Started from the startup cache or the absence of a
// startup worker; Ready from the readiness cache or the absence of a
// readiness worker.
func TestUpdatePodStatus(t *testing.T) {
	m := newManager(t)
	pod := prober.Pod{UID: "uid", Containers: []prober.Container{{Name: "c", ReadinessProbe: execProbe(thresholds(1, 1)), StartupProbe: execProbe(thresholds(1, 1))}}}
	_, err := m.AddPod(kubeletStart, pod, nil)
	require.NoError(t, err)
	status := runningStatus("containerd://a", kubeletStart, nil)

	ready, started := readyStarted(t, m, pod, status)
	assert.False(t, started, "a startup worker with no result yet")
	assert.False(t, ready)

	stepAt(t, m, key(prober.Startup), kubeletStart.Add(time.Second), status, success)
	ready, started = readyStarted(t, m, pod, status)
	assert.True(t, started)
	assert.False(t, ready, "readiness worker exists, no Success cached")

	status.ContainerStatuses[0].Started = boolPtr(true)
	stepAt(t, m, key(prober.Readiness), kubeletStart.Add(time.Second), status, success)
	ready, _ = readyStarted(t, m, pod, status)
	assert.True(t, ready)

	noProbes := prober.Pod{UID: "other", Containers: []prober.Container{{Name: "c"}}}
	ready, started = readyStarted(t, m, noProbes, runningStatus("containerd://z", kubeletStart, nil))
	assert.True(t, started)
	assert.True(t, ready, "no readiness probe: ready")
	ready, started = readyStarted(t, m, noProbes, exitedStatus("containerd://z", 0))
	assert.False(t, started)
	assert.False(t, ready)
}

// TestKubeletRestart (v1.36, ChangeContainerStatusOnKubeletRestart off,
// #100277): a container running since before the kubelet's start less
// 10 s keeps Started from its status, and is Ready when the API pod was
// Ready; its worker writes no initial value, so Ready is not flipped.
func TestKubeletRestart(t *testing.T) {
	for _, tc := range []struct {
		name      string
		startedAt time.Time
		podReady  bool
		wantReady bool
	}{
		{"pod was ready", beforeRestart, true, true},
		{"pod was not ready", beforeRestart, false, false},
		{"started within the grace: a new container", kubeletStart.Add(-5 * time.Second), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newManager(t)
			pod := prober.Pod{UID: "uid", Ready: tc.podReady, Containers: []prober.Container{{Name: "c", ReadinessProbe: execProbe(), StartupProbe: execProbe()}}}
			_, err := m.AddPod(kubeletStart, pod, nil)
			require.NoError(t, err)
			status := runningStatus("containerd://a", tc.startedAt, boolPtr(true))
			step, _ := stepAt(t, m, key(prober.Readiness), kubeletStart, status, prober.Outcome{Result: prober.ProbeFailure})
			restart := tc.startedAt.Equal(beforeRestart)
			if restart {
				assert.Empty(t, step.Updates, "a probe failure below the threshold publishes nothing, and no initial value")
			} else {
				assert.Equal(t, []prober.Result{prober.Failure}, results(step.Updates))
			}
			ready, started := readyStarted(t, m, pod, status)
			assert.True(t, started, "Started kept from the status")
			assert.Equal(t, tc.wantReady, ready)
		})
	}
}

// TestSidecarStartupOnRestart (#136910): a sidecar's startup worker seeds
// Success for a container whose status says started; a new container's
// initial value then overwrites it.
func TestSidecarStartupOnRestart(t *testing.T) {
	for _, tc := range []struct {
		name      string
		startedAt time.Time
		want      []prober.Result
	}{
		{"kubelet restart", beforeRestart, []prober.Result{prober.Success}},
		{"not a restart", kubeletStart, []prober.Result{prober.Success, prober.Unknown}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newManager(t)
			pod := prober.Pod{UID: "uid", InitContainers: []prober.Container{{Name: "c", RestartPolicy: prober.RestartAlways, StartupProbe: execProbe()}}}
			_, err := m.AddPod(kubeletStart, pod, nil)
			require.NoError(t, err)
			status := &prober.PodStatus{Phase: prober.PodPending, InitContainerStatuses: runningStatus("containerd://s", tc.startedAt, boolPtr(true)).ContainerStatuses}
			step, tries := stepAt(t, m, key(prober.Startup), kubeletStart, status)
			assert.Equal(t, 0, tries)
			assert.Equal(t, tc.want, results(step.Updates))
		})
	}
}

// TestInitContainerStatuses: regular init containers are Ready when
// terminated with 0; statuses are matched to specs by index.
func TestInitContainerStatuses(t *testing.T) {
	m := newManager(t)
	pod := prober.Pod{UID: "uid", InitContainers: []prober.Container{{Name: "i0"}, {Name: "i1"}}}
	status := prober.PodStatus{InitContainerStatuses: []prober.ContainerStatus{
		{Name: "i0", ContainerID: "containerd://0", State: prober.ContainerState{Terminated: &prober.Terminated{ExitCode: 0}}},
		{Name: "other", ContainerID: "containerd://1", State: prober.ContainerState{Terminated: &prober.Terminated{ExitCode: 0}}},
	}}
	st, err := m.UpdatePodStatus(kubeletStart, pod, status)
	require.NoError(t, err)
	assert.True(t, st.Status.InitContainerStatuses[0].Ready)
	assert.False(t, st.Status.InitContainerStatuses[1].Ready, "name mismatch at the index: skipped")
	assert.Equal(t, boolPtr(false), st.Status.InitContainerStatuses[1].Started)
	assert.Nil(t, status.InitContainerStatuses[0].Started, "the argument is not written")
}

// TestMoreInitStatusesThanSpecs: a status past the last init container's
// spec has no spec to match; it is skipped (Started set, Ready left).
func TestMoreInitStatusesThanSpecs(t *testing.T) {
	m := newManager(t)
	pod := prober.Pod{UID: "uid", InitContainers: []prober.Container{{Name: "i0"}}}
	terminated := prober.ContainerState{Terminated: &prober.Terminated{ExitCode: 0}}
	status := prober.PodStatus{InitContainerStatuses: []prober.ContainerStatus{
		{Name: "i0", ContainerID: "containerd://0", State: terminated},
		{Name: "i1", ContainerID: "containerd://1", State: terminated},
	}}
	st, err := m.UpdatePodStatus(kubeletStart, pod, status)
	require.NoError(t, err)
	assert.True(t, st.Status.InitContainerStatuses[0].Ready)
	assert.False(t, st.Status.InitContainerStatuses[1].Ready, "no spec at index 1")
	assert.Equal(t, boolPtr(false), st.Status.InitContainerStatuses[1].Started)
}
