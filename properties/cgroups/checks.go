package cgroups

import (
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"pgregory.net/rapid"

	core "github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	model "github.com/nodeproof/nodeproof/models/cgroups"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/properties/cgroupscheck"
)

// The cgroups suite's invariants, evaluated after every step. The sharp
// statements come first so that a failure is attributed to the most
// specific one it breaks; the model comparison comes last.

func (m *machine) check(t *rapid.T) {
	// A step that left the node as it was (a rejected admission, a bad
	// config or pod) cannot change what Build returns: the previous step's
	// evaluation stands, and the next change is checked in full.
	if !m.dirty {
		return
	}
	m.dirty = false
	if m.kubelet != nil {
		m.checkContracts()
		return
	}
	h, err := core.Build(m.cfg, m.pods)
	// A valid node must build, so CG-ERRORS applies to every change.
	m.tally.Check(Errors, true)
	if err != nil {
		properties.Fail(m.t, Errors, "valid node and pods rejected: %v\n  config: %s", err, configSpec{m.cfg})
	}
	node, mpods := m.modelInput()
	m.checkDeterministic(h)
	m.checkTree(h)
	m.checkShares(h)
	m.checkPods(h)
	m.checkTiers(h)
	// Values refuses what the kernel would, so the configs are checked
	// before they are rendered: a bad value is reported as what it is.
	files := map[core.Version][]core.CgroupFiles{}
	for _, v := range []core.Version{core.V1, core.V2} {
		if files[v], err = h.Files(v); err != nil {
			properties.Fail(m.t, Errors, "rendering a valid hierarchy for v%d: %v", v, err)
		}
	}
	m.checkMemoryQoS(h, files[core.V2])
	m.checkWeights(h, files[core.V2])
	m.checkContention(h)
	m.checkContractCPULimit(h)
	m.checkContractMemoryLow(h)
	m.checkModel(node, mpods, files)
}

// modelInput is the node and its pods in the model's terms, each pod kept
// in spec for the checks.
func (m *machine) modelInput() (model.Node, []model.Pod) {
	node, mpods := cgroupscheck.ModelInput(m.cfg, m.pods)
	m.spec = map[string]model.Pod{}
	for _, p := range mpods {
		m.spec[p.UID] = p
	}
	return node, mpods
}

// checkDeterministic builds again from the same input. Values is a pure
// function of the config it renders, so equal hierarchies render equally.
func (m *machine) checkDeterministic(h core.Hierarchy) {
	// CG-DETERMINISTIC always applies: even a node without pods has
	// kubepods and its tiers, built from the config.
	m.tally.Check(Deterministic, true)
	again, err := core.Build(m.cfg, m.pods)
	if err != nil || !reflect.DeepEqual(h, again) {
		properties.Fail(m.t, Deterministic, "a second Build differs (err %v)", err)
	}
}

// checkTree: unique paths, parents first, and the driver's names.
func (m *machine) checkTree(h core.Hierarchy) {
	// CG-TREE always applies: kubepods' and the tiers' paths depend on the
	// driver and the cgroup root.
	m.tally.Check(Tree, true)
	index := map[string]int{}
	for i, cg := range h {
		if _, dup := index[cg.Path]; dup {
			properties.Fail(m.t, Tree, "path %q listed twice", cg.Path)
		}
		index[cg.Path] = i
		if want := m.expectedPath(cg); cg.Path != want {
			properties.Fail(m.t, Tree, "%s %s %s/%s is at %q, want %q", cg.Kind, cg.QOS, cg.PodUID, cg.Container, cg.Path, want)
		}
		if i == 0 {
			if cg.Kind != core.KindNodeAllocatable {
				properties.Fail(m.t, Tree, "first cgroup %q is %s, want kubepods", cg.Path, cg.Kind)
			}
			continue
		}
		parent := cg.Path[:max(0, strings.LastIndex(cg.Path, "/"))]
		if j, ok := index[parent]; !ok || j >= i {
			properties.Fail(m.t, Tree, "%q is listed before (or without) its parent %q", cg.Path, parent)
		}
	}
}

