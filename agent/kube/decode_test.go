package kube

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func prio(v int32) *int32 { return &v }

// A pod that uses every field the conversion carries, in a stream with a
// leading separator, comments and an empty document.
const fullPod = `# a static pod and its node
---
---
# nothing but a comment
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  uid: 6f1c9a52-0d4e-4b7a-9a57-3c2f0b8e1d01
  annotations:
    kubernetes.io/config.source: file
    kubernetes.io/config.mirror: "abc"
    unrelated: dropped
spec:
  priority: 2000001000
  priorityClassName: system-node-critical
  overhead:
    cpu: 10m
    memory: 1Mi
  resources:
    limits:
      cpu: "2"
      memory: 1Gi
  initContainers:
  - name: log-shipper
    restartPolicy: Always
    resources:
      requests: {cpu: 100m, memory: 64Mi}
  - name: migrate
    resources:
      limits: {cpu: 1.5, memory: 256Mi}
  containers:
  - name: app
    resources:
      requests:
        cpu: 250m
        memory: "100M"
        example.com/gpu: 1
        hugepages-2Mi: 4Mi
      limits:
        cpu: 1
        memory: 512Mi
        example.com/gpu: "1"
        hugepages-2Mi: 4Mi
        ephemeral-storage: 1G
  - name: sidecarless
status:
  qosClass: Burstable
`

func TestDecodeFullPod(t *testing.T) {
	got, err := Decode([]byte(fullPod), Options{})
	require.NoError(t, err, "Decode")
	want := pod.Pod{
		UID:               "6f1c9a52-0d4e-4b7a-9a57-3c2f0b8e1d01",
		Name:              "web",
		Namespace:         "default",
		Priority:          prio(2000001000),
		PriorityClassName: "system-node-critical",
		Annotations:       map[string]string{pod.ConfigSourceAnnotation: "file", pod.ConfigMirrorAnnotation: "abc"},
		Phase:             pod.Pending,
		QOSClass:          pod.Burstable,
		InitContainers: []pod.Container{
			{Name: "log-shipper", RestartPolicy: pod.RestartAlways,
				Requests: pod.ResourceList{pod.CPU: 100, pod.Memory: 64 << 20}},
			// Defaulting copies the limits into the missing requests.
			{Name: "migrate",
				Requests: pod.ResourceList{pod.CPU: 1500, pod.Memory: 256 << 20},
				Limits:   pod.ResourceList{pod.CPU: 1500, pod.Memory: 256 << 20}},
		},
		Containers: []pod.Container{
			{Name: "app",
				Requests: pod.ResourceList{pod.CPU: 250, pod.Memory: 100_000_000, "example.com/gpu": 1, "hugepages-2Mi": 4 << 20,
					pod.EphemeralStorage: 1_000_000_000},
				Limits: pod.ResourceList{pod.CPU: 1000, pod.Memory: 512 << 20, "example.com/gpu": 1, "hugepages-2Mi": 4 << 20,
					pod.EphemeralStorage: 1_000_000_000}},
			{Name: "sidecarless"},
		},
		Overhead: pod.ResourceList{pod.CPU: 10, pod.Memory: 1 << 20},
		// Defaulting fills the pod-level requests: cpu and memory from the
		// containers' aggregate (sidecar 100m + app 250m vs migrate 1500m +
		// sidecar 100m → 1600m; memory 64Mi+100M vs 256Mi+64Mi). Before
		// that, upstream's defaultHugePagePodLimits gives the pod the
		// containers' hugepages limit, and the request defaults to it.
		Resources: &pod.Resources{
			Requests: pod.ResourceList{pod.CPU: 1600, pod.Memory: 320 << 20, "hugepages-2Mi": 4 << 20},
			Limits:   pod.ResourceList{pod.CPU: 2000, pod.Memory: 1 << 30, "hugepages-2Mi": 4 << 20},
		},
	}
	require.Len(t, got.Pods, 1, "got %d pods, %d nodes, %d skipped; want one pod", len(got.Pods), len(got.Nodes), len(got.Skipped))
	require.Empty(t, got.Nodes, "got %d pods, %d nodes, %d skipped; want one pod", len(got.Pods), len(got.Nodes), len(got.Skipped))
	require.Empty(t, got.Skipped, "got %d pods, %d nodes, %d skipped; want one pod", len(got.Pods), len(got.Nodes), len(got.Skipped))
	assert.Equal(t, want, got.Pods[0], "pod")
	require.True(t, got.Pods[0].IsStatic(), "the annotations and priority did not make the pod static, mirror and critical")
	require.True(t, got.Pods[0].IsMirror(), "the annotations and priority did not make the pod static, mirror and critical")
	assert.True(t, got.Pods[0].IsCritical(), "the annotations and priority did not make the pod static, mirror and critical")
}

