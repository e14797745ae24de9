package kube

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/core/pod"
)

func TestConvertResourceListUnits(t *testing.T) {
	cases := []struct {
		name  corev1.ResourceName
		value string
		want  int64
	}{
		{"cpu", "1", 1000},
		{"cpu", "100m", 100},
		{"cpu", "0.5m", 1}, // rounded up, as MilliValue
		{"cpu", "1.5", 1500},
		{"cpu", "0", 0},
		{"memory", "1Ki", 1024},
		{"memory", "1e3", 1000},
		{"memory", "1.5", 2}, // rounded up, as Value
		{"memory", "128Mi", 128 << 20},
		{"ephemeral-storage", "10G", 10_000_000_000},
		{"hugepages-1Gi", "2Gi", 2 << 30},
		{"pods", "110", 110},
		{"example.com/gpu", "3", 3},
		{"kubernetes.io/batteries", "2k", 2000},
		{"memory", "9223372036854775807", 9223372036854775807},
	}
	for _, tc := range cases {
		got, err := ConvertResourceList("l", corev1.ResourceList{tc.name: resource.MustParse(tc.value)})
		if err != nil {
			t.Errorf("%s %s: %v", tc.name, tc.value, err)
			continue
		}
		assert.Equal(t, tc.want, got[pod.ResourceName(tc.name)], "%s %s", tc.name, tc.value)
	}
	for _, bad := range []struct {
		name  corev1.ResourceName
		value string
		path  string
	}{
		{"example.com/gpu", "1.5", "l[example.com/gpu]"},
		{"pods", "100m", "l.pods"},
		{"memory", "9223372036854775808", "l.memory"},
		{"cpu", "-1m", "l.cpu"},
	} {
		_, err := ConvertResourceList("l", corev1.ResourceList{bad.name: resource.MustParse(bad.value)})
		var fe *FieldError
		require.True(t, errors.As(err, &fe), "%s %s: got %v, want a *FieldError at %s", bad.name, bad.value, err, bad.path)
		assert.Equal(t, bad.path, fe.Path, "%s %s: got %v, want a *FieldError at %s", bad.name, bad.value, err, bad.path)
	}
	got, err := ConvertResourceList("l", nil)
	require.Nil(t, got, "nil list: %v, %v", got, err)
	assert.NoError(t, err, "nil list: %v, %v", got, err)
}

// ConvertPod serves callers that hold typed objects (an informer, a test)
// and applies the same defaulting as Decode.
func TestConvertPodTyped(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	now := metav1.Now()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u1", DeletionTimestamp: &now},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "side", RestartPolicy: &always}},
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{"cpu": resource.MustParse("500m"), "memory": resource.MustParse("64Mi")}}}},
		},
	}
	got, err := ConvertPod(p)
	require.NoError(t, err)
	want := pod.Pod{UID: "u1", Name: "p", Namespace: "default", Phase: pod.Pending, Deleted: true,
		InitContainers: []pod.Container{{Name: "side", RestartPolicy: pod.RestartAlways}},
		Containers: []pod.Container{{Name: "c",
			Requests: pod.ResourceList{pod.CPU: 500, pod.Memory: 64 << 20},
			Limits:   pod.ResourceList{pod.CPU: 500, pod.Memory: 64 << 20}}},
	}
	assert.Equal(t, want, got)
	// Requests defaulted to limits, but the sidecar has no limits: Burstable.
	assert.Equal(t, pod.Burstable, got.QOS(), "QoS")
	got.InitContainers = nil
	assert.Equal(t, pod.Guaranteed, got.ComputeQOS(), "without the sidecar: QoS")
	_, err = ConvertNode(&corev1.Node{})
	assert.Error(t, err, "a node without a name was accepted")
}

// TestConvertPodKeepsEmptyPodResources: an empty spec.resources ({}) is
// kept, because upstream ComputePodQOS takes the pod-level branch whenever
// spec.resources is non-nil: the pod is BestEffort whatever its containers
// ask for (found by conformance/ TestQOS).
func TestConvertPodKeepsEmptyPodResources(t *testing.T) {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{"memory": resource.MustParse("64Mi")}}}},
			Resources: &corev1.ResourceRequirements{},
		},
	}
	got, err := ConvertPod(p)
	require.NoError(t, err)
	require.NotNil(t, got.Resources, "spec.resources dropped")
	assert.Equal(t, pod.BestEffort, got.QOS(), "QoS")
}

// TestRuntimeIDsFromStatus: a container's runtime ID is its status's
// containerID without the scheme, for app containers and init containers
// (sidecars); a status without one leaves none; a malformed containerID or a
// status of no container is an error at the status's field.
func TestRuntimeIDsFromStatus(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "side", RestartPolicy: &always}},
			Containers:     []corev1.Container{{Name: "a"}, {Name: "b"}},
		},
		Status: corev1.PodStatus{
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "side", ContainerID: "cri-o://abc123"}},
			ContainerStatuses:     []corev1.ContainerStatus{{Name: "b", ContainerID: "containerd://0f1e"}, {Name: "a"}},
		},
	}
	got, err := ConvertPod(p)
	require.NoError(t, err)
	assert.Equal(t, "abc123", got.InitContainers[0].RuntimeID)
	assert.Equal(t, "", got.Containers[0].RuntimeID)
	assert.Equal(t, "0f1e", got.Containers[1].RuntimeID)

	for _, c := range []struct {
		status corev1.ContainerStatus
		want   string
	}{
		{corev1.ContainerStatus{Name: "a", ContainerID: "0f1e"}, `status.containerStatuses[0].containerID: "0f1e" must be <runtime>://<id>`},
		{corev1.ContainerStatus{Name: "a", ContainerID: "containerd://"}, `status.containerStatuses[0].containerID: "containerd://" must be <runtime>://<id>`},
		{corev1.ContainerStatus{Name: "a", ContainerID: "containerd://a/b"}, `status.containerStatuses[0].containerID: "containerd://a/b" must be <runtime>://<id>`},
		{corev1.ContainerStatus{Name: "z", ContainerID: "containerd://1"}, `status.containerStatuses[0].name: "z" is not the name of a container the status belongs to`},
	} {
		bad := p.DeepCopy()
		bad.Status.ContainerStatuses = []corev1.ContainerStatus{c.status}
		_, err := ConvertPod(bad)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
}