// expectedPath names a cgroup as §5.7 does: cgroupfs joins the components
// under the root; systemd turns '-' into '_' in each component and expands
// the joined name into one slice per prefix. Containers are named by the
// runtime: the name under the pod, or cri-containerd-<name>.scope.
func (m *machine) expectedPath(cg core.Cgroup) string {
	var components []string
	for _, part := range strings.Split(m.cfg.CgroupRoot, "/") {
		if part != "" {
			components = append(components, part)
		}
	}
	components = append(components, "kubepods")
	switch {
	case cg.Kind == core.KindNodeAllocatable:
	case cg.QOS == pod.Burstable:
		components = append(components, "burstable")
	case cg.QOS == pod.BestEffort:
		components = append(components, "besteffort")
	}
	if cg.Kind == core.KindPod || cg.Kind == core.KindContainer {
		components = append(components, "pod"+cg.PodUID)
	}
	systemd := m.cfg.CgroupDriver == core.DriverSystemd
	var path string
	if systemd {
		prefix := ""
		for i, c := range components {
			name := strings.ReplaceAll(c, "-", "_")
			if i > 0 {
				path += "/"
				name = prefix + "-" + name
			}
			path += name + ".slice"
			prefix = name
		}
	} else {
		path = strings.Join(components, "/")
	}
	if cg.Kind == core.KindContainer {
		if systemd {
			return path + "/cri-containerd-" + cg.Container + ".scope"
		}
		return path + "/" + cg.Container
	}
	return path
}

// checkShares: every cpu.shares within the kernel's range, every quota
// -1 or at least 1ms, and the periods the gate says.
func (m *machine) checkShares(h core.Hierarchy) {
	period := m.cfg.PeriodUS()
	containerPeriod := period
	if !m.cfg.CustomCPUCFSQuotaPeriod {
		containerPeriod = 100000
	}
	// CG-SHARES-RANGE always applies: kubepods and the tiers have shares.
	m.tally.Check(SharesRange, true)
	// CG-QUOTA-FLOOR applies when the node runs a pod: only pod and
	// container cgroups may carry a quota.
	m.tally.Check(QuotaFloor, len(m.pods) > 0)
	// CG-PERIOD applies when a period is compared: a pod cgroup with a
	// quota, or a container cgroup with cpuCFSQuota on.
	periodCompared := false
	for _, cg := range h {
		periodCompared = periodCompared || cg.Kind == core.KindPod && cg.Config.CPUQuota != nil ||
			cg.Kind == core.KindContainer && m.cfg.CPUCFSQuota
	}
	m.tally.Check(Period, periodCompared)
	for _, cg := range h {
		rc := cg.Config
		if s := rc.CPUShares; s != nil && (*s < 2 || *s > 262144) {
			properties.Fail(m.t, SharesRange, "%s: cpu.shares %d outside [2, 262144]", cg.Path, *s)
		}
		// A quota of 0 is not written at all (CG-PARTIAL-LIMITS says when a
		// pod may carry one).
		if q := rc.CPUQuota; q != nil && *q != -1 && *q != 0 && *q < 1000 {
			properties.Fail(m.t, QuotaFloor, "%s: quota %d below the 1000µs floor", cg.Path, *q)
		}
		switch cg.Kind {
		case core.KindPod:
			if rc.CPUQuota == nil {
				break
			}
			if (*rc.CPUQuota == -1) == m.cfg.CPUCFSQuota {
				properties.Fail(m.t, QuotaFloor, "%s: quota %d with cpuCFSQuota=%t", cg.Path, *rc.CPUQuota, m.cfg.CPUCFSQuota)
			}
			if rc.CPUPeriod == nil || *rc.CPUPeriod != period {
				properties.Fail(m.t, Period, "%s: period %s, want the configured %d", cg.Path, fmtPtr(rc.CPUPeriod), period)
			}
			if m.cfg.CPUCFSQuota {
				// The effective limit as core/pod aggregates it: this
				// statement is about the period, CG-SIDECAR and CG-MODEL
				// about the aggregation.
				limit := m.podByUID(cg.PodUID).EffectiveLimits(pod.Options{SkipPodLevelResources: !m.cfg.PodLevelResources})[pod.CPU]
				over := int64(period)
				if !m.cfg.CustomCPUCFSQuotaPeriod {
					over = 100000
				}
				if want := max(limit*over/1000, 1000); limit > 0 && *rc.CPUQuota != want {
					properties.Fail(m.t, Period, "%s: quota %d for limit %dm over %dµs, want %d", cg.Path, *rc.CPUQuota, limit, over, want)
				}
			}
		case core.KindContainer:
			c := m.container(cg.PodUID, cg.Container)
			limit := c.Limits[pod.CPU]
			if !m.cfg.CPUCFSQuota {
				if rc.CPUQuota != nil || rc.CPUPeriod != nil {
					properties.Fail(m.t, QuotaFloor, "%s: quota %s period %s without cpuCFSQuota", cg.Path, fmtPtr(rc.CPUQuota), fmtPtr(rc.CPUPeriod))
				}
				break
			}
			if rc.CPUPeriod == nil || *rc.CPUPeriod != containerPeriod {
				properties.Fail(m.t, Period, "%s: period %s, want %d", cg.Path, fmtPtr(rc.CPUPeriod), containerPeriod)
			}
			if limit == 0 {
				if rc.CPUQuota != nil {
					properties.Fail(m.t, QuotaFloor, "%s: container without a cpu limit has quota %d", cg.Path, *rc.CPUQuota)
				}
				break
			}
			want := max(limit*int64(containerPeriod)/1000, 1000)
			if rc.CPUQuota == nil || *rc.CPUQuota != want {
				properties.Fail(m.t, Period, "%s: quota %s for limit %dm over period %d, want %d", cg.Path, fmtPtr(rc.CPUQuota), limit, containerPeriod, want)
			}
		}
	}
}

