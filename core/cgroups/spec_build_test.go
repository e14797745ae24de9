package cgroups_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	mi = int64(1) << 20
	gi = int64(1) << 30
)

func rl(kv ...any) pod.ResourceList {
	l := pod.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[pod.ResourceName(kv[i].(string))] = int64(kv[i+1].(int64))
	}
	return l
}

func ctr(name string, requests, limits pod.ResourceList) pod.Container {
	return pod.Container{Name: name, Requests: requests, Limits: limits}
}

func sidecar(name string, requests, limits pod.ResourceList) pod.Container {
	c := ctr(name, requests, limits)
	c.RestartPolicy = pod.RestartAlways
	return c
}

// seedNode and seedPods are seed 004's worked example: a 3-CPU, 8 GiB node
// with --qos-reserved=memory=100% and one pod of each QoS class.
func seedNode() cgroups.Config {
	c := cgroups.DefaultConfig()
	c.Capacity = rl("cpu", int64(3000), "memory", 8*gi)
	hundred := int64(100)
	c.QOSReservedMemoryPercent = &hundred
	return c
}

func seedPods() []*pod.Pod {
	return []*pod.Pod{
		{UID: "burstable-1", Name: "pod-burstable-1", Containers: []pod.Container{
			ctr("container1", rl("cpu", int64(1000), "memory", 1*gi), rl("cpu", int64(1000), "memory", 1*gi)),
			ctr("container2", rl("cpu", int64(1000), "memory", 1*gi), rl("cpu", int64(2000), "memory", 2*gi)),
		}},
		{UID: "guaranteed-1", Name: "pod-guaranteed-1", Containers: []pod.Container{
			ctr("container3", rl("cpu", int64(1000), "memory", 1*gi), rl("cpu", int64(1000), "memory", 1*gi)),
		}},
		{UID: "besteffort-1", Name: "pod-besteffort-1", Containers: []pod.Container{ctr("container4", nil, nil)}},
	}
}

func mustBuild(t *testing.T, c cgroups.Config, pods []*pod.Pod) cgroups.Hierarchy {
	t.Helper()
	h, err := cgroups.Build(c, pods)
	require.NoError(t, err, "Build")
	return h
}

func files(t *testing.T, h cgroups.Hierarchy, path string, v cgroups.Version) map[string]string {
	t.Helper()
	cg, ok := h.Lookup(path)
	if !ok {
		var paths []string
		for _, c := range h {
			paths = append(paths, c.Path)
		}
		t.Fatalf("no cgroup %q in %v", path, paths)
	}
	fs, err := cg.Config.Values(v)
	require.NoError(t, err, "%s: Values", path)
	out := map[string]string{}
	for _, f := range fs {
		out[f.Name] = f.Value
	}
	return out
}

// TestSeedWorkedExample reproduces every number seed 004 gives for its
// three pods (§"QoS level cgroup" and "CPU Request 的实现").
func TestSeedWorkedExample(t *testing.T) {
	h := mustBuild(t, seedNode(), seedPods())
	want := map[string]map[string]string{
		"kubepods":            {"cpu.shares": "3072", "memory.limit_in_bytes": "8589934592"},
		"kubepods/burstable":  {"cpu.shares": "2048", "memory.limit_in_bytes": "7516192768"}, // 8Gi − 1Gi
		"kubepods/besteffort": {"cpu.shares": "2", "memory.limit_in_bytes": "5368709120"},    // 7Gi − 2Gi
		"kubepods/podguaranteed-1": {"cpu.shares": "1024", "cpu.cfs_quota_us": "100000", "cpu.cfs_period_us": "100000",
			"memory.limit_in_bytes": "1073741824"},
		"kubepods/podguaranteed-1/container3": {"cpu.shares": "1024", "cpu.cfs_quota_us": "100000", "cpu.cfs_period_us": "100000",
			"memory.limit_in_bytes": "1073741824"},
		"kubepods/burstable/podburstable-1": {"cpu.shares": "2048", "cpu.cfs_quota_us": "300000", "cpu.cfs_period_us": "100000",
			"memory.limit_in_bytes": "3221225472"},
		"kubepods/burstable/podburstable-1/container1": {"cpu.shares": "1024", "cpu.cfs_quota_us": "100000", "cpu.cfs_period_us": "100000",
			"memory.limit_in_bytes": "1073741824"},
		"kubepods/burstable/podburstable-1/container2": {"cpu.shares": "1024", "cpu.cfs_quota_us": "200000", "cpu.cfs_period_us": "100000",
			"memory.limit_in_bytes": "2147483648"},
		"kubepods/besteffort/podbesteffort-1":            {"cpu.shares": "2"},
		"kubepods/besteffort/podbesteffort-1/container4": {"cpu.shares": "2", "cpu.cfs_period_us": "100000"},
	}
	assert.Len(t, h, len(want), "hierarchy has %d cgroups, want %d", len(h), len(want))
	for path, w := range want {
		assert.Equal(t, w, files(t, h, path, cgroups.V1), "%s:\n", path)
	}
}

