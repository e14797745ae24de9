package admissioncheck

import (
	"fmt"

	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
)

// GPU is the extended resource the generated pods may ask for; in the
// admission suite a device plugin serves it.
const GPU = pod.ResourceName("example.com/gpu")

// HugePages and FPGA are the scalar resources besides GPU the generated
// pods may ask for: huge pages of one size, and an extended resource no
// device plugin serves (the node's allocatable lists it or not). A node
// with none of either is where the fit's rule for scalar resources shows:
// the kubelet drops only an extended resource allocatable does not list.
const (
	HugePages = pod.ResourceName("hugepages-2Mi")
	FPGA      = pod.ResourceName("example.com/fpga")
)

const mi = int64(1 << 20)

// Quantities come from small sets so that ties, exact fits and pods that
// each suffice are common; they are what the tie-break and the distance are
// about.
var (
	cpuValues  = []int64{0, 100, 200, 300, 500}
	memValues  = []int64{0, 64 * mi, 128 * mi, 256 * mi}
	priorities = []*int32{nil, p32(0), p32(5), p32(1000), p32(1000),
		p32(preemption.SystemClusterCriticalPriority), p32(preemption.SystemNodeCriticalPriority)}
)

func p32(v int32) *int32 { return &v }

// PodOptions shape generated pods.
type PodOptions struct {
	// GPUs lets app containers ask for example.com/gpu (requests equal to
	// limits, as the API requires of extended resources).
	GPUs bool
	// Scalars lets app containers ask for HugePages and FPGA (requests
	// equal to limits, as the API requires of both).
	Scalars bool
	// Critical forces a critical pod (a critical priority, or a static or
	// mirror pod); otherwise criticality is drawn like the rest.
	Critical bool
}