func (m *machine) podByUID(uid string) *pod.Pod {
	for _, p := range m.pods {
		if p.UID == uid {
			return p
		}
	}
	properties.Fail(m.t, Tree, "cgroup for unknown pod %s", uid)
	return nil
}

func (m *machine) container(uid, name string) pod.Container {
	c, ok := m.podByUID(uid).Container(name)
	if !ok {
		properties.Fail(m.t, Tree, "cgroup for unknown container %s/%s", uid, name)
	}
	return c
}

// sharesOf is §5.1's conversion, restated for the checks.
func sharesOf(milli int64) uint64 { return uint64(min(max(milli*1024/1000, 2), 262144)) }

// checkPods holds each pod cgroup against statements made from its spec.
func (m *machine) checkPods(h core.Hierarchy) {
	for _, cg := range h {
		if cg.Kind != core.KindPod {
			continue
		}
		p := m.podByUID(cg.PodUID)
		rc := cg.Config
		running := core.RunningContainers(p)
		podLevel := m.cfg.PodLevelResources && p.Resources != nil
		// The class the kubelet gives the pod, by the model's reckoning:
		// with PodLevelResources off spec.resources does not count.
		class := pod.QOSClass(model.QOS(m.spec[p.UID], m.cfg.PodLevelResources))

		// Per pod, CG-BESTEFFORT applies to BestEffort pods.
		m.tally.Check(BestEffort, class == pod.BestEffort)
		if class == pod.BestEffort && (rc.CPUShares == nil || *rc.CPUShares != 2 || rc.CPUQuota != nil || rc.Memory != nil) {
			properties.Fail(m.t, BestEffort, "BestEffort pod %s: shares %s quota %s memory %s", p.UID, fmtPtr(rc.CPUShares), fmtPtr(rc.CPUQuota), fmtPtr(rc.Memory))
		}

		// CG-SIDECAR applies to the pods whose shares it bounds: not
		// BestEffort, without pod-level resources.
		m.tally.Check(Sidecar, !podLevel && class != pod.BestEffort)
		if !podLevel && class != pod.BestEffort {
			var sum int64
			for _, c := range running {
				sum += c.Requests[pod.CPU]
			}
			sum += p.Overhead[pod.CPU]
			if want := sharesOf(sum); *rc.CPUShares < want {
				properties.Fail(m.t, Sidecar, "pod %s has %d shares, below the %d of its running containers' %dm (sidecars and overhead included)", p.UID, *rc.CPUShares, want, sum)
			}
			if rc.Memory != nil {
				var mem int64
				all := true
				for _, c := range running {
					mem += c.Limits[pod.Memory]
					all = all && c.Limits[pod.Memory] > 0
				}
				if mem += p.Overhead[pod.Memory]; all && *rc.Memory < mem {
					properties.Fail(m.t, Sidecar, "pod %s has a memory limit of %d, below its running containers' %d (sidecars and overhead included)", p.UID, *rc.Memory, mem)
				}
			}
		}

		cpuMissing, memMissing := false, false
		if class == pod.Burstable {
			sidecarLimits := pod.ResourceList{}
			for _, c := range p.InitContainers {
				if c.IsSidecar() {
					for k, v := range c.Limits {
						sidecarLimits[k] += v
					}
					continue
				}
				cpuMissing = cpuMissing || c.Limits[pod.CPU] == 0 && sidecarLimits[pod.CPU] == 0
				memMissing = memMissing || c.Limits[pod.Memory] == 0 && sidecarLimits[pod.Memory] == 0
			}
			for _, c := range p.Containers {
				cpuMissing = cpuMissing || c.Limits[pod.CPU] == 0
				memMissing = memMissing || c.Limits[pod.Memory] == 0
			}
			if podLevel {
				cpuMissing = cpuMissing && p.Resources.Limits[pod.CPU] == 0
				memMissing = memMissing && p.Resources.Limits[pod.Memory] == 0
			}
		}
		// CG-PARTIAL-LIMITS applies to a Burstable pod lacking a cpu or a
		// memory limit: only then does it forbid a quota or a limit.
		m.tally.Check(PartialLimits, cpuMissing || memMissing)
		if cpuMissing && (rc.CPUQuota != nil || rc.CPUPeriod != nil) {
			properties.Fail(m.t, PartialLimits, "pod %s lacks a cpu limit somewhere but has quota %s period %s", p.UID, fmtPtr(rc.CPUQuota), fmtPtr(rc.CPUPeriod))
		}
		if memMissing && rc.Memory != nil {
			properties.Fail(m.t, PartialLimits, "pod %s lacks a memory limit somewhere but has memory limit %d", p.UID, *rc.Memory)
		}

		regularInit := false
		for _, c := range p.InitContainers {
			regularInit = regularInit || !c.IsSidecar()
		}
		fullyLimited := true
		for _, c := range running {
			fullyLimited = fullyLimited && c.Limits[pod.CPU] > 0 && c.Limits[pod.Memory] > 0
		}
		// CG-POD-SUM applies to the pods its statement names.
		sums := class != pod.BestEffort && fullyLimited && !regularInit && len(p.Overhead) == 0 && !podLevel
		m.tally.Check(PodSum, sums)
		if sums {
			var req, lim, mem int64
			for _, c := range running {
				req += c.Requests[pod.CPU]
				lim += c.Limits[pod.CPU]
				mem += c.Limits[pod.Memory]
			}
			quota := int64(-1)
			if m.cfg.CPUCFSQuota {
				period := int64(m.cfg.PeriodUS())
				if !m.cfg.CustomCPUCFSQuotaPeriod {
					period = 100000
				}
				quota = max(lim*period/1000, 1000)
			}
			if *rc.CPUShares != sharesOf(req) || rc.CPUQuota == nil || *rc.CPUQuota != quota || rc.Memory == nil || *rc.Memory != mem {
				properties.Fail(m.t, PodSum, "pod %s: shares %d quota %s memory %s, want the sums' %d, %d, %d", p.UID, *rc.CPUShares, fmtPtr(rc.CPUQuota), fmtPtr(rc.Memory), sharesOf(req), quota, mem)
			}
		}
	}
}

