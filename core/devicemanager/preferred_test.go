package devicemanager_test

import (
	"testing"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/require"
)

// TestPreferredAllocationRequests checks the arguments the agent passes to
// GetPreferredAllocation (spec §1.7): available = free healthy devices plus
// the reusable devices already chosen, mustInclude = those, size = the
// container's request; no request for plugins without the option, for
// requests reusable devices cover, or for containers that hold devices.
func TestPreferredAllocationRequests(t *testing.T) {
	m := dm.New(dm.DefaultLimits())
	gpu, nic := "example.com/gpu", "vendor.io/nic"
	_, err := m.Connected(gpu, "gpu.sock", dm.PluginOptions{GetPreferredAllocationAvailable: true})
	require.NoError(t, err)
	_, err = m.Connected(nic, "nic.sock", dm.PluginOptions{})
	require.NoError(t, err)
	for _, r := range []string{gpu, nic} {
		require.NoError(t, m.Update(r, []dm.Device{{ID: "d0", Health: dm.Healthy}, {ID: "d1", Health: dm.Healthy}, {ID: "d2", Health: dm.Healthy}, {ID: "d3", Health: dm.Unhealthy}}))
	}
	p := &pod.Pod{UID: "p1", InitContainers: []pod.Container{{Name: "init", Limits: pod.ResourceList{pod.ResourceName(gpu): 1}}},
		Containers: []pod.Container{{Name: "app", Limits: pod.ResourceList{pod.ResourceName(gpu): 3, pod.ResourceName(nic): 1}}}}

	got := m.PreferredAllocationRequests(p, "init", []string{"p1"})
	want := []dm.PreferredRequest{{Resource: gpu, Endpoint: 1, Available: []string{"d0", "d1", "d2"}, Size: 1}}
	require.Equal(t, want, got, "init")
	plan, err := m.PlanContainer(dm.PlanInput{Pod: p, Container: "init", ActivePods: []string{"p1"}})
	require.NoError(t, err)
	require.NoError(t, m.Commit(plan.ID, [][]allocresp.ContainerAllocateResponse{{{}}}))
	got = m.PreferredAllocationRequests(p, "app", []string{"p1"})
	want = []dm.PreferredRequest{{Resource: gpu, Endpoint: 1, Available: []string{"d0", "d1", "d2"}, MustInclude: []string{"d0"}, Size: 3}}
	require.Equal(t, want, got, "app")
	require.Nil(t, m.PreferredAllocationRequests(p, "init", []string{"p1"}), "a container that holds its devices needs no preference")
}

// TestPreferredAllocationRequestsOnlyWhereUpstreamAsks: upstream asks a
// plugin for its preference only once the allocation's checks pass (spec
// §1.7), after the garbage collection; the conformance comparison over real
// sockets found the agent asking with an empty device list.
func TestPreferredAllocationRequestsOnlyWhereUpstreamAsks(t *testing.T) {
	m := dm.New(dm.DefaultLimits())
	m.SetSourcesReady()
	a, b := "example.com/dev-a", "example.com/dev-b"
	for _, r := range []string{a, b} {
		_, err := m.Connected(r, r+".sock", dm.PluginOptions{GetPreferredAllocationAvailable: true})
		require.NoError(t, err)
	}
	require.NoError(t, m.Update(a, []dm.Device{{ID: "d0", Health: dm.Unhealthy}}))
	require.NoError(t, m.Update(b, []dm.Device{{ID: "d0", Health: dm.Healthy}, {ID: "d1", Health: dm.Healthy}}))
	both := &pod.Pod{UID: "p1", Containers: []pod.Container{{Name: "app", Limits: pod.ResourceList{pod.ResourceName(a): 1, pod.ResourceName(b): 1}}}}
	require.Nil(t, m.PreferredAllocationRequests(both, "app", []string{"p1"}), "dev-a has no healthy device, so the allocation fails before either plugin is asked;")

	onlyB := func(uid string, n int64) *pod.Pod {
		return &pod.Pod{UID: uid, Containers: []pod.Container{{Name: "app", Limits: pod.ResourceList{pod.ResourceName(b): n}}}}
	}
	require.Nil(t, m.PreferredAllocationRequests(onlyB("p2", 3), "app", []string{"p2"}), "3 of 2 free devices: the allocation fails before the plugin is asked;")
	p3 := onlyB("p3", 2)
	plan, err := m.PlanContainer(dm.PlanInput{Pod: p3, Container: "app", ActivePods: []string{"p3"}})
	require.NoError(t, err)
	require.NoError(t, m.Commit(plan.ID, [][]allocresp.ContainerAllocateResponse{{{}}}))
	require.Nil(t, m.PreferredAllocationRequests(onlyB("p4", 1), "app", []string{"p3", "p4"}), "p3 holds both devices")
	got := m.PreferredAllocationRequests(onlyB("p4", 1), "app", []string{"p4"})
	want := []dm.PreferredRequest{{Resource: b, Endpoint: 2, Available: []string{"d0", "d1"}, Size: 1}}
	require.Equal(t, want, got, "p3 is gone, so its devices are free again")
}