// Pod draws a pod with the given UID: a QoS class shape (BestEffort,
// Burstable, Guaranteed), a priority, sometimes static or mirror, one or two
// app containers, sometimes a regular init container and a sidecar,
// sometimes overhead, sometimes pod-level resources, rarely a status QoS
// class that disagrees with the spec.
func Pod(t *rapid.T, uid string, opts PodOptions) *pod.Pod {
	p := &pod.Pod{UID: uid, Name: uid, Namespace: "default", Annotations: map[string]string{}}
	if pr := rapid.SampledFrom(priorities).Draw(t, "priority"); pr != nil {
		v := *pr
		p.Priority = &v
	}
	// A plain pod from the API server is the common case and what a
	// shrunk case falls back to (rapid shrinks a draw towards its lowest
	// value); one in ten is a static pod, one a mirror pod, one carries the
	// API server's own config source.
	switch rapid.IntRange(0, 9).Draw(t, "origin") {
	case 7:
		p.Annotations[sourceAnnotation] = "api"
	case 8:
		p.Annotations[sourceAnnotation] = rapid.SampledFrom([]string{"file", "http", "", "*"}).Draw(t, "source")
	case 9:
		p.Annotations[mirrorAnnotation] = "hash"
	}
	if opts.Critical && !p.IsCritical() {
		if rapid.Bool().Draw(t, "criticalByPriority") {
			p.Priority = p32(rapid.SampledFrom([]int32{preemption.SystemClusterCriticalPriority, preemption.SystemNodeCriticalPriority}).Draw(t, "criticalPriority"))
		} else {
			p.Annotations[sourceAnnotation] = "file"
		}
	}
	class := rapid.SampledFrom([]pod.QOSClass{pod.BestEffort, pod.Burstable, pod.Guaranteed}).Draw(t, "class")
	container := func(name string, label string) pod.Container {
		c := pod.Container{Name: name, Requests: pod.ResourceList{}, Limits: pod.ResourceList{}}
		switch class {
		case pod.Burstable:
			if cpu := rapid.SampledFrom(cpuValues).Draw(t, label+"cpu"); cpu > 0 {
				c.Requests[pod.CPU] = cpu
			}
			if mem := rapid.SampledFrom(memValues).Draw(t, label+"mem"); mem > 0 {
				c.Requests[pod.Memory] = mem
			}
			if len(c.Requests) == 0 {
				c.Requests[pod.CPU] = 50
			}
		case pod.Guaranteed:
			cpu := rapid.SampledFrom(cpuValues[1:]).Draw(t, label+"cpu")
			mem := rapid.SampledFrom(memValues[1:]).Draw(t, label+"mem")
			c.Requests[pod.CPU], c.Limits[pod.CPU] = cpu, cpu
			c.Requests[pod.Memory], c.Limits[pod.Memory] = mem, mem
		}
		if rapid.IntRange(0, 3).Draw(t, label+"hasStorage") == 0 {
			c.Requests[pod.EphemeralStorage] = rapid.SampledFrom([]int64{1 << 30, 2 << 30}).Draw(t, label+"storage")
		}
		return c
	}
	apps := rapid.IntRange(1, 2).Draw(t, "apps")
	for i := 0; i < apps; i++ {
		c := container(fmt.Sprintf("app%d", i), fmt.Sprintf("app%d.", i))
		if opts.GPUs && rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("app%d.hasGPU", i)) == 0 {
			n := rapid.IntRange(1, 2).Draw(t, fmt.Sprintf("app%d.gpus", i))
			c.Requests[GPU], c.Limits[GPU] = int64(n), int64(n)
		}
		if opts.Scalars {
			// One container in three asks for huge pages, one in six for
			// FPGAs: with two apps, most pods of a node that has none of
			// one of them ask for it now and then.
			switch rapid.IntRange(0, 5).Draw(t, fmt.Sprintf("app%d.scalar", i)) {
			case 0, 1:
				q := rapid.SampledFrom([]int64{2 * mi, 4 * mi}).Draw(t, fmt.Sprintf("app%d.hugepages", i))
				c.Requests[HugePages], c.Limits[HugePages] = q, q
			case 2:
				c.Requests[FPGA], c.Limits[FPGA] = 1, 1
			}
		}
		p.Containers = append(p.Containers, c)
	}
	if rapid.IntRange(0, 3).Draw(t, "hasInit") == 0 {
		p.InitContainers = append(p.InitContainers, container("init", "init."))
	}
	if rapid.IntRange(0, 3).Draw(t, "hasSidecar") == 0 {
		c := container("sidecar", "sidecar.")
		c.RestartPolicy = pod.RestartAlways
		// Before or after the regular init container: the order decides
		// whether the sidecar runs next to it.
		if rapid.Bool().Draw(t, "sidecarFirst") {
			p.InitContainers = append([]pod.Container{c}, p.InitContainers...)
		} else {
			p.InitContainers = append(p.InitContainers, c)
		}
	}
	if rapid.IntRange(0, 3).Draw(t, "hasOverhead") == 0 {
		p.Overhead = pod.ResourceList{pod.CPU: rapid.SampledFrom([]int64{10, 50}).Draw(t, "overheadCPU"), pod.Memory: 16 * mi}
	}
	if rapid.IntRange(0, 5).Draw(t, "hasPodLevel") == 0 {
		switch class {
		case pod.BestEffort:
			// Set but without cpu or memory: BestEffort whatever the
			// containers ask.
			p.Resources = &pod.Resources{}
		case pod.Burstable:
			p.Resources = &pod.Resources{Requests: pod.ResourceList{pod.CPU: rapid.SampledFrom(cpuValues[1:]).Draw(t, "levelCPU")}}
		case pod.Guaranteed:
			l := pod.ResourceList{pod.CPU: rapid.SampledFrom(cpuValues[1:]).Draw(t, "levelCPU"), pod.Memory: rapid.SampledFrom(memValues[1:]).Draw(t, "levelMem")}
			p.Resources = &pod.Resources{Requests: l.Clone(), Limits: l}
		}
	}
	if rapid.IntRange(0, 14).Draw(t, "hasStatusQoS") == 0 {
		p.QOSClass = rapid.SampledFrom([]pod.QOSClass{pod.BestEffort, pod.Burstable, pod.Guaranteed}).Draw(t, "statusQoS")
	}
	return p
}