// checkTiers: the besteffort tier's shares and the qos-reserved limits.
func (m *machine) checkTiers(h core.Hierarchy) {
	var burstable, besteffort core.Cgroup
	for _, cg := range h {
		if cg.Kind == core.KindQOS && cg.QOS == pod.Burstable {
			burstable = cg
		}
		if cg.Kind == core.KindQOS && cg.QOS == pod.BestEffort {
			besteffort = cg
		}
	}
	// The besteffort tier always exists, so here CG-BESTEFFORT applies.
	m.tally.Check(BestEffort, true)
	if s := besteffort.Config.CPUShares; s == nil || *s != 2 {
		properties.Fail(m.t, BestEffort, "besteffort tier has shares %s", fmtPtr(s))
	}
	bl, el := burstable.Config.Memory, besteffort.Config.Memory
	alloc := core.NodeAllocatableAbsolute(m.cfg)[pod.Memory]
	// CG-TIER-ORDER applies with qos-reserved memory, when the tiers'
	// limits are computed; without it they must merely be absent.
	m.tally.Check(TierOrder, m.cfg.QOSReservedMemoryPercent != nil && alloc != 0)
	if m.cfg.QOSReservedMemoryPercent == nil || alloc == 0 {
		if bl != nil || el != nil {
			properties.Fail(m.t, TierOrder, "tiers have memory limits %s / %s without qos-reserved", fmtPtr(bl), fmtPtr(el))
		}
		return
	}
	if bl == nil || el == nil || !(*el <= *bl && *bl <= alloc) {
		properties.Fail(m.t, TierOrder, "besteffort %s, burstable %s, allocatable %d: not ordered", fmtPtr(el), fmtPtr(bl), alloc)
	}
	var g, b int64
	for _, p := range m.spec {
		switch model.QOS(p, m.cfg.PodLevelResources) {
		case "Guaranteed":
			g += model.Requests(p, true)["memory"]
		case "Burstable":
			b += model.Requests(p, true)["memory"]
		}
	}
	pct := *m.cfg.QOSReservedMemoryPercent
	if wantB, wantE := alloc-g*pct/100, alloc-g*pct/100-b*pct/100; *bl != wantB || *el != wantE {
		properties.Fail(m.t, TierOrder, "burstable %d besteffort %d, want %d and %d (allocatable %d, Σguaranteed %d, Σburstable %d, %d%%)", *bl, *el, wantB, wantE, alloc, g, b, pct)
	}
}

