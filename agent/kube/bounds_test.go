package kube

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuantityBoundsAsWritten: a quantity beyond what the node subsystems
// hold is refused at the field the user wrote (a limit stays a limit, though
// defaulting would copy it to the request), with the value as written and
// the bound in the field's unit, for every resource list of a pod and a
// node. (A bare YAML number such as 1e20, unquoted, reaches the decoder as
// the number YAML read, 100000000000000000000; a quoted one as written.)
// Before the fix, the first case read
// "pods[0].containers[0].requests[memory]: 9223372036854775807 exceeds the
// bound of 70368744177664" from the CLI, and Decode accepted all of them.
func TestQuantityBoundsAsWritten(t *testing.T) {
	const node = "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nstatus: {capacity: {cpu: 4, memory: 8Gi, pods: 110}}\n---\n"
	pod := func(spec string) string {
		return node + "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n" + spec
	}
	for _, c := range []struct{ name, input, want string }{
		{"container memory limit", pod("  containers:\n  - name: c\n    resources: {limits: {memory: 99999999999999999Ei}}\n"),
			`pod "web" (document 2): spec.containers[0].resources.limits.memory: 99999999999999999Ei exceeds the bound of 64Ti`},
		{"container cpu request", pod("  containers:\n  - name: c\n    resources: {requests: {cpu: \"1e20\"}}\n"),
			`pod "web" (document 2): spec.containers[0].resources.requests.cpu: 1e20 exceeds the bound of 4294967296m`},
		{"cpu just above the bound", pod("  containers:\n  - name: c\n    resources: {limits: {cpu: 4294967297m}}\n"),
			`pod "web" (document 2): spec.containers[0].resources.limits.cpu: 4294967297m exceeds the bound of 4294967296m`},
		{"init container hugepages", pod("  initContainers:\n  - name: i\n    resources: {limits: {hugepages-2Mi: 65Ti}}\n  containers: [{name: c}]\n"),
			`pod "web" (document 2): spec.initContainers[0].resources.limits.hugepages-2Mi: 65Ti exceeds the bound of 64Ti`},
		{"ephemeral-storage", pod("  containers:\n  - name: c\n    resources: {requests: {ephemeral-storage: 1Ei}}\n"),
			`pod "web" (document 2): spec.containers[0].resources.requests.ephemeral-storage: 1Ei exceeds the bound of 64Ti`},
		{"extended resource", pod("  containers:\n  - name: c\n    resources: {limits: {example.com/gpu: \"1e15\"}}\n"),
			`pod "web" (document 2): spec.containers[0].resources.limits[example.com/gpu]: 1e15 exceeds the bound of 70368744177664`},
		{"pod-level limit", pod("  resources: {limits: {memory: 128Ti}}\n  containers: [{name: c}]\n"),
			`pod "web" (document 2): spec.resources.limits.memory: 128Ti exceeds the bound of 64Ti`},
		{"pod-level request", pod("  resources: {requests: {cpu: \"5000000\"}}\n  containers: [{name: c}]\n"),
			`pod "web" (document 2): spec.resources.requests.cpu: 5000000 exceeds the bound of 4294967296m`},
		{"overhead", pod("  overhead: {memory: 100Pi}\n  containers: [{name: c}]\n"),
			`pod "web" (document 2): spec.overhead.memory: 100Pi exceeds the bound of 64Ti`},
		{"node allocatable", "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nstatus: {allocatable: {memory: 100Pi, pods: 110}}\n",
			`node "node-1" (document 1): status.allocatable.memory: 100Pi exceeds the bound of 64Ti`},
		{"List item", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: web, namespace: team}\n  spec: {containers: [{name: c, resources: {limits: {memory: 1Ei}}}]}\n",
			`pod "team/web" (document 1): items[0].spec.containers[0].resources.limits.memory: 1Ei exceeds the bound of 64Ti`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Decode([]byte(c.input), Options{})
			require.Error(t, err, "accepted: %+v", got)
			assert.Equal(t, c.want, err.Error())
		})
	}
	// The bounds themselves are accepted.
	_, err := Decode([]byte(pod("  containers:\n  - name: c\n    resources: {limits: {cpu: 4294967296m, memory: 64Ti}}\n")), Options{})
	assert.NoError(t, err)
}
