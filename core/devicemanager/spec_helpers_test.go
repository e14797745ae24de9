package devicemanager_test

import (
	"slices"
	"testing"
	"time"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The scenario tests run on a fixed clock: the core takes time as an
// argument, so every instant below is exact and the grace-period boundary
// can be hit to the nanosecond.
var specT0 = time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)

// specRes is the resource name of devicemanager.md's examples.
const specRes = "domain1.com/resource1"

// specManager returns a manager with the default bounds.
func specManager() *dm.Manager { return dm.New(dm.DefaultLimits()) }

// specConnect registers a plugin and fails the test on error.
func specConnect(t *testing.T, m *dm.Manager, resource string, opts dm.PluginOptions) dm.EndpointID {
	t.Helper()
	id, err := m.Connected(resource, "/var/lib/kubelet/device-plugins/"+resource+".sock", opts)
	require.NoError(t, err, "Connected(%s)", resource)
	return id
}

// specHealthy returns healthy devices with the given IDs and no topology.
func specHealthy(ids ...string) []dm.Device {
	devs := make([]dm.Device, 0, len(ids))
	for _, id := range ids {
		devs = append(devs, dm.Device{ID: id, Health: dm.Healthy})
	}
	return devs
}

// specUpdate applies a snapshot and fails the test on error.
func specUpdate(t *testing.T, m *dm.Manager, resource string, devs []dm.Device) {
	t.Helper()
	require.NoError(t, m.Update(resource, devs), "Update(%s)", resource)
}

// specReady returns a manager with specRes registered and n healthy devices
// dev0..dev(n-1), and the plugin's endpoint ID.
func specReady(t *testing.T, n int, opts dm.PluginOptions) (*dm.Manager, dm.EndpointID) {
	t.Helper()
	m := specManager()
	id := specConnect(t, m, specRes, opts)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "dev" + string(rune('0'+i))
	}
	specUpdate(t, m, specRes, specHealthy(ids...))
	return m, id
}

// specLimits is a container's limits of extended resources.
func specLimits(kv ...any) pod.ResourceList {
	l := pod.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[pod.ResourceName(kv[i].(string))] = int64(kv[i+1].(int))
	}
	return l
}

// specPod builds a pod with one app container "app" asking for n devices of
// specRes.
func specPod(uid string, n int) *pod.Pod {
	return &pod.Pod{UID: uid, Name: uid, Namespace: "default", Containers: []pod.Container{
		{Name: "app", Limits: specLimits(specRes, n)},
	}}
}

// specEmptyAnswers is one plugin answer per plan request, each a single
// empty container response: what a minimal plugin returns.
func specEmptyAnswers(p *dm.Plan) [][]allocresp.ContainerAllocateResponse {
	answers := make([][]allocresp.ContainerAllocateResponse, len(p.Requests))
	for i := range answers {
		answers[i] = []allocresp.ContainerAllocateResponse{{}}
	}
	return answers
}

// specAllocate plans and commits one container, as the agent does around
// the Allocate RPC, and returns the devices chosen per resource.
func specAllocate(t *testing.T, m *dm.Manager, p *pod.Pod, container string, active []string) map[string][]string {
	t.Helper()
	plan, err := m.PlanContainer(dm.PlanInput{Pod: p, Container: container, ActivePods: active})
	require.NoError(t, err, "PlanContainer(%s/%s)", p.UID, container)
	require.NoError(t, m.Commit(plan.ID, specEmptyAnswers(plan)), "Commit(%s/%s)", p.UID, container)
	return specChosen(plan)
}

// specChosen lists a plan's devices per resource, in choice order.
func specChosen(plan *dm.Plan) map[string][]string {
	out := map[string][]string{}
	for _, r := range plan.Requests {
		out[r.Resource] = r.DeviceIDs
	}
	return out
}

// specWantErr checks an error's kind and exact text, and that the kind is
// one Kinds() documents (every error the core returns must be).
func specWantErr(t *testing.T, err error, kind dm.Kind, msg string) {
	t.Helper()
	require.Error(t, err, "got no error, want %s %q", kind, msg)
	specCheckKind(t, err)
	got, _ := dm.KindOf(err)
	assert.Equal(t, kind, got, "kind = %s, want %s (error %q)", got, kind, err)
	assert.Equal(t, msg, err.Error(), "error text")
}

// specCheckKind checks that a returned error carries a documented kind.
func specCheckKind(t *testing.T, err error) {
	t.Helper()
	k, ok := dm.KindOf(err)
	require.True(t, ok, "KindOf(%q): not a core error", err)
	assert.True(t, slices.Contains(dm.Kinds(), k), "KindOf(%q) = %s, not listed in Kinds()", err, k)
}

// specEqual fails the test with both values when they differ.
func specEqual[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	assert.Equal(t, want, got, "%s:\n", what)
}

// specCapacity checks one resource's entries of a Capacity: hasCap/hasAlloc
// say whether the keys must be present at all.
func specCapacity(t *testing.T, c dm.Capacity, resource string, hasCap bool, capacity int64, hasAlloc bool, allocatable int64) {
	t.Helper()
	gotCap, okCap := c.Capacity[resource]
	gotAlloc, okAlloc := c.Allocatable[resource]
	assert.Equal(t, hasCap, okCap, "capacity[%s] = %d (present %v), want %d (present %v)", resource, gotCap, okCap, capacity, hasCap)
	assert.Equal(t, capacity, gotCap, "capacity[%s] = %d (present %v), want %d (present %v)", resource, gotCap, okCap, capacity, hasCap)
	assert.Equal(t, hasAlloc, okAlloc, "allocatable[%s] = %d (present %v), want %d (present %v)", resource, gotAlloc, okAlloc, allocatable, hasAlloc)
	assert.Equal(t, allocatable, gotAlloc, "allocatable[%s] = %d (present %v), want %d (present %v)", resource, gotAlloc, okAlloc, allocatable, hasAlloc)
}

// specAllocatedOf returns the allocated cache of one resource, with no entry
// and an empty entry both as an empty list: the core may keep an empty set
// where upstream's sets are re-created, and that difference is not behaviour.
func specAllocatedOf(m *dm.Manager, resource string) []string {
	if ids := m.Allocated()[resource]; ids != nil {
		return ids
	}
	return []string{}
}