// TestHierarchyOrderAndNames checks both drivers' names (§5.7) and that
// parents come before children.
func TestHierarchyOrderAndNames(t *testing.T) {
	pods := seedPods()
	pods[0].UID = "8a3f-11-b"
	c := seedNode()
	var got []string
	for _, cg := range mustBuild(t, c, pods) {
		got = append(got, cg.Path)
	}
	want := []string{
		"kubepods",
		"kubepods/besteffort",
		"kubepods/besteffort/podbesteffort-1",
		"kubepods/besteffort/podbesteffort-1/container4",
		"kubepods/burstable",
		"kubepods/burstable/pod8a3f-11-b",
		"kubepods/burstable/pod8a3f-11-b/container1",
		"kubepods/burstable/pod8a3f-11-b/container2",
		"kubepods/podguaranteed-1",
		"kubepods/podguaranteed-1/container3",
	}
	assert.Equal(t, want, got, "cgroupfs paths")

	c.CgroupDriver = cgroups.DriverSystemd
	got = nil
	for _, cg := range mustBuild(t, c, pods) {
		got = append(got, cg.Path)
	}
	want = []string{
		"kubepods.slice",
		"kubepods.slice/kubepods-besteffort.slice",
		"kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podbesteffort_1.slice",
		"kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podbesteffort_1.slice/cri-containerd-container4.scope",
		"kubepods.slice/kubepods-burstable.slice",
		"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod8a3f_11_b.slice",
		"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod8a3f_11_b.slice/cri-containerd-container1.scope",
		"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod8a3f_11_b.slice/cri-containerd-container2.scope",
		"kubepods.slice/kubepods-podguaranteed_1.slice",
		"kubepods.slice/kubepods-podguaranteed_1.slice/cri-containerd-container3.scope",
	}
	assert.Equal(t, want, got, "systemd paths")

	// §5.7: NodeAllocatableRoot("/kubepods", true, "systemd").
	c.CgroupRoot = "/kubepods"
	p, _ := cgroups.KubepodsPath(c)
	assert.Equal(t, "kubepods.slice/kubepods-kubepods.slice", p, "systemd kubepods under /kubepods")
	c.CgroupDriver = cgroups.DriverCgroupfs
	p, _ = cgroups.KubepodsPath(c)
	assert.Equal(t, "kubepods/kubepods", p, "cgroupfs kubepods under /kubepods")
}

// TestValuesOrder checks the ordered writes of both versions for a pod
// cgroup with every field set.
func TestValuesOrder(t *testing.T) {
	shares, quota, period, memory, pids := uint64(2048), int64(150000), uint64(100000), int64(3*gi), int64(1024)
	rc := cgroups.ResourceConfig{
		CPUShares: &shares, CPUQuota: &quota, CPUPeriod: &period, Memory: &memory, PidsLimit: &pids,
		HugePageLimit: map[int64]int64{1 << 30: 0, 2 << 20: 4 * mi},
		Unified:       map[string]string{"memory.min": "5", "memory.low": "7"},
	}
	v1, err := rc.Values(cgroups.V1)
	require.NoError(t, err)
	wantV1 := []cgroups.File{
		{"cpu.shares", "2048"}, {"cpu.cfs_period_us", "100000"}, {"cpu.cfs_quota_us", "150000"},
		{"memory.limit_in_bytes", "3221225472"},
		{"hugetlb.2MB.limit_in_bytes", "4194304"}, {"hugetlb.1GB.limit_in_bytes", "0"},
		{"pids.max", "1024"},
	}
	assert.Equal(t, wantV1, v1, "v1")
	v2, err := rc.Values(cgroups.V2)
	require.NoError(t, err)
	wantV2 := []cgroups.File{
		{"cpu.weight", "79"}, {"cpu.max", "150000 100000"}, {"memory.max", "3221225472"},
		{"memory.low", "7"}, {"memory.min", "5"},
		{"hugetlb.2MB.max", "4194304"}, {"hugetlb.1GB.max", "0"},
		{"pids.max", "1024"},
	}
	assert.Equal(t, wantV2, v2, "v2")

	// Unlimited quota with a period, and the runtime's weight formula.
	unlimited := int64(-1)
	rc = cgroups.ResourceConfig{CPUShares: &[]uint64{1024}[0], CPUQuota: &unlimited, CPUPeriod: &period, Weight: cgroups.WeightQuadratic}
	v2, _ = rc.Values(cgroups.V2)
	assert.Equal(t, []cgroups.File{{"cpu.weight", "100"}, {"cpu.max", "max 100000"}}, v2, "v2 unlimited")
	v1, _ = rc.Values(cgroups.V1)
	assert.Equal(t, []cgroups.File{{"cpu.shares", "1024"}, {"cpu.cfs_period_us", "100000"}, {"cpu.cfs_quota_us", "-1"}}, v1, "v1 unlimited")
}

