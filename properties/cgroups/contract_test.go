package cgroups

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	core "github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/properties/propertiestest"
)

// coreAsOther is core's Build as a Kubelet, with every policy it knows.
var coreAsOther = Kubelet{Build: core.Build, TieredReservation: true}

// TestContractSuiteJudgesAsTheSuite: with core behind a Kubelet, the
// contract suite checks the contract properties alone, and exactly as the
// registered suite does on the same cases (the same draws, the same
// checks, applications and breaches): judging another system under test
// takes nothing from them but the fidelity invariants.
func TestContractSuiteJudgesAsTheSuite(t *testing.T) {
	propertiestest.JudgesAsRegistered(t, ContractSuite("cgroups-contract", coreAsOther), "cgroups", []string{ContractCPULimit, ContractMemoryLow})
}

// TestContractSuiteWithoutTieredReservation: a kubelet without the
// memory reservation policy is never held to CG-C-MEMORY-LOW, a promise of
// that policy (checked, applied nowhere), and still to CG-C-CPU-LIMIT.
func TestContractSuiteWithoutTieredReservation(t *testing.T) {
	untiered := coreAsOther
	untiered.TieredReservation = false
	res := properties.Run(ContractSuite("cgroups-contract", untiered), properties.RunOptions{Seed: 1, Checks: 100, Steps: 100, Enforce: []string{ContractMemoryLow}})
	require.Nil(t, res.Failure)
	assert.Positive(t, res.Tally.Checked[ContractMemoryLow])
	assert.Zero(t, res.Tally.Applied[ContractMemoryLow])
	assert.Positive(t, res.Tally.Applied[ContractCPULimit])
}

// TestContractSuiteFindsTheBreaches: the contract suite's search, enforcing
// one property at a time, breaches each with core behind a Kubelet, as on
// core (findings CG-F1 and CG-F2).
func TestContractSuiteFindsTheBreaches(t *testing.T) {
	for _, id := range []string{ContractCPULimit, ContractMemoryLow} {
		res := properties.Run(ContractSuite("cgroups-contract", coreAsOther),
			properties.RunOptions{Seed: 1, Checks: 300, Steps: 100, ShrinkTime: time.Second, Enforce: []string{id}})
		require.NotNil(t, res.Failure, id)
		assert.Equal(t, id, res.Failure.Invariant)
	}
}
