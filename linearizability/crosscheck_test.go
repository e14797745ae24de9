package linearizability

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nodeproof/nodeproof/linearizability/frontier"
	"github.com/nodeproof/nodeproof/models/deviceagent"
)

// The default budget keeps go test ./linearizability fast; BENCHMARKS.md
// gives a run at a larger one.
var (
	crossSynthesized = flag.Int("lin.cross.synthesized", 50, "synthesized histories TestFrontierAgreesWithPorcupine cross-checks, each also widened and corrupted four times")
	crossRecorded    = flag.Int("lin.cross.recorded", 2, "histories TestRecordedHistoriesAgree records and cross-checks, each also corrupted 60 times")
)

// crossCheckTimeout bounds each check of the cross-check. The histories are
// small; a check that runs out of time is a failure of the test, not a
// history to leave out.
const crossCheckTimeout = 30 * time.Second

// agree checks history with both checkers, requires the same verdict and
// returns it. The frontier checker runs twice: with the model's hash, and
// with one that keeps two of its bits, so that many different states
// collide and Equal must tell them apart.
func agree(t *testing.T, init deviceagent.State, history []porcupine.Operation, what string) porcupine.CheckResult {
	t.Helper()
	want := checkPorcupine(init, history, crossCheckTimeout)
	require.NotEqual(t, porcupine.Unknown, want, "%s: porcupine ran out of time", what)
	got := Check(init, history, crossCheckTimeout)
	require.Equal(t, want, got, "%s: the frontier checker disagrees with porcupine\nstart: %s\nhistory:\n%s", what, init, describeHistory(history))
	colliding := nondeterministicModel(init)
	colliding.Hash = func(s any) uint64 { return deviceagent.Hash(s.(deviceagent.State)) & 3 }
	got = frontier.Check(colliding, filters, Split(history), crossCheckTimeout)
	require.Equal(t, want, got, "%s: the frontier checker with colliding hashes disagrees with porcupine\nstart: %s\nhistory:\n%s", what, init, describeHistory(history))
	return got
}

func describeHistory(history []porcupine.Operation) string {
	var b []byte
	for _, op := range history {
		b = fmt.Appendf(b, "  client %d [%d, %d] %s\n", op.ClientId, op.Call, op.Return,
			deviceagent.Describe(op.Input.(deviceagent.Input), op.Output.(deviceagent.Output)))
	}
	return string(b)
}

// widen stretches some operations' intervals: a linearizable history stays
// linearizable, and more operations overlap, so the search has more orders
// to try.
func widen(rng *rand.Rand, history []porcupine.Operation) []porcupine.Operation {
	out := slices.Clone(history)
	for i := range out {
		if rng.IntN(4) == 0 {
			out[i].Call -= rng.Int64N(20)
			if out[i].Return != Never {
				out[i].Return += rng.Int64N(20)
			}
		}
	}
	return out
}

// corrupt changes one operation of a copy of history: a read off by one, a
// granted device swapped, an admission's answer changed, an operation moved
// in time, or an update's outcome made known or unknown. Many corrupted
// histories are illegal; some are not, and the checkers must agree on both.
func corrupt(rng *rand.Rand, history []porcupine.Operation) []porcupine.Operation {
	out := slices.Clone(history)
	i := rng.IntN(len(out))
	op := &out[i]
	in, res := op.Input.(deviceagent.Input), op.Output.(deviceagent.Output)
	res.Counts, res.Granted = slices.Clone(res.Counts), slices.Clone(res.Granted)
	switch {
	case in.Op == deviceagent.Capacity && len(res.Counts) > 0:
		c := rng.IntN(len(res.Counts))
		if rng.IntN(2) == 0 {
			res.Counts[c].Allocatable += int64(1 - 2*rng.IntN(2))
		} else {
			res.Counts[c].Capacity++
		}
	case in.Op == deviceagent.Admit && len(res.Granted) > 0 && rng.IntN(2) == 0:
		g := rng.IntN(len(res.Granted))
		ids := slices.Clone(res.Granted[g].DeviceIDs)
		ids[rng.IntN(len(ids))] = deviceIDs[rng.IntN(len(deviceIDs))]
		res.Granted[g].DeviceIDs = ids
	case in.Op == deviceagent.Admit:
		kinds := []string{"", deviceagent.ErrUnavailable, deviceagent.ErrNoHealthy, deviceagent.ErrAllocateFailed}
		res.Err, res.Granted = kinds[rng.IntN(len(kinds))], nil
	case in.Op == deviceagent.Update && rng.IntN(2) == 0:
		res.Unknown = !res.Unknown
	default:
		shift := rng.Int64N(400) - 200
		op.Call += shift
		if op.Return != Never {
			op.Return += shift
		}
	}
	op.Output = res
	return out
}

