package plugincheck

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
)

// hangAfterSmoke checks the clean plugin, whose Allocate hangs from the end
// of the first generated case on: after the smoke pass, which it answered.
// It returns the result and the Allocate calls made after the hang began.
func hangAfterSmoke(t *testing.T, opts Options) (*Result, int) {
	cfg := cleanPlugin(socketDir(t))
	started := make(chan *testplugin.Plugin, 1)
	var plugin *testplugin.Plugin
	before := 0
	opts.Dir, opts.Seed = cfg.Dir, 1
	opts.Launch = func(context.Context) error {
		p, err := testplugin.Start(cfg)
		started <- p
		return err
	}
	opts.Progress = func(int, int) {
		if plugin != nil {
			return
		}
		plugin = <-started
		require.NotNil(t, plugin)
		before = len(plugin.Calls(testplugin.Allocate))
		plugin.SetFault(testplugin.Allocate, testplugin.Fault{Hang: true})
	}
	res, err := Check(context.Background(), opts)
	require.NoError(t, err)
	if plugin == nil {
		plugin = <-started
	}
	plugin.Stop()
	return res, len(plugin.Calls(testplugin.Allocate)) - before
}

// TestHangShrinkingBounded: a call that hangs only in the generated calls
// costs the call bound at every attempt rapid makes to shrink its case;
// Options.ShrinkTime bounds that. With a bound that passed before the
// shrinking began, the finding keeps the case as found and says its
// shrinking was bounded. With a bound of 1 s, the plugin is asked few
// calls: every Allocate it gets hangs 100 ms, and at most 3 go at once, so
// in 1 s it gets at most 30, besides the failing case, the case running
// when the bound passed and the cases of the run that follows with the
// failed check muted (12 calls a case at most). Unbounded, rapid shrank
// this case for 20 s, with 438 calls, whatever its own bound.
func TestHangShrinkingBounded(t *testing.T) {
	const checks, callTimeout = 5, 100 * time.Millisecond
	for _, bound := range []time.Duration{time.Nanosecond, time.Second} {
		t.Run(bound.String(), func(t *testing.T) {
			res, hung := hangAfterSmoke(t, Options{Checks: checks, CallTimeout: callTimeout, ShrinkTime: bound})
			require.Equal(t, []string{AllocAnswer}, findingChecks(res), "findings: %+v", res.Findings)
			f := res.Findings[0]
			assert.NotEmpty(t, f.Steps)
			assert.LessOrEqual(t, hung, 3*int(bound/callTimeout)+12*(2+checks), "Allocate calls after the hang began")
			if bound < callTimeout {
				assert.True(t, f.ShrinkBounded)
				assert.Regexp(t, `failed: rpc error: code = DeadlineExceeded desc = context deadline exceeded \(shrinking bounded by 1ns: the smallest failing calls found by then\)$`, f.Message)
			}
		})
	}
}