// resources a generated reason may name, with the amounts short.
var shortfalls = []struct {
	name    pod.ResourceName
	amounts []int64
}{
	{pod.Pods, []int64{1, 2, 3}},
	{pod.CPU, []int64{1, 50, 100, 150, 250, 400, 700, 1200}},
	{pod.Memory, []int64{1, 32 * mi, 64 * mi, 100 * mi, 200 * mi, 500 * mi}},
	{pod.EphemeralStorage, []int64{1, 1 << 30, 3 << 30}},
	{GPU, []int64{1, 2, 3}},
}

// predicateFailures are non-resource reasons as upstream words them.
var predicateFailures = []*preemption.PredicateFailure{
	{PredicateName: "NodeAffinity", PredicateDesc: "node(s) didn't match Pod's node affinity/selector"},
	{PredicateName: "NodeName", PredicateDesc: "node(s) didn't match the requested node name"},
	{PredicateName: "NodePorts", PredicateDesc: "node(s) didn't have free ports for the requested pod ports"},
	{PredicateName: "TaintToleration", PredicateDesc: "node(s) had untolerated taint(s)"},
}

// Reasons draws failure reasons: resources in the fit's order, each short
// by a drawn amount, and sometimes non-resource reasons among them. One
// time in two the pod is short of both cpu and memory by amounts several
// pods must cover in part: that is where the squared distance and the
// tie-break decide, and where the greedy choice is furthest from the best.
func Reasons(t *rapid.T) []preemption.Reason {
	var out []preemption.Reason
	short := func(name pod.ResourceName, amount int64) {
		capacity := rapid.Int64Range(0, 4*amount).Draw(t, "capacity."+string(name))
		used := rapid.Int64Range(0, capacity).Draw(t, "used."+string(name))
		out = append(out, &preemption.InsufficientResource{ResourceName: name, Requested: amount + capacity - used, Used: used, Capacity: capacity})
	}
	if rapid.Bool().Draw(t, "cpuAndMemory") {
		// Half the time also short of pod slots, up to 3: each victim frees
		// one, so several victims are needed and their QoS order is tested.
		if rapid.Bool().Draw(t, "alsoPods") {
			short(pod.Pods, rapid.Int64Range(1, 3).Draw(t, "amount.pods"))
		}
		short(pod.CPU, rapid.SampledFrom([]int64{150, 250, 400, 600}).Draw(t, "amount.cpu"))
		short(pod.Memory, rapid.SampledFrom([]int64{100 * mi, 200 * mi, 300 * mi}).Draw(t, "amount.memory"))
	} else {
		for _, s := range shortfalls {
			// One resource in three: a pod short of one or two resources
			// is the common case, and more make preemption fail.
			if rapid.IntRange(0, 2).Draw(t, "short."+string(s.name)) != 0 {
				continue
			}
			short(s.name, rapid.SampledFrom(s.amounts).Draw(t, "amount."+string(s.name)))
		}
	}
	// Mostly none; sometimes one or two, anywhere in the list, so that the
	// order of the reasons that stand is tested too.
	others := rapid.IntRange(-4, 2).Draw(t, "otherReasons")
	for i := 0; i < others; i++ {
		at := rapid.IntRange(0, len(out)).Draw(t, "otherAt")
		out = append(out[:at], append([]preemption.Reason{OtherReason(t)}, out[at:]...)...)
	}
	return out
}

// OtherReason draws one non-resource reason.
func OtherReason(t *rapid.T) *preemption.PredicateFailure {
	r := *rapid.SampledFrom(predicateFailures).Draw(t, "predicate")
	return &r
}
