package cgroups

import (
	"pgregory.net/rapid"

	core "github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/verify"
)

// Kubelet is a system under test of the suite other than core: the
// cgroups a kubelet configured by a node's config keeps for the pods it
// runs. The conformance module has upstream's.
type Kubelet struct {
	// Build is the hierarchy the kubelet keeps for pods under cfg, as
	// core.Build gives it: every cgroup with its Path, Kind, QOS, PodUID
	// and Container, and at least what the contract properties read of
	// its Config (each container's CPU quota and period; memory.low in
	// Unified from kubepods down to each pod). cfg and pods are a valid
	// node (core.Build accepts them); an error is the system refusing it.
	Build func(cfg core.Config, pods []*pod.Pod) (core.Hierarchy, error)
	// TieredReservation says whether the kubelet has memoryReservationPolicy
	// TieredReservation (v1.36 added it, kubernetes#137584).
	// CG-C-MEMORY-LOW states a promise of that policy: without it no pod
	// can be given it, and the property applies to none.
	TieredReservation bool
}

// ContractSuite is the suite with kubelet as its system under test in
// place of core: the same generated nodes and pods, held to the contract
// properties alone (ContractInvariants). The fidelity invariants compare
// core's hierarchy, files and validation with the model, the seed and
// restated rules; the conformance module holds core to upstream's
// functions already. The bad-input actions draw their input as on core
// and ask nothing of kubelet: refusing bad input is CG-ERRORS, a fidelity
// invariant, and the node stays as it was. properties.Run runs the suite
// unregistered.
func ContractSuite(name string, kubelet Kubelet) properties.Suite {
	return properties.Suite{
		Name:       name,
		Subsystem:  subsystem,
		Invariants: ContractInvariants(),
		Property:   func(t *rapid.T, tally *properties.Tally) { newMachine(t, tally, &kubelet).run() },
	}
}

// ContractInvariants are the contract properties among the invariants, in
// order: the ones that judge a system under test other than core.
func ContractInvariants() []verify.Property { return verify.Contracts(invariants) }

// checkContracts holds the hierarchy another system under test keeps for
// the node to the contract properties.
func (m *machine) checkContracts() {
	h, err := m.kubelet.Build(m.cfg, m.pods)
	if err != nil {
		m.t.Fatalf("the system under test refuses a valid node: %v\n  config: %s", err, configSpec{m.cfg})
	}
	m.modelInput()
	m.checkContractCPULimit(h)
	m.checkContractMemoryLow(h)
}
