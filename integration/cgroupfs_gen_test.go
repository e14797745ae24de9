package integration

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/agent/cgroupfs"
	"github.com/nodeproof/nodeproof/core/cgroups"
)

// podSlots bounds the generated pods; slot i's QoS class is i%3, so its
// cgroup path never moves between tiers.
const podSlots = 6

var tierOf = [3]string{"kubepods", "kubepods/burstable", "kubepods/besteffort"}

func slotPath(slot int) string { return fmt.Sprintf("%s/pod-s%d", tierOf[slot%3], slot) }

// hugetlb2Mi tells whether the manager can write 2Mi hugetlb limits here,
// so that configs carry one only where the file exists (a host may lack the
// controller, or have other page sizes only).
func hugetlb2Mi(m *cgroupfs.Manager) bool {
	_, err := os.Stat("/sys/kernel/mm/hugepages/hugepages-2048kB")
	return err == nil && !slices.Contains(m.Missing(), hugetlbCtrl)
}

// genPodConfig draws a pod's config the way the kubelet shapes one for its
// QoS class, with values anywhere in the range the kernel accepts.
func genPodConfig(t *rapid.T, slot int, hugetlb bool) cgroups.ResourceConfig {
	var c cgroups.ResourceConfig
	quota := func() {
		c.CPUPeriod = u64(rapid.Uint64Range(1000, 1_000_000).Draw(t, "period"))
		c.CPUQuota = i64(rapid.OneOf(rapid.Just(int64(-1)), rapid.Int64Range(1000, 4_000_000)).Draw(t, "quota"))
	}
	memory := func() {
		c.Memory = i64(rapid.OneOf(rapid.Just(int64(-1)), rapid.Int64Range(4<<20, 64<<30)).Draw(t, "memory"))
	}
	switch slot % 3 {
	case 0: // Guaranteed
		c.CPUShares = u64(rapid.Uint64Range(2, 262144).Draw(t, "shares"))
		quota()
		memory()
	case 1: // Burstable
		c.CPUShares = u64(rapid.Uint64Range(2, 262144).Draw(t, "shares"))
		if rapid.Bool().Draw(t, "cpuLimited") {
			quota()
		}
		if rapid.Bool().Draw(t, "memoryLimited") {
			memory()
		}
	default: // BestEffort
		c.CPUShares = u64(2)
	}
	if rapid.Bool().Draw(t, "podPidsLimit") {
		c.PidsLimit = i64(rapid.OneOf(rapid.Just(int64(-1)), rapid.Int64Range(1, 1<<22)).Draw(t, "pids"))
	}
	if hugetlb {
		c.HugePageLimit = map[int64]int64{2 << 20: 0}
	}
	return c
}

// TestCgroupApplyGenerated applies generated sequences of pod arrivals,
// resizes and departures, each followed by an Apply of the whole node. After
// every Apply each cgroup's values read back as written, and every pod that
// went away has left every controller.
func TestCgroupApplyGenerated(t *testing.T) {
	m := newCgroupManager(t, cpuCtrl, memoryCtrl, pidsCtrl)
	hugetlb := hugetlb2Mi(m)
	rapid.Check(t, func(t *rapid.T) {
		if err := m.Delete(); err != nil {
			t.Fatalf("Delete before the check: %v", err)
		}
		node := cgroups.ResourceConfig{
			CPUShares: u64(rapid.Uint64Range(2, 262144).Draw(t, "nodeShares")),
			Memory:    i64(rapid.Int64Range(1<<30, 1<<40).Draw(t, "nodeMemory")),
		}
		pods := map[int]cgroups.ResourceConfig{}
		var previous []string
		steps := rapid.IntRange(1, 10).Draw(t, "steps")
		for step := 0; step < steps; step++ {
			slot := rapid.IntRange(0, podSlots-1).Draw(t, "slot")
			if _, there := pods[slot]; there && rapid.Bool().Draw(t, "remove") {
				delete(pods, slot)
			} else {
				pods[slot] = genPodConfig(t, slot, hugetlb)
			}
			burstable := cgroups.ResourceConfig{CPUShares: u64(rapid.Uint64Range(2, 262144).Draw(t, "burstableShares"))}
			h := []cgroups.Cgroup{
				{Path: tierOf[0], Config: node},
				{Path: tierOf[1], Config: burstable},
				{Path: tierOf[2], Config: cgroups.ResourceConfig{CPUShares: u64(2)}},
			}
			for s := 0; s < podSlots; s++ {
				if c, ok := pods[s]; ok {
					h = append(h, cgroups.Cgroup{Path: slotPath(s), Config: c})
				}
			}
			if err := m.Apply(h); err != nil {
				t.Fatalf("step %d: Apply: %v", step, err)
			}
			want := map[string][]cgroups.File{}
			var paths []string
			for _, cg := range h {
				want[cg.Path] = wantFiles(m.Version(), cg.Config)
				paths = append(paths, cg.Path)
			}
			checkApplied(t, m, h, want)
			for _, p := range previous {
				if !slices.Contains(paths, p) {
					assertGone(t, m, p)
				}
			}
			previous = paths
		}
		if err := m.Delete(); err != nil {
			t.Fatalf("Delete: %v", err)
		}
	})
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
	want := map[string][]cgroups.File{}
	files := 0
	for _, cg := range h {
		want[cg.Path] = wantFiles(m.Version(), cg.Config)
		files += len(want[cg.Path])
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
			if err := m.Apply(h); err != nil {
				b.Fatal(err)
			}
		})
		verify += elapsedMs(func() {
			for _, cg := range h {
				if err := m.Verify(cg.Path, want[cg.Path]); err != nil && !onlyUnsupported(err) {
					b.Fatal(err)
				}
			}
		})
		update += elapsedMs(func() {
			if err := m.Apply(resized); err != nil {
				b.Fatal(err)
			}
		})
		remove += elapsedMs(func() {
			if err := m.Delete(); err != nil {
				b.Fatal(err)
			}
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
