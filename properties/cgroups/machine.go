package cgroups

import (
	"fmt"
	"strings"

	"pgregory.net/rapid"

	core "github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	model "github.com/nodeproof/nodeproof/models/cgroups"
	"github.com/nodeproof/nodeproof/properties"
)

func init() {
	properties.Register(properties.Suite{
		Name:       "cgroups",
		Subsystem:  subsystem,
		Invariants: invariants,
		Property:   func(t *rapid.T, tally *properties.Tally) { newMachine(t, tally, nil).run() },
	})
}

// machine plays a node: a kubelet config and the pods admitted to it.
// Every step changes one of them; the check after it builds the hierarchy
// and holds it against the model and the invariants.
type machine struct {
	t     *rapid.T
	tally *properties.Tally
	steps properties.Steps

	cfg  core.Config
	pods []*pod.Pod
	uid  int
	// podLevelGate is fixed per case. With the gate off no pod sets
	// pod-level resources (the kubelet would not admit it), but some carry
	// an empty spec.resources, which a static pod manifest or an API server
	// with the gate on keeps and the kubelet admits; only the kubelet's
	// gate then says whether it decides the QoS class.
	podLevelGate bool
	// oddQuantities lets the generator draw cpu quantities that are not
	// multiples of 125m, which leave the contention invariant's domain.
	oddQuantities bool
	// spec holds each pod in the model's terms for the current check, so
	// that the checks state their expectations independently of core/pod.
	spec map[string]model.Pod
	// dirty is set by every step that changed the node or its pods.
	dirty bool
	// kubelet is the system under test when it is not core
	// (ContractSuite); nil for core.
	kubelet *Kubelet
}

func newMachine(t *rapid.T, tally *properties.Tally, kubelet *Kubelet) *machine {
	m := &machine{t: t, tally: tally, steps: properties.NewSteps(t, tally), dirty: true, kubelet: kubelet}
	m.podLevelGate = rapid.IntRange(0, 3).Draw(t, "podLevelGate") > 0
	m.oddQuantities = rapid.Bool().Draw(t, "oddQuantities")
	m.cfg = m.drawConfig(t)
	// The node is part of every counterexample, so it is the first step.
	t.Logf("step 0: start %s", configSpec{m.cfg})
	if kubelet == nil {
		m.checkSeed()
	}
	return m
}

func (m *machine) run() {
	m.t.Repeat(map[string]func(*rapid.T){
		"addPod":       m.addPod,
		"removePod":    m.removePod,
		"changeConfig": m.changeConfig,
		"badConfig":    m.badConfig,
		"badPod":       m.badPod,
		"":             m.check,
	})
}

func (s podSpec) String() string {
	p := s.p
	var parts []string
	for _, c := range p.InitContainers {
		kind := "init"
		if c.IsSidecar() {
			kind = "sidecar"
		}
		parts = append(parts, fmt.Sprintf("%s(%s) req=%s lim=%s", c.Name, kind, c.Requests, c.Limits))
	}
	for _, c := range p.Containers {
		parts = append(parts, fmt.Sprintf("%s req=%s lim=%s", c.Name, c.Requests, c.Limits))
	}
	out := fmt.Sprintf("%s %s [%s]", p.UID, p.QOSWith(pod.Options{SkipPodLevelResources: !s.gate}), strings.Join(parts, "; "))
	if len(p.Overhead) > 0 {
		out += " overhead=" + p.Overhead.String()
	}
	if p.Resources != nil {
		out += fmt.Sprintf(" pod-level req=%s lim=%s", p.Resources.Requests, p.Resources.Limits)
	}
	return out
}

func (s configSpec) String() string {
	c := s.c
	qr := "off"
	if c.QOSReservedMemoryPercent != nil {
		qr = fmt.Sprintf("%d%%", *c.QOSReservedMemoryPercent)
	}
	return fmt.Sprintf("driver=%s root=%s capacity=%s system=%s kube=%s eviction=%d enforcePods=%t cfsQuota=%t period=%s gate=%t podLevel=%t qosReserved=%s memoryQoS=%t/%s hugepages=%v pids=%d weight=%s",
		c.CgroupDriver, c.CgroupRoot, c.Capacity, c.SystemReserved, c.KubeReserved, len(c.HardEviction), c.EnforceNodeAllocatablePods,
		c.CPUCFSQuota, c.CPUCFSQuotaPeriod, c.CustomCPUCFSQuotaPeriod, c.PodLevelResources, qr, c.MemoryQoS, c.MemoryReservationPolicy,
		c.HugePageSizes, c.PodPidsLimit, c.ContainerCPUWeight)
}