// TestValuesRejectsWhatTheKernelWould checks the errors of Values.
func TestValuesRejectsWhatTheKernelWould(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	i := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		rc   cgroups.ResourceConfig
		want string
	}{
		{cgroups.ResourceConfig{CPUShares: u(1)}, "cpuShares: 1 must be within 2 and 262144"},
		{cgroups.ResourceConfig{CPUShares: u(262145)}, "cpuShares: 262145 must be within 2 and 262144"},
		{cgroups.ResourceConfig{CPUQuota: i(999)}, "cpuQuota: 999 must be -1 or at least 1000 microseconds"},
		{cgroups.ResourceConfig{CPUPeriod: u(999)}, "cpuPeriod: 999 must be within 1000 and 1000000 microseconds"},
		{cgroups.ResourceConfig{Memory: i(-2)}, "memory: -2 must be -1 (unlimited) or a positive byte count"},
		{cgroups.ResourceConfig{HugePageLimit: map[int64]int64{1025 << 20: 1}}, "hugePageLimit[1074790400]: size: 1025MB must be guaranteed to divisible into the largest units"},
		{cgroups.ResourceConfig{HugePageLimit: map[int64]int64{2 << 20: -1}}, "hugePageLimit[2MB]: -1 must not be negative"},
		{cgroups.ResourceConfig{Unified: map[string]string{"../x": "1"}}, `unified: "../x" is not a cgroup file name`},
	} {
		for _, v := range []cgroups.Version{cgroups.V1, cgroups.V2} {
			if tc.rc.Unified != nil && v == cgroups.V1 {
				continue // Unified is not written on v1 at all
			}
			_, err := tc.rc.Values(v)
			assert.EqualError(t, err, tc.want, "v%d: got %v, want %q", v, err, tc.want)
		}
	}
	_, err := (cgroups.ResourceConfig{}).Values(3)
	assert.EqualError(t, err, "version: 3 must be 1 or 2", "version 3")
}

// TestPartialLimits checks that a Burstable pod gets a quota or a memory
// limit only when every container declares one, counting the sidecars
// started before a container (§5.2).
func TestPartialLimits(t *testing.T) {
	opts := cgroups.DefaultConfig().PodOptions()
	for _, tc := range []struct {
		name               string
		p                  pod.Pod
		wantQuota, wantMem bool
	}{
		{"all declared", pod.Pod{Containers: []pod.Container{
			ctr("a", rl("cpu", int64(100)), rl("cpu", int64(200), "memory", mi)),
			ctr("b", rl("cpu", int64(100)), rl("cpu", int64(200), "memory", mi)),
		}}, true, true},
		{"one app without cpu limit", pod.Pod{Containers: []pod.Container{
			ctr("a", rl("cpu", int64(100)), rl("cpu", int64(200), "memory", mi)),
			ctr("b", rl("cpu", int64(100)), rl("memory", mi)),
		}}, false, true},
		{"regular init without limits", pod.Pod{
			InitContainers: []pod.Container{ctr("i", rl("cpu", int64(100)), nil)},
			Containers:     []pod.Container{ctr("a", rl("cpu", int64(100)), rl("cpu", int64(200), "memory", mi))},
		}, false, false},
		{"regular init masked by an earlier sidecar's limits", pod.Pod{
			InitContainers: []pod.Container{
				sidecar("s", rl("cpu", int64(100)), rl("cpu", int64(200), "memory", mi)),
				ctr("i", rl("cpu", int64(100)), nil),
			},
			Containers: []pod.Container{ctr("a", rl("cpu", int64(100)), rl("cpu", int64(200), "memory", mi))},
		}, true, true},
		{"pod-level limits declare", pod.Pod{
			Resources:  &pod.Resources{Requests: rl("cpu", int64(100)), Limits: rl("cpu", int64(500))},
			Containers: []pod.Container{ctr("a", nil, nil)},
		}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, err := cgroups.ResourceConfigForPod(&tc.p, opts)
			require.NoError(t, err)
			require.Equal(t, pod.Burstable, tc.p.QOS(), "test pod")
			assert.Equal(t, tc.wantQuota, (rc.CPUQuota != nil), "quota set = %t, period set = %t, want %t", rc.CPUQuota != nil, rc.CPUPeriod != nil, tc.wantQuota)
			assert.Equal(t, tc.wantQuota, (rc.CPUPeriod != nil), "quota set = %t, period set = %t, want %t", rc.CPUQuota != nil, rc.CPUPeriod != nil, tc.wantQuota)
			assert.Equal(t, tc.wantMem, (rc.Memory != nil), "memory set")
		})
	}
}

