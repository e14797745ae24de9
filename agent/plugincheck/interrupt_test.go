package plugincheck

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
)

// TestInterruptIsNotAFinding: a run whose context ends before it finished
// (SIGINT, SIGTERM) is reported interrupted, neither passed nor failed,
// with no finding: the calls, streams and registrations that the end of
// the context broke are not the plugin's doing. The plugin here is the
// clean one, so any finding would blame a healthy plugin. The bounds are
// an hour, so a run that waited one out would not end.
func TestInterruptIsNotAFinding(t *testing.T) {
	opts := Options{Seed: 1, Restart: true, Checks: 50, CallTimeout: time.Hour, RegisterTimeout: time.Hour}
	for name, run := range map[string]func(ctx context.Context, cancel context.CancelFunc) (*Result, error){
		// Once the generated calls have begun: the calls in flight, the
		// stream, the stream drop and the restart's registration would
		// all fail.
		"during the generated calls": func(ctx context.Context, cancel context.CancelFunc) (*Result, error) {
			opts := opts
			opts.Progress = func(int, int) { cancel() }
			return checkPluginContext(ctx, cleanPlugin(socketDir(t)), opts)
		},
		// While the checker waits for the first list, which the plugin
		// holds back: that wait would be a PC-LAW-FIRST-SNAPSHOT finding.
		"waiting for the first list": func(ctx context.Context, cancel context.CancelFunc) (*Result, error) {
			cfg := cleanPlugin(socketDir(t))
			cfg.Faults[testplugin.ListAndWatch] = testplugin.Fault{Block: make(chan struct{})}
			started := make(chan *testplugin.Plugin, 1)
			opts := opts
			opts.Dir = cfg.Dir
			opts.Launch = func(context.Context) error {
				p, err := testplugin.Start(cfg)
				started <- p
				return err
			}
			interrupted := make(chan struct{})
			var plugin *testplugin.Plugin
			go func() {
				defer close(interrupted)
				defer cancel()
				if plugin = <-started; plugin != nil {
					assert.Eventually(t, func() bool { return len(plugin.Calls(testplugin.ListAndWatch)) > 0 }, time.Minute, time.Millisecond,
						"the checker opens ListAndWatch")
				}
			}()
			res, err := Check(ctx, opts)
			<-interrupted
			if plugin != nil {
				plugin.Stop()
			}
			return res, err
		},
		// Before any registration: the run ends at once.
		"waiting for the registration": func(ctx context.Context, cancel context.CancelFunc) (*Result, error) {
			opts := opts
			opts.Dir = socketDir(t)
			opts.Launch = func(context.Context) error {
				cancel()
				return nil
			}
			return Check(ctx, opts)
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			res, err := run(ctx, cancel)
			require.NoError(t, err, "an interrupt is not a set-up failure")
			assert.True(t, res.Interrupted)
			assert.Empty(t, res.Findings, "an interrupt is not a finding")
			assert.False(t, res.Passed(), "an interrupted run did not pass")
			assert.Equal(t, "INTERRUPTED before the run finished", res.Verdict())
		})
	}
}