// checkMemoryQoS: which cgroups carry memory.min and memory.low.
func (m *machine) checkMemoryQoS(h core.Hierarchy, v2 []core.CgroupFiles) {
	// CG-MEMORY-QOS applies with Memory QoS on; without it nothing is
	// written and nothing is compared but absence.
	m.tally.Check(MemoryQoS, m.cfg.MemoryQoS)
	tiered := m.cfg.MemoryQoS && m.cfg.MemoryReservationPolicy == core.ReservationTiered
	for i, cg := range h {
		got := map[string]string{}
		for _, f := range v2[i].Files {
			if f.Name == "memory.min" || f.Name == "memory.low" {
				got[f.Name] = f.Value
			}
		}
		want := map[string]string{}
		switch {
		case !m.cfg.MemoryQoS:
		case cg.Kind == core.KindNodeAllocatable || cg.Kind == core.KindQOS && cg.QOS == pod.Burstable:
			key, value := "memory.min", "0"
			if cg.Kind == core.KindQOS {
				key = "memory.low"
			}
			if tiered {
				var sum int64
				for _, p := range m.spec {
					if q := model.QOS(p, m.cfg.PodLevelResources); q == "Burstable" || q == "Guaranteed" && cg.Kind == core.KindNodeAllocatable {
						sum += model.Requests(p, true)["memory"]
					}
				}
				value = strconv.FormatInt(sum, 10)
			}
			want[key] = value
		case cg.Kind == core.KindPod && tiered:
			p := m.spec[cg.PodUID]
			if mem := model.Requests(p, m.cfg.PodLevelResources)["memory"]; mem > 0 {
				key := "memory.low"
				if model.QOS(p, m.cfg.PodLevelResources) == "Guaranteed" {
					key = "memory.min"
				}
				want[key] = strconv.FormatInt(mem, 10)
			}
		}
		if !reflect.DeepEqual(got, want) {
			properties.Fail(m.t, MemoryQoS, "%s (%s %s): memory protection %v, want %v (memoryQoS=%t policy=%s)", cg.Path, cg.Kind, cg.QOS, got, want, m.cfg.MemoryQoS, m.cfg.MemoryReservationPolicy)
		}
	}
}

// checkContractCPULimit holds every container with a cpu limit to the
// documented promise that it may not use more CPU than the limit: the CFS
// bandwidth of its cgroup, quota over period, is compared with the limit
// exactly (quota·1000 ≤ limit·period, both sides in µs·millicores).
func (m *machine) checkContractCPULimit(h core.Hierarchy) {
	applied := false
	for _, cg := range h {
		rc := cg.Config
		if cg.Kind != core.KindContainer || !m.cfg.CPUCFSQuota || rc.CPUQuota == nil || rc.CPUPeriod == nil || *rc.CPUQuota <= 0 {
			continue
		}
		limit := m.container(cg.PodUID, cg.Container).Limits[pod.CPU]
		if limit == 0 {
			continue
		}
		// CG-C-CPU-LIMIT applies when some container's quota is compared
		// with its limit.
		applied = true
		if *rc.CPUQuota*1000 > limit*int64(*rc.CPUPeriod) {
			allowed := new(big.Rat).SetFrac64(*rc.CPUQuota*1000, int64(*rc.CPUPeriod))
			f, _ := allowed.Float64()
			m.tally.Breach(m.t, ContractCPULimit, "%s has a cpu limit of %dm but quota %dµs per %dµs period allows %.0fm (cpuCFSQuotaPeriod %s)",
				cg.Path, limit, *rc.CPUQuota, *rc.CPUPeriod, f, m.cfg.CPUCFSQuotaPeriod)
			break
		}
	}
	m.tally.Check(ContractCPULimit, applied)
}

