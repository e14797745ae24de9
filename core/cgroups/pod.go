package cgroups

import (
	"strconv"

	"github.com/nodeproof/nodeproof/core/pod"
)

// PodOptions are the arguments upstream's ResourceConfigForPod takes
// besides the pod (§5.2).
type PodOptions struct {
	// EnforceCPULimits is the kubelet's cpuCFSQuota; false turns every
	// quota into -1 (unlimited).
	EnforceCPULimits bool
	// CPUPeriodUS is the configured CFS period in microseconds.
	CPUPeriodUS uint64
	// CustomPeriodGate is CustomCPUCFSQuotaPeriod: without it the quota is
	// computed over 100ms while CPUPeriod still reports CPUPeriodUS.
	CustomPeriodGate bool
	// PodLevelResources is the feature gate.
	PodLevelResources bool
	// EnforceMemoryQoS is the MemoryQoS gate on a cgroup v2 host.
	EnforceMemoryQoS bool
	// MemoryReservationPolicy decides what Memory QoS sets.
	MemoryReservationPolicy MemoryReservationPolicy
}

// PodOptions returns the options the kubelet passes when it creates a pod
// cgroup under c. The CPU manager's exclusive-CPU exemption
// (DisableCPUQuotaWithExclusiveCPUs) is not modelled: nodeproof has only
// the none policy.
func (c Config) PodOptions() PodOptions {
	return PodOptions{
		EnforceCPULimits:        c.CPUCFSQuota,
		CPUPeriodUS:             c.PeriodUS(),
		CustomPeriodGate:        c.CustomCPUCFSQuotaPeriod,
		PodLevelResources:       c.PodLevelResources,
		EnforceMemoryQoS:        c.MemoryQoS,
		MemoryReservationPolicy: c.MemoryReservationPolicy,
	}
}

// podResources are the core/pod options for the PodLevelResources gate.
func (o PodOptions) podResources() pod.Options {
	return pod.Options{SkipPodLevelResources: !o.PodLevelResources}
}

// HugePageLimits sums a list's hugepages-<size> quantities by page size in
// bytes; "hugepages-2Mi" and "hugepages-2048Ki" name the same size and add
// up. Other resources are ignored.
func HugePageLimits(l pod.ResourceList) (map[int64]int64, error) {
	limits := map[int64]int64{}
	if !hasHugePages(l) {
		return limits, nil
	}
	for _, name := range l.Names() {
		if !pod.IsHugePages(name) {
			continue
		}
		size, err := HugePageSizeFromResourceName(name)
		if err != nil {
			return nil, err
		}
		limits[size] += l[name]
	}
	return limits, nil
}

// ResourceConfigForPod is the pod cgroup's configuration (§5.2): shares
// from the pod's effective cpu request, quota and memory limit from its
// effective limits as the QoS class allows, hugepages from its requests and
// Memory QoS from its memory request. The pod must have passed Build's
// validation (or be equally well formed).
func ResourceConfigForPod(p *pod.Pod, o PodOptions) (ResourceConfig, error) {
	skip := o.podResources()
	reqs := p.EffectiveRequests(skip)
	limits := p.EffectiveLimits(skip)

	// A pod gets a quota or a memory limit only when every container the
	// kubelet looks at declares one: otherwise the summed limits of the
	// others would throttle or kill the undeclared container (§5.8). The
	// kubelet looks at each app container and at each init container
	// together with the sidecars started before it, so a sidecar's limit
	// covers a later container that has none.
	cpuDeclared, memDeclared := true, true
	declared := func(l pod.ResourceList) {
		if l[pod.CPU] == 0 {
			cpuDeclared = false
		}
		if l[pod.Memory] == 0 {
			memDeclared = false
		}
	}
	for _, c := range p.Containers {
		declared(c.Limits)
	}
	sidecars := pod.ResourceList{}
	for _, c := range p.InitContainers {
		if c.IsSidecar() {
			for k, v := range c.Limits {
				sidecars[k] += v
			}
			declared(sidecars)
			continue
		}
		seen := c.Limits.Clone()
		if seen == nil {
			seen = pod.ResourceList{}
		}
		for k, v := range sidecars {
			seen[k] += v
		}
		declared(seen)
	}
	// Pod-level limits declare on their own (KEP-2837).
	if o.PodLevelResources && p.HasPodLevelResources() {
		if p.Resources.Limits[pod.CPU] != 0 {
			cpuDeclared = true
		}
		if p.Resources.Limits[pod.Memory] != 0 {
			memDeclared = true
		}
	}

	hugePages, err := HugePageLimits(reqs)
	if err != nil {
		return ResourceConfig{}, err
	}
	shares := MilliCPUToShares(reqs[pod.CPU])
	quota := MilliCPUToQuota(limits[pod.CPU], o.CPUPeriodUS, o.CustomPeriodGate)
	if !o.EnforceCPULimits {
		quota = -1
	}
	period := o.CPUPeriodUS
	memory := limits[pod.Memory]

	// Upstream's GetPodQOS reads the PodLevelResources gate too: with it off,
	// spec.resources does not decide the class (found by conformance/
	// TestResourceConfigForPod).
	qos := p.QOSWith(skip)
	var rc ResourceConfig
	switch qos {
	case pod.Guaranteed:
		rc = ResourceConfig{CPUShares: &shares, CPUQuota: &quota, CPUPeriod: &period, Memory: &memory}
	case pod.Burstable:
		rc = ResourceConfig{CPUShares: &shares}
		if cpuDeclared {
			rc.CPUQuota, rc.CPUPeriod = &quota, &period
		}
		if memDeclared {
			rc.Memory = &memory
		}
	default:
		// A BestEffort pod asks for nothing and gets the least the kernel
		// allows, whatever its overhead.
		minShares := uint64(MinShares)
		rc = ResourceConfig{CPUShares: &minShares}
	}
	rc.HugePageLimit = hugePages

	// v1.36 reserves memory only under the TieredReservation policy
	// (PRs #137584/#137719): a hard memory.min for Guaranteed pods, a soft
	// memory.low for the others.
	if o.EnforceMemoryQoS && o.MemoryReservationPolicy == ReservationTiered && reqs[pod.Memory] > 0 {
		key := "memory.low"
		if qos == pod.Guaranteed {
			key = "memory.min"
		}
		rc.Unified = map[string]string{key: strconv.FormatInt(reqs[pod.Memory], 10)}
	}
	return rc, nil
}

