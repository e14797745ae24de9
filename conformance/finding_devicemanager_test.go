package conformance

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The device manager findings (verify/findings_devicemanager.go), each
// played on upstream v1.36.3's own ManagerImpl over real sockets, with
// upstream's own device plugin stub as the plugins (registration_sides_test.go).

// TestFindingDMReplacedPluginUpdate confirms DM-F1 (property DM-C-ADVERTISED).
//
// The promise, from the Kubernetes documentation's Device Plugins page
// (sections "Device plugin registration" and "Device plugin and unhealthy
// devices"): after a device plugin registers a resource and reports two
// healthy devices, the node advertises 2 devices installed and available;
// allocatable counts the devices the plugin reports healthy, capacity the
// devices it reports. KEP-3573 ("API Specification") lets one active plugin
// hold a resource name.
//
// Upstream breaks it when a second instance of a plugin registers the same
// resource while the first instance's ListAndWatch stream is still open:
// the kubelet sends its calls to the new instance, yet takes the old
// instance's later updates as the resource's devices. The test passes while
// the bug is present: it asserts that the node advertises the old
// instance's empty list and rejects a pod, while the registered instance is
// connected and reports three healthy devices.
func TestFindingDMReplacedPluginUpdate(t *testing.T) {
	dir, err := os.MkdirTemp(scratchDir(), "np-f1-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	k, err := startUpstream(dir)
	require.NoError(t, err)
	t.Cleanup(k.close)
	resource := regResources[0]
	healthy := []regDevice{{ID: "d0", Healthy: true}, {ID: "d1", Healthy: true}}

	// advertises waits for the node status upstream would publish to show
	// capacity and allocatable n; each plugin step reaches the kubelet over
	// its own stream, so the test polls with a bound, as the registration
	// comparison does.
	advertises := func(n int64) bool {
		capacity, allocatable := k.capacity()
		return capacity[resource] == n && allocatable[resource] == n
	}

	// 1. The first instance registers and reports two healthy devices.
	old, err := startStub(dir, "dev-a-1.sock", 0, healthy, false)
	require.NoError(t, err)
	t.Cleanup(old.stop)
	require.Eventually(t, func() bool { return advertises(2) }, waitLimit, time.Millisecond, "the first instance's devices")

	// 2. A second instance registers the same resource and reports the
	// same two devices and a third, d2, so that the node is seen to have
	// taken its list: with the same list, the first instance's checkpoint
	// write, which upstream makes after it published the count, could pass
	// for the second's, and the two lists would race.
	successorDevices := append(slices.Clone(healthy), regDevice{ID: "d2", Healthy: true})
	current, err := startStub(dir, "dev-a-2.sock", 0, successorDevices, false)
	require.NoError(t, err)
	t.Cleanup(current.stop)
	require.Eventually(t, func() bool { return advertises(3) }, waitLimit, time.Millisecond, "the registered instance's devices")

	// 3. The first instance, replaced but with its stream still open,
	// sends an empty list (as a plugin shutting down may).
	old.update(nil)
	bug := bugOutcome(t, "DM-F1")
	if !assert.Eventually(bug, func() bool { return advertises(0) }, waitLimit, time.Millisecond,
		"the node kept advertising the registered instance's 3 devices after the replaced one sent an empty list: the promise is kept") {
		return
	}

	// 4. The broken promise: the registered instance is connected and
	// reports three healthy devices, yet the node advertises none, and a pod
	// asking for one of them is rejected.
	capacity, allocatable := k.capacity()
	assert.Equal(bug, int64(0), capacity[resource], "capacity while the registered plugin reports 3 devices")
	assert.Equal(bug, int64(0), allocatable[resource], "allocatable while the registered plugin reports 3 healthy devices")
	p := (&regPod{UID: "pod-1", Apps: []regContainer{{Name: "app0", Devices: [2]int64{1, 0}}}}).manifest()
	assert.Equal(bug, "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices "+resource+", which is unexpected",
		k.admit(p))
	assert.Empty(bug, current.calls(), "the registered instance was never asked: the kubelet did not see its devices")
}

// TestFindingDMZeroRequestRejected confirms DM-F2 (property DM-C-ADMITS).
//
// The promise, from the Kubernetes documentation's Device Plugins page
// ("Device plugin and unhealthy devices"): allocatable counts how many
// devices can be used for scheduling new pods, and a pod the scheduler
// placed within it is admitted ("Device plugin registration": the devices
// a pod does not need remain "available for other Pods to use"); KEP-3573
// ("End User story") has the scheduler filter nodes by the requests and the
// kubelet pick the devices. A pod that requests none of a resource needs
// nothing of its plugin.
//
// Upstream breaks it for a container whose limit of a device plugin
// resource is 0 (a Helm chart rendering `nvidia.com/gpu: 0`): the device
// manager runs its health checks for every resource in the limits before
// it looks at how many devices are needed, so while the resource has no
// healthy device (its plugin stopped, or restarting) the pod is rejected
// with UnexpectedAdmissionError. The test passes while the bug is present:
// it asserts that rejection, and that the same pod without the 0 limit is
// admitted.
func TestFindingDMZeroRequestRejected(t *testing.T) {
	dir, err := os.MkdirTemp(scratchDir(), "np-f2-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	k, err := startUpstream(dir)
	require.NoError(t, err)
	t.Cleanup(k.close)
	name := regResources[0]

	// 1. A plugin registers and reports two healthy devices.
	plugin, err := startStub(dir, "dev-a-1.sock", 0, []regDevice{{ID: "d0", Healthy: true}, {ID: "d1", Healthy: true}}, false)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, allocatable := k.capacity()
		return allocatable[name] == 2
	}, waitLimit, time.Millisecond, "the plugin's devices")

	// 2. The plugin stops (a crash, an upgrade): its devices count as
	// unhealthy, allocatable 0, for the 5 minutes before the resource goes.
	plugin.stop()
	require.Eventually(t, func() bool {
		capacity, allocatable := k.capacity()
		return capacity[name] == 2 && allocatable[name] == 0
	}, waitLimit, time.Millisecond, "the stopped plugin's devices marked unhealthy")

	// 3. A pod that asks for 0 of the resource is rejected; the same pod
	// without the entry is admitted.
	zero := func(uid string, limits corev1.ResourceList) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: uid, Namespace: "default", UID: types.UID(uid)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "app0", Image: "registry.example/app", Resources: corev1.ResourceRequirements{Limits: limits},
			}}},
		}
	}
	assert.Equal(bugOutcome(t, "DM-F2"), "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices "+name+", which is unexpected",
		k.admit(zero("pod-1", corev1.ResourceList{corev1.ResourceName(name): *resource.NewQuantity(0, resource.DecimalSI)})),
		"a pod asking for 0 devices is rejected for want of healthy devices")
	assert.Empty(t, k.admit(zero("pod-2", corev1.ResourceList{})), "the same pod without the 0 limit is admitted")
}
