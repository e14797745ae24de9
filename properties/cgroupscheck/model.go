package cgroupscheck

import (
	"fmt"
	"strings"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	model "github.com/nodeproof/nodeproof/models/cgroups"
)

func toMap(l pod.ResourceList) map[string]int64 {
	if l == nil {
		return nil
	}
	out := make(map[string]int64, len(l))
	for k, v := range l {
		out[string(k)] = v
	}
	return out
}

// ModelInput copies what the model reads of a config and its pods into the
// model's types. It copies; it decides nothing, so the model works out
// classes, sums and limits itself. The model knows one memory.available
// threshold, as a quantity, and one nodefs.available threshold, as a
// percentage (a later threshold on the same signal replaces an earlier one,
// as in core); other signals reserve nothing and are left out.
func ModelInput(c cgroups.Config, pods []*pod.Pod) (model.Node, []model.Pod) {
	n := model.Node{
		Systemd:             c.CgroupDriver == cgroups.DriverSystemd,
		Capacity:            toMap(c.Capacity),
		SystemReserved:      toMap(c.SystemReserved),
		KubeReserved:        toMap(c.KubeReserved),
		EnforcePods:         c.EnforceNodeAllocatablePods,
		CFSQuota:            c.CPUCFSQuota,
		PeriodUS:            int64(c.CPUCFSQuotaPeriod.Microseconds()),
		PeriodGate:          c.CustomCPUCFSQuotaPeriod,
		PodLevelGate:        c.PodLevelResources,
		QOSReserved:         -1,
		MemoryQoS:           c.MemoryQoS,
		Tiered:              c.MemoryReservationPolicy == cgroups.ReservationTiered,
		PageSizes:           c.HugePageSizes,
		PodPids:             c.PodPidsLimit,
		QuadraticContainers: c.ContainerCPUWeight == cgroups.WeightQuadratic,
	}
	for _, part := range strings.Split(c.CgroupRoot, "/") {
		if part != "" {
			n.Root = append(n.Root, part)
		}
	}
	for _, th := range c.HardEviction {
		switch th.Signal {
		case cgroups.SignalMemoryAvailable:
			n.EvictionMemory = th.Quantity
		case cgroups.SignalNodeFsAvailable:
			n.EvictionNodefsPercent = th.Percentage
		}
	}
	if c.QOSReservedMemoryPercent != nil {
		n.QOSReserved = *c.QOSReservedMemoryPercent
	}
	var out []model.Pod
	for _, p := range pods {
		mp := model.Pod{UID: p.UID, Overhead: toMap(p.Overhead)}
		conv := func(c pod.Container) model.Container {
			return model.Container{Name: c.Name, Requests: toMap(c.Requests), Limits: toMap(c.Limits), Sidecar: c.IsSidecar()}
		}
		for _, c := range p.InitContainers {
			mp.Init = append(mp.Init, conv(c))
		}
		for _, c := range p.Containers {
			mp.Apps = append(mp.Apps, conv(c))
		}
		if p.Resources != nil {
			mp.HasPodResources = true
			mp.PodRequests, mp.PodLimits = toMap(p.Resources.Requests), toMap(p.Resources.Limits)
		}
		out = append(out, mp)
	}
	return n, out
}

// CompareWithModel holds core's rendered hierarchy, for cgroup v1 and v2,
// against the model's groups: the same cgroups in the same order, each with
// the same files and values in the same order. The error describes the
// first cgroup that differs, core's and the model's side by side.
func CompareWithModel(files map[cgroups.Version][]cgroups.CgroupFiles, want []model.Group) error {
	for _, v := range []cgroups.Version{cgroups.V1, cgroups.V2} {
		got := files[v]
		for i := 0; i < max(len(got), len(want)); i++ {
			var g cgroups.CgroupFiles
			var path string
			var w []model.File
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				path, w = want[i].Path, want[i].V1
				if v == cgroups.V2 {
					w = want[i].V2
				}
			}
			same := g.Path == path && len(g.Files) == len(w)
			for j := 0; same && j < len(g.Files); j++ {
				same = g.Files[j].Name == w[j].Name && g.Files[j].Value == w[j].Value
			}
			if !same {
				return fmt.Errorf("v%d cgroup %d:\n  core:  %s %v\n  model: %s %v", v, i, g.Path, g.Files, path, w)
			}
		}
	}
	return nil
}

// Fits is the kubelet's resource admission as the suite plays it: the
// pods' effective requests (overhead included, pod-level resources as the
// config's gate says) within the allocatable the node reports, for cpu,
// memory and 2Mi hugepages. Only on a node whose pods fit is every QoS
// tier's memory limit non-negative.
func Fits(c cgroups.Config, pods []*pod.Pod) bool {
	alloc := cgroups.ReportedAllocatable(c)
	total := pod.ResourceList{}
	for _, p := range pods {
		for name, q := range p.EffectiveRequests(pod.Options{SkipPodLevelResources: !c.PodLevelResources}) {
			total[name] += q
		}
	}
	for _, name := range []pod.ResourceName{pod.CPU, pod.Memory, "hugepages-2Mi"} {
		if total[name] > alloc[name] {
			return false
		}
	}
	return true
}
