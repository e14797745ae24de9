package pod_test

import (
	"testing"

	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/assert"
)

// Quantities used throughout: cpu in millicores, memory in bytes.
const (
	mi = int64(1 << 20)
	gi = int64(1 << 30)
)

// rl builds a ResourceList from name/value pairs so a table row reads like a
// pod manifest: rl("cpu", 100, "memory", 64*mi).
func rl(kv ...any) pod.ResourceList {
	l := pod.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		var v int64
		switch n := kv[i+1].(type) {
		case int:
			v = int64(n)
		case int64:
			v = n
		default:
			panic("rl: value must be int or int64")
		}
		l[pod.ResourceName(kv[i].(string))] = v
	}
	return l
}

// ctr is an app or regular init container with the given requests and limits.
func ctr(name string, requests, limits pod.ResourceList) pod.Container {
	return pod.Container{Name: name, Requests: requests, Limits: limits}
}

// sidecar is an init container with restartPolicy Always.
func sidecar(name string, requests, limits pod.ResourceList) pod.Container {
	c := ctr(name, requests, limits)
	c.RestartPolicy = pod.RestartAlways
	return c
}

// TestSpecQOSClassTable checks ComputeQOS against preemption.md §4.3 (the
// summed algorithm of pkg/apis/core/v1/helper/qos, v1.36, PodLevelResources on).
func TestSpecQOSClassTable(t *testing.T) {
	guaranteed := rl("cpu", 100, "memory", 64*mi)
	tests := []struct {
		name string
		pod  pod.Pod
		want pod.QOSClass
	}{
		// §4.3 "no requests and no limits → BestEffort".
		{"no resources at all", pod.Pod{Containers: []pod.Container{ctr("a", nil, nil)}}, pod.BestEffort},
		// §4.3 "requests summed (only quantities > 0)": a zero request does not count.
		{"zero cpu request only", pod.Pod{Containers: []pod.Container{ctr("a", rl("cpu", 0, "memory", 0), nil)}}, pod.BestEffort},
		// §4.3 "only cpu and memory count".
		{"only non-QoS resources", pod.Pod{Containers: []pod.Container{
			ctr("a", rl("ephemeral-storage", gi, "example.com/gpu", 1), rl("ephemeral-storage", gi, "example.com/gpu", 1)),
		}}, pod.BestEffort},
		{"requests equal limits for cpu and memory", pod.Pod{Containers: []pod.Container{ctr("a", guaranteed, guaranteed)}}, pod.Guaranteed},
		// Requests are not defaulted by ComputeQOS (the API server does that,
		// see ApplyDefaults): limits without requests differ in count.
		{"limits without requests", pod.Pod{Containers: []pod.Container{ctr("a", nil, guaranteed)}}, pod.Burstable},
		// §4.3 "isGuaranteed=false if any container lacks a positive cpu and memory limit".
		{"missing memory limit", pod.Pod{Containers: []pod.Container{ctr("a", rl("cpu", 100), rl("cpu", 100))}}, pod.Burstable},
		// §4.3 "limits summed (only quantities > 0)": a zero limit does not
		// count either, so it alone leaves the pod BestEffort.
		{"zero cpu limit only", pod.Pod{Containers: []pod.Container{ctr("a", nil, rl("cpu", 0))}}, pod.BestEffort},
		{"zero memory limit counts as missing", pod.Pod{Containers: []pod.Container{
			ctr("a", rl("cpu", 100), rl("cpu", 100, "memory", 0)),
		}}, pod.Burstable},
		{"second container lacks cpu limit", pod.Pod{Containers: []pod.Container{
			ctr("a", guaranteed, guaranteed),
			ctr("b", rl("memory", 64*mi), rl("memory", 64*mi)),
		}}, pod.Burstable},
		{"requests below limits", pod.Pod{Containers: []pod.Container{
			ctr("a", rl("cpu", 50, "memory", 64*mi), guaranteed),
		}}, pod.Burstable},
		// §4.3 compares sums, not containers: per-container mismatches that
		// cancel out still give Guaranteed.
		{"sums equal although containers differ", pod.Pod{Containers: []pod.Container{
			ctr("a", rl("cpu", 100, "memory", 64*mi), rl("cpu", 200, "memory", 64*mi)),
			ctr("b", rl("cpu", 200, "memory", 64*mi), rl("cpu", 100, "memory", 64*mi)),
		}}, pod.Guaranteed},
		// §4.3 "over ALL app + init containers".
		{"init container counted in the sums", pod.Pod{
			InitContainers: []pod.Container{ctr("init", rl("cpu", 500, "memory", gi), rl("cpu", 500, "memory", gi))},
			Containers:     []pod.Container{ctr("a", guaranteed, guaranteed)},
		}, pod.Guaranteed},
		{"init container without limits", pod.Pod{
			InitContainers: []pod.Container{ctr("init", rl("cpu", 10), nil)},
			Containers:     []pod.Container{ctr("a", guaranteed, guaranteed)},
		}, pod.Burstable},
		{"init container requests below limits", pod.Pod{
			InitContainers: []pod.Container{ctr("init", rl("cpu", 50, "memory", gi), rl("cpu", 100, "memory", gi))},
			Containers:     []pod.Container{ctr("a", guaranteed, guaranteed)},
		}, pod.Burstable},
		{"sidecar without limits", pod.Pod{
			InitContainers: []pod.Container{sidecar("side", nil, nil)},
			Containers:     []pod.Container{ctr("a", guaranteed, guaranteed)},
		}, pod.Burstable},
		// Only an init container sets anything: still not BestEffort.
		{"only init container requests", pod.Pod{
			InitContainers: []pod.Container{ctr("init", rl("memory", mi), nil)},
			Containers:     []pod.Container{ctr("a", nil, nil)},
		}, pod.Burstable},

		// §4.3 pod-level resources: spec.resources set → containers ignored.
		{"pod-level guaranteed, containers best effort", pod.Pod{
			Resources:  &pod.Resources{Requests: guaranteed, Limits: guaranteed},
			Containers: []pod.Container{ctr("a", nil, nil)},
		}, pod.Guaranteed},
		{"pod-level requests only", pod.Pod{
			Resources:  &pod.Resources{Requests: rl("cpu", 100)},
			Containers: []pod.Container{ctr("a", guaranteed, guaranteed)},
		}, pod.Burstable},
		// §4.3 "isGuaranteed=false if pod-level limits are non-empty and lack a positive cpu or memory".
		{"pod-level limits lack memory", pod.Pod{
			Resources:  &pod.Resources{Requests: rl("cpu", 100), Limits: rl("cpu", 100)},
			Containers: []pod.Container{ctr("a", guaranteed, guaranteed)},
		}, pod.Burstable},
		// §4.3 "a non-nil spec.resources with no positive cpu/memory entry → BestEffort, whatever the containers request".
		{"empty spec.resources", pod.Pod{
			Resources:  &pod.Resources{},
			Containers: []pod.Container{ctr("a", guaranteed, guaranteed)},
		}, pod.BestEffort},
		{"spec.resources with only a zero cpu limit", pod.Pod{
			Resources:  &pod.Resources{Limits: rl("cpu", 0)},
			Containers: []pod.Container{ctr("a", guaranteed, guaranteed)},
		}, pod.BestEffort},
		{"spec.resources with zero cpu and unsupported resources", pod.Pod{
			Resources:  &pod.Resources{Requests: rl("cpu", 0, "ephemeral-storage", gi), Limits: rl("ephemeral-storage", gi)},
			Containers: []pod.Container{ctr("a", guaranteed, guaranteed)},
		}, pod.BestEffort},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.pod
			assert.Equal(t, tc.want, p.ComputeQOS(), "ComputeQOS()")
			// With no status.qosClass, QOS() is the computed class.
			assert.Equal(t, tc.want, p.QOS(), "QOS()")
		})
	}
}