// TestPeriodQuirkAndEnforcement: without the gate the quota is over 100ms
// while the pod still reports the caller's period; containers get the
// period the quota was computed over; cpuCFSQuota=false gives -1 (§5.1, §5.2).
func TestPeriodQuirkAndEnforcement(t *testing.T) {
	p := &pod.Pod{Containers: []pod.Container{ctr("a", rl("cpu", int64(500), "memory", mi), rl("cpu", int64(500), "memory", mi))}}
	rc, _ := cgroups.ResourceConfigForPod(p, cgroups.PodOptions{EnforceCPULimits: true, CPUPeriodUS: 50000, CustomPeriodGate: false})
	assert.Equal(t, int64(50000), *rc.CPUQuota, "gate off")
	assert.Equal(t, uint64(50000), *rc.CPUPeriod, "gate off")
	rc, _ = cgroups.ResourceConfigForPod(p, cgroups.PodOptions{EnforceCPULimits: true, CPUPeriodUS: 50000, CustomPeriodGate: true})
	assert.Equal(t, int64(25000), *rc.CPUQuota, "gate on")
	assert.Equal(t, uint64(50000), *rc.CPUPeriod, "gate on")
	rc, _ = cgroups.ResourceConfigForPod(p, cgroups.PodOptions{EnforceCPULimits: false, CPUPeriodUS: 100000, CustomPeriodGate: true})
	assert.Equal(t, int64(-1), *rc.CPUQuota, "not enforced")
	assert.Equal(t, uint64(100000), *rc.CPUPeriod, "not enforced")

	c := cgroups.DefaultConfig()
	c.CPUCFSQuotaPeriod = 20 * time.Millisecond
	crc, _ := cgroups.ContainerConfig(p.Containers[0], c.ContainerOptions())
	assert.Equal(t, int64(10000), *crc.CPUQuota, "container with custom period")
	assert.Equal(t, uint64(20000), *crc.CPUPeriod, "container with custom period")
	c.CPUCFSQuota = false
	crc, _ = cgroups.ContainerConfig(p.Containers[0], c.ContainerOptions())
	require.Nil(t, crc.CPUQuota, "container without cpuCFSQuota has quota %v period %v", crc.CPUQuota, crc.CPUPeriod)
	assert.Nil(t, crc.CPUPeriod, "container without cpuCFSQuota has quota %v period %v", crc.CPUQuota, crc.CPUPeriod)
}

// TestQOSReservedArithmetic: each product is divided by 100 on its own,
// in int64 (§5.5).
func TestQOSReservedArithmetic(t *testing.T) {
	c := cgroups.DefaultConfig()
	c.Capacity = rl("cpu", int64(4000), "memory", int64(1000))
	c.HardEviction = nil
	p := int64(33)
	c.QOSReservedMemoryPercent = &p
	pods := []*pod.Pod{
		{UID: "g", Containers: []pod.Container{ctr("a", rl("cpu", int64(100), "memory", int64(101)), rl("cpu", int64(100), "memory", int64(101)))}},
		{UID: "b", Containers: []pod.Container{ctr("a", rl("memory", int64(203)), nil)}},
	}
	q, err := cgroups.QOSTierConfigs(c, pods)
	require.NoError(t, err)
	// 101*33/100 = 33 (33.33), 1000-33 = 967; 203*33/100 = 66 (66.99), 967-66 = 901.
	assert.Equal(t, int64(967), *q.Burstable.Memory, "qos reserved memory")
	assert.Equal(t, int64(901), *q.BestEffort.Memory, "qos reserved memory")
	// Allocatable memory 0 (standalone mode): no limits at all.
	c.SystemReserved = rl("memory", int64(1000))
	q, _ = cgroups.QOSTierConfigs(c, pods)
	require.Nil(t, q.Burstable.Memory, "allocatable 0 still set limits %v %v", q.Burstable.Memory, q.BestEffort.Memory)
	assert.Nil(t, q.BestEffort.Memory, "allocatable 0 still set limits %v %v", q.Burstable.Memory, q.BestEffort.Memory)
}

// TestMemoryQoSPolicies checks v1.36's memoryReservationPolicy on pods and
// tiers (§5.2, §5.5).
func TestMemoryQoSPolicies(t *testing.T) {
	c := seedNode()
	c.QOSReservedMemoryPercent = nil
	c.MemoryQoS = true
	h := mustBuild(t, c, seedPods())
	assert.Equal(t, "0", files(t, h, "kubepods", cgroups.V2)["memory.min"], "None: kubepods memory.min")
	assert.Equal(t, "0", files(t, h, "kubepods/burstable", cgroups.V2)["memory.low"], "None: burstable memory.low")
	for _, path := range []string{"kubepods/podguaranteed-1", "kubepods/burstable/podburstable-1"} {
		f := files(t, h, path, cgroups.V2)
		_, ok := f["memory.min"]
		assert.False(t, ok, "None: %s has memory.min", path)
		_, ok = f["memory.low"]
		assert.False(t, ok, "None: %s has memory.low", path)
	}

	c.MemoryReservationPolicy = cgroups.ReservationTiered
	h = mustBuild(t, c, seedPods())
	for path, want := range map[string][2]string{
		"kubepods":                          {"memory.min", "3221225472"}, // G 1Gi + B 2Gi
		"kubepods/burstable":                {"memory.low", "2147483648"},
		"kubepods/podguaranteed-1":          {"memory.min", "1073741824"},
		"kubepods/burstable/podburstable-1": {"memory.low", "2147483648"},
	} {
		assert.Equal(t, files(t, h, path, cgroups.V2)[want[0]], want[1], "Tiered: %s %s", path, want[0])
	}
	assert.Len(t, files(t, h, "kubepods/besteffort/podbesteffort-1", cgroups.V2), 1, "Tiered: BestEffort pod writes")
	// v1 never gets Unified files.
	_, ok := files(t, h, "kubepods", cgroups.V1)["memory.min"]
	assert.False(t, ok, "memory.min written on v1")
}