// checkContractMemoryLow holds every Burstable pod with a memory request,
// under Memory QoS with TieredReservation, to the promise that its request
// is soft-protected by memory.low. cgroup v2 protection is hierarchical: a
// cgroup's effective memory.low is bounded by the memory.low of each of its
// ancestors (unset is 0), so the bound is the smallest memory.low from
// kubepods, the topmost cgroup the kubelet manages, down to the pod. A
// kubelet without the policy (Kubelet.TieredReservation) cannot be
// configured so, and the promise applies to none of its pods.
func (m *machine) checkContractMemoryLow(h core.Hierarchy) {
	tiered := m.cfg.MemoryQoS && m.cfg.MemoryReservationPolicy == core.ReservationTiered && (m.kubelet == nil || m.kubelet.TieredReservation)
	byPath := map[string]core.Cgroup{}
	for _, cg := range h {
		byPath[cg.Path] = cg
	}
	pods, breached := 0, false
	for _, cg := range h {
		if cg.Kind != core.KindPod {
			continue
		}
		pods++
		spec := m.spec[cg.PodUID]
		req := model.Requests(spec, m.cfg.PodLevelResources)["memory"]
		// Per pod, as CG-BESTEFFORT: CG-C-MEMORY-LOW applies to a Burstable
		// pod with a memory request under TieredReservation.
		applies := tiered && model.QOS(spec, m.cfg.PodLevelResources) == "Burstable" && req > 0
		m.tally.Check(ContractMemoryLow, applies)
		if !applies || breached {
			continue
		}
		bound, chain := int64(-1), []string(nil)
		for p := cg.Path; ; p = p[:strings.LastIndex(p, "/")] {
			anc, ok := byPath[p]
			if !ok {
				break
			}
			low, _ := strconv.ParseInt(anc.Config.Unified["memory.low"], 10, 64)
			chain = append(chain, fmt.Sprintf("%s memory.low=%d", p, low))
			if bound < 0 || low < bound {
				bound = low
			}
			if anc.Kind == core.KindNodeAllocatable || !strings.Contains(p, "/") {
				break
			}
		}
		if bound < req {
			// One breach per check: the first pod is the evidence.
			breached = true
			m.tally.Breach(m.t, ContractMemoryLow, "Burstable pod %s requests %d bytes of memory, but its effective memory.low is at most %d: %s",
				cg.PodUID, req, bound, strings.Join(chain, ", "))
		}
	}
	if pods == 0 {
		// A node without pods has nothing to compare.
		m.tally.Check(ContractMemoryLow, false)
	}
}

// checkWeights: v2 weights in range and monotone in shares per formula.
func (m *machine) checkWeights(h core.Hierarchy, v2 []core.CgroupFiles) {
	// CG-WEIGHT always applies: kubepods and the tiers have shares, and
	// the formulas' fixed points are compared.
	m.tally.Check(Weight, true)
	type point struct{ shares, weight uint64 }
	byFormula := map[core.WeightFormula][]point{}
	for i, cg := range h {
		if cg.Config.CPUShares == nil {
			continue
		}
		var weight uint64
		found := false
		for _, f := range v2[i].Files {
			if f.Name == "cpu.weight" {
				weight, _ = strconv.ParseUint(f.Value, 10, 64)
				found = true
			}
		}
		if !found || weight < 1 || weight > 10000 {
			properties.Fail(m.t, Weight, "%s: %d shares give cpu.weight %d (written: %t), outside [1, 10000]", cg.Path, *cg.Config.CPUShares, weight, found)
		}
		byFormula[cg.Config.Weight] = append(byFormula[cg.Config.Weight], point{*cg.Config.CPUShares, weight})
	}
	// The formulas at their fixed points, so that a shift is seen even
	// when the hierarchy's shares happen to miss them.
	for _, p := range []point{{2, 1}, {1024, 39}, {2048, 79}, {262144, 10000}} {
		byFormula[core.WeightLinear] = append(byFormula[core.WeightLinear], point{p.shares, core.CPUWeightLinear(p.shares)})
		if got := core.CPUWeightLinear(p.shares); got != p.weight {
			properties.Fail(m.t, Weight, "the kubelet's weight of %d shares is %d, want %d", p.shares, got, p.weight)
		}
	}
	for formula, points := range byFormula {
		sort.Slice(points, func(i, j int) bool { return points[i].shares < points[j].shares })
		for i := 1; i < len(points); i++ {
			if points[i].weight < points[i-1].weight {
				properties.Fail(m.t, Weight, "%s weights not monotone: %d shares → %d, %d shares → %d", formula, points[i-1].shares, points[i-1].weight, points[i].shares, points[i].weight)
			}
		}
	}
}

// checkContention computes each container's CPU under full contention with
// exact fractions and requires its request wherever the invariant's
// precondition (contentionDomain) holds. Kubepods' allocatable CPU and the
// running containers with their requests come from the model, so a core that
// drops a container's cgroup or misstates allocatable cannot pass by
// agreeing with itself.
func (m *machine) checkContention(h core.Hierarchy) {
	node, _ := cgroupscheck.ModelInput(m.cfg, m.pods)
	allocatable := node.Allocatable()["cpu"]
	// CG-CONTENTION applies inside its domain when a pod runs: then some
	// container's share of the CPU is compared with its request.
	inDomain := m.contentionDomain(allocatable) == ""
	m.tally.Check(Contention, inDomain && len(m.pods) > 0)
	if !inDomain {
		return
	}
	got := ContainerCPUUnderContention(h, allocatable, core.V1)
	paths := map[[2]string]string{}
	for _, cg := range h {
		if cg.Kind == core.KindContainer {
			paths[[2]string{cg.PodUID, cg.Container}] = cg.Path
		}
	}
	for _, p := range m.pods {
		for _, c := range model.Running(m.spec[p.UID]) {
			req := modelCPURequest(c)
			path, ok := paths[[2]string{p.UID, c.Name}]
			if !ok {
				properties.Fail(m.t, Contention, "container %s/%s runs but has no cgroup, so it gets no CPU under contention (request %dm)", p.UID, c.Name, req)
			}
			if got[path].Cmp(big.NewRat(req, 1)) < 0 {
				f, _ := got[path].Float64()
				properties.Fail(m.t, Contention, "%s gets %.3fm under full contention, below its %dm request (allocatable %dm)", path, f, req, allocatable)
			}
		}
	}
}

