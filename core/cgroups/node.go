package cgroups

import (
	"strings"

	"github.com/nodeproof/nodeproof/core/pod"
)

// checkedAdd adds two non-negative quantities, failing instead of wrapping.
func checkedAdd(field string, a, b int64) (int64, error) {
	if b > 0 && a > maxInt64-b {
		return 0, fieldErr(field, "the sum overflows int64")
	}
	return a + b, nil
}

const maxInt64 = 1<<63 - 1

// NodeAllocatableAbsolute is capacity minus system and kube reservations,
// per capacity resource, clamped at 0 (upstream
// GetNodeAllocatableAbsolute; §5.5, §5.6). Hard eviction thresholds are
// not subtracted: kubepods and qos-reserved use this, not the allocatable
// the node reports.
func NodeAllocatableAbsolute(c Config) pod.ResourceList {
	out := pod.ResourceList{}
	for name, q := range c.Capacity {
		v := q - c.SystemReserved[name] - c.KubeReserved[name]
		if v < 0 {
			v = 0
		}
		out[name] = v
	}
	return out
}

// KubepodsAllocatable is what the kubepods cgroup is sized from: the
// absolute allocatable when "pods" is enforced, else the whole capacity.
func KubepodsAllocatable(c Config) pod.ResourceList {
	if c.EnforceNodeAllocatablePods {
		return NodeAllocatableAbsolute(c)
	}
	return c.Capacity.Clone()
}

// NodeAllocatableConfig is what the kubelet writes to kubepods when it
// enforces node allocatable (getCgroupConfig, §5.6): memory limit, cpu
// shares (no quota), pids limit and hugepages from KubepodsAllocatable, for
// whichever of them the capacity has. Build overlays the QoS manager's
// periodic update on top (see Build).
func NodeAllocatableConfig(c Config) (ResourceConfig, error) {
	rl := KubepodsAllocatable(c)
	var rc ResourceConfig
	if m, ok := rl[pod.Memory]; ok {
		rc.Memory = &m
	}
	if cpu, ok := rl[pod.CPU]; ok {
		shares := MilliCPUToShares(cpu)
		rc.CPUShares = &shares
	}
	if pids, ok := rl[PIDs]; ok {
		rc.PidsLimit = &pids
	}
	hp, err := HugePageLimits(rl)
	if err != nil {
		return ResourceConfig{}, err
	}
	if len(hp) > 0 {
		rc.HugePageLimit = hp
	}
	return rc, nil
}

// NodeAllocatableReservation is system + kube reservation + the hard
// eviction reservation, per capacity resource, leaving out zeros (upstream
// GetNodeAllocatableReservation).
func NodeAllocatableReservation(c Config) pod.ResourceList {
	eviction := hardEvictionReservation(c)
	out := pod.ResourceList{}
	for name := range c.Capacity {
		v := c.SystemReserved[name] + c.KubeReserved[name] + eviction[name]
		if v != 0 {
			out[name] = v
		}
	}
	return out
}

// hardEvictionReservation is what the memory.available and
// nodefs.available thresholds reserve of memory and ephemeral-storage. A
// percentage is taken of the capacity in float64 from upstream's float32,
// then truncated, as upstream's GetThresholdQuantity does; a later
// threshold on the same signal replaces an earlier one.
func hardEvictionReservation(c Config) pod.ResourceList {
	out := pod.ResourceList{}
	for _, th := range c.HardEviction {
		var name pod.ResourceName
		switch th.Signal {
		case SignalMemoryAvailable:
			name = pod.Memory
		case SignalNodeFsAvailable:
			name = pod.EphemeralStorage
		default:
			continue
		}
		v := th.Quantity
		if th.Percentage != 0 {
			v = int64(float64(c.Capacity[name]) * float64(th.Percentage))
		}
		out[name] = v
	}
	return out
}

// ReportedAllocatable is the allocatable the node reports and pods are
// admitted against: capacity minus every reservation including hard
// eviction, clamped at 0, with memory further reduced by each hugepages
// capacity (§5.6).
func ReportedAllocatable(c Config) pod.ResourceList {
	reserved := NodeAllocatableReservation(c)
	out := pod.ResourceList{}
	for name, q := range c.Capacity {
		v := q - reserved[name]
		if v < 0 {
			v = 0
		}
		out[name] = v
	}
	if m, ok := out[pod.Memory]; ok {
		for name, q := range c.Capacity {
			if pod.IsHugePages(name) {
				m -= q
			}
		}
		if m < 0 {
			m = 0
		}
		out[pod.Memory] = m
	}
	return out
}

// ValidateNodeAllocatable fails when a reservation (hard eviction included)
// exceeds its capacity, in upstream's words. Upstream lists the resources
// in Go map order; nodeproof lists them by name (docs/deviations.md).
func ValidateNodeAllocatable(c Config) error {
	reserved := NodeAllocatableReservation(c)
	var problems []string
	for _, name := range reserved.Names() {
		v := reserved[name]
		if c.Capacity[name]-v < 0 {
			problems = append(problems, "Resource \""+string(name)+"\" has a reservation of "+formatQuantity(name, v)+
				" but capacity of "+formatQuantity(name, c.Capacity[name])+". Expected capacity >= reservation.")
		}
	}
	if len(problems) > 0 {
		return upstreamErr("nodeAllocatable", "invalid Node Allocatable configuration. %s", strings.Join(problems, " "))
	}
	return nil
}
