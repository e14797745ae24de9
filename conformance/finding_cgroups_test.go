package conformance

import (
	"context"
	"reflect"
	"strconv"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/cm"
)

// The cgroups findings (verify/findings_cgroups.go) confirmed on the
// v1.36.3 kubelet's own code: each test feeds the shrunk case to the
// functions that decide the cgroup values and asserts that the documented
// promise is broken, so it passes while the bug is present and fails once
// upstream keeps the promise.

// limitedPod is a Guaranteed pod, as a user writes it, with one container
// limited to milliCPU of cpu and 32Mi of memory (requests default to the
// limits).
func limitedPod(milliCPU int64) *corev1.Pod {
	limits := corev1.ResourceList{
		corev1.ResourceCPU:    quantity(corev1.ResourceCPU, milliCPU),
		corev1.ResourceMemory: quantity(corev1.ResourceMemory, 32<<20),
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-1"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app-0", Resources: corev1.ResourceRequirements{Limits: limits}}}},
	}
}

// TestFindingCGQuotaFloorExceedsLimit confirms CG-F1 (CG-C-CPU-LIMIT) on
// upstream. The promise: "Containers may not use more CPU than is specified
// in their cpu limit" (Kubernetes documentation, Resource Management for Pods
// and Containers, section "Requests and limits"), with cpuCFSQuota on and any
// cpuCFSQuotaPeriod from 1ms to 1s (kubelet configuration reference).
// Upstream raises every quota to the kernel's 1ms minimum, so a container
// whose limit is below 1ms per period is allowed more than its limit: 10m
// for a 1m limit at the default 100ms period, a whole CPU for a 500m limit
// with cpuCFSQuotaPeriod=1ms. The container's quota is cm.MilliCPUToQuota
// of its limit over the configured period (what kuberuntime's
// calculateLinuxResources writes with the CPUCFSQuotaPeriod gate on, its
// v1.36 default); the pod's is cm.ResourceConfigForPod's. The test passes
// while the bug is present.
func TestFindingCGQuotaFloorExceedsLimit(t *testing.T) {
	resetGates(t)
	setGates(true, true)
	for _, c := range []struct {
		name     string
		milliCPU int64
		periodUS int64
	}{
		{"1m limit, default 100ms period (the shrunk case)", 1, 100_000},
		{"500m limit, cpuCFSQuotaPeriod 1ms", 500, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			bug := bugOutcome(t, "CG-F1")
			quota := cm.MilliCPUToQuota(c.milliCPU, c.periodUS)
			// quota/period CPUs against milliCPU/1000 CPUs, exactly.
			assert.Greater(bug, quota*1000, c.milliCPU*c.periodUS,
				"container quota %dµs per %dµs allows no more than its %dm limit: the promise is kept", quota, c.periodUS, c.milliCPU)
			assert.Equal(bug, int64(cm.MinQuotaPeriod), quota, "the quota is the kernel's 1ms floor")

			rc := resourceConfigForPod(upstreamPod(limitedPod(c.milliCPU)), true, uint64(c.periodUS), false, memoryPolicyNone)
			require.NotNil(t, rc.CPUQuota)
			require.NotNil(t, rc.CPUPeriod)
			assert.Equal(t, uint64(c.periodUS), *rc.CPUPeriod)
			assert.Greater(bug, *rc.CPUQuota*1000, c.milliCPU*int64(*rc.CPUPeriod),
				"pod quota %dµs per %dµs allows no more than its %dm limit: the promise is kept", *rc.CPUQuota, *rc.CPUPeriod, c.milliCPU)
		})
	}
}

// recordingCgroups is a cgroup manager that creates nothing: every cgroup
// exists once created and every update is recorded. It is safe for the
// QoS manager's background update loop, which Start launches.
type recordingCgroups struct {
	mu      sync.Mutex
	created map[string]bool
	updates []cm.CgroupConfig
}

func (r *recordingCgroups) Create(_ klog.Logger, c *cm.CgroupConfig) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.created[r.Name(c.Name)] = true
	return nil
}
func (r *recordingCgroups) Destroy(klog.Logger, *cm.CgroupConfig) error { return nil }
func (r *recordingCgroups) Update(_ klog.Logger, c *cm.CgroupConfig) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates = append(r.updates, *c)
	return nil
}
func (r *recordingCgroups) Validate(cm.CgroupName) error { return nil }
func (r *recordingCgroups) Exists(name cm.CgroupName) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.created[r.Name(name)]
}
func (r *recordingCgroups) Name(name cm.CgroupName) string { return name.ToCgroupfs() }
func (r *recordingCgroups) CgroupName(name string) cm.CgroupName {
	return cm.ParseCgroupfsToCgroupName(name)
}
func (r *recordingCgroups) Pids(klog.Logger, cm.CgroupName) []int            { return nil }
func (r *recordingCgroups) ReduceCPULimits(klog.Logger, cm.CgroupName) error { return nil }
func (r *recordingCgroups) MemoryUsage(cm.CgroupName) (int64, error)         { return 0, nil }
func (r *recordingCgroups) GetCgroupConfig(cm.CgroupName, corev1.ResourceName) (*cm.ResourceConfig, error) {
	return &cm.ResourceConfig{}, nil
}
func (r *recordingCgroups) SetCgroupConfig(klog.Logger, cm.CgroupName, *cm.ResourceConfig) error {
	return nil
}
func (r *recordingCgroups) Version() int { return 2 }

