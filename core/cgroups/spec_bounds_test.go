package cgroups_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests of this file pin each bound and each character class at its
// edge, where the mutation run (docs/mutation.md) found that the tests only
// checked one step past it.

// TestConfigAcceptsTheBounds: every bound Config.Validate enforces is
// inclusive, and a cgroup root may use each end of its character ranges.
func TestConfigAcceptsTheBounds(t *testing.T) {
	var sizes []int64
	for i := range cgroups.MaxHugePageSizes {
		sizes = append(sizes, 4<<10<<i)
	}
	for _, tc := range []struct {
		name string
		mod  func(*cgroups.Config)
	}{
		{"MaxHugePageSizes page sizes", func(c *cgroups.Config) { c.HugePageSizes = sizes }},
		{"maxPods of MaxPodsBound", func(c *cgroups.Config) { c.MaxPods = cgroups.MaxPodsBound }},
		{"root component of MaxNameLength bytes", func(c *cgroups.Config) { c.CgroupRoot = "/" + strings.Repeat("r", cgroups.MaxNameLength) }},
		{"root component of every character class's ends", func(c *cgroups.Config) { c.CgroupRoot = "/azAZ09_.-/a.b" }},
		{"hugepages capacity of MaxQuantity", func(c *cgroups.Config) {
			c.HugePageSizes = []int64{2 << 20}
			c.Capacity["hugepages-2Mi"] = cgroups.MaxQuantity
		}},
		{"cpu capacity of MaxMilliCPU beside a hugepages entry", func(c *cgroups.Config) {
			c.HugePageSizes = []int64{2 << 20}
			c.Capacity = rl("cpu", int64(cgroups.MaxMilliCPU), "memory", int64(cgroups.MaxQuantity), "hugepages-2Mi", 2*mi)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := seedNode()
			tc.mod(&c)
			assert.NoError(t, c.Validate())
		})
	}
}

// TestConfigRejectsPastTheBounds asks Validate itself (Build would catch a
// bad root again when it names the cgroups, hiding a Validate that let it
// through).
func TestConfigRejectsPastTheBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*cgroups.Config)
		want string
	}{
		{"relative root", func(c *cgroups.Config) { c.CgroupRoot = "kubepods" }, `cgroupRoot: "kubepods" must be an absolute path`},
		{"space in the root", func(c *cgroups.Config) { c.CgroupRoot = "/a b" },
			`cgroupRoot: component "a b" must be a name of letters, digits, '_', '.' and '-'`},
		{"tilde in the root", func(c *cgroups.Config) { c.CgroupRoot = "/a~b" },
			`cgroupRoot: component "a~b" must be a name of letters, digits, '_', '.' and '-'`},
		{"colon in the root", func(c *cgroups.Config) { c.CgroupRoot = "/a:b" },
			`cgroupRoot: component "a:b" must be a name of letters, digits, '_', '.' and '-'`},
		{"hugepages capacity of a size not listed", func(c *cgroups.Config) { c.Capacity["hugepages-2Mi"] = 2 * mi },
			"capacity[hugepages-2Mi]: page size 2097152 is not one of hugePageSizes"},
		{"reserving a resource that is not reservable", func(c *cgroups.Config) { c.SystemReserved = rl("example.com/gpu", int64(1)) },
			`cannot reserve "example.com/gpu" resource`},
		// Alone in the list, so that no other entry sends the check down its
		// slow path.
		{"memory capacity past MaxQuantity", func(c *cgroups.Config) { c.Capacity = rl("memory", int64(cgroups.MaxQuantity+1)) },
			"capacity[memory]: 70368744177665 exceeds the bound of 70368744177664"},
		{"cpu capacity past MaxMilliCPU", func(c *cgroups.Config) { c.Capacity = rl("cpu", int64(cgroups.MaxMilliCPU+1)) },
			"capacity[cpu]: 4294967297 exceeds the bound of 4294967296"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := seedNode()
			tc.mod(&c)
			assert.EqualError(t, c.Validate(), tc.want)
		})
	}
}

// TestQOSReservedAcceptsTheBounds: 0% and 100% are both valid percentages.
func TestQOSReservedAcceptsTheBounds(t *testing.T) {
	for _, v := range []int64{0, 100} {
		p, err := cgroups.ParseQOSReserved(map[string]string{"memory": fmt.Sprintf("%d%%", v)})
		require.NoError(t, err, "%d%%", v)
		require.NotNil(t, p, "%d%%", v)
		assert.Equal(t, v, *p)
	}
}

