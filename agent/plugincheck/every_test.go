package plugincheck

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
)

// findingChecks lists the checks of res's findings, in order.
func findingChecks(res *Result) []string {
	var checks []string
	for _, f := range res.Findings {
		checks = append(checks, f.Check)
	}
	return checks
}

// TestEveryFailingCheckReported: two knobs at once, an advice-level one and
// a contract-level one that only the rapid sequences reach, give both
// findings, each with its own shrunk calls and replay line: one failure
// does not hide the other.
func TestEveryFailingCheckReported(t *testing.T) {
	cfg := cleanPlugin(socketDir(t))
	cfg.RejectUnknownIDs = false
	cfg.Faults[testplugin.GetPreferredAllocation] = testplugin.Fault{Malformed: testplugin.MissingMustInclude}
	res, err := checkPlugin(cfg, Options{Checks: 30, CallTimeout: callBound(cfg)})
	require.NoError(t, err)
	require.Equal(t, []string{PrefMustInclude, AllocUnknown}, findingChecks(res), "findings: %+v", res.Findings)
	for _, f := range res.Findings {
		assert.NotContains(t, f.Message, f.Check, "the check's ID is the finding's Check, not repeated in its message")
		assert.NotEmpty(t, f.Steps, "%s has its shrunk calls", f.Check)
		assert.Regexp(t, `^nodeproof plugin-check --dir \S+ --seed \d+`, f.Replay, "%s has its replay line", f.Check)
	}
	assert.False(t, res.Passed())
}

// TestSmokeJudgesAnswers: the smoke pass judges the answers' shape, not
// only errors, so a plugin answering no container response is caught by
// its first Allocate and GetPreferredAllocation, without rapid; the
// sequences still run and find what else is wrong (here, unknown devices
// accepted, as upstream's stub does: docs/findings.md F1 and F2), with the
// smoke pass's findings muted in their replay lines.
func TestSmokeJudgesAnswers(t *testing.T) {
	cfg := cleanPlugin(socketDir(t))
	cfg.RejectUnknownIDs = false
	cfg.Faults[testplugin.Allocate] = testplugin.Fault{Malformed: testplugin.NoContainerResponses}
	cfg.Faults[testplugin.GetPreferredAllocation] = testplugin.Fault{Malformed: testplugin.WrongPreferredSize}
	res, err := checkPlugin(cfg, Options{Checks: 30, CallTimeout: callBound(cfg)})
	require.NoError(t, err)
	// The preferred allocation one device short drops a device it must
	// include, too: the sequences find that after the smoke pass.
	require.Equal(t, []string{PrefSize, PrefMustInclude, AllocAnswer, AllocUnknown}, findingChecks(res), "findings: %+v", res.Findings)
	assert.Equal(t, Finding{Check: AllocAnswer, Severity: Contract,
		Message: "Allocate([d0]) answered 0 container responses to 1 container request",
		Steps:   []string{"Allocate([d0])"}}, res.Findings[2])
	assert.Equal(t, Finding{Check: PrefSize, Severity: Contract,
		Message: "preferred 0 devices [] for an allocation size of 1",
		Steps:   []string{"GetPreferredAllocation(available [d0 d1 d2 d3], size 1)", "  answer []"}}, res.Findings[0])
	assert.Regexp(t, ` --seed \d+ --mute PC-ALLOC-ANSWER,PC-PREF-SIZE$`, res.Findings[3].Replay)
}

// TestOptionsFailureBlamedOnce: a plugin whose GetDevicePluginOptions
// fails or hangs is PC-REG-OPTIONS alone. The checker uses that call as its
// sign of life, so it must not read the failure as a plugin gone
// (PC-PLUGIN-ALIVE, PC-RESTART-STREAM-DROP), nor wait the call bound for it
// on every call of every case it shrinks.
func TestOptionsFailureBlamedOnce(t *testing.T) {
	// In this order: a mutant that fails both (mutants/pc-preferred-*.patch)
	// is re-run with the first failure (mutants.killingTest), the error's,
	// which does not wait out a hang.
	for _, tc := range []struct {
		name  string
		fault testplugin.Fault
	}{{"error", testplugin.Fault{Err: errors.New("no options")}}, {"hang", testplugin.Fault{Hang: true}}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := cleanPlugin(socketDir(t))
			cfg.Faults[testplugin.GetDevicePluginOptions] = tc.fault
			// The run must report PC-REG-OPTIONS alone, so no healthy call
			// may meet the bound, not even on a loaded machine: at 2 s one
			// did once, in the fifth run of make test-busy (a rapid case
			// failed by it and then passed, read as the checker failing).
			// The hung call is waited out once, so a longer bound costs
			// little.
			bound := healthyBound
			if stalls(cfg) {
				bound = 3 * stallBound
			}
			start := time.Now()
			res, err := checkPlugin(cfg, Options{Checks: 30, CallTimeout: bound})
			require.NoError(t, err)
			assert.Equal(t, []string{RegOptions}, findingChecks(res), "findings: %+v", res.Findings)
			assert.Zero(t, res.Counts[PluginAlive].Applied, "no sign of life to judge by")
			t.Logf("the run took %v", time.Since(start))
		})
	}
}
