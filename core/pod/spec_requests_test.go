package pod_test

import (
	"testing"

	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/assert"
)

// TestSpecEffectiveRequests checks EffectiveRequests against the PodRequests
// algorithm of cgroups.md §5.4, step by step.
func TestSpecEffectiveRequests(t *testing.T) {
	tests := []struct {
		name string
		pod  pod.Pod
		opts pod.Options
		want pod.ResourceList
	}{
		{"empty pod", pod.Pod{}, pod.Options{}, pod.ResourceList{}},
		// "reqs = Σ app containers' requests".
		{"app containers summed", pod.Pod{Containers: []pod.Container{
			ctr("a", rl("cpu", 100, "memory", 10*mi), nil),
			ctr("b", rl("cpu", 200, "example.com/gpu", 1), nil),
		}}, pod.Options{}, rl("cpu", 300, "memory", 10*mi, "example.com/gpu", 1)},
		// "reqs = max(reqs, initMax) per resource": each resource on its own.
		{"regular init container peak, per resource", pod.Pod{
			InitContainers: []pod.Container{ctr("init", rl("cpu", 500, "memory", mi), nil)},
			Containers:     []pod.Container{ctr("a", rl("cpu", 100, "memory", 100*mi), nil)},
		}, pod.Options{}, rl("cpu", 500, "memory", 100*mi)},
		{"regular init containers are not summed", pod.Pod{
			InitContainers: []pod.Container{ctr("i1", rl("cpu", 400), nil), ctr("i2", rl("cpu", 300), nil)},
		}, pod.Options{}, rl("cpu", 400)},
		// "if init.RestartPolicy == Always: reqs += init".
		{"sidecar added to the app sum", pod.Pod{
			InitContainers: []pod.Container{sidecar("side", rl("cpu", 100), nil)},
			Containers:     []pod.Container{ctr("a", rl("cpu", 200), nil)},
		}, pod.Options{}, rl("cpu", 300)},
		// "else: use = init + restartableSum (only sidecars started before it)".
		{"regular init after a sidecar runs next to it", pod.Pod{
			InitContainers: []pod.Container{sidecar("side", rl("cpu", 100), nil), ctr("init", rl("cpu", 250), nil)},
			Containers:     []pod.Container{ctr("a", rl("cpu", 50), nil)},
		}, pod.Options{}, rl("cpu", 350)},
		{"regular init before a sidecar does not add it", pod.Pod{
			InitContainers: []pod.Container{ctr("init", rl("cpu", 250), nil), sidecar("side", rl("cpu", 100), nil)},
			Containers:     []pod.Container{ctr("a", rl("cpu", 50), nil)},
		}, pod.Options{}, rl("cpu", 250)},
		// "use = restartableSum (cumulative)": sidecars after a regular init
		// container count only from their own position on.
		{"sidecars cumulative around a regular init", pod.Pod{
			InitContainers: []pod.Container{
				sidecar("s1", rl("cpu", 100), nil),
				ctr("init", rl("cpu", 1000), nil),
				sidecar("s2", rl("cpu", 100), nil),
			},
		}, pod.Options{}, rl("cpu", 1100)},
		{"two sidecars then a regular init", pod.Pod{
			InitContainers: []pod.Container{
				sidecar("s1", rl("cpu", 100), nil),
				sidecar("s2", rl("cpu", 200), nil),
				ctr("init", rl("cpu", 50), nil),
			},
			Containers: []pod.Container{ctr("a", rl("cpu", 10), nil)},
		}, pod.Options{}, rl("cpu", 350)},
		// "each pod-level request for a supported resource (cpu, memory,
		// hugepages-*) REPLACES that resource's container aggregate (others
		// keep the aggregate)".
		{"pod-level requests replace supported resources only", pod.Pod{
			Resources: &pod.Resources{Requests: rl("cpu", 1000, "hugepages-2Mi", 4*mi, "example.com/gpu", 5, "ephemeral-storage", gi)},
			Containers: []pod.Container{ctr("a", rl(
				"cpu", 100, "memory", 100*mi, "hugepages-2Mi", 2*mi, "example.com/gpu", 1, "ephemeral-storage", 50*mi,
			), nil)},
		}, pod.Options{}, rl("cpu", 1000, "memory", 100*mi, "hugepages-2Mi", 4*mi, "example.com/gpu", 1, "ephemeral-storage", 50*mi)},
		// "callers skip this when PodLevelResources is off".
		{"SkipPodLevelResources keeps the aggregate", pod.Pod{
			Resources:  &pod.Resources{Requests: rl("cpu", 1000)},
			Containers: []pod.Container{ctr("a", rl("cpu", 100), nil)},
		}, pod.Options{SkipPodLevelResources: true}, rl("cpu", 100)},
		// Only a supported pod-level request makes the pod-level step apply.
		{"pod-level requests of unsupported resources only", pod.Pod{
			Resources:  &pod.Resources{Requests: rl("ephemeral-storage", gi)},
			Containers: []pod.Container{ctr("a", rl("ephemeral-storage", mi), nil)},
		}, pod.Options{}, rl("ephemeral-storage", mi)},
		// "if !ExcludeOverhead: reqs += Overhead", after the pod-level step,
		// and for resources no container requests too.
		{"overhead added on top", pod.Pod{
			Resources:  &pod.Resources{Requests: rl("cpu", 1000)},
			Overhead:   rl("cpu", 10, "memory", 5*mi),
			Containers: []pod.Container{ctr("a", rl("cpu", 100), nil)},
		}, pod.Options{}, rl("cpu", 1010, "memory", 5*mi)},
		{"ExcludeOverhead", pod.Pod{
			Overhead:   rl("cpu", 10, "memory", 5*mi),
			Containers: []pod.Container{ctr("a", rl("cpu", 100), nil)},
		}, pod.Options{ExcludeOverhead: true}, rl("cpu", 100)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.pod
			got := p.EffectiveRequests(tc.opts)
			assert.Equal(t, tc.want, got, "EffectiveRequests(%+v)", tc.opts)
		})
	}
}

