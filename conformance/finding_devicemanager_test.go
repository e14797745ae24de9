package conformance

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
// connected and reports two healthy devices.
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
	// same two healthy devices; the kubelet writes its checkpoint once it
	// took that list, so the step waits for the write.
	before := checkpointFile(dir)
	current, err := startStub(dir, "dev-a-2.sock", 0, healthy, false)
	require.NoError(t, err)
	t.Cleanup(current.stop)
	require.Eventually(t, func() bool { return rewritten(before, checkpointFile(dir)) && advertises(2) }, waitLimit, time.Millisecond,
		"the registered instance's devices")

	// 3. The first instance, replaced but with its stream still open,
	// sends an empty list (as a plugin shutting down may).
	old.update(nil)
	require.Eventually(t, func() bool { return advertises(0) }, waitLimit, time.Millisecond,
		"upstream must take the replaced instance's update for the bug to show")

	// 4. The broken promise: the registered instance is connected and
	// reports two healthy devices, yet the node advertises none, and a pod
	// asking for one of them is rejected.
	capacity, allocatable := k.capacity()
	assert.Equal(t, int64(0), capacity[resource], "capacity while the registered plugin reports 2 devices")
	assert.Equal(t, int64(0), allocatable[resource], "allocatable while the registered plugin reports 2 healthy devices")
	p := (&regPod{UID: "pod-1", Apps: []regContainer{{Name: "app0", Devices: [2]int64{1, 0}}}}).manifest()
	assert.Equal(t, "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices "+resource+", which is unexpected",
		k.admit(p))
	assert.Empty(t, current.calls(), "the registered instance was never asked: the kubelet did not see its devices")
}
