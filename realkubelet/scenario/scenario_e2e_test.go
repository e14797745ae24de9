//go:build nodee2e

// The generated scenarios against the real kubelet, built only with the
// nodee2e tag (make node-e2e), like realkubelet's own node tests.

package scenario

import (
	"flag"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/realkubelet"
)

// The sweep's size: NODEPROOF_SCENARIOS scenarios (unless -rapid.checks
// is given) of up to NODEPROOF_SCENARIO_STEPS steps (DefaultSteps). The
// defaults keep make node-e2e short; a measured sweep sets them higher.
const defaultScenarios = 10

// TestScenarios plays generated scenarios, each on a node of its own, and
// prints each property's counts and the step and restart times. A
// violation fails it with the shrunk steps; rapid names the seed and fail
// file to replay it with.
func TestScenarios(t *testing.T) {
	if why := realkubelet.Unavailable(); why != "" {
		t.Fatalf("this host cannot run a real kubelet: %s", why)
	}
	_, err := realkubelet.Find()
	require.NoError(t, err, "make node-e2e builds the kubelet first")
	if !flagSet("rapid.checks") {
		require.NoError(t, flag.Set("rapid.checks", strconv.Itoa(envInt(t, "NODEPROOF_SCENARIOS", defaultScenarios))))
	}
	maxSteps := envInt(t, "NODEPROOF_SCENARIO_STEPS", DefaultSteps)
	tally := NewTally()
	// NODEPROOF_STRICT=1 fails on breaches a confirmed finding explains,
	// so that rapid shrinks them.
	tally.Strict = os.Getenv("NODEPROOF_STRICT") == "1"
	// Deferred, so that a failed sweep (rapid ends the test) says what
	// it played too.
	defer func() {
		t.Logf("sweep:\n%s", tally.Summary())
		if t.Failed() {
			t.Log("replay: go test -tags nodee2e ./realkubelet/scenario/ -run TestScenarios -rapid.failfile=<the fail file above> (or -rapid.seed=<the seed above>)")
		}
	}()
	rapid.Check(t, func(rt *rapid.T) { Play(rt, maxSteps, tally) })
	for _, c := range Checks {
		require.Positive(t, tally.Counts[c.ID].Checked, "%s never checked", c.ID)
	}
	require.Positive(t, tally.Counts[SimPredicts].Applied, "%s never applied", SimPredicts)
	// A divergence no known limit explains is a fidelity bug of the
	// simulation: the sweep goes on past it, so that it counts them all,
	// and fails at the end.
	require.Zero(t, tally.Divergences[FidelityBug], "divergences of the simulation from the node that no known limit explains")
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "%s", name)
	require.Positive(t, n, "%s", name)
	return n
}
