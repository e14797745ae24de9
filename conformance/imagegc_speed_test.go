package conformance

import (
	"flag"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// imageGCRounds is how many times TestImageGCSpeed runs its scenarios on
// each side; BENCHMARKS.md's figure uses more than the default.
var imageGCRounds = flag.Int("imagegc.rounds", 1, "rounds of TestImageGCSpeed's 256 scenarios per side")

// TestImageGCSpeed times nodeproof and upstream on the same generated image
// GC scenarios. It is a test, not a benchmark, because upstream's side must
// run in a synctest bubble and synctest.Test takes a *testing.T. Both sides
// run every scenario, alternating rounds so that a change in the machine's
// load falls on both; an empty bubble is timed too, to tell the bubble's
// own cost from upstream's. The scenarios are drawn without ties, so both
// sides must agree on every one.
func TestImageGCSpeed(t *testing.T) {
	const scenarios = 256
	var in []gcScenario
	g := genGCScenario()
	for i := 0; len(in) < scenarios; i++ {
		if s := g.Example(i); s.NoTies {
			in = append(in, s)
		}
	}
	var ours, theirs, bubble time.Duration
	steps := 0
	for _, s := range in {
		steps += len(s.Steps)
	}
	for range *imageGCRounds {
		start := time.Now()
		var ourResults []gcResult
		for _, s := range in {
			ourResults = append(ourResults, runOurGC(s))
		}
		ours += time.Since(start)

		start = time.Now()
		var theirResults []gcResult
		for _, s := range in {
			theirResults = append(theirResults, runTheirGC(t, s))
		}
		theirs += time.Since(start)

		start = time.Now()
		for range in {
			synctest.Test(t, func(*testing.T) {})
		}
		bubble += time.Since(start)
		require.Equal(t, ourResults, theirResults)
	}
	n := time.Duration(*imageGCRounds * scenarios)
	t.Logf("%d scenarios (%d steps) x %d rounds: nodeproof %v/scenario, upstream %v/scenario in a bubble (an empty bubble %v), upstream / nodeproof %.1f (%.1f without the bubble's cost)",
		scenarios, steps, *imageGCRounds, ours/n, theirs/n, bubble/n, float64(theirs)/float64(ours), float64(theirs-bubble)/float64(ours))
}
