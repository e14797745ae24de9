package cgroups

import "math"

// The kubelet's CPU conversion constants (spec cgroups.md §5.1). MinShares
// and MaxShares are the kernel's bounds for cpu.shares; asking for more than
// MaxShares is what the cap protects big nodes from (§5.8).
const (
	MinShares     = 2
	MaxShares     = 262144
	SharesPerCPU  = 1024
	MilliCPUToCPU = 1000

	// QuotaPeriod is the CFS period in microseconds (100ms) the kubelet uses
	// when the CustomCPUCFSQuotaPeriod gate is off.
	QuotaPeriod = 100000
	// MinQuotaPeriod is the smallest CFS quota in microseconds (1ms) the
	// kernel accepts; the kubelet raises smaller quotas to it (§5.8: tiny
	// limits are throttled hard rather than rejected).
	MinQuotaPeriod = 1000
	// MinMilliCPULimit is the cpu limit whose quota is exactly the floor at
	// the default period: MinQuotaPeriod * MilliCPUToCPU / QuotaPeriod.
	MinMilliCPULimit = 10

	// MinWeight and MaxWeight bound cgroup v2 cpu.weight.
	MinWeight = 1
	MaxWeight = 10000
)

// MilliCPUToShares converts a cpu request in millicores to cpu.shares
// (§5.1): 0 gives MinShares, the kernel's default for "no request"; the
// result is clamped to [MinShares, MaxShares].
func MilliCPUToShares(milliCPU int64) uint64 {
	if milliCPU == 0 {
		return MinShares
	}
	// Multiplying first keeps the rounding of upstream's integer formula.
	shares := milliCPU * SharesPerCPU / MilliCPUToCPU
	if shares < MinShares {
		return MinShares
	}
	if shares > MaxShares {
		return MaxShares
	}
	return uint64(shares)
}

// MilliCPUToQuota converts a cpu limit in millicores to a CFS quota in
// microseconds over periodUS (§5.1). A limit of 0 gives 0, meaning no quota.
// Without the CustomCPUCFSQuotaPeriod gate the quota is computed over the
// default 100ms whatever period the caller passes, which is upstream's
// period quirk (§5.1, §5.8). The quota never drops below MinQuotaPeriod.
func MilliCPUToQuota(milliCPU int64, periodUS uint64, customPeriodGate bool) int64 {
	if milliCPU == 0 {
		return 0
	}
	period := int64(periodUS)
	if !customPeriodGate {
		period = QuotaPeriod
	}
	quota := milliCPU * period / MilliCPUToCPU
	if quota < MinQuotaPeriod {
		return MinQuotaPeriod
	}
	return quota
}

// SharesToMilliCPU is the kubelet's inverse of MilliCPUToShares, used when
// it reads a cgroup back: ceil(shares*1000/1024), or 0 below MinShares.
func SharesToMilliCPU(shares int64) int64 {
	if shares < MinShares {
		return 0
	}
	return (shares*MilliCPUToCPU + SharesPerCPU - 1) / SharesPerCPU
}

// QuotaToMilliCPU is the kubelet's inverse of MilliCPUToQuota: -1 (no
// quota) gives 0. A period of 0 also gives 0 rather than dividing by zero.
func QuotaToMilliCPU(quota, periodUS int64) int64 {
	if quota == -1 || periodUS == 0 {
		return 0
	}
	return quota * MilliCPUToCPU / periodUS
}

// CPUWeightLinear is the kubelet's own shares → cpu.weight conversion for
// the cgroups it manages on v2 (kubepods, QoS tiers, pods; §5.7):
// 1 + (shares-2)*9999/262142, and MaxWeight from MaxShares up. Shares below
// MinShares give MinWeight; upstream would underflow, but no kubelet config
// has them and Values rejects them.
func CPUWeightLinear(shares uint64) uint64 {
	if shares >= MaxShares {
		return MaxWeight
	}
	if shares < MinShares {
		return MinWeight
	}
	return 1 + (shares-2)*9999/262142
}

// CPUWeightToShares is the inverse the kubelet uses when it reads cpu.weight
// back on v2: (weight-1)*262142/9999 + 2.
func CPUWeightToShares(weight uint64) uint64 {
	if weight < MinWeight {
		return MinShares
	}
	return (weight-1)*262142/9999 + 2
}

// CPUWeightQuadratic is the conversion the OCI runtimes apply to a
// container's shares (runc ≥ 1.3.2, crun ≥ 1.23, opencontainers/cgroups
// v0.0.6; kubernetes #131216): a quadratic in log2(shares) fitted so that
// 2 → 1, 1024 → 100 (the kernel's default weight, matching system.slice)
// and 262144 → 10000 (§5.7).
func CPUWeightQuadratic(shares uint64) uint64 {
	switch {
	case shares == 0:
		return 0
	case shares <= MinShares:
		return MinWeight
	case shares >= MaxShares:
		return MaxWeight
	}
	l := math.Log2(float64(shares))
	exponent := (l*l+125*l)/612.0 - 7.0/34.0
	return uint64(math.Ceil(math.Pow(10, exponent)))
}