func TestDecodeStream(t *testing.T) {
	stream := `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "json", "namespace": "ns1", "deletionTimestamp": "2026-03-01T12:00:00Z"},
 "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": 0.5}}}]}, "status": {"phase": "Running"}}
--- # a node
apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110", hugepages-2Mi: "0"}
  allocatable: {cpu: 3800m, memory: 7680Mi, pods: "110"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
--- {apiVersion: v1, kind: Pod, metadata: {name: inline}, spec: {containers: [{name: c}]}}
`
	got, err := Decode([]byte(stream), Options{SkipUnknownKinds: true})
	require.NoError(t, err, "Decode")
	require.Len(t, got.Pods, 2, "pods %+v, want json then inline", got.Pods)
	require.Equal(t, "json", got.Pods[0].Name, "pods %+v, want json then inline", got.Pods)
	require.Equal(t, "inline", got.Pods[1].Name, "pods %+v, want json then inline", got.Pods)
	p := got.Pods[0]
	assert.Equal(t, "ns1", p.Namespace, "json pod %+v", p)
	assert.Equal(t, pod.Running, p.Phase, "json pod %+v", p)
	assert.True(t, p.Deleted, "json pod %+v", p)
	assert.Equal(t, pod.ResourceList{pod.CPU: 500}, p.Containers[0].Requests, "json pod %+v", p)
	assert.Equal(t, pod.Burstable, p.QOS(), "QoS %s and %s, want Burstable and BestEffort", p.QOS(), got.Pods[1].QOS())
	assert.Equal(t, pod.BestEffort, got.Pods[1].QOS(), "QoS %s and %s, want Burstable and BestEffort", p.QOS(), got.Pods[1].QOS())
	wantNode := Node{Name: "node-1",
		Capacity:    pod.ResourceList{pod.CPU: 4000, pod.Memory: 8 << 30, pod.Pods: 110, "hugepages-2Mi": 0},
		Allocatable: pod.ResourceList{pod.CPU: 3800, pod.Memory: 7680 << 20, pod.Pods: 110}}
	require.Len(t, got.Nodes, 1, "nodes %+v, want %+v", got.Nodes, wantNode)
	assert.Equal(t, wantNode, got.Nodes[0], "nodes %+v, want %+v", got.Nodes, wantNode)
	wantSkipped := []Skipped{{Document: 3, APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}
	assert.Equal(t, wantSkipped, got.Skipped, "skipped")

	_, err = Decode([]byte(stream), Options{})
	want := `document 3: kind: "Deployment" is not supported`
	require.Error(t, err, "without SkipUnknownKinds: got %v, want %q...", err, want)
	assert.True(t, strings.HasPrefix(err.Error(), want), "without SkipUnknownKinds: got %v, want %q...", err, want)
}

// TestDecodeKubectlList reads what `kubectl get pods,nodes -o yaml` prints:
// a v1 List with managedFields, status and every field a live object has.
func TestDecodeKubectlList(t *testing.T) {
	data, err := os.ReadFile("testdata/kubectl-get-pods-nodes.yaml")
	require.NoError(t, err)
	got, err := Decode(data, Options{})
	require.NoError(t, err, "every field kubectl prints is one k8s.io/api knows")
	require.Len(t, got.Pods, 2, "%d pods and %d nodes, want 2 and 1", len(got.Pods), len(got.Nodes))
	require.Len(t, got.Nodes, 1, "%d pods and %d nodes, want 2 and 1", len(got.Pods), len(got.Nodes))
	coredns := got.Pods[0]
	if coredns.Name != "coredns-7db6d8ff4d-x2v9q" || coredns.Namespace != "kube-system" || coredns.Phase != pod.Running ||
		coredns.QOS() != pod.Burstable || *coredns.Priority != 2000000000 || !coredns.IsCritical() {
		t.Errorf("coredns: %+v", coredns)
	}
	assert.Equal(t, (pod.ResourceList{pod.CPU: 100, pod.Memory: 70 << 20}), coredns.Containers[0].Requests, "coredns requests")
	assert.Equal(t, pod.Guaranteed, got.Pods[1].QOS(), "etcd: %+v", got.Pods[1])
	assert.True(t, got.Pods[1].IsStatic(), "etcd: %+v", got.Pods[1])
	assert.Equal(t, int64(110), got.Nodes[0].Allocatable[pod.Pods], "node allocatable %v", got.Nodes[0].Allocatable)
	assert.Equal(t, int64(2000), got.Nodes[0].Allocatable[pod.CPU], "node allocatable %v", got.Nodes[0].Allocatable)
}

// TestOrigins checks that each object's origin names the document (and
// List item) an error about it must name, in a stream that mixes a
// comment-only document, a List and plain documents.
func TestOrigins(t *testing.T) {
	stream := `# only a comment
---
apiVersion: v1
kind: Node
metadata: {name: node-1}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {containers: [{name: c}]}}
- {apiVersion: v1, kind: Node, metadata: {name: node-2}}
- {apiVersion: v1, kind: Pod, metadata: {name: b}, spec: {containers: [{name: c}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: c}
spec: {containers: [{name: c}]}
`
	got, err := Decode([]byte(stream), Options{})
	require.NoError(t, err)
	wantPods := []Origin{{Document: 2, Line: 6, Item: "items[0]", Kind: "Pod", Name: "a"}, {Document: 2, Line: 6, Item: "items[2]", Kind: "Pod", Name: "b"}, {Document: 3, Line: 13, Kind: "Pod", Name: "c"}}
	wantNodes := []Origin{{Document: 1, Line: 2, Kind: "Node", Name: "node-1"}, {Document: 2, Line: 6, Item: "items[1]", Kind: "Node", Name: "node-2"}}
	assert.Equal(t, wantPods, got.PodOrigins, "pod origins")
	assert.Equal(t, wantNodes, got.NodeOrigins, "node origins")
	for _, tc := range []struct {
		o          Origin
		path, want string
	}{
		{wantPods[1], "metadata.name", `pod "b" (document 2): items[2].metadata.name: bad`},
		{wantPods[1], "", `pod "b" (document 2): items[2]: bad`},
		{wantPods[2], "metadata.uid", `pod "c" (document 3): metadata.uid: bad`},
		{wantPods[2], "", `pod "c" (document 3): bad`},
		{Origin{Document: 4, Line: 20}, "", `document 4: bad`},
	} {
		err := tc.o.Errorf(tc.path, "bad")
		var de *Error
		require.True(t, errors.As(err, &de), "Errorf(%q) = %v (%T), want the *Error %q", tc.path, err, err, tc.want)
		assert.Equal(t, tc.want, err.Error(), "Errorf(%q) = %v (%T), want the *Error %q", tc.path, err, err, tc.want)
	}
	assert.Equal(t, "document 2, items[0]", wantPods[0].String(), "String()")
}

func TestDecodePodListWithoutItemKinds(t *testing.T) {
	got, err := Decode([]byte(`apiVersion: v1
kind: PodList
items:
- metadata: {name: a}
  spec: {containers: [{name: c}]}
- metadata: {name: b}
  spec: {containers: [{name: c}]}
`), Options{})
	require.NoError(t, err)
	require.Len(t, got.Pods, 2, "pods %+v", got.Pods)
	assert.Equal(t, "b", got.Pods[1].Name, "pods %+v", got.Pods)
}

// podWith wraps a container's resources in a pod document.
func podWith(resources string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources:\n" + resources
}

func TestDecodeBadDocuments(t *testing.T) {
	good := "apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec: {containers: [{name: c}]}\n"
	cases := []struct {
		name  string
		input string
		opts  Options
		want  string // the whole message, or its start when it ends in "..."
	}{
		{"bad cpu quantity", good + "---\n" + podWith("      limits: {cpu: abc}\n"), Options{},
			`pod "p" (document 2): spec.containers[0].resources.limits.cpu: "abc": quantities must match the regular expression...`},
		{"negative memory", podWith("      requests: {memory: -1Mi}\n"), Options{},
			`pod "p" (document 1): spec.containers[0].resources.requests.memory: must be greater than or equal to 0, got -1Mi`},
		{"fractional extended resource", podWith("      limits: {example.com/gpu: 500m}\n"), Options{},
			`pod "p" (document 1): spec.containers[0].resources.limits[example.com/gpu]: must be an integer, got 500m`},
		{"fractional pods", "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nstatus: {allocatable: {pods: 1.5}}\n", Options{},
			`node "node-1" (document 1): status.allocatable.pods: must be an integer, got 1500m`},
		{"cpu too large", podWith("      requests: {cpu: 1e20}\n"), Options{},
			`pod "p" (document 1): spec.containers[0].resources.requests.cpu: 100000000000000000000 exceeds the bound of 4294967296m`},
		{"request above limit", podWith("      requests: {cpu: 2}\n      limits: {cpu: 1}\n"), Options{},
			`pod "p" (document 1): spec.containers[0].resources.requests.cpu: must be less than or equal to cpu limit of 1`},
		{"extended without limit", podWith("      requests: {example.com/gpu: 1}\n"), Options{},
			`pod "p" (document 1): spec.containers[0].resources.limits[example.com/gpu]: limit must be set for non overcommitable resources`},
		{"hugepages request differs", podWith("      requests: {hugepages-2Mi: 2Mi}\n      limits: {hugepages-2Mi: 4Mi}\n"), Options{},
			`pod "p" (document 1): spec.containers[0].resources.requests.hugepages-2Mi: must be equal to hugepages-2Mi limit of 4Mi`},
		{"quantity of the wrong type", podWith("      limits: {cpu: [1]}\n"), Options{},
			`pod "p" (document 1): spec.containers[0].resources.limits.cpu: must be a quantity...`},
		{"init restart policy", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  initContainers: [{name: i, restartPolicy: OnFailure}]\n  containers: [{name: c}]\n", Options{},
			`pod "p" (document 1): spec.initContainers[0].restartPolicy: unsupported value "OnFailure": supported values: "Always"`},
		{"duplicate container", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  initContainers: [{name: c}]\n  containers: [{name: c}]\n", Options{},
			`pod "p" (document 1): spec.containers[0].name: duplicate value "c": also the name of spec.initContainers[0]`},
		{"no containers", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n", Options{},
			`pod "p" (document 1): spec.containers: must have at least one container`},
		{"no name", "apiVersion: v1\nkind: Pod\nspec: {containers: [{name: c}]}\n", Options{},
			`pod (document 1): metadata.name: must not be empty`},
		{"container without name", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{image: x}]}\n", Options{},
			`pod "p" (document 1): spec.containers[0].name: must not be empty`},
		{"bad phase", good + "status: {phase: Sleeping}\n", Options{},
			`pod "ok" (document 1): status.phase: unsupported value "Sleeping"...`},
		{"bad qos", good + "status: {qosClass: Gold}\n", Options{},
			`pod "ok" (document 1): status.qosClass: unsupported value "Gold"...`},
		{"unsupported pod-level resource", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resources: {limits: {example.com/gpu: 1}}\n  containers: [{name: c}]\n", Options{},
			`pod "p" (document 1): spec.resources.limits[example.com/gpu]: unsupported pod-level resource...`},
		{"pod-level request above limit", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resources: {requests: {memory: 2Gi}, limits: {memory: 1Gi}}\n  containers: [{name: c}]\n", Options{},
			`pod "p" (document 1): spec.resources.requests.memory: must be less than or equal to memory limit of 1Gi`},
		{"pod-level request defaulted above limit", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resources: {limits: {cpu: 100m}}\n  containers: [{name: c, resources: {requests: {cpu: 1}}}]\n", Options{},
			`pod "p" (document 1): spec.resources.requests.cpu: must be less than or equal to cpu limit of 100m`},
		{"overhead", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  overhead: {cpu: -5m}\n  containers: [{name: c}]\n", Options{},
			`pod "p" (document 1): spec.overhead.cpu: must be greater than or equal to 0, got -5m`},
		{"wrong type", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priority: high, containers: [{name: c}]}\n", Options{},
			`pod "p" (document 1): spec.priority: must be an integer (int32), not a string`},
		{"no kind", "apiVersion: v1\nmetadata: {name: p}\n", Options{}, `document 1: kind: must be set`},
		{"wrong version", "apiVersion: apps/v1\nkind: Pod\nmetadata: {name: p}\n", Options{},
			`document 1: apiVersion: "apps/v1" is not a version of Pod (want v1)`},
		{"unknown kind", good + "---\n" + good + "---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n", Options{},
			`document 3: kind: "Service" is not supported...`},
		{"scalar document", good + "---\njust a string\n", Options{}, `document 2: must be a mapping with apiVersion and kind`},
		{"yaml syntax", good + "---\n# comment only\n---\n" + good + "---\nkind: Pod\n  metadata: [\n", Options{},
			`document 3: yaml: line 14: mapping values are not allowed in this context`},
		{"list item", "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(good, "\n", "\n  ") + "\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: q}\n  spec: {containers: [{name: c, resources: {limits: {cpu: x}}}]}\n", Options{},
			`pod "q" (document 1): items[1].spec.containers[0].resources.limits.cpu: "x": quantities must match...`},
		{"list item conversion", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: q}\n  spec: {containers: []}\n", Options{},
			`pod "q" (document 1): items[0].spec.containers: must have at least one container`},
		{"list item kind", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: s}}\n", Options{},
			`document 1: items[0].kind: "Secret" is not supported...`},
		{"nested list", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: List, items: []}\n", Options{},
			`document 1: items[0].kind: a List inside a List is not supported`},
		// The API server matches field names case-sensitively; encoding/json
		// alone would take "Metadata" for metadata.
		{"field name case", "apiVersion: v1\nkind: Pod\nMetadata: {name: p}\nspec: {containers: [{name: c}]}\n", Options{},
			`pod (document 1): Metadata: unknown field`},
		{"field name case, nested", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}], Resources: {}}\n", Options{},
			`pod "p" (document 1): spec.Resources: unknown field`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode([]byte(tc.input), tc.opts)
			require.Error(t, err, "Decode accepted it: %+v", got)
			var de *Error
			require.True(t, errors.As(err, &de), "got %T %v, want an *Error", err, err)
			if prefix, ok := strings.CutSuffix(tc.want, "..."); ok {
				assert.True(t, strings.HasPrefix(err.Error(), prefix), "got  %q\nwant %q...", err, prefix)
			} else if err.Error() != tc.want {
				t.Errorf("got  %q\nwant %q", err, tc.want)
			}
			assert.Nil(t, got, "a failed Decode returned manifests")
		})
	}
}