// TestHugePagesEverywhere: every kubelet-written cgroup has a limit for each
// host page size; pods and containers get 0 for sizes they do not ask for,
// tiers and kubepods 1<<62 (§5.2, §5.5).
func TestHugePagesEverywhere(t *testing.T) {
	c := seedNode()
	c.HugePageSizes = []int64{2 << 20, 1 << 30}
	c.Capacity["hugepages-2Mi"] = 512 * mi
	pods := seedPods()
	pods[1].Containers[0].Requests["hugepages-2Mi"] = 8 * mi
	pods[1].Containers[0].Limits["hugepages-2Mi"] = 8 * mi
	h := mustBuild(t, c, pods)
	for _, cg := range h {
		assert.Len(t, cg.Config.HugePageLimit, 2, "%s: hugepage limits", cg.Path)
	}
	for path, want := range map[string][2]string{
		"kubepods":                            {"4611686018427387904", "4611686018427387904"},
		"kubepods/burstable":                  {"4611686018427387904", "4611686018427387904"},
		"kubepods/podguaranteed-1":            {"8388608", "0"},
		"kubepods/podguaranteed-1/container3": {"8388608", "0"},
		"kubepods/burstable/podburstable-1":   {"0", "0"},
	} {
		f := files(t, h, path, cgroups.V1)
		assert.Equal(t, want[0], f["hugetlb.2MB.limit_in_bytes"], "%s: %v, want 2MB=%s 1GB=%s", path, f, want[0], want[1])
		assert.Equal(t, want[1], f["hugetlb.1GB.limit_in_bytes"], "%s: %v, want 2MB=%s 1GB=%s", path, f, want[0], want[1])
	}
	// kubepods' own node-allocatable config has the allocatable hugepages
	// (before the QoS update overlays it).
	na, _ := cgroups.NodeAllocatableConfig(c)
	assert.Equal(t, 512*mi, na.HugePageLimit[2<<20], "node allocatable hugepages %v", na.HugePageLimit)
}

// TestNodeAllocatable: kubepods from capacity − system − kube clamped at 0,
// pids included, eviction thresholds not subtracted (§5.6).
func TestNodeAllocatable(t *testing.T) {
	c := cgroups.DefaultConfig()
	c.Capacity = rl("cpu", int64(4000), "memory", 16*gi, "pid", int64(4096), "ephemeral-storage", 100*gi)
	c.SystemReserved = rl("cpu", int64(500), "memory", 1*gi, "pid", int64(96))
	c.KubeReserved = rl("cpu", int64(250), "memory", 512*mi)
	h := mustBuild(t, c, nil)
	want := map[string]string{"cpu.shares": "3328", "memory.limit_in_bytes": "15569256448", "pids.max": "4000"}
	assert.Equal(t, want, files(t, h, "kubepods", cgroups.V1), "kubepods")
	c.EnforceNodeAllocatablePods = false
	h = mustBuild(t, c, nil)
	want = map[string]string{"cpu.shares": "4096", "memory.limit_in_bytes": "17179869184", "pids.max": "4096"}
	assert.Equal(t, want, files(t, h, "kubepods", cgroups.V1), "kubepods without enforcement")
	// Reported allocatable subtracts eviction (100Mi, 10% of 100Gi) and hugepages.
	rep := cgroups.ReportedAllocatable(c)
	assert.Equal(t, 16*gi-1*gi-512*mi-100*mi, rep["memory"], "reported allocatable %v", rep)
	assert.Equal(t, 100*gi-int64(float64(100*gi)*float64(float32(0.1))), rep["ephemeral-storage"], "reported allocatable %v", rep)
}

