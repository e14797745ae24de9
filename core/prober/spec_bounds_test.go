package prober_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/core/prober"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each bound of the Manager is inclusive: input at exactly the bound is
// accepted and one past it refused. The tests at the bound are what tell a
// `>` from a `>=`.

// TestWorkerBoundCountsExistingAndNewWorkers: the workers already there
// plus the ones AddPod would create may reach Options.MaxWorkers, not pass it.
func TestWorkerBoundCountsExistingAndNewWorkers(t *testing.T) {
	m, err := prober.NewManager(prober.Options{KubeletStart: kubeletStart, MaxWorkers: 3})
	require.NoError(t, err)
	one := func(uid string) prober.Pod {
		return prober.Pod{UID: uid, Containers: []prober.Container{{Name: "c", ReadinessProbe: execProbe()}}}
	}
	_, err = m.AddPod(later, one("a"), nil)
	require.NoError(t, err)
	two := prober.Pod{UID: "b", Containers: []prober.Container{{Name: "c", ReadinessProbe: execProbe(), LivenessProbe: execProbe()}}}
	res, err := m.AddPod(later, two, nil)
	require.NoError(t, err, "1 existing + 2 new = exactly MaxWorkers")
	assert.Equal(t, keys("b", "c", prober.Readiness, prober.Liveness), res.Added)

	before := m.Workers()
	_, err = m.AddPod(later, one("c"), nil)
	assert.EqualError(t, err, "workers: more than 3 workers", "3 existing + 1 new")
	assert.Equal(t, before, m.Workers())
}

// manyContainers is n containers without probes, named c0, c1, ….
func manyContainers(n int) []prober.Container {
	out := make([]prober.Container, n)
	for i := range out {
		out[i] = prober.Container{Name: fmt.Sprintf("c%d", i)}
	}
	return out
}

// TestContainerBoundIsInclusive: AddPod and UpdatePodStatus take a pod of
// exactly MaxContainersPerPod containers, or init containers, and refuse
// one more.
func TestContainerBoundIsInclusive(t *testing.T) {
	const tooMany = "spec.containers: more than 1024 containers or init containers"
	for _, tc := range []struct {
		name string
		pod  func(n int) prober.Pod
	}{
		{"containers", func(n int) prober.Pod { return prober.Pod{UID: "u", Containers: manyContainers(n)} }},
		{"init containers", func(n int) prober.Pod { return prober.Pod{UID: "u", InitContainers: manyContainers(n)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newManager(t)
			_, err := m.AddPod(later, tc.pod(prober.MaxContainersPerPod), nil)
			assert.NoError(t, err, "AddPod at the bound")
			_, err = m.UpdatePodStatus(later, tc.pod(prober.MaxContainersPerPod), prober.PodStatus{})
			assert.NoError(t, err, "UpdatePodStatus at the bound")

			_, err = m.AddPod(later, tc.pod(prober.MaxContainersPerPod+1), nil)
			assert.EqualError(t, err, tooMany)
			_, err = m.UpdatePodStatus(later, tc.pod(prober.MaxContainersPerPod+1), prober.PodStatus{})
			assert.EqualError(t, err, tooMany)
		})
	}
}

// TestStatusBoundIsInclusive: a status of exactly MaxContainersPerPod
// container statuses and as many init container statuses is accepted; one
// more of either is not.
func TestStatusBoundIsInclusive(t *testing.T) {
	statuses := func(n int) []prober.ContainerStatus {
		out := make([]prober.ContainerStatus, n)
		for i := range out {
			out[i] = prober.ContainerStatus{Name: fmt.Sprintf("c%d", i)}
		}
		return out
	}
	pod := prober.Pod{UID: "u"}
	m := newManager(t)
	_, err := m.UpdatePodStatus(later, pod, prober.PodStatus{
		ContainerStatuses: statuses(prober.MaxContainersPerPod), InitContainerStatuses: statuses(prober.MaxContainersPerPod)})
	assert.NoError(t, err)
	_, err = m.UpdatePodStatus(later, pod, prober.PodStatus{ContainerStatuses: statuses(prober.MaxContainersPerPod + 1)})
	assert.EqualError(t, err, "status.containerStatuses: more than 1024 statuses")
	_, err = m.UpdatePodStatus(later, pod, prober.PodStatus{InitContainerStatuses: statuses(prober.MaxContainersPerPod + 1)})
	assert.EqualError(t, err, "status.initContainerStatuses: more than 1024 statuses")
}

// TestTimeSpanBoundIsInclusive: a time exactly MaxTimeSpan before or after
// the kubelet's start is accepted; a nanosecond further is not.
func TestTimeSpanBoundIsInclusive(t *testing.T) {
	pod := prober.Pod{UID: "u", Containers: []prober.Container{{Name: "c"}}}
	for _, tc := range []struct {
		name    string
		now     time.Time
		wantErr bool
	}{
		{"MaxTimeSpan after", kubeletStart.Add(prober.MaxTimeSpan), false},
		{"MaxTimeSpan before", kubeletStart.Add(-prober.MaxTimeSpan), false},
		{"just past after", kubeletStart.Add(prober.MaxTimeSpan + 1), true},
		{"just past before", kubeletStart.Add(-prober.MaxTimeSpan - 1), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newManager(t)
			_, addErr := m.AddPod(tc.now, pod, nil)
			_, statusErr := m.UpdatePodStatus(tc.now, pod, prober.PodStatus{})
			if tc.wantErr {
				assert.ErrorContains(t, addErr, "now: must be within")
				assert.ErrorContains(t, statusErr, "now: must be within")
			} else {
				assert.NoError(t, addErr)
				assert.NoError(t, statusErr)
			}
		})
	}
}