func TestErrorLine(t *testing.T) {
	_, err := Decode([]byte("# header\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n---\nkind: Pod\napiVersion: v2\n"), Options{})
	var de *Error
	require.True(t, errors.As(err, &de), "got %+v (%v), want document 2 starting at line 7, path apiVersion", de, err)
	assert.Equal(t, 2, de.Document, "got %+v (%v), want document 2 starting at line 7, path apiVersion", de, err)
	assert.Equal(t, 7, de.Line, "got %+v (%v), want document 2 starting at line 7, path apiVersion", de, err)
	assert.Equal(t, "apiVersion", de.Path, "got %+v (%v), want document 2 starting at line 7, path apiVersion", de, err)
}

// TestDecodeIsStrict: every manifest is read strictly, whatever the
// options: a field k8s.io/api does not know, a repeated key and a value of
// the wrong type are errors naming the object, its document and the field
// path with list indexes. Before, an unknown field was dropped, the last of
// repeated keys won, and a wrong type was named without its list indexes.
func TestDecodeIsStrict(t *testing.T) {
	node := "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nstatus:\n  allocatable: {cpu: 1, pods: 10}\n"
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: a\n  - name: b\n    livenessProbe:\n      periodSeconds: 10\n      tcpSocket: {port: 80}\n"
	list := "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {containers: [{name: c}]}}\n- " +
		strings.ReplaceAll(strings.TrimSuffix(pod, "\n"), "\n", "\n  ") + "\n"
	for _, tc := range []struct {
		name, input, want string
	}{
		{"unknown field in a list item", strings.Replace(pod, "livenessProbe", "livenesProbe", 1),
			`pod "web" (document 1): spec.containers[1].livenesProbe: unknown field`},
		{"unknown top-level field", pod + "stauts: {}\n",
			`pod "web" (document 1): stauts: unknown field`},
		{"unknown field of a Node", node + "  capacty: {}\n",
			`node "node-1" (document 1): status.capacty: unknown field`},
		{"unknown field of a List", list + "itemz: []\n",
			`document 1: itemz: unknown field`},
		{"unknown field in a List item", strings.Replace(list, "livenessProbe", "livenesProbe", 1),
			`pod "web" (document 1): items[1].spec.containers[1].livenesProbe: unknown field`},
		{"duplicate key in a list item", strings.Replace(pod, "      periodSeconds: 10\n", "      periodSeconds: 10\n      periodSeconds: 20\n", 1),
			`pod "web" (document 1): spec.containers[1].livenessProbe.periodSeconds: duplicate key`},
		{"duplicate top-level key", pod + "kind: Pod\n",
			`pod "web" (document 1): kind: duplicate key`},
		{"duplicate resource name", strings.Replace(pod, "  - name: a\n", "  - name: a\n    resources: {limits: {example.com/gpu: 1, example.com/gpu: 2}}\n", 1),
			`pod "web" (document 1): spec.containers[0].resources.limits[example.com/gpu]: duplicate key`},
		{"keys that JSON makes one", strings.Replace(pod, "metadata: {name: web}", "metadata: {name: web, labels: {1: a, '1': b}}", 1),
			`pod "web" (document 1): metadata.labels.1: duplicate key`},
		{"duplicate key in JSON", `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "name": "d"}]}}`,
			`pod "p" (document 1): spec.containers[0].name: duplicate key`},
		{"duplicate key in a List item", strings.Replace(list, "    - name: b\n", "    - name: b\n      name: c\n", 1),
			`pod "web" (document 1): items[1].spec.containers[1].name: duplicate key`},
		{"duplicate key of a List", list + "kind: List\n",
			`document 1: kind: duplicate key`},
		{"duplicate key in a skipped kind", node + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 1, replicas: 2}\n",
			`document 2: spec.replicas: duplicate key`},
		{"wrong type in a list item", strings.Replace(pod, "periodSeconds: 10", `periodSeconds: "ten"`, 1),
			`pod "web" (document 1): spec.containers[1].livenessProbe.periodSeconds: must be an integer (int32), not a string`},
		{"list where a mapping belongs", strings.Replace(pod, "tcpSocket: {port: 80}", "tcpSocket: [80]", 1),
			`pod "web" (document 1): spec.containers[1].livenessProbe.tcpSocket: must be a mapping, not a list`},
		{"mapping where a list belongs", strings.Replace(pod, "  - name: a\n", "  - name: a\n    command: {run: x}\n", 1),
			`pod "web" (document 1): spec.containers[0].command: must be a list, not a mapping`},
		{"wrong type in a map", strings.Replace(pod, "metadata: {name: web}", "metadata: {name: web, labels: {app: [x]}}", 1),
			`pod "web" (document 1): metadata.labels.app: must be a string, not a list`},
		{"wrong type in a List item", strings.Replace(list, "periodSeconds: 10", "periodSeconds: 1.5", 1),
			`pod "web" (document 1): items[1].spec.containers[1].livenessProbe.periodSeconds: must be an integer (int32), not the number 1.5`},
		{"items not a list", "apiVersion: v1\nkind: List\nitems: {a: 1}\n",
			`document 1: items: must be a list, not a mapping`},
		{"the document is named", node + "---\n# a comment\n---\n" + strings.Replace(pod, "livenessProbe", "livenesProbe", 1),
			`pod "web" (document 2): spec.containers[1].livenesProbe: unknown field`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode([]byte(tc.input), Options{SkipUnknownKinds: true})
			require.Error(t, err, "Decode accepted it: %+v", got)
			var de *Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tc.want, err.Error())
			assert.Nil(t, got, "a failed Decode returned manifests")
		})
	}
	for name, good := range map[string]string{"pod": pod, "node": node, "list": list} {
		_, err := Decode([]byte(good), Options{})
		assert.NoError(t, err, "the %s every case spoils", name)
	}
}
