package manifests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/nodeproof/nodeproof/agent/kube"
	"github.com/nodeproof/nodeproof/core/pod"
)

// FuzzDecodeManifests feeds arbitrary streams to kube.Decode.
func FuzzDecodeManifests(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, skipUnknown bool) {
		got, err := kube.Decode(data, kube.Options{SkipUnknownKinds: skipUnknown})
		if err != nil {
			var de *kube.Error
			require.ErrorAs(t, err, &de, "error %v (%T) does not name a document and its line", err, err)
			require.Positive(t, de.Document, "error %v: document", err)
			require.Positive(t, de.Line, "error %v: line", err)
			require.Nil(t, got, "a failed Decode returned manifests")
			return
		}
		require.Len(t, got.PodOrigins, len(got.Pods), "pod origins")
		require.Len(t, got.NodeOrigins, len(got.Nodes), "node origins")
		for _, origins := range [][]kube.Origin{got.PodOrigins, got.NodeOrigins} {
			for i, o := range origins {
				require.Positive(t, o.Document, "origin %d %+v: document", i, o)
				require.Positive(t, o.Line, "origin %d %+v: line", i, o)
				// Objects come in stream order, so documents never go back.
				if i > 0 {
					require.GreaterOrEqual(t, o.Document, origins[i-1].Document, "origin %d %+v after %+v", i, o, origins[i-1])
				}
			}
		}
		for i, p := range got.Pods {
			checkPod(t, i, p)
			back, err := kube.Decode(render(t, p), kube.Options{})
			require.NoError(t, err, "pod %d rendered back does not decode", i)
			require.Equal(t, []pod.Pod{p}, back.Pods, "pod %d does not survive a round trip", i)
		}
		for _, n := range got.Nodes {
			for _, l := range []pod.ResourceList{n.Capacity, n.Allocatable} {
				for name, q := range l {
					require.GreaterOrEqual(t, q, int64(0), "node %s: %s", n.Name, name)
				}
			}
		}
	})
}

// checkPod asserts the rules Decode enforces hold for what it returned.
func checkPod(t *testing.T, i int, p pod.Pod) {
	t.Helper()
	require.NotEmpty(t, p.Name, "pod %d: name", i)
	require.NotEmpty(t, p.Namespace, "pod %d: namespace", i)
	require.NotEmpty(t, p.Containers, "pod %d: containers", i)
	require.Contains(t, []pod.Phase{pod.Pending, pod.Running, pod.Succeeded, pod.Failed, pod.Unknown}, p.Phase, "pod %d: phase", i)
	names := map[string]bool{}
	all := append(append([]pod.Container(nil), p.InitContainers...), p.Containers...)
	for _, c := range all {
		require.NotEmpty(t, c.Name, "pod %d: container name", i)
		require.NotContains(t, names, c.Name, "pod %d: container name repeated", i)
		names[c.Name] = true
		for name, req := range c.Requests {
			require.GreaterOrEqual(t, req, int64(0), "pod %d container %s: %s request", i, c.Name, name)
			if lim, ok := c.Limits[name]; ok {
				require.LessOrEqual(t, req, lim, "pod %d container %s: %s request over its limit", i, c.Name, name)
			}
		}
		for name, lim := range c.Limits {
			require.Contains(t, c.Requests, name, "pod %d container %s: %s limit %d without a defaulted request", i, c.Name, name, lim)
			require.GreaterOrEqual(t, lim, int64(0), "pod %d container %s: %s limit", i, c.Name, name)
		}
	}
}

// render writes a pod back as a manifest, quantities in the core's units.
func render(t *testing.T, p pod.Pod) []byte {
	t.Helper()
	list := func(l pod.ResourceList) corev1.ResourceList {
		if l == nil {
			return nil
		}
		out := corev1.ResourceList{}
		for name, v := range l {
			if name == pod.CPU {
				out[corev1.ResourceName(name)] = *resource.NewMilliQuantity(v, resource.DecimalSI)
			} else {
				out[corev1.ResourceName(name)] = *resource.NewQuantity(v, resource.DecimalSI)
			}
		}
		return out
	}
	containers := func(cs []pod.Container) []corev1.Container {
		var out []corev1.Container
		for _, c := range cs {
			k := corev1.Container{Name: c.Name, Resources: corev1.ResourceRequirements{
				Requests: list(c.Requests), Limits: list(c.Limits)}}
			if c.RestartPolicy == pod.RestartAlways {
				always := corev1.ContainerRestartPolicyAlways
				k.RestartPolicy = &always
			}
			out = append(out, k)
		}
		return out
	}
	// A runtime ID comes back from the status's containerID.
	statuses := func(cs []pod.Container) []corev1.ContainerStatus {
		var out []corev1.ContainerStatus
		for _, c := range cs {
			if c.RuntimeID != "" {
				out = append(out, corev1.ContainerStatus{Name: c.Name, ContainerID: "containerd://" + c.RuntimeID})
			}
		}
		return out
	}
	k := corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: types.UID(p.UID), Annotations: p.Annotations},
		Spec: corev1.PodSpec{Priority: p.Priority, PriorityClassName: p.PriorityClassName,
			InitContainers: containers(p.InitContainers), Containers: containers(p.Containers), Overhead: list(p.Overhead)},
		Status: corev1.PodStatus{Phase: corev1.PodPhase(p.Phase), QOSClass: corev1.PodQOSClass(p.QOSClass),
			InitContainerStatuses: statuses(p.InitContainers), ContainerStatuses: statuses(p.Containers)},
	}
	if p.Deleted {
		k.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	}
	if p.Resources != nil {
		k.Spec.Resources = &corev1.ResourceRequirements{Requests: list(p.Resources.Requests), Limits: list(p.Resources.Limits)}
	}
	out, err := yaml.Marshal(k)
	require.NoError(t, err, "rendering")
	return out
}