// ContainerOptions are what the runtime manager (kuberuntime) uses to turn
// a container's resources into its cgroup.
type ContainerOptions struct {
	// CPUCFSQuota is the kubelet's cpuCFSQuota: without it a container gets
	// neither quota nor period.
	CPUCFSQuota bool
	// PeriodUS is the period the container gets and its quota is computed
	// over: the configured one with CustomCPUCFSQuotaPeriod, else 100ms.
	PeriodUS uint64
	// HugePageSizes are the host's page sizes; each gets a limit, 0 unless
	// the container asks for that size.
	HugePageSizes []int64
	// Weight is the runtime's cpu.weight formula on v2.
	Weight WeightFormula
}

// ContainerOptions returns the options under c.
func (c Config) ContainerOptions() ContainerOptions {
	return ContainerOptions{CPUCFSQuota: c.CPUCFSQuota, PeriodUS: c.ContainerPeriodUS(), HugePageSizes: c.HugePageSizes, Weight: c.ContainerCPUWeight}
}

// ContainerConfig is the cgroup the runtime creates for one container
// (§5.1 last paragraph): shares from its cpu request (from its limit when
// it has no request, as kuberuntime does for pods created before
// defaulting), quota from its cpu limit over the container period, which it
// also gets as its period, and its memory limit. A quota of 0 (no cpu
// limit) is left unset, so the cgroup keeps the kernel's unlimited default.
func ContainerConfig(c pod.Container, o ContainerOptions) (ResourceConfig, error) {
	var shares uint64
	if _, ok := c.Requests[pod.CPU]; !ok && c.Limits[pod.CPU] != 0 {
		shares = MilliCPUToShares(c.Limits[pod.CPU])
	} else {
		shares = MilliCPUToShares(c.Requests[pod.CPU])
	}
	rc := ResourceConfig{CPUShares: &shares, Weight: o.Weight}
	if o.CPUCFSQuota {
		period := o.PeriodUS
		rc.CPUPeriod = &period
		// The period is already the one the gate allows, so the gate is on
		// as far as this computation is concerned.
		if quota := MilliCPUToQuota(c.Limits[pod.CPU], period, true); quota != 0 {
			rc.CPUQuota = &quota
		}
	}
	if m, ok := c.Limits[pod.Memory]; ok && m != 0 {
		memory := m
		rc.Memory = &memory
	}
	// Every host page size gets a limit, 0 unless the container asks for
	// it; a request overrides the limit of the same size (they are equal
	// for any pod that passed API validation).
	hp := map[int64]int64{}
	for _, size := range o.HugePageSizes {
		hp[size] = 0
	}
	for _, l := range []pod.ResourceList{c.Limits, c.Requests} {
		if !hasHugePages(l) {
			continue
		}
		// Sorted, so that two names of one size ("hugepages-2Mi",
		// "hugepages-2048Ki") always resolve the same way.
		for _, name := range l.Names() {
			if !pod.IsHugePages(name) {
				continue
			}
			size, err := HugePageSizeFromResourceName(name)
			if err != nil {
				return ResourceConfig{}, err
			}
			hp[size] = l[name]
		}
	}
	if len(hp) > 0 {
		rc.HugePageLimit = hp
	}
	return rc, nil
}

// RunningContainers are the containers that have a cgroup while the pod
// runs: its sidecars (restartable init containers), in order, then its app
// containers. Regular init containers have exited.
func RunningContainers(p *pod.Pod) []pod.Container {
	var out []pod.Container
	for _, c := range p.InitContainers {
		if c.IsSidecar() {
			out = append(out, c)
		}
	}
	return append(out, p.Containers...)
}

