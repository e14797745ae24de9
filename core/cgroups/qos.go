package cgroups

import (
	"strconv"

	"github.com/nodeproof/nodeproof/core/pod"
)

// UnboundedHugePages is the hugetlb limit the QoS tiers get for every page
// size: 1<<62, far above any node's memory (§5.5).
const UnboundedHugePages = int64(1) << 62

// QOSConfigs are the QoS manager's periodic update of the three tiers
// (UpdateCgroups, §5.5). Guaranteed is kubepods itself, which this update
// touches only for hugepages and Memory QoS.
type QOSConfigs struct {
	Guaranteed ResourceConfig
	Burstable  ResourceConfig
	BestEffort ResourceConfig
}

// TierSums are the per-class sums the QoS update works from. A pod's class
// is Config.PodQOS, so with PodLevelResources off spec.resources does not
// decide which sum a pod joins.
type TierSums struct {
	// BurstableCPU is Σ cpu requests of Burstable pods (PodRequests with
	// overhead, pod-level resources as the gate says), in millicores.
	BurstableCPU int64
	// GuaranteedMemory and BurstableMemory are Σ memory requests with
	// overhead; they always honour pod-level requests, gate or not,
	// because upstream computes them with default options.
	GuaranteedMemory int64
	BurstableMemory  int64
}

// SumTiers computes TierSums over pods, failing if a sum overflows.
func SumTiers(c Config, pods []*pod.Pod) (TierSums, error) {
	var s TierSums
	var err error
	for i, p := range pods {
		field := "pods[" + strconv.Itoa(i) + "]"
		// The class is GetPodQOS's under the gate, for the cpu sum
		// (setCPUCgroupConfig) and the memory sums (getQoSMemoryRequests).
		switch c.PodQOS(p) {
		case pod.Burstable:
			all := p.EffectiveRequests(pod.Options{})
			cpu := all[pod.CPU]
			if !c.PodLevelResources && p.HasPodLevelRequests() {
				cpu = p.EffectiveRequests(pod.Options{SkipPodLevelResources: true})[pod.CPU]
			}
			if s.BurstableCPU, err = checkedAdd(field, s.BurstableCPU, cpu); err != nil {
				return s, err
			}
			mem := all[pod.Memory]
			if s.BurstableMemory, err = checkedAdd(field, s.BurstableMemory, mem); err != nil {
				return s, err
			}
		case pod.Guaranteed:
			mem := p.EffectiveRequests(pod.Options{})[pod.Memory]
			if s.GuaranteedMemory, err = checkedAdd(field, s.GuaranteedMemory, mem); err != nil {
				return s, err
			}
		}
	}
	return s, nil
}

// QOSTierConfigs computes the QoS update for the active pods under c.
func QOSTierConfigs(c Config, pods []*pod.Pod) (QOSConfigs, error) {
	sums, err := SumTiers(c, pods)
	if err != nil {
		return QOSConfigs{}, err
	}
	var q QOSConfigs

	// CPU: the burstable tier's shares follow its pods' requests, so that a
	// share means the same CPU under the tier as beside it under kubepods;
	// besteffort always gets the minimum. The Guaranteed tier is kubepods,
	// whose shares come from node allocatable, not from this update.
	burstableShares := MilliCPUToShares(sums.BurstableCPU)
	bestEffortShares := uint64(MinShares)
	q.Burstable.CPUShares = &burstableShares
	q.BestEffort.CPUShares = &bestEffortShares

	// Hugepages stay unbounded on all three tiers, kubepods included.
	for _, rc := range []*ResourceConfig{&q.Guaranteed, &q.Burstable, &q.BestEffort} {
		rc.HugePageLimit = map[int64]int64{}
		for _, size := range c.HugePageSizes {
			rc.HugePageLimit[size] = UnboundedHugePages
		}
	}

	if c.MemoryQoS {
		// v1.36 writes the tiers under either policy; None writes zeros so
		// that a node switched back from TieredReservation is cleared.
		var rootMin, burstableLow int64
		if c.MemoryReservationPolicy == ReservationTiered {
			if rootMin, err = checkedAdd("memoryQoS", sums.GuaranteedMemory, sums.BurstableMemory); err != nil {
				return QOSConfigs{}, err
			}
			burstableLow = sums.BurstableMemory
		}
		q.Guaranteed.Unified = map[string]string{"memory.min": strconv.FormatInt(rootMin, 10)}
		q.Burstable.Unified = map[string]string{"memory.low": strconv.FormatInt(burstableLow, 10)}
	}

	if p := c.QOSReservedMemoryPercent; p != nil {
		allocatable := NodeAllocatableAbsolute(c)[pod.Memory]
		// Upstream skips the limits when it cannot tell the allocatable
		// memory (standalone mode reports 0).
		if allocatable > 0 {
			if sums.GuaranteedMemory > maxInt64/100 || sums.BurstableMemory > maxInt64/100 {
				return QOSConfigs{}, fieldErr("qosReserved[memory]", "the summed memory requests overflow the reservation arithmetic")
			}
			// Each product is divided by 100 on its own, in int64, as
			// upstream does; the order matters for the rounding.
			burstableLimit := allocatable - sums.GuaranteedMemory**p/100
			bestEffortLimit := burstableLimit - sums.BurstableMemory**p/100
			q.Burstable.Memory = &burstableLimit
			q.BestEffort.Memory = &bestEffortLimit
		}
	}
	return q, nil
}
