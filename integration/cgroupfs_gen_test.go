package integration

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/agent/cgroupfs"
	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/require"
)

// Bounds of the generated nodes: few enough cgroups that a check stays in
// the milliseconds, enough pods for every QoS class to come and go.
const (
	maxGenPods  = 5
	maxGenSteps = 8
	// Every request fits the node many times over, so the QoS tiers'
	// qos-reserved memory limits stay positive and every pod is one the
	// kubelet would admit.
	genMemoryPerContainer = 512 << 20
	minGenNodeMemory      = 16 << 30
)

// hugetlb2Mi tells whether the manager can write 2Mi hugetlb limits here,
// so that configs carry one only where the file exists (a host may lack the
// controller, or have other page sizes only).
func hugetlb2Mi(m *cgroupfs.Manager) bool {
	_, err := os.Stat("/sys/kernel/mm/hugepages/hugepages-2048kB")
	return err == nil && !slices.Contains(m.Missing(), hugetlbCtrl)
}

// genNodeConfig draws a kubelet configuration for the manager's host: either
// driver (the systemd names are plain directories on cgroupfs), any CFS
// period the kubelet accepts (above 100ms the v1 write order matters),
// qos-reserved, pod pids limits, the host's 2Mi page size where it has one,
// and Memory QoS only on cgroup v2, where the kubelet enables it.
func genNodeConfig(t *rapid.T, m *cgroupfs.Manager) cgroups.Config {
	c := cgroups.DefaultConfig()
	c.CgroupDriver = rapid.SampledFrom([]cgroups.Driver{cgroups.DriverCgroupfs, cgroups.DriverSystemd}).Draw(t, "driver")
	c.CPUCFSQuotaPeriod = time.Duration(rapid.OneOf(
		rapid.Just(int64(100_000)), rapid.Int64Range(1_000, 1_000_000)).Draw(t, "periodUS")) * time.Microsecond
	c.CPUCFSQuota = rapid.Float64Range(0, 1).Draw(t, "cpuCFSQuota") < 0.9
	c.Capacity = pod.ResourceList{
		pod.CPU:    rapid.Int64Range(1, 300).Draw(t, "nodeCPUs") * 1000,
		pod.Memory: rapid.Int64Range(minGenNodeMemory, 256<<30).Draw(t, "nodeMemory"),
	}
	if rapid.Bool().Draw(t, "nodePids") {
		c.Capacity[cgroups.PIDs] = rapid.Int64Range(1024, 1<<22).Draw(t, "nodePidsLimit")
	}
	if rapid.Bool().Draw(t, "qosReserved") {
		p := rapid.Int64Range(0, 100).Draw(t, "qosReservedPercent")
		c.QOSReservedMemoryPercent = &p
	}
	if rapid.Bool().Draw(t, "podPidsLimit") {
		c.PodPidsLimit = rapid.Int64Range(1, 1<<22).Draw(t, "podPids")
	}
	if hugetlb2Mi(m) {
		c.HugePageSizes = []int64{2 << 20}
	}
	if m.Version() == cgroups.V2 {
		c.MemoryQoS = rapid.Bool().Draw(t, "memoryQoS")
		c.MemoryReservationPolicy = rapid.SampledFrom([]cgroups.MemoryReservationPolicy{cgroups.ReservationNone, cgroups.ReservationTiered}).Draw(t, "policy")
	}
	return c
}

// genContainer draws a container's requests and limits in the shape asked:
// both cpu and memory limited (and requests left to the API defaulting or
// at most the limits), some of either, or none.
func genContainer(t *rapid.T, name string, shape pod.QOSClass) pod.Container {
	c := pod.Container{Name: name, Requests: pod.ResourceList{}, Limits: pod.ResourceList{}}
	cpu := func(label string) int64 { return rapid.Int64Range(1, 4000).Draw(t, label) }
	mem := func(label string) int64 { return rapid.Int64Range(4<<20, genMemoryPerContainer).Draw(t, label) }
	switch shape {
	case pod.Guaranteed:
		c.Limits[pod.CPU], c.Limits[pod.Memory] = cpu("cpuLimit"), mem("memoryLimit")
	case pod.Burstable:
		if rapid.Bool().Draw(t, "cpuRequest") {
			c.Requests[pod.CPU] = cpu("cpuRequest")
		}
		if rapid.Bool().Draw(t, "memoryRequest") {
			c.Requests[pod.Memory] = mem("memoryRequest")
		}
		if rapid.Bool().Draw(t, "cpuLimit") {
			c.Limits[pod.CPU] = max(c.Requests[pod.CPU], cpu("cpuLimit"))
		}
		if rapid.Bool().Draw(t, "memoryLimit") {
			c.Limits[pod.Memory] = max(c.Requests[pod.Memory], mem("memoryLimit"))
		}
	}
	return c
}