// TestUpstreamErrorStrings checks the kubelet's own messages.
func TestUpstreamErrorStrings(t *testing.T) {
	build := func(mod func(*cgroups.Config)) error {
		c := seedNode()
		mod(&c)
		_, err := cgroups.Build(c, nil)
		return err
	}
	for _, tc := range []struct {
		name  string
		mod   func(*cgroups.Config)
		field string
		want  string
	}{
		{"period without gate", func(c *cgroups.Config) {
			c.CustomCPUCFSQuotaPeriod = false
			c.CPUCFSQuotaPeriod = 50 * time.Millisecond
		},
			"cpuCFSQuotaPeriod", "invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) 50ms requires feature gate CustomCPUCFSQuotaPeriod"},
		{"period too long", func(c *cgroups.Config) { c.CPUCFSQuotaPeriod = 2 * time.Second },
			"cpuCFSQuotaPeriod", "invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) 2s must be between 1ms and 1sec, inclusive"},
		{"period too short", func(c *cgroups.Config) { c.CPUCFSQuotaPeriod = 999 * time.Microsecond },
			"cpuCFSQuotaPeriod", "invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) 999µs must be between 1ms and 1sec, inclusive"},
		{"qos reserved above 100", func(c *cgroups.Config) { p := int64(101); c.QOSReservedMemoryPercent = &p },
			"qosReserved[memory]", `failed to parse percentage "101%" for "memory" resource: percentage must be between 0 and 100`},
		{"reservation above capacity", func(c *cgroups.Config) {
			c.SystemReserved = rl("cpu", int64(2500), "memory", 8*gi)
			c.KubeReserved = rl("cpu", int64(1000))
		}, "nodeAllocatable", `invalid Node Allocatable configuration. Resource "cpu" has a reservation of 3500m but capacity of 3. Expected capacity >= reservation. Resource "memory" has a reservation of 8292Mi but capacity of 8Gi. Expected capacity >= reservation.`},
		{"negative reservation", func(c *cgroups.Config) { c.KubeReserved = rl("memory", int64(-1)) },
			"kubeReserved[memory]", `resource quantity for "memory" cannot be negative: -1`},
		{"unreservable resource", func(c *cgroups.Config) { c.SystemReserved = rl("hugepages-2Mi", 2*mi) },
			"systemReserved[hugepages-2Mi]", `cannot reserve "hugepages-2Mi" resource`},
		{"bad driver", func(c *cgroups.Config) { c.CgroupDriver = "docker" },
			"cgroupDriver", `cgroupDriver: "docker" must be "cgroupfs" or "systemd"`},
		{"relative root", func(c *cgroups.Config) { c.CgroupRoot = "kubelet" },
			"cgroupRoot", `cgroupRoot: "kubelet" must be an absolute path`},
		{"bad page size", func(c *cgroups.Config) { c.HugePageSizes = []int64{3 << 20} },
			"hugePageSizes[0]", "hugePageSizes[0]: page size 3145728 must be a power of two from 4096 to 17179869184 bytes"},
		{"maxPods", func(c *cgroups.Config) { c.MaxPods = 0 }, "maxPods", "maxPods: 0 must be within 1 and 2048"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := build(tc.mod)
			var fe *cgroups.FieldError
			require.True(t, errors.As(err, &fe), "got %v (%T), want a *FieldError", err, err)
			assert.Equal(t, tc.want, err.Error(), "got field %q:\n  %s\nwant field %q:\n  %s", fe.Field, err, tc.field, tc.want)
			assert.Equal(t, tc.field, fe.Field, "got field %q:\n  %s\nwant field %q:\n  %s", fe.Field, err, tc.field, tc.want)
		})
	}

	for _, tc := range []struct {
		in   map[string]string
		want string
	}{
		{map[string]string{"memory": "50%"}, ""},
		{map[string]string{"cpu": "50%"}, `cannot reserve "cpu" resource`},
		{map[string]string{"memory": "50"}, `failed to parse percentage "50" for "memory" resource: percentage expected, got '50'`},
		{map[string]string{"memory": "x%"}, `failed to parse percentage "x%" for "memory" resource: invalid number in percentage 'x%'`},
		{map[string]string{"memory": "-1%"}, `failed to parse percentage "-1%" for "memory" resource: percentage must be between 0 and 100`},
	} {
		p, err := cgroups.ParseQOSReserved(tc.in)
		switch {
		case tc.want == "" && (err != nil || p == nil || *p != 50):
			t.Errorf("ParseQOSReserved(%v) = %v, %v", tc.in, p, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("ParseQOSReserved(%v) error %v, want %q", tc.in, err, tc.want)
		}
	}
}

// TestBadPods: each malformed pod gets an error naming the field.
func TestBadPods(t *testing.T) {
	good := func() *pod.Pod {
		return &pod.Pod{UID: "u1", Containers: []pod.Container{ctr("a", rl("cpu", int64(100)), nil)}}
	}
	for _, tc := range []struct {
		name string
		mod  func(p *pod.Pod)
		want string
	}{
		{"negative request", func(p *pod.Pod) { p.Containers[0].Requests["cpu"] = -5 }, "pods[0].containers[0].requests[cpu]: -5 must not be negative"},
		{"huge cpu", func(p *pod.Pod) { p.Containers[0].Limits = rl("cpu", int64(1)<<33) }, "pods[0].containers[0].limits[cpu]: 8589934592 exceeds the bound of 4294967296"},
		{"no app container", func(p *pod.Pod) { p.Containers = nil }, "pods[0].containers: a pod needs at least one app container"},
		{"bad name", func(p *pod.Pod) { p.Containers[0].Name = "A/b" }, `pods[0].containers[0].name: "A/b" must be a DNS label (lower case letters, digits and '-', at most 63 characters)`},
		{"duplicate name", func(p *pod.Pod) { p.InitContainers = []pod.Container{ctr("a", nil, nil)} }, `pods[0].containers[0].name: "a" is used by two containers of the pod`},
		{"bad uid", func(p *pod.Pod) { p.UID = "../x" }, `pods[0].uid: "../x" must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit, at most 253 characters`},
		{"hugepage size not on host", func(p *pod.Pod) { p.Overhead = rl("hugepages-1Gi", gi) }, "pods[0].overhead[hugepages-1Gi]: page size 1GB is not one of the host's hugePageSizes"},
		{"unparsable hugepage name", func(p *pod.Pod) { p.Containers[0].Requests["hugepages-two"] = 1 }, `pods[0].containers[0].requests[hugepages-two]: "hugepages-two" does not name a page size`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := good()
			tc.mod(p)
			_, err := cgroups.Build(seedNode(), []*pod.Pod{p})
			assert.EqualError(t, err, tc.want, "got %v\nwant %s", err, tc.want)
		})
	}

	many := good()
	for i := range cgroups.MaxContainersPerPod {
		many.Containers = append(many.Containers, ctr(fmt.Sprintf("c%d", i), nil, nil))
	}
	_, err := cgroups.Build(seedNode(), []*pod.Pod{many})
	assert.EqualError(t, err, "pods[0].containers: 257 init and app containers exceed the bound of 256", "too many containers")

	c := seedNode()
	c.MaxPods = 2
	pods := []*pod.Pod{good(), good(), good()}
	pods[1].UID, pods[2].UID = "u2", "u3"
	_, err = cgroups.Build(c, pods)
	assert.EqualError(t, err, "pods: 3 pods exceed maxPods 2", "too many pods")
	pods = []*pod.Pod{good(), good()}
	_, err = cgroups.Build(seedNode(), pods)
	assert.EqualError(t, err, `pods[1].uid: "u1" is also the UID of pods[0]`, "duplicate UID")
	c = seedNode()
	c.CgroupDriver = cgroups.DriverSystemd
	pods[0].UID, pods[1].UID = "a-b", "a_b"
	_, err = cgroups.Build(c, pods)
	assert.ErrorContains(t, err, "would share the path", "systemd collision")
}