// TestSpecEffectiveRequestsDoesNotMutate guards the pod: the aggregation
// must work on copies, or a second call would count sidecars twice.
func TestSpecEffectiveRequestsDoesNotMutate(t *testing.T) {
	p := pod.Pod{
		InitContainers: []pod.Container{sidecar("side", rl("cpu", 100), nil)},
		Containers:     []pod.Container{ctr("a", rl("cpu", 200), nil)},
		Overhead:       rl("cpu", 10),
	}
	first := p.EffectiveRequests(pod.Options{})
	second := p.EffectiveRequests(pod.Options{})
	assert.Equal(t, first, second, "EffectiveRequests twice")
	assert.Equal(t, int64(310), first[pod.CPU], "EffectiveRequests cpu")
	assert.Equal(t, rl("cpu", 200), p.Containers[0].Requests, "pod changed: app requests")
	assert.Equal(t, rl("cpu", 10), p.Overhead, "pod changed: overhead")
}

// TestSpecEffectiveLimits checks PodLimits of cgroups.md §5.4: "same shape
// (pod-level limits replace when any pod-level request or limit is set);
// overhead added only to non-zero limits". Upstream v1.36.3 tests both
// (`if value, ok := limits[name]; ok && !value.IsZero()`), so a limit
// present with 0 stays 0 (found by conformance/ TestEffectiveLimits).
func TestSpecEffectiveLimits(t *testing.T) {
	tests := []struct {
		name string
		pod  pod.Pod
		opts pod.Options
		want pod.ResourceList
	}{
		{"overhead only on present limits", pod.Pod{
			Overhead:   rl("cpu", 10, "memory", 5*mi),
			Containers: []pod.Container{ctr("a", nil, rl("cpu", 100))},
		}, pod.Options{}, rl("cpu", 110)},
		{"no overhead on a limit present with 0", pod.Pod{
			Overhead:   rl("cpu", 10),
			Containers: []pod.Container{ctr("a", nil, rl("cpu", 0))},
		}, pod.Options{}, rl("cpu", 0)},
		{"no limits, overhead not added", pod.Pod{
			Overhead:   rl("cpu", 10),
			Containers: []pod.Container{ctr("a", rl("cpu", 100), nil)},
		}, pod.Options{}, pod.ResourceList{}},
		{"ExcludeOverhead", pod.Pod{
			Overhead:   rl("cpu", 10),
			Containers: []pod.Container{ctr("a", nil, rl("cpu", 100))},
		}, pod.Options{ExcludeOverhead: true}, rl("cpu", 100)},
		{"sidecar-aware like requests", pod.Pod{
			InitContainers: []pod.Container{
				sidecar("side", nil, rl("memory", 100*mi)),
				ctr("init", nil, rl("memory", 500*mi)),
			},
			Containers: []pod.Container{ctr("a", nil, rl("memory", 200*mi))},
		}, pod.Options{}, rl("memory", 600*mi)},
		// A pod-level request alone makes pod-level limits apply (there are
		// none here), so the aggregate stays.
		{"pod-level requests only", pod.Pod{
			Resources:  &pod.Resources{Requests: rl("cpu", 500)},
			Containers: []pod.Container{ctr("a", nil, rl("cpu", 100))},
		}, pod.Options{}, rl("cpu", 100)},
		{"pod-level limit replaces its resource only", pod.Pod{
			Resources:  &pod.Resources{Limits: rl("memory", gi, "example.com/gpu", 3)},
			Overhead:   rl("memory", mi),
			Containers: []pod.Container{ctr("a", nil, rl("memory", 100*mi, "cpu", 200, "example.com/gpu", 1))},
		}, pod.Options{}, rl("memory", gi+mi, "cpu", 200, "example.com/gpu", 1)},
		{"SkipPodLevelResources", pod.Pod{
			Resources:  &pod.Resources{Limits: rl("memory", gi)},
			Containers: []pod.Container{ctr("a", nil, rl("memory", 100*mi))},
		}, pod.Options{SkipPodLevelResources: true}, rl("memory", 100*mi)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.pod
			got := p.EffectiveLimits(tc.opts)
			assert.Equal(t, tc.want, got, "EffectiveLimits(%+v)", tc.opts)
		})
	}
}