// TestSpecQOSStatusWins checks §4.3 "GetPodQOS = Status.QOSClass if set":
// the status is trusted even when the spec would compute another class.
func TestSpecQOSStatusWins(t *testing.T) {
	p := pod.Pod{
		Containers: []pod.Container{ctr("a", nil, nil)},
		QOSClass:   pod.Guaranteed,
	}
	assert.Equal(t, pod.Guaranteed, p.QOS(), "QOS()")
	assert.Equal(t, pod.BestEffort, p.ComputeQOS(), "ComputeQOS() (it must ignore the status)")
}

// TestQOSWithPodLevelGate checks GetPodQOS under the PodLevelResources gate
// (v1.36.3 pkg/apis/core/v1/helper/qos/qos.go:92): with the gate off
// spec.resources is ignored and the containers decide; the status still
// wins either way; overhead plays no part.
func TestQOSWithPodLevelGate(t *testing.T) {
	on, off := pod.Options{}, pod.Options{SkipPodLevelResources: true}
	guaranteed := rl("cpu", 500, "memory", 64*mi)
	tests := []struct {
		name    string
		pod     pod.Pod
		on, off pod.QOSClass
	}{
		{"pod-level Guaranteed, containers Burstable", pod.Pod{
			Resources:  &pod.Resources{Requests: guaranteed, Limits: guaranteed},
			Containers: []pod.Container{ctr("a", rl("cpu", 100), nil)},
		}, pod.Guaranteed, pod.Burstable},
		{"pod-level Burstable, containers Guaranteed", pod.Pod{
			Resources:  &pod.Resources{Requests: rl("cpu", 500)},
			Containers: []pod.Container{ctr("a", guaranteed, guaranteed)},
		}, pod.Burstable, pod.Guaranteed},
		{"empty spec.resources, containers Guaranteed", pod.Pod{
			Resources:  &pod.Resources{},
			Containers: []pod.Container{ctr("a", guaranteed, guaranteed)},
		}, pod.BestEffort, pod.Guaranteed},
		{"pod-level Burstable, containers BestEffort", pod.Pod{
			Resources:  &pod.Resources{Requests: rl("memory", 64*mi)},
			Containers: []pod.Container{ctr("a", nil, nil)},
			Overhead:   rl("cpu", 250),
		}, pod.Burstable, pod.BestEffort},
		{"no spec.resources", pod.Pod{
			Containers: []pod.Container{ctr("a", rl("cpu", 100), nil)},
		}, pod.Burstable, pod.Burstable},
		{"status wins", pod.Pod{
			Resources:  &pod.Resources{Requests: guaranteed, Limits: guaranteed},
			Containers: []pod.Container{ctr("a", nil, nil)},
			QOSClass:   pod.Burstable,
		}, pod.Burstable, pod.Burstable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.pod
			assert.Equal(t, tc.on, p.QOSWith(on), "gate on: QOSWith")
			assert.Equal(t, tc.on, p.QOS(), "QOS()")
			assert.Equal(t, tc.off, p.QOSWith(off), "gate off: QOSWith")
			assert.Equal(t, tc.off, p.QOSWith(pod.Options{SkipPodLevelResources: true, ExcludeOverhead: true}), "gate off, ExcludeOverhead: QOSWith")
		})
	}
}
