package admission

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const gpu = "example.com/gpu"

func node(allocatable map[string]int64, pods ...Pod) *Node {
	return &Node{Allocatable: allocatable, Pods: pods}
}

func pod(name string, requests map[string]int64) Pod { return Pod{Name: name, Requests: requests} }

func TestAdmitsAnExactFit(t *testing.T) {
	n := node(map[string]int64{Pods: 3, CPU: 4000, Memory: 8 << 30}, pod("a", map[string]int64{CPU: 3000, Memory: 6 << 30}))
	d := n.Admit(pod("b", map[string]int64{CPU: 1000, Memory: 2 << 30}))
	assert.Equal(t, Decision{Admitted: true}, d)
	assert.Equal(t, []string{"a", "b"}, names(n), "an admitted pod joins the node")
}

func TestRejectsOneMillicoreTooMany(t *testing.T) {
	n := node(map[string]int64{Pods: 3, CPU: 4000}, pod("a", map[string]int64{CPU: 3000}))
	d := n.Admit(pod("b", map[string]int64{CPU: 1001}))
	assert.Equal(t, Decision{Reason: "OutOfcpu",
		Message:    "Node didn't have enough resource: cpu, requested: 1001, used: 3000, capacity: 4000",
		Shortfalls: []Shortfall{{CPU, 1001, 3000, 4000}}}, d)
	assert.Equal(t, []string{"a"}, names(n), "a rejected pod leaves the node as it was")
}

// TestPodSlots: a node whose slots are taken turns away a pod that asks
// for nothing else, and the slot comes before every other resource.
func TestPodSlots(t *testing.T) {
	n := node(map[string]int64{Pods: 2, CPU: 1000}, pod("a", nil), pod("b", nil))
	d := n.Admit(pod("c", nil))
	assert.Equal(t, Decision{Reason: "OutOfpods", Message: "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2",
		Shortfalls: []Shortfall{{Pods, 1, 2, 2}}}, d)

	d = n.Admit(pod("d", map[string]int64{CPU: 2000}))
	assert.Equal(t, "OutOfpods", d.Reason)
	assert.Equal(t, []Shortfall{{Pods, 1, 2, 2}, {CPU, 2000, 0, 1000}}, d.Shortfalls)

	assert.Equal(t, "OutOfpods", node(map[string]int64{CPU: 1000}).Admit(pod("e", nil)).Reason, "no pods in allocatable is no slot")
}

// TestOrderOfShortfalls: cpu, memory and ephemeral-storage in that order,
// then the scalar resources by name, whatever order the pod names them in;
// the reason and message are the first one's.
func TestOrderOfShortfalls(t *testing.T) {
	n := node(map[string]int64{Pods: 10, CPU: 1, Memory: 1, EphemeralStorage: 1, gpu: 1, "hugepages-2Mi": 1 << 21, "attachable-volumes-csi-x": 1})
	d := n.Admit(pod("p", map[string]int64{"hugepages-2Mi": 2 << 21, gpu: 2, EphemeralStorage: 2, Memory: 2, CPU: 2, "attachable-volumes-csi-x": 2}))
	assert.Equal(t, []Shortfall{{CPU, 2, 0, 1}, {Memory, 2, 0, 1}, {EphemeralStorage, 2, 0, 1},
		{"attachable-volumes-csi-x", 2, 0, 1}, {gpu, 2, 0, 1}, {"hugepages-2Mi", 2 << 21, 0, 1 << 21}}, d.Shortfalls)
	assert.Equal(t, "OutOfcpu", d.Reason)

	d = node(map[string]int64{Pods: 1, gpu: 1}).Admit(pod("q", map[string]int64{gpu: 2}))
	assert.Equal(t, "OutOfexample.com/gpu", d.Reason)
	assert.Equal(t, "Node didn't have enough resource: example.com/gpu, requested: 2, used: 0, capacity: 1", d.Message)
}

// TestResourcesNotChecked: an extended resource the node does not list at
// all, a name the fit does not know and a request of 0 never turn a pod
// away.
func TestResourcesNotChecked(t *testing.T) {
	d := node(map[string]int64{Pods: 1}).Admit(pod("p", map[string]int64{gpu: 3}))
	assert.True(t, d.Admitted, "extended resource missing from allocatable")
	d = node(map[string]int64{Pods: 1}).Admit(pod("p", map[string]int64{"gpu": 5, Pods: 4, CPU: 0}))
	assert.True(t, d.Admitted, "a bare name, a pods request and a zero request are not checked")
}

// TestNoneIsShort: a scalar resource the node has none of but for an
// extended resource it does not list (docs/deviations.md N6, fixed) is
// short whenever the pod asks for it: an extended resource listed at 0,
// huge pages and attachable volumes listed at 0 or not at all, and a
// kubernetes.io resource not listed.
func TestNoneIsShort(t *testing.T) {
	for name, tc := range map[string]struct {
		allocatable map[string]int64
		resource    string
	}{
		"extended resource at 0":         {map[string]int64{Pods: 1, gpu: 0}, gpu},
		"huge pages at 0":                {map[string]int64{Pods: 1, "hugepages-1Gi": 0}, "hugepages-1Gi"},
		"huge page size missing":         {map[string]int64{Pods: 1}, "hugepages-1Gi"},
		"attachable volumes missing":     {map[string]int64{Pods: 1}, "attachable-volumes-csi-x"},
		"kubernetes.io resource missing": {map[string]int64{Pods: 1}, "example.kubernetes.io/thing"},
	} {
		d := node(tc.allocatable).Admit(pod("p", map[string]int64{tc.resource: 3}))
		assert.Equal(t, Decision{Reason: "OutOf" + tc.resource,
			Message:    "Node didn't have enough resource: " + tc.resource + ", requested: 3, used: 0, capacity: 0",
			Shortfalls: []Shortfall{{tc.resource, 3, 0, 0}}}, d, name)
	}
}

// TestUsedCountsEveryPodOnTheNode: what the node's pods request is summed
// over all of them, and a pod taken off frees what it requested.
func TestUsedCountsEveryPodOnTheNode(t *testing.T) {
	n := node(map[string]int64{Pods: 5, Memory: 100, gpu: 4},
		pod("a", map[string]int64{Memory: 30, gpu: 1}), pod("b", map[string]int64{Memory: 30, gpu: 2}))
	d := n.Admit(pod("c", map[string]int64{Memory: 41, gpu: 2}))
	assert.Equal(t, []Shortfall{{Memory, 41, 60, 100}, {gpu, 2, 3, 4}}, d.Shortfalls)

	require.True(t, n.Remove("b"))
	assert.False(t, n.Remove("b"), "b is gone")
	assert.True(t, n.Admit(pod("c", map[string]int64{Memory: 41, gpu: 2})).Admitted)
	assert.Equal(t, []string{"a", "c"}, names(n))
}

func names(n *Node) []string {
	var out []string
	for _, p := range n.Pods {
		out = append(out, p.Name)
	}
	return out
}