// modelCPURequest is the request a container's shares come from: its cpu
// request, or its limit when it has no request (kuberuntime).
func modelCPURequest(c model.Container) int64 {
	if r, ok := c.Requests["cpu"]; ok {
		return r
	}
	return c.Limits["cpu"]
}

// contentionDomain says why the pods on the node are outside CG-CONTENTION's
// precondition, or "" when they are inside it. The precondition is stated
// on the input, with shares computed from requests, never from core.
func (m *machine) contentionDomain(allocatable int64) string {
	if allocatable%125 != 0 || allocatable > 256000 {
		return fmt.Sprintf("allocatable %dm is not a multiple of 125m within 256 CPUs", allocatable)
	}
	exact := func(milli int64) bool { return milli%125 == 0 }
	var rootChildren, burstableChildren []uint64
	var burstableCPU int64
	burstableBusy, bestEffortBusy := false, false
	for _, p := range m.pods {
		spec := m.spec[p.UID]
		class := model.QOS(spec, m.cfg.PodLevelResources)
		if class == "BestEffort" {
			bestEffortBusy = true
			continue
		}
		req := model.Requests(spec, m.cfg.PodLevelResources)["cpu"]
		if !exact(req) {
			return fmt.Sprintf("pod %s requests %dm", p.UID, req)
		}
		var children uint64
		for _, c := range model.Running(spec) {
			r := modelCPURequest(c)
			if !exact(r) {
				return fmt.Sprintf("container %s/%s requests %dm", p.UID, c.Name, r)
			}
			children += sharesOf(r)
		}
		if children > sharesOf(req) {
			return fmt.Sprintf("pod %s: containers' shares %d exceed the pod's %d", p.UID, children, sharesOf(req))
		}
		if class == "Guaranteed" {
			rootChildren = append(rootChildren, sharesOf(req))
		} else {
			burstableBusy = true
			burstableChildren = append(burstableChildren, sharesOf(req))
			burstableCPU += req
		}
	}
	var sum uint64
	for _, s := range burstableChildren {
		sum += s
	}
	if sum > sharesOf(burstableCPU) {
		return fmt.Sprintf("burstable pods' shares %d exceed the tier's %d", sum, sharesOf(burstableCPU))
	}
	if burstableBusy {
		rootChildren = append(rootChildren, sharesOf(burstableCPU))
	}
	if bestEffortBusy {
		rootChildren = append(rootChildren, 2)
	}
	sum = 0
	for _, s := range rootChildren {
		sum += s
	}
	if sum > sharesOf(allocatable) {
		return fmt.Sprintf("kubepods' busy children hold %d shares, above its %d", sum, sharesOf(allocatable))
	}
	return ""
}

// ContainerCPUUnderContention gives every container's CPU in millicores
// when every container is busy: kubepods gets allocatableMilli, and each
// busy cgroup splits what it gets among its busy children in proportion to
// their cpu.shares on cgroup v1 (the CFS arithmetic of seed 004) or their
// cpu.weight on v2. A cgroup is busy when it holds a container; idle
// siblings take nothing.
func ContainerCPUUnderContention(h core.Hierarchy, allocatableMilli int64, v core.Version) map[string]*big.Rat {
	children := map[string][]core.Cgroup{}
	busy := map[string]bool{}
	for _, cg := range h {
		if cg.Kind == core.KindContainer {
			for p := cg.Path; p != ""; p = p[:max(0, strings.LastIndex(p, "/"))] {
				busy[p] = true
			}
		}
		if i := strings.LastIndex(cg.Path, "/"); i >= 0 {
			children[cg.Path[:i]] = append(children[cg.Path[:i]], cg)
		}
	}
	weight := func(cg core.Cgroup) int64 {
		s := *cg.Config.CPUShares
		if v == core.V1 {
			return int64(s)
		}
		if cg.Config.Weight == core.WeightQuadratic {
			return int64(core.CPUWeightQuadratic(s))
		}
		return int64(core.CPUWeightLinear(s))
	}
	out := map[string]*big.Rat{}
	var give func(cg core.Cgroup, cpu *big.Rat)
	give = func(cg core.Cgroup, cpu *big.Rat) {
		if cg.Kind == core.KindContainer {
			out[cg.Path] = cpu
			return
		}
		var total int64
		for _, c := range children[cg.Path] {
			if busy[c.Path] {
				total += weight(c)
			}
		}
		for _, c := range children[cg.Path] {
			if busy[c.Path] {
				give(c, new(big.Rat).Mul(cpu, big.NewRat(weight(c), total)))
			}
		}
	}
	for _, cg := range h {
		if cg.Kind == core.KindNodeAllocatable {
			give(cg, big.NewRat(allocatableMilli, 1))
		}
	}
	return out
}

