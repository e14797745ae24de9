package cgroups

import (
	"errors"
	"fmt"
	"time"

	"pgregory.net/rapid"

	core "github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	model "github.com/nodeproof/nodeproof/models/cgroups"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/properties/cgroupscheck"
)

// --- actions ----------------------------------------------------------------

func (m *machine) addPod(t *rapid.T) {
	p := m.drawPod(t)
	next := append(append([]*pod.Pod(nil), m.pods...), p)
	if len(next) > maxPods || !cgroupscheck.Fits(m.cfg, next) {
		m.steps.Begin("addPod", "%s: rejected (does not fit)", podSpec{p, m.cfg.PodLevelResources})
		return
	}
	m.steps.Begin("addPod", "%s", podSpec{p, m.cfg.PodLevelResources})
	if m.kubelet == nil {
		m.checkTierMonotone(p, next)
	}
	m.pods = next
	m.dirty = true
}

// checkTierMonotone compares core's QoS tiers before and after next, the
// node's pods with p admitted.
func (m *machine) checkTierMonotone(p *pod.Pod, next []*pod.Pod) {
	before, err := core.QOSTierConfigs(m.cfg, m.pods)
	if err != nil {
		properties.Fail(m.t, Errors, "QoS tiers of valid pods: %v", err)
	}
	after, err := core.QOSTierConfigs(m.cfg, next)
	if err != nil {
		properties.Fail(m.t, Errors, "QoS tiers of valid pods: %v", err)
	}
	// CG-TIER-MONOTONE applies when a tier has a memory limit (qos-reserved
	// memory) that the admission could raise.
	m.tally.Check(TierMonotone, before.Burstable.Memory != nil || before.BestEffort.Memory != nil)
	for _, tier := range []struct {
		name          string
		before, after *int64
	}{{"burstable", before.Burstable.Memory, after.Burstable.Memory}, {"besteffort", before.BestEffort.Memory, after.BestEffort.Memory}} {
		if (tier.before == nil) != (tier.after == nil) || tier.before != nil && *tier.after > *tier.before {
			properties.Fail(m.t, TierMonotone, "admitting %s raised the %s memory limit from %s to %s", p.UID, tier.name, fmtPtr(tier.before), fmtPtr(tier.after))
		}
	}
}

func (m *machine) removePod(t *rapid.T) {
	if len(m.pods) == 0 {
		m.addPod(t)
		return
	}
	i := rapid.IntRange(0, len(m.pods)-1).Draw(t, "pod")
	m.steps.Begin("removePod", "%s", m.pods[i].UID)
	m.pods = append(m.pods[:i:i], m.pods[i+1:]...)
	m.dirty = true
}

// changeConfig restarts the kubelet with a new configuration on a clean
// node; pods that no longer fit are evicted.
func (m *machine) changeConfig(t *rapid.T) {
	c := m.drawConfig(t)
	evicted := 0
	for len(m.pods) > 0 && !cgroupscheck.Fits(c, m.pods) {
		m.pods = m.pods[:len(m.pods)-1]
		evicted++
	}
	// Pods asking for a page size the new host lacks cannot run there.
	kept := m.pods[:0]
	for _, p := range m.pods {
		if m.hostHasAll(c, p) {
			kept = append(kept, p)
		} else {
			evicted++
		}
	}
	m.pods = kept
	m.cfg = c
	m.dirty = true
	m.steps.Begin("changeConfig", "%s (evicted %d)", configSpec{c}, evicted)
}

