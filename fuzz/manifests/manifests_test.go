package manifests

import (
	"errors"
	"reflect"
	"testing"
	"time"

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
	f.Fuzz(func(t *testing.T, data []byte, skipUnknown, strict bool) {
		got, err := kube.Decode(data, kube.Options{SkipUnknownKinds: skipUnknown, Strict: strict})
		if err != nil {
			var de *kube.Error
			if !errors.As(err, &de) || de.Document < 1 || de.Line < 1 {
				t.Fatalf("error %v (%T) does not name a document and its line", err, err)
			}
			if got != nil {
				t.Fatalf("a failed Decode returned manifests")
			}
			return
		}
		if len(got.PodOrigins) != len(got.Pods) || len(got.NodeOrigins) != len(got.Nodes) {
			t.Fatalf("%d pods with %d origins, %d nodes with %d origins", len(got.Pods), len(got.PodOrigins), len(got.Nodes), len(got.NodeOrigins))
		}
		for _, origins := range [][]kube.Origin{got.PodOrigins, got.NodeOrigins} {
			for i, o := range origins {
				// Objects come in stream order, so documents never go back.
				if o.Document < 1 || o.Line < 1 || (i > 0 && o.Document < origins[i-1].Document) {
					t.Fatalf("origin %d %+v after %+v", i, o, origins[max(i-1, 0)])
				}
			}
		}
		for i, p := range got.Pods {
			checkPod(t, i, p)
			back, err := kube.Decode(render(t, p), kube.Options{Strict: true})
			if err != nil {
				t.Fatalf("pod %d rendered back does not decode: %v", i, err)
			}
			if len(back.Pods) != 1 || !reflect.DeepEqual(back.Pods[0], p) {
				t.Fatalf("pod %d does not survive a round trip:\n got %+v\nwant %+v", i, back.Pods, p)
			}
		}
		for _, n := range got.Nodes {
			for _, l := range []pod.ResourceList{n.Capacity, n.Allocatable} {
				for name, q := range l {
					if q < 0 {
						t.Fatalf("node %s: %s = %d", n.Name, name, q)
					}
				}
			}
		}
	})
}

// checkPod asserts the rules Decode enforces hold for what it returned.
func checkPod(t *testing.T, i int, p pod.Pod) {
	t.Helper()
	if p.Name == "" || p.Namespace == "" || len(p.Containers) == 0 {
		t.Fatalf("pod %d: name %q, namespace %q, %d containers", i, p.Name, p.Namespace, len(p.Containers))
	}
	switch p.Phase {
	case pod.Pending, pod.Running, pod.Succeeded, pod.Failed, pod.Unknown:
	default:
		t.Fatalf("pod %d: phase %q", i, p.Phase)
	}
	names := map[string]bool{}
	all := append(append([]pod.Container(nil), p.InitContainers...), p.Containers...)
	for _, c := range all {
		if c.Name == "" || names[c.Name] {
			t.Fatalf("pod %d: container name %q empty or repeated", i, c.Name)
		}
		names[c.Name] = true
		for name, req := range c.Requests {
			lim, ok := c.Limits[name]
			if req < 0 || (ok && req > lim) {
				t.Fatalf("pod %d container %s: %s request %d, limit %d (%v)", i, c.Name, name, req, lim, ok)
			}
		}
		for name, lim := range c.Limits {
			if _, ok := c.Requests[name]; !ok || lim < 0 {
				t.Fatalf("pod %d container %s: %s limit %d without a defaulted request", i, c.Name, name, lim)
			}
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
	if err != nil {
		t.Fatalf("rendering: %v", err)
	}
	return out
}
