package cgroups

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const gi = int64(1) << 30

// TestSeedExample: the model alone reproduces seed 004's numbers.
func TestSeedExample(t *testing.T) {
	both := func(cpu, mem int64) map[string]int64 { return map[string]int64{"cpu": cpu, "memory": mem} }
	n := Node{
		Capacity: map[string]int64{"cpu": 3000, "memory": 8 * gi}, EnforcePods: true, CFSQuota: true,
		PeriodUS: 100000, PeriodGate: true, QOSReserved: 100, PodPids: -1,
	}
	pods := []Pod{
		{UID: "b", Apps: []Container{{Name: "c1", Requests: both(1000, gi), Limits: both(1000, gi)}, {Name: "c2", Requests: both(1000, gi), Limits: both(2000, 2*gi)}}},
		{UID: "g", Apps: []Container{{Name: "c3", Requests: both(1000, gi), Limits: both(1000, gi)}}},
		{UID: "e", Apps: []Container{{Name: "c4"}}},
	}
	groups, err := Expected(n, pods)
	require.NoError(t, err)
	var got []string
	for _, g := range groups {
		var fs []string
		for _, f := range g.V1 {
			fs = append(fs, f.Name+"="+f.Value)
		}
		got = append(got, g.Path+" "+strings.Join(fs, ","))
	}
	want := []string{
		"kubepods cpu.shares=3072,memory.limit_in_bytes=8589934592",
		"kubepods/besteffort cpu.shares=2,memory.limit_in_bytes=5368709120",
		"kubepods/besteffort/pode cpu.shares=2",
		"kubepods/besteffort/pode/c4 cpu.shares=2,cpu.cfs_period_us=100000",
		"kubepods/burstable cpu.shares=2048,memory.limit_in_bytes=7516192768",
		"kubepods/burstable/podb cpu.shares=2048,cpu.cfs_period_us=100000,cpu.cfs_quota_us=300000,memory.limit_in_bytes=3221225472",
		"kubepods/burstable/podb/c1 cpu.shares=1024,cpu.cfs_period_us=100000,cpu.cfs_quota_us=100000,memory.limit_in_bytes=1073741824",
		"kubepods/burstable/podb/c2 cpu.shares=1024,cpu.cfs_period_us=100000,cpu.cfs_quota_us=200000,memory.limit_in_bytes=2147483648",
		"kubepods/podg cpu.shares=1024,cpu.cfs_period_us=100000,cpu.cfs_quota_us=100000,memory.limit_in_bytes=1073741824",
		"kubepods/podg/c3 cpu.shares=1024,cpu.cfs_period_us=100000,cpu.cfs_quota_us=100000,memory.limit_in_bytes=1073741824",
	}
	assert.Equal(t, strings.Join(want, "\n"), strings.Join(got, "\n"))
	assert.Equal(t, (File{"cpu.weight", "39"}), groups[len(groups)-1].V2[0], "v2 container weight (linear)")
}

// TestRequestsSidecars: sidecars add up, a regular init container runs
// beside the sidecars before it (§5.4).
func TestRequestsSidecars(t *testing.T) {
	cpu := func(v int64) map[string]int64 { return map[string]int64{"cpu": v} }
	p := Pod{
		Init: []Container{{Name: "s1", Requests: cpu(100), Sidecar: true}, {Name: "i", Requests: cpu(1000)}, {Name: "s2", Requests: cpu(200), Sidecar: true}},
		Apps: []Container{{Name: "a", Requests: cpu(300)}},
	}
	assert.Equal(t, int64(1100), Requests(p, true)["cpu"], "requests (init 1000 beside sidecar 100)")
	p.Init[1].Requests = cpu(10)
	assert.Equal(t, int64(600), Requests(p, true)["cpu"], "requests (apps and both sidecars)")
}

func TestValidateMessage(t *testing.T) {
	n := Node{Capacity: map[string]int64{"cpu": 3000, "memory": 8 * gi}, SystemReserved: map[string]int64{"cpu": 3500}, EvictionMemory: 9 * gi}
	want := `invalid Node Allocatable configuration. Resource "cpu" has a reservation of 3500m but capacity of 3. Expected capacity >= reservation. Resource "memory" has a reservation of 9Gi but capacity of 8Gi. Expected capacity >= reservation.`
	err := Validate(n)
	assert.EqualError(t, err, want, "got %v\nwant %s", err, want)
}

// TestPodLevelGateTiers: with PodLevelResources off spec.resources does not
// decide the class, so an empty spec.resources leaves a pod with Guaranteed
// containers under kubepods and one with a request in the burstable tier,
// whose shares count it; with the gate on both are BestEffort.
func TestPodLevelGateTiers(t *testing.T) {
	both := func(cpu, mem int64) map[string]int64 { return map[string]int64{"cpu": cpu, "memory": mem} }
	pods := []Pod{
		{UID: "g", HasPodResources: true, Apps: []Container{{Name: "c", Requests: both(300, gi), Limits: both(300, gi)}}},
		{UID: "b", HasPodResources: true, Apps: []Container{{Name: "c", Requests: both(500, gi)}}},
	}
	for _, tc := range []struct {
		gate bool
		want []string
	}{
		{false, []string{"kubepods", "kubepods/besteffort", "kubepods/burstable shares=512", "kubepods/burstable/podb", "kubepods/burstable/podb/c", "kubepods/podg", "kubepods/podg/c"}},
		{true, []string{"kubepods", "kubepods/besteffort", "kubepods/besteffort/podb", "kubepods/besteffort/podb/c", "kubepods/besteffort/podg", "kubepods/besteffort/podg/c", "kubepods/burstable shares=2"}},
	} {
		n := Node{Capacity: map[string]int64{"cpu": 3000, "memory": 8 * gi}, EnforcePods: true, CFSQuota: true,
			PeriodUS: 100000, PeriodGate: true, QOSReserved: -1, PodPids: -1, PodLevelGate: tc.gate}
		groups, err := Expected(n, pods)
		require.NoError(t, err)
		var got []string
		for _, g := range groups {
			s := g.Path
			if g.Path == "kubepods/burstable" {
				s += " shares=" + g.V1[0].Value
			}
			got = append(got, s)
		}
		assert.Equal(t, strings.Join(tc.want, "\n"), strings.Join(got, "\n"), "gate %t", tc.gate)
	}
	assert.Equal(t, "Guaranteed", QOS(pods[0], false), "QOS of an empty spec.resources with Guaranteed containers: %s (gate off), %s (gate on)", QOS(pods[0], false), QOS(pods[0], true))
	assert.Equal(t, "BestEffort", QOS(pods[0], true), "QOS of an empty spec.resources with Guaranteed containers: %s (gate off), %s (gate on)", QOS(pods[0], false), QOS(pods[0], true))
}
