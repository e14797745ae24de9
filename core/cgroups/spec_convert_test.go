package cgroups_test

import (
	"testing"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/stretchr/testify/assert"
)

// TestSpecMilliCPUToShares checks §5.1's conversion, its floor and its cap.
func TestSpecMilliCPUToShares(t *testing.T) {
	for _, tc := range []struct {
		milli int64
		want  uint64
	}{
		{0, 2},           // no request: the kernel's minimum
		{1, 2},           // 1*1024/1000 = 1, raised to the floor
		{2, 2},           // 2
		{3, 3},           // 3.072 → 3
		{100, 102},       // 102.4 → 102
		{1000, 1024},     // one CPU
		{3000, 3072},     // the seed's node
		{256000, 262144}, // exactly MaxShares
		{256001, 262144}, // 262145.024 → capped (§5.8)
		{1 << 32, 262144},
	} {
		assert.Equal(t, tc.want, cgroups.MilliCPUToShares(tc.milli), "MilliCPUToShares(%d)", tc.milli)
	}
}

// TestSpecMilliCPUToQuota checks the quota formula, its 1ms floor and the
// period gate (§5.1).
func TestSpecMilliCPUToQuota(t *testing.T) {
	for _, tc := range []struct {
		milli  int64
		period uint64
		gate   bool
		want   int64
	}{
		{0, 100000, true, 0},           // no limit, no quota
		{1, 100000, true, 1000},        // 100µs raised to the 1ms floor
		{9, 100000, true, 1000},        // 900µs raised
		{10, 100000, true, 1000},       // MinMilliCPULimit is exactly the floor
		{11, 100000, true, 1100},       // above the floor
		{250, 100000, true, 25000},     // a quarter CPU
		{2000, 100000, true, 200000},   // two CPUs
		{1500, 50000, true, 75000},     // custom period used with the gate
		{1500, 50000, false, 150000},   // gate off: quota over 100ms anyway
		{100, 10000, true, 1000},       // 1000µs exactly
		{50, 10000, true, 1000},        // 500µs raised
		{3000, 1000000, true, 3000000}, // one-second period
	} {
		assert.Equal(t, tc.want, cgroups.MilliCPUToQuota(tc.milli, tc.period, tc.gate), "MilliCPUToQuota(%d, %d, gate=%t)", tc.milli, tc.period, tc.gate)
	}
}

func TestSpecInverseConversions(t *testing.T) {
	for _, tc := range []struct{ shares, want int64 }{{0, 0}, {1, 0}, {2, 2}, {1024, 1000}, {102, 100}, {1025, 1001}} {
		assert.Equal(t, tc.want, cgroups.SharesToMilliCPU(tc.shares), "SharesToMilliCPU(%d)", tc.shares)
	}
	for _, tc := range []struct{ quota, period, want int64 }{{-1, 100000, 0}, {-1, 1000, 0}, {1, 1000, 1}, {100000, 100000, 1000}, {25000, 100000, 250}, {75000, 50000, 1500}, {5, 0, 0}} {
		assert.Equal(t, tc.want, cgroups.QuotaToMilliCPU(tc.quota, tc.period), "QuotaToMilliCPU(%d, %d)", tc.quota, tc.period)
	}
}

// TestSpecCPUWeightLinear checks the examples §5.7 derives from the
// kubelet's formula, its cap, its floor below MinShares (where upstream's
// unsigned arithmetic would wrap), and the round trip through the inverse.
func TestSpecCPUWeightLinear(t *testing.T) {
	for _, tc := range []struct{ shares, want uint64 }{
		{0, 1}, {1, 1}, {2, 1}, {102, 4}, {204, 8}, {512, 20}, {1024, 39}, {2048, 79}, {16384, 625},
		{262143, 9999}, {262144, 10000}, {1 << 40, 10000},
	} {
		assert.Equal(t, tc.want, cgroups.CPUWeightLinear(tc.shares), "CPUWeightLinear(%d)", tc.shares)
	}
	for _, tc := range []struct{ weight, want uint64 }{{1, 2}, {39, 998}, {10000, 262144}} {
		assert.Equal(t, tc.want, cgroups.CPUWeightToShares(tc.weight), "CPUWeightToShares(%d)", tc.weight)
	}
}

// TestSpecCPUWeightQuadratic checks the runtimes' formula at the points it
// was fitted to (§5.7: 1024 → 100) and that it is monotone over the whole
// range of shares.
func TestSpecCPUWeightQuadratic(t *testing.T) {
	for _, tc := range []struct{ shares, want uint64 }{
		{0, 0}, {1, 1}, {2, 1}, {1024, 100}, {262144, 10000}, {1 << 20, 10000},
	} {
		assert.Equal(t, tc.want, cgroups.CPUWeightQuadratic(tc.shares), "CPUWeightQuadratic(%d)", tc.shares)
	}
	prev := uint64(0)
	for s := uint64(2); s <= cgroups.MaxShares; s++ {
		w := cgroups.CPUWeightQuadratic(s)
		// A plain comparison of scalars: testify's reflection on each of
		// the 262 143 shares would add a second to this test.
		if w < prev || w < cgroups.MinWeight || w > cgroups.MaxWeight {
			t.Fatalf("CPUWeightQuadratic(%d) = %d after %d: not monotone within [1, 10000]", s, w, prev)
		}
		prev = w
	}
}
