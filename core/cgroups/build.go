package cgroups

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/nodeproof/nodeproof/core/pod"
)

// Hierarchy is the kubelet's cgroup tree for a node and its pods, parents
// before children, siblings ordered by name.
type Hierarchy []Cgroup

// Lookup returns the cgroup at path.
func (h Hierarchy) Lookup(path string) (Cgroup, bool) {
	for _, c := range h {
		if c.Path == path {
			return c, true
		}
	}
	return Cgroup{}, false
}

// CgroupFiles is one cgroup's rendered writes.
type CgroupFiles struct {
	Path  string
	Files []File
}

// Files renders every cgroup's writes for version v, in hierarchy order, so
// that a parent's limits are in place before its children's.
func (h Hierarchy) Files(v Version) ([]CgroupFiles, error) {
	out := make([]CgroupFiles, 0, len(h))
	for _, c := range h {
		files, err := c.Config.Values(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Path, err)
		}
		out = append(out, CgroupFiles{Path: c.Path, Files: files})
	}
	return out, nil
}

// Build computes the whole hierarchy the kubelet keeps for the active pods
// under c, in its steady state:
//
//   - kubepods: the node-allocatable config (cpu shares, memory, pids from
//     KubepodsAllocatable), overlaid by the QoS manager's periodic update,
//     which sets every host page size unbounded and, with Memory QoS,
//     memory.min. The update runs every minute while the node-allocatable
//     update stops once it succeeded, so the update's hugepage limits are
//     the ones that stay.
//   - kubepods/burstable and kubepods/besteffort: the QoS update
//     (QOSTierConfigs, whose sums classify pods by Config.PodQOS too);
//     both exist whether or not any pod needs them.
//   - one cgroup per pod under the tier of its class under c's
//     PodLevelResources gate (Config.PodQOS; Guaranteed pods directly
//     under kubepods): ResourceConfigForPod with the pod cgroup's creation
//     extras, pids.max = PodPidsLimit when positive and a hugetlb limit of
//     0 for every host page size the pod does not ask for.
//   - one cgroup per running container (sidecars and app containers):
//     ContainerConfig.
//
// Every kubelet-written cgroup gets a hugetlb limit for each host page
// size, because the kubelet's cgroup manager writes 0 for any size a config
// omits. Pods must be defaulted as the API server does (pod.ApplyDefaults);
// Build does not change them. The pod configs are those of cgroups created
// under c: upstream creates a pod cgroup only when it is missing, so a
// kubelet whose config changed keeps older pods' cgroups as they were.
//
// Build validates c (Config.Validate and ValidateNodeAllocatable, with the
// kubelet's own messages) and the pods (at most c.MaxPods, unique UIDs,
// well-formed containers and quantities) and returns the first problem as a
// *FieldError; it never panics on input.
func Build(c Config, pods []*pod.Pod) (Hierarchy, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := ValidateNodeAllocatable(c); err != nil {
		return nil, err
	}
	if len(pods) > c.MaxPods {
		return nil, fieldErr("pods", "%d pods exceed maxPods %d", len(pods), c.MaxPods)
	}
	hostSizes := map[int64]bool{}
	for _, s := range c.HugePageSizes {
		hostSizes[s] = true
	}
	uids := map[string]int{}
	for i, p := range pods {
		field := "pods[" + strconv.Itoa(i) + "]"
		if err := validatePod(field, p, hostSizes); err != nil {
			return nil, err
		}
		if j, dup := uids[p.UID]; dup {
			return nil, fieldErr(field+".uid", "%q is also the UID of pods[%d]", p.UID, j)
		}
		uids[p.UID] = i
	}

	n, err := newNames(c)
	if err != nil {
		return nil, err
	}
	qos, err := QOSTierConfigs(c, pods)
	if err != nil {
		return nil, err
	}
	root, err := NodeAllocatableConfig(c)
	if err != nil {
		return nil, err
	}
	root.HugePageLimit = qos.Guaranteed.HugePageLimit
	root.Unified = qos.Guaranteed.Unified

	h := Hierarchy{
		{Path: n.path(n.kubepods()), Config: root, Kind: KindNodeAllocatable, QOS: pod.Guaranteed},
		{Path: n.path(n.tier(pod.Burstable)), Config: qos.Burstable, Kind: KindQOS, QOS: pod.Burstable},
		{Path: n.path(n.tier(pod.BestEffort)), Config: qos.BestEffort, Kind: KindQOS, QOS: pod.BestEffort},
	}
	podOpts := c.PodOptions()
	ctrOpts := c.ContainerOptions()
	for i, p := range pods {
		// The kubelet parents the pod under the tier of GetPodQOS, which
		// reads the PodLevelResources gate (GetPodContainerName).
		class := c.PodQOS(p)
		rc, err := c.podCgroupConfig(p, podOpts)
		if err != nil {
			return nil, fieldErr(fmt.Sprintf("pods[%d]", i), "%v", err)
		}
		podPath := n.path(n.pod(class, p.UID))
		h = append(h, Cgroup{Path: podPath, Config: rc, Kind: KindPod, QOS: class, PodUID: p.UID})
		for _, ctr := range RunningContainers(p) {
			crc, err := ContainerConfig(ctr, ctrOpts)
			if err != nil {
				return nil, fieldErr(fmt.Sprintf("pods[%d]", i), "%v", err)
			}
			h = append(h, Cgroup{Path: n.containerPath(podPath, ctr), Config: crc, Kind: KindContainer, QOS: class, PodUID: p.UID, Container: ctr.Name})
		}
	}

	// Order by path component, which puts every parent before its children
	// (a plain string sort would too, but would interleave "a-b" between
	// "a" and "a/x"). Two pods whose UIDs differ only in '-' against '_'
	// would share a systemd slice: refuse rather than merge them.
	slices.SortFunc(h, func(a, b Cgroup) int { return comparePaths(a.Path, b.Path) })
	for i := 1; i < len(h); i++ {
		if h[i].Path == h[i-1].Path {
			return nil, fieldErr("pods", "two cgroups would share the path %q (UIDs that differ only in '-' and '_' collide under the systemd driver)", h[i].Path)
		}
	}
	return h, nil
}