// TestFrontierAgreesWithPorcupine holds the frontier checker to porcupine's
// verdict on many small histories: synthesized ones (linearizable by
// construction), the same with intervals widened, and corrupted copies of
// both, which are mostly illegal. The histories recorded through the agent
// are cross-checked in TestRecordedHistoriesAgree.
func TestFrontierAgreesWithPorcupine(t *testing.T) {
	verdicts := map[porcupine.CheckResult]int{}
	for seed := range uint64(*crossSynthesized) {
		rng := rand.New(rand.NewPCG(seed, 7))
		n, clients := 10+rng.IntN(120), 2+rng.IntN(7)
		init, history := synthesize(seed, n, clients)
		what := fmt.Sprintf("seed %d, %d operations, %d clients", seed, n, clients)
		require.Equal(t, porcupine.Ok, agree(t, init, history, what), "%s: a synthesized history", what)
		widened := widen(rng, history)
		require.Equal(t, porcupine.Ok, agree(t, init, widened, what+", widened"), "%s: a widened history", what)
		for k := range 4 {
			verdicts[agree(t, init, corrupt(rng, widened), fmt.Sprintf("%s, widened, corruption %d", what, k))]++
		}
	}
	t.Logf("corrupted histories: %d Ok, %d Illegal", verdicts[porcupine.Ok], verdicts[porcupine.Illegal])
	// Both verdicts must be common, or the agreement says little.
	assert.Greater(t, verdicts[porcupine.Illegal], *crossSynthesized, "illegal corrupted histories")
	assert.Greater(t, verdicts[porcupine.Ok], *crossSynthesized/4, "corrupted histories still linearizable")
}

// TestRecordedHistoriesAgree records short histories of eight clients
// through the real agent and holds the frontier checker to porcupine's
// verdict on each and on corrupted copies: unknown updates followed by
// their plugin's crash (whose pending windows decide which reads the
// frontier checker may place for good), failed and hung Allocates, and the
// overlap of real concurrency are what the synthesized histories lack.
func TestRecordedHistoriesAgree(t *testing.T) {
	defer goleak.VerifyNone(t)
	verdicts := map[porcupine.CheckResult]int{}
	for seed := range uint64(*crossRecorded) {
		rec, err := Record(context.Background(), Workload{Seed: 100 + seed, PodClients: 4, OpsPerClient: 6})
		require.NoError(t, err)
		what := fmt.Sprintf("recorded seed %d", 100+seed)
		require.Equal(t, porcupine.Ok, agree(t, rec.Init, rec.History, what), "%s", what)
		rng := rand.New(rand.NewPCG(seed, 11))
		for k := range 60 {
			verdicts[agree(t, rec.Init, corrupt(rng, rec.History), fmt.Sprintf("%s, corruption %d", what, k))]++
		}
	}
	t.Logf("corrupted recorded histories: %d Ok, %d Illegal", verdicts[porcupine.Ok], verdicts[porcupine.Illegal])
	// A recording's share of illegal corruptions varies with its
	// interleaving (a quarter to a third of 60 with eight clients): the
	// bounds ask only that neither verdict be rare.
	assert.Greater(t, verdicts[porcupine.Illegal], 5**crossRecorded, "illegal corrupted histories")
	assert.Greater(t, verdicts[porcupine.Ok], 5**crossRecorded, "corrupted histories still linearizable")
}
