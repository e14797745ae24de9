package conformance

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestProberSpeed times nodeproof and upstream on the same 256 generated
// prober scenarios (a test, since upstream's side runs in a synctest
// bubble, which takes a *testing.T); both must agree on every one.
func TestProberSpeed(t *testing.T) {
	const scenarios = 256
	g := genPrScenario()
	var in []prScenario
	for i := range scenarios {
		in = append(in, g.Example(i))
	}
	start := time.Now()
	var ours []prResult
	for _, s := range in {
		ours = append(ours, runOurProber(s))
	}
	ourTime := time.Since(start)
	start = time.Now()
	var theirs []prResult
	for _, s := range in {
		theirs = append(theirs, runTheirProber(t, s))
	}
	theirTime := time.Since(start)
	require.Equal(t, ours, theirs)
	t.Logf("%d scenarios: nodeproof %v/scenario, upstream %v/scenario in a bubble, upstream / nodeproof %.1f",
		scenarios, ourTime/scenarios, theirTime/scenarios, float64(theirTime)/float64(ourTime))
}
