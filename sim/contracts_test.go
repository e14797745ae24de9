package sim

import (
	"testing"

	"github.com/nodeproof/nodeproof/verify"
	"github.com/stretchr/testify/require"
)

// contracts are the IDs of the contract invariants. The simulation's own
// tests judge its fidelity to upstream; a contract invariant's violation is
// a broken promise of upstream's kubelet, which the properties suite judges
// and a known finding explains. These tests pass them all as
// Config.Explained, as `nodeproof sim` passes the known findings'.
func contracts() []string {
	var ids []string
	for _, inv := range Invariants() {
		if inv.Kind == verify.Contract {
			ids = append(ids, inv.ID)
		}
	}
	return ids
}

// explained is cfg with every contract invariant explained.
func explained(cfg Config) Config {
	cfg.Explained = contracts()
	return cfg
}

// requireFaithful fails on a fidelity invariant's violation.
func requireFaithful(t testing.TB, results []CheckResult, msgAndArgs ...any) {
	t.Helper()
	for _, r := range results {
		if !isContract(r.ID) {
			require.NoError(t, r.Err, msgAndArgs...)
		}
	}
}

func isContract(id string) bool {
	for _, c := range contracts() {
		if c == id {
			return true
		}
	}
	return false
}

// TestRunCountsExplainedViolationsAndGoesOn: a violation Config.Explained
// names is counted in Stats.Explained and the run goes on to its end,
// where the same run without it stops at the violation.
func TestRunCountsExplainedViolationsAndGoesOn(t *testing.T) {
	rates, err := ParseRates("kill-error=0.1,kubelet-restart=0.02")
	require.NoError(t, err)
	cfg := Config{Seed: 43, Duration: 30 * 60e9, Pods: 4, Faults: rates}
	stopped := Run(cfg, nil)
	require.NotNil(t, stopped.Violation)
	require.Equal(t, InvCRestartReady, stopped.Violation.Invariant)

	cfg.Explained = []string{InvCRestartReady}
	sum := Run(cfg, nil)
	require.Nil(t, sum.Violation)
	require.Equal(t, cfg.Duration, sum.Stats.Simulated)
	require.Positive(t, sum.Stats.Explained[InvCRestartReady])
	require.Equal(t, stopped.Replay, sum.Replay, "explaining changes no event, so not the replay line")
}

func TestValidateExplained(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Explained = []string{"SIM-NOPE"}
	require.EqualError(t, cfg.Validate(), `explained: "SIM-NOPE" is not an invariant of the simulation`)
	cfg.Explained = []string{InvDevicesHeld}
	require.ErrorContains(t, cfg.Validate(), "explained: SIM-DEVICES-HELD is a fidelity invariant")
	cfg.Explained = contracts()
	require.NoError(t, cfg.Validate())
}