// TestProbeRunCarriesThePodIP: the probe run a Step hands out targets the
// pod IP of the status it was stepped with.
func TestProbeRunCarriesThePodIP(t *testing.T) {
	m := addOne(t, prober.Readiness, execProbe())
	step, err := m.Step(key(prober.Readiness), later, runningStatus("containerd://a", later, boolPtr(true)))
	require.NoError(t, err)
	require.Equal(t, prober.StepProbe, step.Kind)
	assert.Equal(t, "10.0.0.1", step.Run.PodIP)
}

// TestResultOfEachType: Result reads the cache of each of the three probe
// types and answers (Unknown, false) for a type that is none of them.
func TestResultOfEachType(t *testing.T) {
	for _, tc := range []struct {
		typ     prober.ProbeType
		started *bool // the readiness worker probes a started container, the startup worker one not yet started
	}{{prober.Liveness, boolPtr(true)}, {prober.Readiness, boolPtr(true)}, {prober.Startup, nil}} {
		typ := tc.typ
		t.Run(typ.String(), func(t *testing.T) {
			m := addOne(t, typ, execProbe())
			stepDue(t, m, key(typ), runningStatus("containerd://a", later, tc.started), success)
			got, ok := m.Result(typ, "containerd://a")
			assert.True(t, ok)
			assert.Equal(t, prober.Success, got)
			assert.Equal(t, []prober.Entry{{ContainerID: "containerd://a", Result: prober.Success}}, m.Results(typ))
			for _, bad := range []prober.ProbeType{prober.Liveness - 1, prober.Startup + 1} {
				got, ok := m.Result(bad, "containerd://a")
				assert.False(t, ok, "type %d", bad)
				assert.Equal(t, prober.Unknown, got)
				assert.Nil(t, m.Results(bad))
			}
		})
	}
}

// TestResultsEntriesInContainerIDOrder: Entries sorts by container ID,
// whatever the order the results were set in.
func TestResultsEntriesInContainerIDOrder(t *testing.T) {
	r := prober.NewResults(prober.Liveness)
	for _, id := range []string{"c://b", "c://c", "c://a"} {
		_, ok := r.Set(id, prober.Success, "u")
		require.True(t, ok)
	}
	assert.Equal(t, []prober.Entry{{"c://a", prober.Success}, {"c://b", prober.Success}, {"c://c", prober.Success}}, r.Entries())
}

// TestWorkersInKeyOrder: Workers orders by pod UID first, whatever the
// order the pods were added in.
func TestWorkersInKeyOrder(t *testing.T) {
	m := newManager(t)
	for _, uid := range []string{"b", "a"} {
		_, err := m.AddPod(later, prober.Pod{UID: uid, Containers: []prober.Container{{Name: "c", ReadinessProbe: execProbe()}}}, nil)
		require.NoError(t, err)
	}
	assert.Equal(t, append(keys("a", "c", prober.Readiness), keys("b", "c", prober.Readiness)...), workerKeys(m))
}
