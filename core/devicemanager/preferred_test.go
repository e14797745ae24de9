package devicemanager_test

import (
	"reflect"
	"testing"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/pod"
)

// TestPreferredAllocationRequests checks the arguments the agent passes to
// GetPreferredAllocation (spec §1.7): available = free healthy devices plus
// the reusable devices already chosen, mustInclude = those, size = the
// container's request; no request for plugins without the option, for
// requests reusable devices cover, or for containers that hold devices.
func TestPreferredAllocationRequests(t *testing.T) {
	m := dm.New(dm.DefaultLimits())
	gpu, nic := "example.com/gpu", "vendor.io/nic"
	if _, err := m.Connected(gpu, "gpu.sock", dm.PluginOptions{GetPreferredAllocationAvailable: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Connected(nic, "nic.sock", dm.PluginOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{gpu, nic} {
		if err := m.Update(r, []dm.Device{{ID: "d0", Health: dm.Healthy}, {ID: "d1", Health: dm.Healthy}, {ID: "d2", Health: dm.Healthy}, {ID: "d3", Health: dm.Unhealthy}}); err != nil {
			t.Fatal(err)
		}
	}
	p := &pod.Pod{UID: "p1", InitContainers: []pod.Container{{Name: "init", Limits: pod.ResourceList{pod.ResourceName(gpu): 1}}},
		Containers: []pod.Container{{Name: "app", Limits: pod.ResourceList{pod.ResourceName(gpu): 3, pod.ResourceName(nic): 1}}}}

	got := m.PreferredAllocationRequests(p, "init", []string{"p1"})
	want := []dm.PreferredRequest{{Resource: gpu, Endpoint: 1, Available: []string{"d0", "d1", "d2"}, Size: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("init: got %+v, want %+v", got, want)
	}
	plan, err := m.PlanContainer(dm.PlanInput{Pod: p, Container: "init", ActivePods: []string{"p1"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Commit(plan.ID, [][]allocresp.ContainerAllocateResponse{{{}}}); err != nil {
		t.Fatal(err)
	}
	got = m.PreferredAllocationRequests(p, "app", []string{"p1"})
	want = []dm.PreferredRequest{{Resource: gpu, Endpoint: 1, Available: []string{"d0", "d1", "d2"}, MustInclude: []string{"d0"}, Size: 3}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("app: got %+v, want %+v", got, want)
	}
	if got := m.PreferredAllocationRequests(p, "init", []string{"p1"}); got != nil {
		t.Fatalf("a container that holds its devices needs no preference, got %+v", got)
	}
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
		if _, err := m.Connected(r, r+".sock", dm.PluginOptions{GetPreferredAllocationAvailable: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Update(a, []dm.Device{{ID: "d0", Health: dm.Unhealthy}}); err != nil {
		t.Fatal(err)
	}
	if err := m.Update(b, []dm.Device{{ID: "d0", Health: dm.Healthy}, {ID: "d1", Health: dm.Healthy}}); err != nil {
		t.Fatal(err)
	}
	both := &pod.Pod{UID: "p1", Containers: []pod.Container{{Name: "app", Limits: pod.ResourceList{pod.ResourceName(a): 1, pod.ResourceName(b): 1}}}}
	if got := m.PreferredAllocationRequests(both, "app", []string{"p1"}); got != nil {
		t.Fatalf("dev-a has no healthy device, so the allocation fails before either plugin is asked; got %+v", got)
	}

	onlyB := func(uid string, n int64) *pod.Pod {
		return &pod.Pod{UID: uid, Containers: []pod.Container{{Name: "app", Limits: pod.ResourceList{pod.ResourceName(b): n}}}}
	}
	if got := m.PreferredAllocationRequests(onlyB("p2", 3), "app", []string{"p2"}); got != nil {
		t.Fatalf("3 of 2 free devices: the allocation fails before the plugin is asked; got %+v", got)
	}
	p3 := onlyB("p3", 2)
	plan, err := m.PlanContainer(dm.PlanInput{Pod: p3, Container: "app", ActivePods: []string{"p3"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Commit(plan.ID, [][]allocresp.ContainerAllocateResponse{{{}}}); err != nil {
		t.Fatal(err)
	}
	if got := m.PreferredAllocationRequests(onlyB("p4", 1), "app", []string{"p3", "p4"}); got != nil {
		t.Fatalf("p3 holds both devices: got %+v", got)
	}
	got := m.PreferredAllocationRequests(onlyB("p4", 1), "app", []string{"p4"})
	want := []dm.PreferredRequest{{Resource: b, Endpoint: 2, Available: []string{"d0", "d1"}, Size: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("p3 is gone, so its devices are free again: got %+v, want %+v", got, want)
	}
}