// TestReservationEqualToCapacity: upstream's rule is capacity >= reservation,
// so a node that reserves all of its capacity is valid.
func TestReservationEqualToCapacity(t *testing.T) {
	c := seedNode()
	// The default hard eviction threshold reserves 100Mi of memory.
	c.SystemReserved = rl("cpu", int64(3000), "memory", 8*gi-100*mi)
	require.NoError(t, cgroups.ValidateNodeAllocatable(c))
	c.SystemReserved["memory"]++
	assert.ErrorContains(t, cgroups.ValidateNodeAllocatable(c), `Resource "memory" has a reservation of 8589934593 but capacity of 8Gi.`)
}

// TestPodsAtTheBounds: every pod bound Build enforces is inclusive, and
// names may use each end of their character ranges.
func TestPodsAtTheBounds(t *testing.T) {
	one := func(uid string, ctrs ...pod.Container) *pod.Pod {
		return &pod.Pod{UID: uid, Containers: ctrs}
	}
	full := one("full")
	for i := range cgroups.MaxContainersPerPod {
		full.Containers = append(full.Containers, ctr(fmt.Sprintf("c%d", i), nil, nil))
	}
	withIDs := one("ids", ctr("a", nil, nil), ctr("b", nil, nil))
	withIDs.Containers[0].RuntimeID, withIDs.Containers[1].RuntimeID = "r1", "r2"
	for _, tc := range []struct {
		name string
		pods []*pod.Pod
	}{
		{"maxPods pods", []*pod.Pod{one("u1", ctr("a", nil, nil)), one("u2", ctr("a", nil, nil))}},
		{"MaxContainersPerPod containers", []*pod.Pod{full}},
		{"container name of 63 bytes", []*pod.Pod{one("u1", ctr(strings.Repeat("n", 63), nil, nil))}},
		{"container name with z and 9", []*pod.Pod{one("u1", ctr("z-9", nil, nil))}},
		{"UID of MaxNameLength bytes", []*pod.Pod{one(strings.Repeat("u", cgroups.MaxNameLength), ctr("a", nil, nil))}},
		{"UID of every character class's ends", []*pod.Pod{one("azAZ09_.-z", ctr("a", nil, nil))}},
		{"distinct runtime IDs", []*pod.Pod{withIDs}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := seedNode()
			c.MaxPods = 2
			_, err := cgroups.Build(c, tc.pods)
			assert.NoError(t, err)
		})
	}
}

// TestPodsPastTheBounds: the characters and quantities just outside what
// TestPodsAtTheBounds accepts are refused.
func TestPodsPastTheBounds(t *testing.T) {
	good := func() *pod.Pod {
		return &pod.Pod{UID: "u1", Containers: []pod.Container{ctr("a", rl("cpu", int64(100)), nil)}}
	}
	const uidRule = "must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit, at most 253 characters"
	for _, tc := range []struct {
		name string
		mod  func(p *pod.Pod)
		want string
	}{
		{"container name ending in '-'", func(p *pod.Pod) { p.Containers[0].Name = "a-" },
			`pods[0].containers[0].name: "a-" must be a DNS label (lower case letters, digits and '-', at most 63 characters)`},
		{"UID ending in '-'", func(p *pod.Pod) { p.UID = "a-" }, `pods[0].uid: "a-" ` + uidRule},
		{"UID ending in '.'", func(p *pod.Pod) { p.UID = "a." }, `pods[0].uid: "a." ` + uidRule},
		{"UID with '~'", func(p *pod.Pod) { p.UID = "a~b" }, `pods[0].uid: "a~b" ` + uidRule},
		{"UID with '['", func(p *pod.Pod) { p.UID = "a[b" }, `pods[0].uid: "a[b" ` + uidRule},
		{"shared runtime ID", func(p *pod.Pod) {
			p.Containers = append(p.Containers, ctr("b", nil, nil))
			p.Containers[0].RuntimeID, p.Containers[1].RuntimeID = "r1", "r1"
		}, `pods[0].containers[1].runtimeID: "r1" is the runtime ID of two containers of the pod`},
		{"memory request past MaxQuantity", func(p *pod.Pod) { p.Containers[0].Requests["memory"] = cgroups.MaxQuantity + 1 },
			"pods[0].containers[0].requests[memory]: 70368744177665 exceeds the bound of 70368744177664"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := good()
			tc.mod(p)
			_, err := cgroups.Build(seedNode(), []*pod.Pod{p})
			assert.EqualError(t, err, tc.want)
		})
	}
}