// TestPodConfigQOSFollowsPodLevelGate: with PodLevelResources off the
// kubelet's GetPodQOS ignores spec.resources, so a pod whose empty
// spec.resources makes it BestEffort with the gate on is Burstable with it
// off and gets its container's cpu limit as a quota (v1.36.3
// ComputePodQOS; found by conformance/ TestResourceConfigForPod).
func TestPodConfigQOSFollowsPodLevelGate(t *testing.T) {
	p := &pod.Pod{
		Resources:  &pod.Resources{},
		Containers: []pod.Container{ctr("a", rl("cpu", int64(1)), rl("cpu", int64(1)))},
	}
	on, _ := cgroups.ResourceConfigForPod(p, cgroups.PodOptions{EnforceCPULimits: true, CPUPeriodUS: 100000, PodLevelResources: true})
	assert.Nil(t, on.CPUQuota, "gate on: quota, want none (BestEffort)")
	off, _ := cgroups.ResourceConfigForPod(p, cgroups.PodOptions{EnforceCPULimits: true, CPUPeriodUS: 100000, PodLevelResources: false})
	require.NotNil(t, off.CPUQuota, "gate off: quota, want %d (Burstable with a cpu limit)", cgroups.MinQuotaPeriod)
	assert.Equal(t, int64(cgroups.MinQuotaPeriod), *off.CPUQuota, "gate off: quota (Burstable with a cpu limit)")
}

// podLevelGatePods are pods whose class depends on the PodLevelResources
// gate: with it on a non-nil spec.resources decides (v1.36.3
// ComputePodQOS, pkg/apis/core/v1/helper/qos/qos.go:92), with it off the
// containers do. The kubelet admits the first two with the gate off (an
// empty spec.resources is not "set", component-helpers
// IsPodLevelResourcesSet); it refuses the others
// (pkg/kubelet/lifecycle/features_linux.go:28), but Build classifies
// whatever pods it is given as GetPodQOS would.
func podLevelGatePods() []*pod.Pod {
	return []*pod.Pod{
		// BestEffort by the empty spec.resources, Guaranteed by its containers.
		{UID: "empty-guaranteed", Name: "empty-guaranteed",
			Resources:  &pod.Resources{},
			Containers: []pod.Container{ctr("a", rl("cpu", int64(300), "memory", 64*mi), rl("cpu", int64(300), "memory", 64*mi))}},
		// BestEffort by the empty spec.resources, Burstable by its containers.
		{UID: "empty-burstable", Name: "empty-burstable",
			Resources:  &pod.Resources{},
			Containers: []pod.Container{ctr("a", rl("cpu", int64(400), "memory", 32*mi), nil)}},
		// Guaranteed at pod level, Burstable by its containers.
		{UID: "pl-guaranteed", Name: "pl-guaranteed",
			Resources:  &pod.Resources{Requests: rl("cpu", int64(1000), "memory", gi), Limits: rl("cpu", int64(1000), "memory", gi)},
			Containers: []pod.Container{ctr("a", rl("cpu", int64(500), "memory", 256*mi), nil)}},
		// Burstable at pod level, Guaranteed by its containers.
		{UID: "pl-burstable", Name: "pl-burstable",
			Resources:  &pod.Resources{Requests: rl("cpu", int64(1000), "memory", 512*mi)},
			Containers: []pod.Container{ctr("b", rl("cpu", int64(200), "memory", 128*mi), rl("cpu", int64(200), "memory", 128*mi))}},
		// Burstable at pod level, BestEffort by its containers.
		{UID: "pl-besteffort", Name: "pl-besteffort",
			Resources:  &pod.Resources{Requests: rl("cpu", int64(250))},
			Containers: []pod.Container{ctr("c", nil, nil)}},
	}
}