// PodQOS is the pod's class as the kubelet under c sees it: upstream's
// GetPodQOS, status.qosClass when set, else computed with spec.resources
// counting only when c.PodLevelResources is on. Build places pods by it and
// the QoS tiers sum by it.
func (c Config) PodQOS(p *pod.Pod) pod.QOSClass {
	return p.QOSWith(c.PodOptions().podResources())
}

// PodCgroupConfig is what the kubelet writes when it creates the pod's
// cgroup under c: ResourceConfigForPod, pids.max = PodPidsLimit when
// positive, and a hugetlb limit of 0 for every host page size the pod does
// not ask for (§5.2, the caller). The pod is not validated; Build does that.
func (c Config) PodCgroupConfig(p *pod.Pod) (ResourceConfig, error) {
	return c.podCgroupConfig(p, c.PodOptions())
}

func (c Config) podCgroupConfig(p *pod.Pod, o PodOptions) (ResourceConfig, error) {
	rc, err := ResourceConfigForPod(p, o)
	if err != nil {
		return ResourceConfig{}, err
	}
	if c.PodPidsLimit > 0 {
		pids := c.PodPidsLimit
		rc.PidsLimit = &pids
	}
	for _, size := range c.HugePageSizes {
		if _, ok := rc.HugePageLimit[size]; !ok {
			rc.HugePageLimit[size] = 0
		}
	}
	return rc, nil
}

// comparePaths orders slash-separated paths component by component.
func comparePaths(a, b string) int {
	for {
		ah, at, aMore := strings.Cut(a, "/")
		bh, bt, bMore := strings.Cut(b, "/")
		if c := strings.Compare(ah, bh); c != 0 {
			return c
		}
		switch {
		case !aMore && !bMore:
			return 0
		case !aMore:
			return -1
		case !bMore:
			return 1
		}
		a, b = at, bt
	}
}

// Clone returns a deep copy of the config, so callers may change it.
func (r ResourceConfig) Clone() ResourceConfig {
	out := r
	out.CPUShares = clonePtr(r.CPUShares)
	out.CPUQuota = clonePtr(r.CPUQuota)
	out.CPUPeriod = clonePtr(r.CPUPeriod)
	out.Memory = clonePtr(r.Memory)
	out.PidsLimit = clonePtr(r.PidsLimit)
	out.HugePageLimit = maps.Clone(r.HugePageLimit)
	out.Unified = maps.Clone(r.Unified)
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
