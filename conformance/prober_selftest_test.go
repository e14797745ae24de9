package conformance

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jitterScenario: one pod with one readiness probe (period 10 s) added at
// the kubelet's start, so its worker sleeps its jitter; the container runs
// and a sync before the AddPod marks it started, so the first doProbe
// probes.
func jitterScenario(seed int64) prScenario {
	return prScenario{
		Pods: []prPod{{UID: "p0", RestartPolicy: "Always", Containers: []prContainer{{Name: "c0",
			Readiness: &prProbe{Timeout: 1, Period: 10, Success: 1, Failure: 1, Script: []prOutcome{prOK}}}}}},
		Steps: []prStep{{Op: "start", Container: "c0"}, {Op: "sync"}, {Op: "add", Seed: seed}, {Op: "wait", Wait: 30 * time.Second}},
	}
}

// TestProberJitterIsSeeded shows that seeding math/rand's global source
// before AddPod fixes upstream's jitter: its first probe falls at
// prJitter(seed)·period, for every seed tried, and two seeds give two
// times.
func TestProberJitterIsSeeded(t *testing.T) {
	firsts := map[time.Duration]bool{}
	for _, seed := range []int64{1, 2, 42, -7} {
		out := runTheirProber(t, jitterScenario(seed))
		require.NotEmpty(t, out.Runs, "seed %d", seed)
		want := time.Duration(prJitter(seed) * float64(10*time.Second))
		assert.Equal(t, want, out.Runs[0].At, "seed %d", seed)
		firsts[out.Runs[0].At] = true
		assert.Equal(t, runOurProber(jitterScenario(seed)), out, "seed %d", seed)
	}
	assert.Len(t, firsts, 4)
}

// TestProberComparisonFailsOnWrongCore shows that the comparison catches a
// core that ignores the jitter (its first probes at once).
func TestProberComparisonFailsOnWrongCore(t *testing.T) {
	withoutFailFile(t)
	setFlag(t, "rapid.checks", "300")
	const name = "selftest.proberWithoutJitter"
	defer forget(name)
	rec := &recorder{}
	res := Compare(rec, Comparison[prScenario, prResult]{
		Name:   name,
		Gen:    genPrScenario(),
		Ours:   func(in prScenario) prResult { return runOurProberWith(in, func(int64) float64 { return 0 }) },
		Theirs: func(in prScenario) prResult { return runTheirProber(t, in) },
	})
	require.True(t, rec.failed, "a core without jitter passed the comparison:\n%s", rec.out.String())
	assert.Positive(t, res.Mismatches)
	assert.Contains(t, rec.out.String(), "nodeproof and upstream differ")
}