func hasPath(h cgroups.Hierarchy, path string) bool {
	_, ok := h.Lookup(path)
	return ok
}

// TestBuildTierFollowsPodLevelGate: the kubelet parents a pod cgroup under
// the tier of GetPodQOS (v1.36.3 pkg/kubelet/cm/pod_container_manager_linux.go:113),
// which ignores spec.resources when PodLevelResources is off, so Build must
// place each pod, and label it and its containers, by the same class.
func TestBuildTierFollowsPodLevelGate(t *testing.T) {
	for _, tc := range []struct {
		gate bool
		want map[string]pod.QOSClass // UID -> tier
	}{
		{true, map[string]pod.QOSClass{"empty-guaranteed": pod.BestEffort, "empty-burstable": pod.BestEffort,
			"pl-guaranteed": pod.Guaranteed, "pl-burstable": pod.Burstable, "pl-besteffort": pod.Burstable}},
		{false, map[string]pod.QOSClass{"empty-guaranteed": pod.Guaranteed, "empty-burstable": pod.Burstable,
			"pl-guaranteed": pod.Burstable, "pl-burstable": pod.Guaranteed, "pl-besteffort": pod.BestEffort}},
	} {
		t.Run(fmt.Sprintf("gate=%t", tc.gate), func(t *testing.T) {
			c := seedNode()
			c.PodLevelResources = tc.gate
			h := mustBuild(t, c, podLevelGatePods())
			for uid, class := range tc.want {
				path, err := cgroups.PodPath(c, class, uid)
				require.NoError(t, err)
				cg, ok := h.Lookup(path)
				if !assert.True(t, ok, "pod %s: no cgroup at %s (the %s tier)", uid, path, class) {
					continue
				}
				assert.Equal(t, class, cg.QOS, "pod %s: Cgroup.QOS", uid)
			}
			for _, cg := range h {
				if cg.Kind == cgroups.KindContainer {
					assert.Equal(t, tc.want[cg.PodUID], cg.QOS, "container %s: Cgroup.QOS", cg.Path)
				}
			}
		})
	}
	// status.qosClass wins over the spec, gate or not (GetPodQOS, qos.go:39).
	c := seedNode()
	c.PodLevelResources = false
	pods := podLevelGatePods()
	pods[0].QOSClass = pod.Burstable
	h := mustBuild(t, c, pods)
	path, _ := cgroups.PodPath(c, pod.Burstable, "empty-guaranteed")
	assert.True(t, hasPath(h, path), "status.qosClass Burstable: pod not under kubepods/burstable")
}

// TestBurstableTierSumsFollowPodLevelGate: the QoS manager sums the
// burstable tier's cpu requests over the pods GetPodQOS calls Burstable
// (v1.36.3 qos_container_manager_linux.go:184) and the tiers' memory
// requests by the same class (getQoSMemoryRequests, :222), so with the gate
// off a pod with an empty spec.resources and container requests counts as
// Burstable, as does one Guaranteed only at pod level, while one Burstable
// only at pod level does not. The memory sums still take pod-level
// requests (PodRequests with default options, :227).
func TestBurstableTierSumsFollowPodLevelGate(t *testing.T) {
	c := seedNode()
	c.QOSReservedMemoryPercent = nil
	c.MemoryQoS = true
	c.MemoryReservationPolicy = cgroups.ReservationTiered

	c.PodLevelResources = false
	sums, err := cgroups.SumTiers(c, podLevelGatePods())
	require.NoError(t, err)
	// Burstable: empty-burstable (400m, 32Mi) and pl-guaranteed (500m from
	// its container with the gate off, 1Gi from spec.resources).
	// Guaranteed: empty-guaranteed (64Mi) and pl-burstable (512Mi).
	assert.Equal(t, (cgroups.TierSums{BurstableCPU: 900, BurstableMemory: gi + 32*mi, GuaranteedMemory: 576 * mi}), sums, "gate off: sums")
	h := mustBuild(t, c, podLevelGatePods())
	assert.Equal(t, "921", files(t, h, "kubepods/burstable", cgroups.V1)["cpu.shares"], "gate off: burstable cpu.shares (900m)")
	assert.Equal(t, "1107296256", files(t, h, "kubepods/burstable", cgroups.V2)["memory.low"], "gate off: burstable memory.low (1Gi + 32Mi)")
	assert.Equal(t, "1711276032", files(t, h, "kubepods", cgroups.V2)["memory.min"], "gate off: kubepods memory.min (1632Mi)")

	c.PodLevelResources = true
	sums, err = cgroups.SumTiers(c, podLevelGatePods())
	require.NoError(t, err)
	assert.Equal(t, (cgroups.TierSums{BurstableCPU: 1250, BurstableMemory: 512 * mi, GuaranteedMemory: gi}), sums, "gate on: sums")
}
