package cgroupfs

import (
	"sort"
	"strconv"
	"strings"

	"github.com/containerd/cgroups/v3/cgroup2"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/nodeproof/nodeproof/core/cgroups"
)

// The controllers a ResourceConfig can set, the only ones the manager
// creates cgroups in.
const (
	ctrlCPU     = "cpu"
	ctrlMemory  = "memory"
	ctrlPids    = "pids"
	ctrlHugetlb = "hugetlb"
)

var managedControllers = []string{ctrlCPU, ctrlMemory, ctrlPids, ctrlHugetlb}

// plan is what one ResourceConfig turns into: the library's resources, the
// files the library cannot write the kubelet's way and that the manager
// writes itself after it, and the controllers whose limits were asked for
// but are not available here.
type plan struct {
	v1      *specs.LinuxResources
	v2      *cgroup2.Resources
	direct  []cgroups.File
	skipped []string
}

func (p *plan) skip(controller string) {
	for _, s := range p.skipped {
		if s == controller {
			return
		}
	}
	p.skipped = append(p.skipped, controller)
}

// planV1 converts a validated config into runtime-spec LinuxResources for
// cgroup1. Nil fields stay nil, so the kernel keeps the current value.
func planV1(c cgroups.ResourceConfig, available map[string]bool) plan {
	p := plan{v1: &specs.LinuxResources{}}
	if c.CPUShares != nil || c.CPUQuota != nil || c.CPUPeriod != nil {
		if available[ctrlCPU] {
			// cgroup1 writes cfs_period_us before cfs_quota_us, so a new
			// period never meets the old quota's bounds check first.
			p.v1.CPU = &specs.LinuxCPU{Shares: c.CPUShares, Quota: c.CPUQuota, Period: c.CPUPeriod}
		} else {
			p.skip(ctrlCPU)
		}
	}
	if c.Memory != nil {
		if available[ctrlMemory] {
			// -1 reaches memory.limit_in_bytes as is: the v1 spelling of "no limit".
			p.v1.Memory = &specs.LinuxMemory{Limit: c.Memory}
		} else {
			p.skip(ctrlMemory)
		}
	}
	if c.PidsLimit != nil {
		switch {
		case !available[ctrlPids]:
			p.skip(ctrlPids)
		case *c.PidsLimit > 0:
			p.v1.Pids = &specs.LinuxPids{Limit: c.PidsLimit}
		default:
			// cgroup1 writes only positive limits; runc writes "max" for
			// -1, and so does the manager.
			p.direct = append(p.direct, cgroups.File{Name: "pids.max", Value: "max"})
		}
	}
	if len(c.HugePageLimit) > 0 {
		if available[ctrlHugetlb] {
			for _, size := range sortedPageSizes(c.HugePageLimit) {
				p.v1.HugepageLimits = append(p.v1.HugepageLimits, specs.LinuxHugepageLimit{
					Pagesize: hugePageSizeName(size), Limit: uint64(c.HugePageLimit[size]),
				})
			}
		} else {
			p.skip(ctrlHugetlb)
		}
	}
	return p
}

// planV2 converts a validated config into cgroup2.Resources. Every
// available controller gets a non-nil entry, even without limits, so that
// the library enables it in the parents' cgroup.subtree_control and every
// cgroup of the tree has the same interface files, as runc does for the
// kubelet.
func planV2(c cgroups.ResourceConfig, available map[string]bool) plan {
	p := plan{v2: &cgroup2.Resources{}}
	if available[ctrlCPU] {
		p.v2.CPU = &cgroup2.CPU{}
		if c.CPUShares != nil {
			w := CPUWeight(*c.CPUShares)
			p.v2.CPU.Weight = &w
		}
		if c.CPUQuota != nil || c.CPUPeriod != nil {
			p.v2.CPU.Max = cgroup2.CPUMax(cpuMax(c.CPUQuota, c.CPUPeriod))
		}
	} else if c.CPUShares != nil || c.CPUQuota != nil || c.CPUPeriod != nil {
		p.skip(ctrlCPU)
	}
	if available[ctrlMemory] {
		p.v2.Memory = &cgroup2.Memory{}
		if c.Memory != nil {
			if *c.Memory >= 0 {
				p.v2.Memory.Max = c.Memory
			} else {
				// cgroup2 would write "-1", which memory.max refuses.
				p.direct = append(p.direct, cgroups.File{Name: "memory.max", Value: "max"})
			}
		}
	} else if c.Memory != nil {
		p.skip(ctrlMemory)
	}
	if available[ctrlPids] {
		p.v2.Pids = &cgroup2.Pids{}
		if c.PidsLimit != nil {
			p.v2.Pids.Max = *c.PidsLimit // cgroup2 writes "max" for -1
		}
	} else if c.PidsLimit != nil {
		p.skip(ctrlPids)
	}
	if available[ctrlHugetlb] {
		entries := cgroup2.HugeTlb{}
		for _, size := range sortedPageSizes(c.HugePageLimit) {
			entries = append(entries, cgroup2.HugeTlbEntry{
				HugePageSize: hugePageSizeName(size), Limit: uint64(c.HugePageLimit[size]),
			})
		}
		p.v2.HugeTlb = &entries
	} else if len(c.HugePageLimit) > 0 {
		p.skip(ctrlHugetlb)
	}
	for _, name := range sortedKeys(c.Unified) {
		if ctrl, ok := controllerOf(name); ok && !available[ctrl] {
			p.skip(ctrl)
			continue
		}
		p.direct = append(p.direct, cgroups.File{Name: name, Value: c.Unified[name]})
	}
	sort.Strings(p.skipped)
	return p
}

// cpuMax renders cpu.max the way runc's fs2 does for the kubelet: a
// negative quota is "max", and the period follows only when it is set (the
// kernel then keeps the current period).
func cpuMax(quota *int64, period *uint64) string {
	s := "max"
	if quota != nil && *quota > 0 {
		s = strconv.FormatInt(*quota, 10)
	}
	if period != nil {
		s += " " + strconv.FormatUint(*period, 10)
	}
	return s
}

// CPUWeight converts cgroup v1 shares to cgroup v2 cpu.weight with the
// kubelet's linear formula (pkg/kubelet/cm getCPUWeight, spec/cgroups.md
// §5.7): 2 → 1, 1024 → 39, 262144 and above → 10000. Shares below 2 count
// as 2, the kernel's floor for cpu.shares, where upstream's unsigned
// arithmetic would wrap around.
func CPUWeight(shares uint64) uint64 {
	const maxShares = 262144
	if shares >= maxShares {
		return 10000
	}
	shares = max(shares, 2)
	return 1 + ((shares-2)*9999)/262142
}

// controllerOf maps an interface file to the controller that owns it by its
// prefix ("cpu.shares" → cpu), for the controllers the manager handles.
func controllerOf(file string) (string, bool) {
	prefix, _, ok := strings.Cut(file, ".")
	if !ok {
		return "", false
	}
	for _, c := range managedControllers {
		if c == prefix {
			return c, true
		}
	}
	return "", false
}
