package admission_test

import (
	"fmt"
	"testing"

	"github.com/nodeproof/nodeproof/core/admission"
	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func gpuPod(uid string, containers int) *pod.Pod {
	p := &pod.Pod{UID: uid, Name: uid, Namespace: "default"}
	for i := range containers {
		p.Containers = append(p.Containers, pod.Container{Name: fmt.Sprintf("c%d", i),
			Requests: pod.ResourceList{gpu: 1}, Limits: pod.ResourceList{gpu: 1}})
	}
	return p
}

// fullGPUNode is deviceNode with its two GPUs held by the running pods a
// (g0) and b (g1). Its allocatable counts four GPUs, so that the fit, which
// counts the requests of the node's pods, never rejects a pod the device
// manager gave devices: these tests are about the garbage collection.
func fullGPUNode(t *testing.T) (*admission.Node, *dm.Manager) {
	t.Helper()
	n, m := deviceNode(t)
	for _, uid := range []string{"a", "b"} {
		a, err := n.Begin(gpuPod(uid, 1), admission.Options{})
		require.NoError(t, err)
		r, err := admission.Drive(a, answer, nil)
		require.NoError(t, err)
		require.True(t, r.Admitted, "result = %+v", r)
	}
	require.Equal(t, map[string][]string{string(gpu): {"g0", "g1"}}, m.Allocated())
	require.NoError(t, n.SetAllocatable(pod.ResourceList{pod.Pods: 10, pod.CPU: 1000, gpu: 4}))
	return n, m
}

// TestCallerActivePodsDecideTheDeviceGC checks that the device manager's
// garbage collection keeps the devices of the pods the caller lists and
// frees those of the others, even a pod the node still runs: the caller's
// view of its pods (upstream the kubelet's GetActivePods) is what the
// device manager reads.
func TestCallerActivePodsDecideTheDeviceGC(t *testing.T) {
	t.Run("absent from the caller's list: the pod loses its devices", func(t *testing.T) {
		n, m := fullGPUNode(t)
		a, err := n.Begin(gpuPod("c", 1), admission.Options{})
		require.NoError(t, err)
		require.NoError(t, a.SetActivePods([]string{"b"}))
		r, err := admission.Drive(a, answer, nil)
		require.NoError(t, err)
		assert.True(t, r.Admitted, "result = %+v", r)
		assert.Empty(t, m.ContainerDevices("a", "c0"), "a is not in the caller's list")
		assert.Equal(t, map[string][]string{string(gpu): {"g1"}}, m.ContainerDevices("b", "c0"))
		assert.Equal(t, map[string][]string{string(gpu): {"g0"}}, m.ContainerDevices("c", "c0"))
		assert.Equal(t, []string{"a", "b", "c"}, uids(n), "the caller's list changes the devices only, not the node's pods")
	})
	t.Run("present in the caller's list: the pod keeps its devices", func(t *testing.T) {
		n, m := fullGPUNode(t)
		a, err := n.Begin(gpuPod("c", 1), admission.Options{})
		require.NoError(t, err)
		require.NoError(t, a.SetActivePods([]string{"b", "a", "unknown-to-the-node"}))
		r, err := admission.Drive(a, answer, nil)
		require.NoError(t, err)
		assert.False(t, r.Admitted, "no GPU is free: result = %+v", r)
		assert.Equal(t, map[string][]string{string(gpu): {"g0", "g1"}}, m.Allocated())
	})
	t.Run("without a list: the node's own active pods", func(t *testing.T) {
		n, m := fullGPUNode(t)
		require.NoError(t, n.Remove("a"))
		a, err := n.Begin(gpuPod("c", 1), admission.Options{})
		require.NoError(t, err)
		// A list given and then taken back leaves the default.
		require.NoError(t, a.SetActivePods([]string{"a", "b"}))
		require.NoError(t, a.SetActivePods(nil))
		r, err := admission.Drive(a, answer, nil)
		require.NoError(t, err)
		assert.True(t, r.Admitted, "result = %+v", r)
		assert.Empty(t, m.ContainerDevices("a", "c0"), "a left the node")
		assert.Equal(t, map[string][]string{string(gpu): {"g0"}}, m.ContainerDevices("c", "c0"))
	})
	t.Run("the pod being admitted is active, listed or not; a new list applies at the next plan", func(t *testing.T) {
		n, m := fullGPUNode(t)
		a, err := n.Begin(gpuPod("c", 2), admission.Options{})
		require.NoError(t, err)
		require.NoError(t, a.SetActivePods([]string{"b"}))
		step := a.Next()
		require.Equal(t, admission.StepAllocate, step.Kind, "step = %+v", step)
		assert.Equal(t, "c0", step.Plan.Container)
		answers, _ := answer(step.Plan)
		require.NoError(t, a.Allocated(answers, nil))
		// b finished while c0's answer was on its way.
		require.NoError(t, a.SetActivePods([]string{}))
		r, err := admission.Drive(a, answer, nil)
		require.NoError(t, err)
		assert.True(t, r.Admitted, "result = %+v", r)
		assert.Equal(t, map[string][]string{string(gpu): {"g0"}}, m.ContainerDevices("c", "c0"), "c's first container keeps its device")
		assert.Equal(t, map[string][]string{string(gpu): {"g1"}}, m.ContainerDevices("c", "c1"))
		assert.Empty(t, m.ContainerDevices("b", "c0"))
	})
}

// TestSetActivePodsBadInput checks that a malformed list is refused with an
// error naming the field and the rule, and changes nothing.
func TestSetActivePodsBadInput(t *testing.T) {
	tooMany := make([]string, admission.MaxPods+1)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("p%d", i)
	}
	n, m := fullGPUNode(t)
	a, err := n.Begin(gpuPod("c", 1), admission.Options{})
	require.NoError(t, err)
	require.NoError(t, a.SetActivePods([]string{"a", "b"}))
	for _, tc := range []struct {
		uids []string
		want string
	}{
		{[]string{"a", ""}, "activePods[1]: a pod UID must not be empty"},
		{[]string{"a", "b", "a"}, `activePods[2]: pod "a" is listed twice`},
		{tooMany, fmt.Sprintf("activePods: %d pods exceed the bound of %d", admission.MaxPods+1, admission.MaxPods)},
	} {
		assert.EqualError(t, a.SetActivePods(tc.uids), tc.want)
	}
	require.NoError(t, a.SetActivePods(tooMany[:admission.MaxPods]), "exactly the bound is valid")
	require.NoError(t, a.SetActivePods([]string{"a", "b"}))
	r, err := admission.Drive(a, answer, nil)
	require.NoError(t, err)
	assert.False(t, r.Admitted, "the refused lists changed nothing, a and b keep their GPUs: result = %+v", r)
	assert.Equal(t, map[string][]string{string(gpu): {"g0", "g1"}}, m.Allocated())
	require.NoError(t, a.SetActivePods([]string{"a"}), "a list given after the decision is valid")
	assert.Equal(t, admission.StepDone, a.Next().Kind, "and changes nothing")
	assert.Equal(t, map[string][]string{string(gpu): {"g0", "g1"}}, m.Allocated())
}