// badConfig breaks one field and expects Build to say which, in the
// kubelet's words where it has them; the node keeps its old config.
func (m *machine) badConfig(t *rapid.T) {
	c := m.cfg
	c.Capacity = m.cfg.Capacity.Clone()
	c.SystemReserved = m.cfg.SystemReserved.Clone()
	var field, want string
	switch rapid.IntRange(0, 6).Draw(t, "fault") {
	case 0:
		c.CustomCPUCFSQuotaPeriod = true
		c.CPUCFSQuotaPeriod = rapid.SampledFrom([]time.Duration{999 * time.Microsecond, 1001 * time.Millisecond, 0}).Draw(t, "period")
		field, want = "cpuCFSQuotaPeriod", fmt.Sprintf("invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) %v must be between 1ms and 1sec, inclusive", c.CPUCFSQuotaPeriod)
	case 1:
		c.CustomCPUCFSQuotaPeriod = false
		c.CPUCFSQuotaPeriod = 50 * time.Millisecond
		field, want = "cpuCFSQuotaPeriod", "invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) 50ms requires feature gate CustomCPUCFSQuotaPeriod"
	case 2:
		p := rapid.SampledFrom([]int64{-1, 101, 1000}).Draw(t, "percent")
		c.QOSReservedMemoryPercent = &p
		field, want = "qosReserved[memory]", fmt.Sprintf(`failed to parse percentage "%d%%" for "memory" resource: percentage must be between 0 and 100`, p)
	case 3:
		c.SystemReserved[pod.CPU] = c.Capacity[pod.CPU] + 1
		field = "nodeAllocatable"
	case 4:
		c.SystemReserved[pod.Memory] = -rapid.Int64Range(1, gi).Draw(t, "negative")
		field, want = "systemReserved[memory]", fmt.Sprintf(`resource quantity for "memory" cannot be negative: %d`, c.SystemReserved[pod.Memory])
	case 5:
		c.HugePageSizes = []int64{3 * mi}
		delete(c.Capacity, "hugepages-2Mi")
		field = "hugePageSizes[0]"
	case 6:
		c.CgroupDriver = "docker"
		field = "cgroupDriver"
	}
	m.steps.Begin("badConfig", "%s", field)
	if m.kubelet != nil {
		// Another system under test is asked about valid nodes only:
		// refusing bad input is CG-ERRORS, a fidelity invariant.
		return
	}
	_, err := core.Build(c, m.pods)
	if field == "nodeAllocatable" {
		mod, _ := cgroupscheck.ModelInput(c, m.pods)
		merr := model.Validate(mod)
		if merr == nil {
			properties.Fail(m.t, Model, "the model accepts reservations above capacity %s", c.SystemReserved)
		}
		want = merr.Error()
	}
	m.expectError(err, field, want)
}

// badPod adds one malformed pod (or one too many) and expects Build to name
// the field; the node keeps its pods.
func (m *machine) badPod(t *rapid.T) {
	p := m.drawPod(t)
	pods := append(append([]*pod.Pod(nil), m.pods...), p)
	c := m.cfg
	field := fmt.Sprintf("pods[%d]", len(m.pods))
	want := ""
	switch rapid.IntRange(0, 5).Draw(t, "fault") {
	case 0:
		p.Containers[0].Requests[pod.CPU] = -rapid.Int64Range(1, 1000).Draw(t, "negative")
		field += ".containers[0].requests[cpu]"
		want = fmt.Sprintf("%s: %d must not be negative", field, p.Containers[0].Requests[pod.CPU])
	case 1:
		p.Containers = append(p.Containers, p.Containers[0])
		field += fmt.Sprintf(".containers[%d].name", len(p.Containers)-1)
	case 2:
		p.UID = rapid.SampledFrom([]string{"", "../x", "a/b", "-a"}).Draw(t, "uid")
		field += ".uid"
	case 3:
		for _, cs := range [][]pod.Container{p.InitContainers, p.Containers} {
			for i := range cs {
				delete(cs[i].Requests, "hugepages-2Mi")
				delete(cs[i].Limits, "hugepages-2Mi")
			}
		}
		p.Containers[0].Limits["hugepages-2Mi"] = 2 * mi
		p.Containers[0].Requests["hugepages-2Mi"] = 2 * mi
		c.HugePageSizes = []int64{gi}
		c.Capacity = m.cfg.Capacity.Clone()
		delete(c.Capacity, "hugepages-2Mi")
		// Only this pod: the node's pods may use 2Mi pages themselves.
		// Requests are checked before limits.
		pods = []*pod.Pod{p}
		field = "pods[0].containers[0].requests[hugepages-2Mi]"
		want = field + ": page size 2MB is not one of the host's hugePageSizes"
	case 4:
		if len(m.pods) == 0 {
			pods = []*pod.Pod{p, p}
			field = "pods[1].uid"
		} else {
			p.UID = m.pods[0].UID
			field += ".uid"
		}
	case 5:
		c.MaxPods = len(pods) - 1
		if c.MaxPods == 0 {
			c.MaxPods = 1
			pods = append(pods, p)
		}
		field = "pods"
		want = fmt.Sprintf("pods: %d pods exceed maxPods %d", len(pods), c.MaxPods)
	}
	m.steps.Begin("badPod", "%s: %s", field, podSpec{p, m.cfg.PodLevelResources})
	if m.kubelet != nil {
		// As in badConfig: CG-ERRORS is core's.
		return
	}
	_, err := core.Build(c, pods)
	m.expectError(err, field, want)
}

func (m *machine) expectError(err error, field, want string) {
	// Bad input always has a field to name, so CG-ERRORS applies.
	m.tally.Check(Errors, true)
	var fe *core.FieldError
	if !errors.As(err, &fe) {
		properties.Fail(m.t, Errors, "want an error naming %s, got %v (%T)", field, err, err)
	}
	if fe.Field != field {
		properties.Fail(m.t, Errors, "want an error naming %s, got field %q: %v", field, fe.Field, err)
	}
	if want != "" && err.Error() != want {
		properties.Fail(m.t, Errors, "error message\n  got:  %s\n  want: %s", err, want)
	}
}