// TestSpecApplyDefaults checks the API defaulting described at the end of
// cgroups.md §5.4: "a container's missing requests default to its limits;
// with PodLevelResources and pod-level limits set, a missing pod-level
// request defaults to the aggregated container request (cpu/memory) or else
// to the pod-level limit".
func TestSpecApplyDefaults(t *testing.T) {
	tests := []struct {
		name string
		pod  pod.Pod
		// wantInit and wantApp are the containers' requests after defaulting.
		wantInit, wantApp []pod.ResourceList
		// wantPod is spec.resources.requests after defaulting (nil: none).
		wantPod pod.ResourceList
	}{
		{"container requests default to limits, existing ones kept",
			pod.Pod{
				InitContainers: []pod.Container{ctr("init", nil, rl("cpu", 100))},
				Containers:     []pod.Container{ctr("a", rl("cpu", 50), rl("cpu", 100, "memory", mi, "example.com/gpu", 1))},
			},
			[]pod.ResourceList{rl("cpu", 100)},
			[]pod.ResourceList{rl("cpu", 50, "memory", mi, "example.com/gpu", 1)},
			nil},
		{"no limits, nothing defaulted",
			pod.Pod{Containers: []pod.Container{ctr("a", nil, nil)}},
			nil,
			[]pod.ResourceList{nil},
			nil},
		// The container step runs first: the cpu limit of "a" becomes its
		// request, which then becomes the pod-level cpu request.
		{"pod-level requests from the aggregate, else from the pod-level limit",
			pod.Pod{
				Resources: &pod.Resources{Limits: rl("cpu", 1000, "memory", gi, "hugepages-2Mi", 4*mi)},
				Containers: []pod.Container{
					ctr("a", nil, rl("cpu", 300)),
					ctr("b", rl("cpu", 200), nil),
				},
			},
			nil,
			[]pod.ResourceList{rl("cpu", 300), rl("cpu", 200)},
			rl("cpu", 500, "memory", gi, "hugepages-2Mi", 4*mi)},
		{"pod-level aggregate is sidecar-aware",
			pod.Pod{
				Resources: &pod.Resources{Limits: rl("memory", gi)},
				InitContainers: []pod.Container{
					sidecar("side", rl("memory", 100*mi), nil),
					ctr("init", rl("memory", 500*mi), nil),
				},
				Containers: []pod.Container{ctr("a", rl("memory", 200*mi), nil)},
			},
			[]pod.ResourceList{rl("memory", 100*mi), rl("memory", 500*mi)},
			[]pod.ResourceList{rl("memory", 200*mi)},
			rl("memory", 600*mi)},
		{"existing pod-level request kept",
			pod.Pod{
				Resources:  &pod.Resources{Requests: rl("cpu", 700), Limits: rl("cpu", 1000)},
				Containers: []pod.Container{ctr("a", rl("cpu", 200), nil)},
			},
			nil,
			[]pod.ResourceList{rl("cpu", 200)},
			rl("cpu", 700)},
		{"unsupported pod-level limits not defaulted",
			pod.Pod{
				Resources:  &pod.Resources{Limits: rl("ephemeral-storage", gi)},
				Containers: []pod.Container{ctr("a", rl("ephemeral-storage", mi), nil)},
			},
			nil,
			[]pod.ResourceList{rl("ephemeral-storage", mi)},
			nil},
		// "with ... pod-level limits set": no pod-level limits, no defaulting.
		{"pod-level requests without limits untouched",
			pod.Pod{
				Resources:  &pod.Resources{},
				Containers: []pod.Container{ctr("a", rl("cpu", 200), nil)},
			},
			nil,
			[]pod.ResourceList{rl("cpu", 200)},
			nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.pod
			p.ApplyDefaults()
			for i, want := range tc.wantInit {
				assert.Equal(t, want, p.InitContainers[i].Requests, "init container %d requests", i)
			}
			for i, want := range tc.wantApp {
				assert.Equal(t, want, p.Containers[i].Requests, "container %d requests", i)
			}
			var gotPod pod.ResourceList
			if p.Resources != nil {
				gotPod = p.Resources.Requests
			}
			if len(gotPod) != 0 || len(tc.wantPod) != 0 {
				assert.Equal(t, tc.wantPod, gotPod, "spec.resources.requests")
			}
		})
	}
}

