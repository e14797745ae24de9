package sim

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/properties"
	simulation "github.com/nodeproof/nodeproof/sim"
)

// TestSimFailurePrintsEachStepOnce: a failing sim case prints its shrunk
// steps once, as the suite's step lines, and its message says where the
// violation came without listing the same events again. Replaying with
// every contract enforced makes the known finding SIM-F1 fail the suite,
// as nodeproof replay does.
func TestSimFailurePrintsEachStepOnce(t *testing.T) {
	s, ok := properties.Lookup("sim")
	require.True(t, ok)
	res := properties.Run(s, properties.RunOptions{Checks: 100, Steps: 100, Seed: 1, EnforceAll: true})
	require.NotNil(t, res.Failure, "the sim suite passed with every contract enforced")
	f := res.Failure
	out := strings.Join(f.Steps, "\n")
	stepRE := regexp.MustCompile(`^step \d+: (#\d+ .*?)( \(after \d+ routine events?\))?$`)
	var steps int
	for _, line := range f.Steps[:len(f.Steps)-1] {
		m := stepRE.FindStringSubmatch(line)
		require.NotNil(t, m, "not a step line: %q", line)
		assert.Equal(t, 1, strings.Count(out, m[1]), "the event of %q is printed more than once:\n%s", line, out)
		steps++
	}
	require.Positive(t, steps)
	assert.Regexp(t, `^`+f.Invariant+`: .*\nafter step `+strconv.Itoa(steps)+`( and \d+ routine events?, the last #\d+ .*)? \(\d+ events in this case`, f.Message)
}

// TestSimWhere: a violation among folded routine events names the event it
// came at, which no step line shows; one after a step's event names the
// step only.
func TestSimWhere(t *testing.T) {
	trace := []simulation.Event{{Seq: 1, Kind: "pod-arrive", Detail: "p1"}, {Seq: 2, Kind: "probe", Detail: "p1/c0/Readiness probe success", Routine: true}}
	assert.Equal(t, "before any event", where(nil, 0, 0, 0))
	assert.Equal(t, "after step 1 (1 events in this case, the routine ones folded into the steps)", where(trace[:1], 1, 0, 1))
	assert.Equal(t, "after step 1 and 1 routine event, the last #2 0s probe: p1/c0/Readiness probe success (2 events in this case)", where(trace, 1, 1, 2))
	assert.Equal(t, "after 1 routine event, the last #2 0s probe: p1/c0/Readiness probe success (2 events in this case)", where(trace[1:], 0, 1, 2))
}