// genPod draws a pod of one QoS class with one to three app containers
// and, sometimes, a sidecar, defaulted as the API server does. The class
// decides the shape of every container, so a Guaranteed pod is Guaranteed.
func genPod(t *rapid.T, uid string) *pod.Pod {
	shape := rapid.SampledFrom([]pod.QOSClass{pod.Guaranteed, pod.Burstable, pod.BestEffort}).Draw(t, "qos")
	p := &pod.Pod{UID: uid, Name: "pod-" + uid, Namespace: "default", Phase: pod.Running}
	if rapid.Bool().Draw(t, "sidecar") {
		s := genContainer(t, "sidecar", shape)
		s.RestartPolicy = pod.RestartAlways
		p.InitContainers = append(p.InitContainers, s)
	}
	for i := range rapid.IntRange(1, 3).Draw(t, "containers") {
		p.Containers = append(p.Containers, genContainer(t, fmt.Sprintf("app-%d", i), shape))
	}
	p.ApplyDefaults()
	return p
}

// TestCgroupApplyGenerated plays a node on the real cgroupfs: under a
// generated kubelet configuration pods arrive and leave; after each step
// core builds the hierarchy (cgroups.Build) and the manager applies it.
// Every cgroup then reads back what core's Values renders for it (up to the
// kernel's rounding, which Verify knows), the cgroups that stayed were
// updated in place (same directory), and every cgroup of a pod that left is
// gone from every controller. Cleanup checks that nothing is left.
func TestCgroupApplyGenerated(t *testing.T) {
	m := newCgroupManager(t, cpuCtrl, memoryCtrl, pidsCtrl)
	rapid.Check(t, func(t *rapid.T) {
		require.NoError(t, m.Delete(), "Delete before the check")
		cfg := genNodeConfig(t, m)
		var pods []*pod.Pod
		inodes := map[string]uint64{} // path → directory inode after the last step
		next := 0
		steps := rapid.IntRange(1, maxGenSteps).Draw(t, "steps")
		for step := range steps {
			if len(pods) > 0 && (len(pods) == maxGenPods || rapid.Bool().Draw(t, "remove")) {
				i := rapid.IntRange(0, len(pods)-1).Draw(t, "leaving")
				pods = slices.Delete(pods, i, i+1)
			} else {
				next++
				pods = append(pods, genPod(t, fmt.Sprintf("%08x-0000-4000-8000-%012x", next, step)))
			}
			h, err := cgroups.Build(cfg, pods)
			require.NoError(t, err, "step %d: Build", step)
			require.NoError(t, m.Apply(h), "step %d: Apply", step)
			checkApplied(t, m, h, coreFiles(t, m.Version(), h))
			now := map[string]uint64{}
			for _, cg := range h {
				now[cg.Path] = dirInode(t, m, cg.Path)
				if before, stayed := inodes[cg.Path]; stayed && before != now[cg.Path] {
					t.Errorf("step %d: %s was created again instead of updated in place", step, cg.Path)
				}
			}
			for _, p := range slices.Sorted(maps.Keys(inodes)) {
				if _, ok := now[p]; !ok {
					assertGone(t, m, p)
				}
			}
			inodes = now
		}
		require.NoError(t, m.Delete(), "Delete")
	})
}

// dirInode is the inode of a cgroup's first directory.
func dirInode(t reporter, m *cgroupfs.Manager, path string) uint64 {
	t.Helper()
	dirs, err := m.Dirs(path)
	require.NoError(t, err)
	return inode(t, dirs[0])
}