// TestSpecApplyDefaultsPodLevelFromAggregateWithoutPodLimit checks the same
// §5.4 sentence for a resource that has container requests but no pod-level
// limit: once any pod-level limit is set, "a missing pod-level request
// defaults to the aggregated container request (cpu/memory)". Upstream's
// defaultPodRequests loops over the aggregated container requests, not over
// the pod-level limits, so the cpu request below is defaulted too.
func TestSpecApplyDefaultsPodLevelFromAggregateWithoutPodLimit(t *testing.T) {
	p := pod.Pod{
		Resources:  &pod.Resources{Limits: rl("memory", gi)},
		Containers: []pod.Container{ctr("a", rl("cpu", 500, "memory", 256*mi), nil)},
	}
	p.ApplyDefaults()
	want := rl("cpu", 500, "memory", 256*mi)
	assert.Equal(t, want, p.Resources.Requests, "spec.resources.requests")
}

// TestSpecIsStatic checks upstream IsStaticPod (used by preemption.md's
// critical-pod test): the config.source annotation present with any value
// other than "api" makes a pod static; absent means not static.
func TestSpecIsStatic(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        bool
	}{
		{"nil annotations", nil, false},
		{"annotation missing", map[string]string{"other": "x"}, false},
		{"source api", map[string]string{pod.ConfigSourceAnnotation: "api"}, false},
		{"source file", map[string]string{pod.ConfigSourceAnnotation: "file"}, true},
		{"source http", map[string]string{pod.ConfigSourceAnnotation: "http"}, true},
		// GetPodSource returns "" without error when the key is present.
		{"source empty", map[string]string{pod.ConfigSourceAnnotation: ""}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := pod.Pod{Annotations: tc.annotations}
			assert.Equal(t, tc.want, p.IsStatic(), "IsStatic()")
		})
	}
}