// --- the model --------------------------------------------------------------

func (m *machine) checkModel(n model.Node, pods []model.Pod, files map[core.Version][]core.CgroupFiles) {
	// CG-MODEL always applies: every cgroup and file is compared, kubepods'
	// and the tiers' included.
	m.tally.Check(Model, true)
	want, err := model.Expected(n, pods)
	if err != nil {
		properties.Fail(m.t, Model, "the model rejects the node: %v", err)
	}
	if err := cgroupscheck.CompareWithModel(files, want); err != nil {
		properties.Fail(m.t, Model, "%v\n  config: %s", err, configSpec{m.cfg})
	}
}

// --- the seed's worked example ----------------------------------------------

// checkSeed builds seed 004's node and three pods and checks every number
// the seed states.
func (m *machine) checkSeed() {
	// CG-SEED always applies: it checks a fixed example.
	m.tally.Check(Seed, true)
	h, err := core.Build(SeedConfig(), SeedPods())
	if err != nil {
		properties.Fail(m.t, Seed, "Build: %v", err)
	}
	want := map[string][2]int64{ // shares, memory limit (0: none)
		"kubepods":                                     {3072, 8 * gi},
		"kubepods/burstable":                           {2048, 7 * gi},
		"kubepods/besteffort":                          {2, 5 * gi},
		"kubepods/podguaranteed-1":                     {1024, gi},
		"kubepods/podguaranteed-1/container3":          {1024, gi},
		"kubepods/burstable/podburstable-1":            {2048, 3 * gi},
		"kubepods/burstable/podburstable-1/container1": {1024, gi},
		"kubepods/burstable/podburstable-1/container2": {1024, 2 * gi},
		"kubepods/besteffort/podbesteffort-1":          {2, 0},
	}
	for path, w := range want {
		cg, ok := h.Lookup(path)
		if !ok {
			properties.Fail(m.t, Seed, "no cgroup %s", path)
		}
		mem := int64(0)
		if cg.Config.Memory != nil {
			mem = *cg.Config.Memory
		}
		if cg.Config.CPUShares == nil || int64(*cg.Config.CPUShares) != w[0] || mem != w[1] {
			properties.Fail(m.t, Seed, "%s: shares %s memory %d, the seed says %d and %d", path, fmtPtr(cg.Config.CPUShares), mem, w[0], w[1])
		}
	}
}

// SeedConfig is seed 004's node: 3 CPUs, 8 GiB, --qos-reserved=memory=100%.
func SeedConfig() core.Config {
	c := core.DefaultConfig()
	c.Capacity = pod.ResourceList{pod.CPU: 3000, pod.Memory: 8 * gi}
	hundred := int64(100)
	c.QOSReservedMemoryPercent = &hundred
	return c
}

// SeedPods are seed 004's pod-burstable-1, pod-guaranteed-1 and
// pod-besteffort-1.
func SeedPods() []*pod.Pod {
	both := func(cpu, mem int64) pod.ResourceList { return pod.ResourceList{pod.CPU: cpu, pod.Memory: mem} }
	return []*pod.Pod{
		{UID: "burstable-1", Name: "pod-burstable-1", Containers: []pod.Container{
			{Name: "container1", Requests: both(1000, gi), Limits: both(1000, gi)},
			{Name: "container2", Requests: both(1000, gi), Limits: both(2000, 2*gi)},
		}},
		{UID: "guaranteed-1", Name: "pod-guaranteed-1", Containers: []pod.Container{
			{Name: "container3", Requests: both(1000, gi), Limits: both(1000, gi)},
		}},
		{UID: "besteffort-1", Name: "pod-besteffort-1", Containers: []pod.Container{{Name: "container4"}}},
	}
}