// TestFindingCGBurstableMemoryLowVoid confirms CG-F2 (CG-C-MEMORY-LOW) on
// upstream. The promise (KEP-2570, Mapping Rules; the pod-qos page, Memory
// QoS with cgroup v2): with memoryReservationPolicy TieredReservation a
// Burstable pod's memory request is soft-protected by memory.low, the
// kubepods cgroup covering its children's protection, because cgroup v2
// protection is hierarchical ("parent=0 wins", KEP-2570, Feature Enablement
// and Rollback; the kernel bounds a cgroup's effective memory.low by the
// memory.low of its ancestors). v1.36.3 gives the pod and the burstable tier
// memory.low but kubepods only memory.min, so under node-wide reclaim the
// pod's effective memory.low is 0. The pod's value is
// cm.ResourceConfigForPod's; the tiers' come from the QoS container
// manager's own update, fed the pod as its only active pod. The test passes
// while the bug is present.
func TestFindingCGBurstableMemoryLowVoid(t *testing.T) {
	if !tieredMemoryQoS {
		findingNotApplicable(t, "CG-F2", "the release has no memoryReservationPolicy: every pod with a memory request gets memory.min, none memory.low (KEP-2570's policy came in v1.36, kubernetes#137584)")
		return
	}
	resetGates(t)
	setGates(true, true)
	request := int64(32 << 20)
	p := upstreamPod(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app-0", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: quantity(corev1.ResourceMemory, request)},
		}}}},
	})

	pc := resourceConfigForPod(p, true, 100_000, true, memoryPolicyTiered)
	require.Equal(t, map[string]string{cgroup2MemoryLow: "33554432"}, pc.Unified, "the pod's own memory.low is its request")

	kubepods := cm.NewCgroupName(cm.RootCgroupName, "kubepods")
	fake := &recordingCgroups{created: map[string]bool{}}
	qm, err := cm.NewQOSContainerManager(&cm.CgroupSubsystems{}, kubepods,
		qosNodeConfig(memoryPolicyTiered), fake)
	require.NoError(t, err)
	allocatable := func() corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceMemory: quantity(corev1.ResourceMemory, 2<<30)}
	}
	// Start also launches upstream's minute-long update loop, which only
	// writes to the recording manager.
	require.NoError(t, qm.Start(context.Background(), allocatable, func() []*corev1.Pod { return []*corev1.Pod{p} }))
	info := qm.GetQOSContainersInfo()
	configs := map[corev1.PodQOSClass]*cm.CgroupConfig{
		corev1.PodQOSGuaranteed: {Name: info.Guaranteed, ResourceParameters: &cm.ResourceConfig{}},
		corev1.PodQOSBurstable:  {Name: info.Burstable, ResourceParameters: &cm.ResourceConfig{}},
		corev1.PodQOSBestEffort: {Name: info.BestEffort, ResourceParameters: &cm.ResourceConfig{}},
	}
	upstreamSetMemoryQoS(reflect.ValueOf(qm).UnsafePointer(), logr.Discard(), configs)

	root := configs[corev1.PodQOSGuaranteed].ResourceParameters.Unified
	burstable := configs[corev1.PodQOSBurstable].ResourceParameters.Unified
	require.Equal(t, kubepods, info.Guaranteed, "the Guaranteed tier is kubepods itself")
	assert.Equal(t, "33554432", root[cm.Cgroup2MemoryMin], "kubepods' memory.min covers the Burstable request")
	assert.Equal(t, "33554432", burstable[cgroup2MemoryLow], "the burstable tier's memory.low is the Burstable requests")

	// The chain kubepods → kubepods/burstable → the pod: the smallest
	// memory.low on it bounds the pod's effective memory.low (unset is 0).
	chain := []string{root[cgroup2MemoryLow], burstable[cgroup2MemoryLow], pc.Unified[cgroup2MemoryLow]}
	bound := request
	for _, v := range chain {
		low := int64(0)
		if v != "" {
			low, err = strconv.ParseInt(v, 10, 64)
			require.NoError(t, err, "memory.low %q", v)
		}
		bound = min(bound, low)
	}
	bug := bugOutcome(t, "CG-F2")
	assert.Empty(bug, root[cgroup2MemoryLow], "kubepods has a memory.low: the ancestor covers the soft protection")
	assert.Less(bug, bound, request, "the pod's request is covered by memory.low all the way up (%v): the promise is kept", chain)
}