// nodeOf110Pods is a full node at the kubelet's default of 110 pods: 30
// Guaranteed, 60 Burstable (half of them with limits), 20 BestEffort.
func nodeOf110Pods(hugetlb bool) []cgroups.Cgroup {
	hp := func(limit int64) map[int64]int64 {
		if !hugetlb {
			return nil
		}
		return map[int64]int64{2 << 20: limit}
	}
	h := []cgroups.Cgroup{
		{Path: "kubepods", Config: cgroups.ResourceConfig{CPUShares: u64(65536), Memory: i64(250 << 30), PidsLimit: i64(1 << 20), HugePageLimit: hp(1 << 62)}},
		{Path: "kubepods/burstable", Config: cgroups.ResourceConfig{CPUShares: u64(30720), HugePageLimit: hp(1 << 62)}},
		{Path: "kubepods/besteffort", Config: cgroups.ResourceConfig{CPUShares: u64(2), HugePageLimit: hp(1 << 62)}},
	}
	for i := 0; i < 110; i++ {
		uid := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		switch {
		case i < 30:
			h = append(h, cgroups.Cgroup{Path: "kubepods/pod" + uid, Config: cgroups.ResourceConfig{
				CPUShares: u64(1024), CPUQuota: i64(100000), CPUPeriod: u64(100000), Memory: i64(int64(i+1) << 28),
				PidsLimit: i64(4096), HugePageLimit: hp(0)}})
		case i < 90:
			c := cgroups.ResourceConfig{CPUShares: u64(uint64(100 + i)), PidsLimit: i64(4096), HugePageLimit: hp(0)}
			if i%2 == 0 {
				c.CPUQuota, c.CPUPeriod, c.Memory = i64(int64(20000+i*100)), u64(100000), i64(int64(i)*100_000_000)
			}
			h = append(h, cgroups.Cgroup{Path: "kubepods/burstable/pod" + uid, Config: c})
		default:
			h = append(h, cgroups.Cgroup{Path: "kubepods/besteffort/pod" + uid, Config: cgroups.ResourceConfig{
				CPUShares: u64(2), PidsLimit: i64(4096), HugePageLimit: hp(0)}})
		}
	}
	return h
}

// BenchmarkApplyReadBack110Pods measures a full node on the real cgroupfs:
// creating the 113 cgroups (Apply on an empty root), reading every value back
// (Verify), updating every pod in place (Apply with new limits), and removing
// the tree (Delete). Each phase is reported in ms per node.
func BenchmarkApplyReadBack110Pods(b *testing.B) {
	m := newCgroupManager(b, cpuCtrl, memoryCtrl, pidsCtrl)
	h := nodeOf110Pods(hugetlb2Mi(m))
	want := coreFiles(b, m.Version(), h)
	files := 0
	for _, f := range want {
		files += len(f)
	}
	resized := slices.Clone(h)
	for i := range resized {
		c := resized[i].Config
		if c.CPUShares != nil && *c.CPUShares > 2 {
			c.CPUShares = u64(*c.CPUShares + 1)
		}
		resized[i].Config = c
	}
	var create, verify, update, remove float64
	n := 0
	for b.Loop() {
		create += elapsedMs(func() {
			require.NoError(b, m.Apply(h))
		})
		verify += elapsedMs(func() {
			for _, cg := range h {
				if err := m.Verify(cg.Path, want[cg.Path]); err != nil && !onlyUnsupported(err) {
					b.Fatal(err)
				}
			}
		})
		update += elapsedMs(func() {
			require.NoError(b, m.Apply(resized))
		})
		remove += elapsedMs(func() {
			require.NoError(b, m.Delete())
		})
		n++
	}
	b.ReportMetric(create/float64(n), "create-ms")
	b.ReportMetric(verify/float64(n), "readback-ms")
	b.ReportMetric(update/float64(n), "update-ms")
	b.ReportMetric(remove/float64(n), "delete-ms")
	b.ReportMetric(float64(files), "files")
}

// elapsedMs runs f and returns how long it took in milliseconds.
func elapsedMs(f func()) float64 {
	start := time.Now()
	f()
	return float64(time.Since(start)) / float64(time.Millisecond)
}

// onlyUnsupported tells a Verify error that only reports missing
// controllers from one that found a difference.
func onlyUnsupported(err error) bool {
	var un *cgroupfs.UnsupportedError
	var mismatch *cgroupfs.MismatchError
	return errors.As(err, &un) && !errors.As(err, &mismatch)
}