// TestConfigsLeaveUnsetFieldsNil pins the whole ResourceConfig of a
// container and of kubepods: a field the kubelet does not set stays nil
// (pids.max only for a positive PodPidsLimit, no hugetlb map without page
// sizes), and a container with only a cpu limit takes its shares from it.
func TestConfigsLeaveUnsetFieldsNil(t *testing.T) {
	u64 := func(v uint64) *uint64 { return &v }
	i64 := func(v int64) *int64 { return &v }

	rc, err := cgroups.ContainerConfig(ctr("a", nil, rl("cpu", int64(500), "memory", gi)),
		cgroups.ContainerOptions{CPUCFSQuota: true, PeriodUS: cgroups.QuotaPeriod, Weight: cgroups.WeightQuadratic})
	require.NoError(t, err)
	assert.Equal(t, cgroups.ResourceConfig{
		CPUShares: u64(512), CPUQuota: i64(50000), CPUPeriod: u64(cgroups.QuotaPeriod), Memory: i64(gi), Weight: cgroups.WeightQuadratic,
	}, rc, "container with limits only")

	c := seedNode()
	rc, err = cgroups.NodeAllocatableConfig(c)
	require.NoError(t, err)
	assert.Equal(t, cgroups.ResourceConfig{CPUShares: u64(3072), Memory: i64(8 * gi)}, rc, "kubepods without hugepages")

	p := &pod.Pod{UID: "u1", Containers: []pod.Container{ctr("a", nil, nil)}}
	for _, tc := range []struct {
		limit int64
		want  *int64
	}{{-1, nil}, {0, nil}, {1, i64(1)}} {
		c.PodPidsLimit = tc.limit
		rc, err = c.PodCgroupConfig(p)
		require.NoError(t, err)
		assert.Equal(t, tc.want, rc.PidsLimit, "podPidsLimit %d", tc.limit)
	}
}

// TestTierSumsAtInt64 sums up to exactly math.MaxInt64, which fits, and one
// past it, which is refused rather than wrapped (SumTiers takes pods that
// Build has not bounded).
func TestTierSumsAtInt64(t *testing.T) {
	guaranteed := func(uid string, memory int64) *pod.Pod {
		l := rl("cpu", int64(100), "memory", memory)
		return &pod.Pod{UID: uid, Containers: []pod.Container{ctr("a", l, l.Clone())}}
	}
	s, err := cgroups.SumTiers(seedNode(), []*pod.Pod{guaranteed("u1", math.MaxInt64-1), guaranteed("u2", 1)})
	require.NoError(t, err)
	assert.Equal(t, int64(math.MaxInt64), s.GuaranteedMemory)
	_, err = cgroups.SumTiers(seedNode(), []*pod.Pod{guaranteed("u1", math.MaxInt64), guaranteed("u2", 1)})
	assert.EqualError(t, err, "pods[1]: the sum overflows int64")
}

// TestQOSReservedAtItsArithmeticBound: a memory sum of exactly
// MaxInt64/100, in either tier, still fits the percentage arithmetic.
func TestQOSReservedAtItsArithmeticBound(t *testing.T) {
	const bound = math.MaxInt64 / 100
	for _, tc := range []struct {
		name     string
		requests pod.ResourceList
		limits   pod.ResourceList
	}{
		{"guaranteed", rl("cpu", int64(100), "memory", int64(bound)), rl("cpu", int64(100), "memory", int64(bound))},
		{"burstable", rl("memory", int64(bound)), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods := []*pod.Pod{{UID: "u1", Containers: []pod.Container{ctr("a", tc.requests, tc.limits)}}}
			q, err := cgroups.QOSTierConfigs(seedNode(), pods)
			require.NoError(t, err)
			require.NotNil(t, q.BestEffort.Memory)
			assert.Equal(t, 8*gi-bound, *q.BestEffort.Memory, "besteffort memory limit")
			pods[0].Containers[0].Requests["memory"]++
			if tc.limits != nil {
				pods[0].Containers[0].Limits["memory"]++
			}
			_, err = cgroups.QOSTierConfigs(seedNode(), pods)
			assert.EqualError(t, err, "qosReserved[memory]: the summed memory requests overflow the reservation arithmetic")
		})
	}
}

// TestValuesUnlimitedMemory: -1 is the one negative memory limit Values
// accepts, written as -1 on v1 and "max" on v2; -2 is refused.
func TestValuesUnlimitedMemory(t *testing.T) {
	unlimited := int64(-1)
	rc := cgroups.ResourceConfig{Memory: &unlimited}
	for v, want := range map[cgroups.Version][]cgroups.File{
		cgroups.V1: {{Name: "memory.limit_in_bytes", Value: "-1"}},
		cgroups.V2: {{Name: "memory.max", Value: "max"}},
	} {
		got, err := rc.Values(v)
		require.NoError(t, err, "v%d", v)
		assert.Equal(t, want, got, "v%d", v)
	}
	below := int64(-2)
	_, err := cgroups.ResourceConfig{Memory: &below}.Values(cgroups.V2)
	assert.EqualError(t, err, "memory: -2 must be -1 (unlimited) or a positive byte count")
}