// isDNSLabel reports whether s is a DNS label: lower case letters, digits
// and '-', starting and ending with a letter or digit, at most 63 long.
func isDNSLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (c != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

// isPodUID reports whether s can name a pod cgroup: letters, digits, '-',
// '_' and '.', starting and ending with a letter or digit (a UUID is).
func isPodUID(s string) bool {
	if len(s) == 0 || len(s) > MaxNameLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (c != '-' && c != '_' && c != '.' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

// validatePod checks what Build needs of a pod: a UID and container names
// that make cgroup names, at least one app container, bounded container
// counts, and quantities that are not negative, fit the bounds and (for
// hugepages) name a page size of the host. Field names are built only for
// an error: Build validates every pod on every call.
func validatePod(field string, p *pod.Pod, hostSizes map[int64]bool) error {
	if p == nil {
		return fieldErr(field, "pod must not be nil")
	}
	if !isPodUID(p.UID) {
		return fieldErr(field+".uid", "%q must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit, at most %d characters", p.UID, MaxNameLength)
	}
	if len(p.Containers) == 0 {
		return fieldErr(field+".containers", "a pod needs at least one app container")
	}
	if n := len(p.InitContainers) + len(p.Containers); n > MaxContainersPerPod {
		return fieldErr(field+".containers", "%d init and app containers exceed the bound of %d", n, MaxContainersPerPod)
	}
	checkContainer := func(kind string, i int, c pod.Container, others ...[]pod.Container) error {
		f := func() string { return field + "." + kind + "[" + strconv.Itoa(i) + "]" }
		if !isDNSLabel(c.Name) {
			return fieldErr(f()+".name", "%q must be a DNS label (lower case letters, digits and '-', at most 63 characters)", c.Name)
		}
		if c.RuntimeID != "" && !isPodUID(c.RuntimeID) {
			return fieldErr(f()+".runtimeID", "%q must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit, at most %d characters", c.RuntimeID, MaxNameLength)
		}
		for _, list := range others {
			for _, o := range list {
				if o.Name == c.Name {
					return fieldErr(f()+".name", "%q is used by two containers of the pod", c.Name)
				}
				if c.RuntimeID != "" && o.RuntimeID == c.RuntimeID {
					return fieldErr(f()+".runtimeID", "%q is the runtime ID of two containers of the pod", c.RuntimeID)
				}
			}
		}
		if err := checkPodList(func() string { return f() + ".requests" }, c.Requests, hostSizes); err != nil {
			return err
		}
		return checkPodList(func() string { return f() + ".limits" }, c.Limits, hostSizes)
	}
	for i, c := range p.InitContainers {
		if err := checkContainer("initContainers", i, c, p.InitContainers[:i]); err != nil {
			return err
		}
	}
	for i, c := range p.Containers {
		if err := checkContainer("containers", i, c, p.InitContainers, p.Containers[:i]); err != nil {
			return err
		}
	}
	if err := checkPodList(func() string { return field + ".overhead" }, p.Overhead, hostSizes); err != nil {
		return err
	}
	if p.Resources != nil {
		if err := checkPodList(func() string { return field + ".resources.requests" }, p.Resources.Requests, hostSizes); err != nil {
			return err
		}
		if err := checkPodList(func() string { return field + ".resources.limits" }, p.Resources.Limits, hostSizes); err != nil {
			return err
		}
	}
	return nil
}

// checkPodList checks a pod's resource list; the error names the first bad
// entry in name order, so only a bad list is sorted.
func checkPodList(field func() string, l pod.ResourceList, hostSizes map[int64]bool) error {
	ok := true
	for name, q := range l {
		if !quantityOK(name, q, hostSizes) {
			ok = false
			break
		}
	}
	if ok {
		return nil
	}
	for _, name := range l.Names() {
		f := field() + "[" + string(name) + "]"
		if err := checkQuantity(f, name, l[name]); err != nil {
			return err
		}
		if pod.IsHugePages(name) {
			size, _ := HugePageSizeFromResourceName(name) // checkQuantity parsed it
			if !hostSizes[size] {
				unit, _ := HugePageUnitSize(size)
				return fieldErr(f, "page size %s is not one of the host's hugePageSizes", unit)
			}
		}
	}
	return nil
}

// quantityOK is the fast path of checkPodList's rules.
func quantityOK(name pod.ResourceName, q int64, hostSizes map[int64]bool) bool {
	if q < 0 {
		return false
	}
	if name == pod.CPU {
		return q <= MaxMilliCPU
	}
	if q > MaxQuantity {
		return false
	}
	if pod.IsHugePages(name) {
		size, err := HugePageSizeFromResourceName(name)
		return err == nil && hostSizes[size]
	}
	return true
}

func hasHugePages(l pod.ResourceList) bool {
	for name := range l {
		if pod.IsHugePages(name) {
			return true
		}
	}
	return false
}
