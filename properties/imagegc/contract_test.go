package imagegc

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	core "github.com/nodeproof/nodeproof/core/imagegc"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/properties/propertiestest"
)

// coreAsOther starts core's manager as a Kubelet would start another
// system under test: a manager whose promises the registered suite judges.
func coreAsOther(policy core.Policy) (Collector, error) {
	m, err := core.NewManager(policy, core.Options{})
	if err != nil {
		return nil, err
	}
	return coreCollector{m}, nil
}

// TestContractSuiteJudgesAsTheSuite: with core behind a Kubelet, the
// contract suite checks the contract properties alone, and exactly as the
// registered suite does on the same cases (the same draws, the same
// checks, applications and breaches): judging another manager takes
// nothing from them but the fidelity invariants.
func TestContractSuiteJudgesAsTheSuite(t *testing.T) {
	propertiestest.JudgesAsRegistered(t, ContractSuite("imagegc-contract", coreAsOther), "imagegc", []string{ContractInUse, ContractMinAge, ContractMaxAgeUnused, ContractMaxAgeBound, ContractLow})
}

// TestContractSuiteFindsTheBreaches: the contract suite's search, enforcing
// GC-C-LOW, breaches it with core behind a Kubelet as on core (finding
// GC-F4), and keeps GC-C-MAX-AGE-BOUND, which core keeps.
func TestContractSuiteFindsTheBreaches(t *testing.T) {
	s := ContractSuite("imagegc-contract", coreAsOther)
	opts := properties.RunOptions{Seed: 1, Checks: 300, Steps: 100, ShrinkTime: time.Second}
	opts.Enforce = []string{ContractLow}
	res := properties.Run(s, opts)
	require.NotNil(t, res.Failure)
	assert.Equal(t, ContractLow, res.Failure.Invariant)
	opts.Enforce = []string{ContractMaxAgeBound}
	res = properties.Run(s, opts)
	assert.Nil(t, res.Failure)
	assert.Positive(t, res.Tally.Applied[ContractMaxAgeBound])
}
