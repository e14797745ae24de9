package cgroups

import (
	"math/big"
	"testing"

	core "github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ratString(r *big.Rat) string {
	if r == nil {
		return "<none>"
	}
	return r.RatString()
}

// TestSeedContention checks the seed's claim that each container of its
// example gets exactly its request (1 CPU) when every container is busy.
// The claim ignores the besteffort tier's 2 shares ("可以忽略"): with the
// BestEffort pod busy, kubepods' 3072 shares are split 1024 : 2048 : 2, so
// each container gets 3072000/3074 = 999.35m, not 1000m. That is why
// CG-CONTENTION requires room for those 2 shares. Without the BestEffort
// pod the seed's arithmetic is exact.
func TestSeedContention(t *testing.T) {
	h, err := core.Build(SeedConfig(), SeedPods())
	require.NoError(t, err)
	got := ContainerCPUUnderContention(h, 3000, core.V1)
	want := big.NewRat(3072000, 3074)
	for _, c := range []string{"kubepods/podguaranteed-1/container3", "kubepods/burstable/podburstable-1/container1", "kubepods/burstable/podburstable-1/container2"} {
		require.NotNil(t, got[c], "%s gets %s millicores, want %s (just below the 1000m request)", c, ratString(got[c]), want.RatString())
		assert.Equal(t, 0, got[c].Cmp(want), "%s gets %s millicores, want %s (just below the 1000m request)", c, ratString(got[c]), want.RatString())
	}

	h, err = core.Build(SeedConfig(), SeedPods()[:2])
	require.NoError(t, err)
	got = ContainerCPUUnderContention(h, 3000, core.V1)
	for path, cpu := range got {
		assert.Equal(t, 0, cpu.Cmp(big.NewRat(1000, 1)), "without the BestEffort pod %s gets %s millicores, want exactly 1000", path, cpu.RatString())
	}
}

// TestContentionZeroRequestSidecar records the other way a fitting node
// leaves CG-CONTENTION's domain: a container without a cpu request still
// holds 2 shares, which its pod's shares do not include. A 1000m app
// container beside a sidecar without a request gets 1000×1024/1026 m.
func TestContentionZeroRequestSidecar(t *testing.T) {
	c := core.DefaultConfig()
	c.Capacity = pod.ResourceList{pod.CPU: 1000, pod.Memory: 4 << 30}
	p := &pod.Pod{UID: "p", InitContainers: []pod.Container{{Name: "sidecar", RestartPolicy: pod.RestartAlways}},
		Containers: []pod.Container{{Name: "app", Requests: pod.ResourceList{pod.CPU: 1000}}}}
	h, err := core.Build(c, []*pod.Pod{p})
	require.NoError(t, err)
	got := ContainerCPUUnderContention(h, 1000, core.V1)["kubepods/burstable/podp/app"]
	want := big.NewRat(1024000, 1026)
	require.NotNil(t, got, "app gets %s millicores, want %s", ratString(got), want.RatString())
	assert.Equal(t, 0, got.Cmp(want), "app gets %s millicores, want %s", ratString(got), want.RatString())
}

// TestContentionOnCgroupV2 records that the seed's arithmetic does not
// carry over to cgroup v2: the kubelet's linear weights are coarse (1024
// shares → 39, 2048 → 79) and the runtime's container weights are not
// proportional (1000m → 100, 500m → 59). So CG-CONTENTION is stated for v1
// shares only.
func TestContentionOnCgroupV2(t *testing.T) {
	h, err := core.Build(SeedConfig(), SeedPods()[:2])
	require.NoError(t, err)
	got := ContainerCPUUnderContention(h, 3000, core.V2)
	// kubepods splits 79 : 39 between the burstable tier and the
	// Guaranteed pod, so the Guaranteed container gets 3000×39/118 m.
	want := big.NewRat(3000*39, 118)
	assert.Equal(t, 0, got["kubepods/podguaranteed-1/container3"].Cmp(want), "container3 gets %s m on v2, want %s", ratString(got["kubepods/podguaranteed-1/container3"]), want.RatString())

	c := core.DefaultConfig()
	c.Capacity = pod.ResourceList{pod.CPU: 1500, pod.Memory: 4 << 30}
	p := &pod.Pod{UID: "p", Containers: []pod.Container{
		{Name: "big", Requests: pod.ResourceList{pod.CPU: 1000}},
		{Name: "small", Requests: pod.ResourceList{pod.CPU: 500}},
	}}
	h, err = core.Build(c, []*pod.Pod{p})
	require.NoError(t, err)
	got = ContainerCPUUnderContention(h, 1500, core.V2)
	want = big.NewRat(1500*100, 159)
	assert.Equal(t, 0, got["kubepods/burstable/podp/big"].Cmp(want), "big gets %s m on v2, want %s (weights 100 : 59)", ratString(got["kubepods/burstable/podp/big"]), want.RatString())
}
