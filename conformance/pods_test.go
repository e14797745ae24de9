package conformance

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	apiv1 "k8s.io/kubernetes/pkg/apis/core/v1"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/agent/kube"
	"github.com/nodeproof/nodeproof/core/pod"
)

// The pod generator draws the manifests a user writes: undefaulted, valid
// for the API server's rules about resources (K1), in the exact units of
// core/pod so that rounding (K3) never applies. Each side then defaults the
// pod its own way (upstream SetObjectDefaults_Pod, nodeproof ConvertPod →
// ApplyDefaults), so the defaulting is compared together with every
// function that reads the pod.

const (
	gpu     corev1.ResourceName = "example.com/gpu"
	huge2Mi corev1.ResourceName = "hugepages-2Mi"
	huge1Gi corev1.ResourceName = "hugepages-1Gi"
)

// cpuMilli favours tiny values (the MinShares/MinQuota clamps) and a few
// round values (so sums of containers meet pod-level values and limits
// equal requests by chance too).
func cpuMilli(t *rapid.T, label string) int64 {
	return rapid.OneOf(
		rapid.Int64Range(0, 12),
		rapid.SampledFrom([]int64{100, 250, 500, 1000, 2000}),
		rapid.Int64Range(0, 300_000),
	).Draw(t, label)
}

func memBytes(t *rapid.T, label string) int64 {
	return rapid.OneOf(
		rapid.Int64Range(0, 4096),
		rapid.Map(rapid.Int64Range(0, 64), func(n int64) int64 { return n << 26 }),
		rapid.Int64Range(0, 1<<40),
	).Draw(t, label)
}

func quantity(name corev1.ResourceName, v int64) resource.Quantity {
	switch name {
	case corev1.ResourceCPU:
		return *resource.NewMilliQuantity(v, resource.DecimalSI)
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage, huge2Mi, huge1Gi:
		return *resource.NewQuantity(v, resource.BinarySI)
	}
	return *resource.NewQuantity(v, resource.DecimalSI)
}

// drawValue draws a core-unit value for name.
func drawValue(t *rapid.T, name corev1.ResourceName, label string) int64 {
	switch name {
	case corev1.ResourceCPU:
		return cpuMilli(t, label)
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return memBytes(t, label)
	case huge2Mi:
		return rapid.Int64Range(0, 4).Draw(t, label) << 21
	case huge1Gi:
		return rapid.Int64Range(0, 2).Draw(t, label) << 30
	}
	return rapid.Int64Range(0, 4).Draw(t, label)
}

// overcommit is upstream IsOvercommitAllowed for the names drawn here.
func overcommit(name corev1.ResourceName) bool {
	return name == corev1.ResourceCPU || name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage
}

// drawRequirements draws requests and limits for names: absent, request
// only, limit only, equal, or a request below its limit; resources that
// cannot be overcommitted get no request without an equal limit (the API
// server's rule).
func drawRequirements(t *rapid.T, names []corev1.ResourceName, label string) corev1.ResourceRequirements {
	var r corev1.ResourceRequirements
	set := func(l *corev1.ResourceList, name corev1.ResourceName, v int64) {
		if *l == nil {
			*l = corev1.ResourceList{}
		}
		(*l)[name] = quantity(name, v)
	}
	for _, name := range names {
		at := fmt.Sprintf("%s.%s", label, name)
		modes := 5
		if !overcommit(name) {
			modes = 3 // absent, limit only, equal
		}
		switch rapid.IntRange(0, modes-1).Draw(t, at+".mode") {
		case 0:
		case 1:
			set(&r.Limits, name, drawValue(t, name, at+".limit"))
		case 2:
			v := drawValue(t, name, at+".value")
			set(&r.Requests, name, v)
			set(&r.Limits, name, v)
		case 3:
			set(&r.Requests, name, drawValue(t, name, at+".request"))
		case 4:
			lim := drawValue(t, name, at+".limit")
			set(&r.Limits, name, lim)
			set(&r.Requests, name, rapid.Int64Range(0, lim).Draw(t, at+".request"))
		}
	}
	return r
}

var containerResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, huge2Mi, huge1Gi, gpu}

func drawContainers(t *rapid.T, label string, min, max int, init bool) []corev1.Container {
	n := rapid.IntRange(min, max).Draw(t, label+".count")
	var cs []corev1.Container
	for i := 0; i < n; i++ {
		c := corev1.Container{
			Name:      fmt.Sprintf("%s%d", label, i),
			Resources: drawRequirements(t, containerResources, fmt.Sprintf("%s[%d]", label, i)),
		}
		if init && rapid.Bool().Draw(t, fmt.Sprintf("%s[%d].sidecar", label, i)) {
			always := corev1.ContainerRestartPolicyAlways
			c.RestartPolicy = &always
		}
		cs = append(cs, c)
	}
	return cs
}

// genPod draws an undefaulted pod.
func genPod() *rapid.Generator[*corev1.Pod] {
	return rapid.Custom(func(t *rapid.T) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "00000000-0000-0000-0000-000000000001"},
			Spec: corev1.PodSpec{
				InitContainers: drawContainers(t, "init", 0, 3, true),
				Containers:     drawContainers(t, "app", 1, 3, false),
			},
		}
		if rapid.Bool().Draw(t, "overhead") {
			p.Spec.Overhead = corev1.ResourceList{
				corev1.ResourceCPU:    quantity(corev1.ResourceCPU, cpuMilli(t, "overhead.cpu")),
				corev1.ResourceMemory: quantity(corev1.ResourceMemory, memBytes(t, "overhead.memory")),
			}
		}
		if rapid.Bool().Draw(t, "podLevel") {
			r := drawRequirements(t, []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, huge2Mi}, "pod")
			// A pod-level limit without a request takes the containers'
			// aggregated request as its default; the API server rejects the
			// pod when that exceeds the limit, so raise such a limit to fit.
			aggr := aggregatedRequests(p)
			for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				lim, hasLim := r.Limits[name]
				_, hasReq := r.Requests[name]
				need, hasAggr := aggr[name]
				if hasLim && !hasReq && hasAggr && lim.Cmp(need) < 0 {
					r.Limits[name] = need.DeepCopy()
				}
			}
			p.Spec.Resources = &r
		}
		return p
	})
}

// aggregatedRequests is what the API server's defaulting aggregates from
// the containers, for the generator only.
func aggregatedRequests(p *corev1.Pod) corev1.ResourceList {
	c := p.DeepCopy()
	c.Spec.Resources = nil
	apiv1.SetObjectDefaults_Pod(c)
	return resourcehelper.AggregateContainerRequests(c, resourcehelper.PodResourcesOptions{})
}

// upstreamPod is what the kubelet sees: the API server's defaults applied.
func upstreamPod(p *corev1.Pod) *corev1.Pod {
	c := p.DeepCopy()
	apiv1.SetObjectDefaults_Pod(c)
	applyCreateDefaults(c)
	return c
}

// ourPod converts as nodeproof's agent does. The generator draws only pods
// ConvertPod accepts; an error is a generator or conversion bug, so it
// panics and rapid reports the input.
func ourPod(p *corev1.Pod) *pod.Pod {
	out, err := kube.ConvertPod(p)
	if err != nil {
		panic(fmt.Sprintf("ConvertPod rejected a generated pod: %v", err))
	}
	return &out
}

// coreList converts an upstream result into core units the way the agent
// converts a manifest.
func coreList(l corev1.ResourceList) pod.ResourceList {
	out, err := kube.ConvertResourceList("result", l)
	if err != nil {
		panic(fmt.Sprintf("upstream result not in core units: %v", err))
	}
	return out
}

// sameList compares two lists, nil equal to empty: upstream returns an
// empty list where the core may return nil and vice versa.
func sameList(a, b pod.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v != w {
			return false
		}
	}
	return true
}