// TestSpecIsCritical checks upstream IsCriticalPod: static, mirror, or a
// priority of at least SystemCriticalPriority (2e9).
func TestSpecIsCritical(t *testing.T) {
	prio := func(v int32) *int32 { return &v }
	tests := []struct {
		name string
		pod  pod.Pod
		want bool
	}{
		{"no priority", pod.Pod{}, false},
		{"just below 2e9", pod.Pod{Priority: prio(1_999_999_999)}, false},
		{"exactly 2e9", pod.Pod{Priority: prio(2_000_000_000)}, true},
		{"system-node-critical 2e9+1000", pod.Pod{Priority: prio(2_000_001_000)}, true},
		{"negative priority", pod.Pod{Priority: prio(-5)}, false},
		{"static pod with low priority", pod.Pod{
			Priority:    prio(0),
			Annotations: map[string]string{pod.ConfigSourceAnnotation: "file"},
		}, true},
		{"mirror pod", pod.Pod{Annotations: map[string]string{
			pod.ConfigSourceAnnotation: "api", pod.ConfigMirrorAnnotation: "abc",
		}}, true},
		{"api pod", pod.Pod{Annotations: map[string]string{pod.ConfigSourceAnnotation: "api"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.pod
			assert.Equal(t, tc.want, p.IsCritical(), "IsCritical()")
		})
	}
	assert.Equal(t, int32(2_000_000_000), pod.SystemCriticalPriority, "SystemCriticalPriority")
}

// TestSpecApplyDefaultsHugePagePodLimits checks upstream's
// defaultHugePagePodLimits: with spec.resources set, the containers'
// aggregated hugepages limit becomes the pod-level limit, and through it the
// pod-level requests default (here memory from the containers).
func TestSpecApplyDefaultsHugePagePodLimits(t *testing.T) {
	p := pod.Pod{
		Resources:      &pod.Resources{Requests: rl("cpu", 0)},
		InitContainers: []pod.Container{ctr("init", nil, rl("memory", 1))},
		Containers:     []pod.Container{ctr("a", nil, rl("hugepages-1Gi", 0))},
	}
	p.ApplyDefaults()
	assert.Equal(t, rl("hugepages-1Gi", 0), p.Resources.Limits, "pod-level limits")
	assert.Equal(t, rl("cpu", 0, "memory", 1, "hugepages-1Gi", 0), p.Resources.Requests, "pod-level requests")
	assert.Equal(t, pod.Burstable, p.ComputeQOS(), "QoS (upstream)")
	// A pod-level hugepages request stops the limit's defaulting.
	q := pod.Pod{
		Resources:  &pod.Resources{Requests: rl("hugepages-2Mi", 2*mi)},
		Containers: []pod.Container{ctr("a", nil, rl("hugepages-2Mi", 4*mi))},
	}
	q.ApplyDefaults()
	assert.Nil(t, q.Resources.Limits, "pod-level limits")
	// Pod-level limits alone are enough for the defaulting to run ...
	limited := pod.Pod{
		Resources:  &pod.Resources{Limits: rl("cpu", 1000, "memory", gi)},
		Containers: []pod.Container{ctr("a", nil, rl("hugepages-2Mi", 4*mi))},
	}
	limited.ApplyDefaults()
	assert.Equal(t, rl("cpu", 1000, "memory", gi, "hugepages-2Mi", 4*mi), limited.Resources.Limits, "pod-level limits")
	// ... while a spec.resources with neither requests nor limits stops it.
	empty := pod.Pod{
		Resources:  &pod.Resources{},
		Containers: []pod.Container{ctr("a", nil, rl("hugepages-2Mi", 4*mi))},
	}
	empty.ApplyDefaults()
	assert.Equal(t, &pod.Resources{}, empty.Resources, "spec.resources")
}

// TestResourceListString checks the form error messages print a list in: the
// entries in name order, separated by one space.
func TestResourceListString(t *testing.T) {
	assert.Equal(t, "{}", pod.ResourceList{}.String())
	assert.Equal(t, "{cpu:100}", pod.ResourceList{pod.CPU: 100}.String())
	assert.Equal(t, "{cpu:100 memory:2048 pods:1}", pod.ResourceList{pod.Pods: 1, pod.Memory: 2048, pod.CPU: 100}.String())
}
