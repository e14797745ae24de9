package plugincheck

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
)

// TestPluginExitIsOneFinding: a plugin whose Launch reports its exit after
// it registered (as Process.Launch does when the process dies) is one
// PC-PLUGIN-ALIVE finding naming the exit status and when it came, and the
// run ends at once. The plugin dies as a process does: its connections
// close (calls fail for want of one) before its exit is seen. The bounds
// are an hour, and the run's context ends after waitBound: a run that
// waited for the restart's registration would be interrupted. The run
// takes a fraction of a second, so the bound is generous, and a checker
// that misses the exit (mutants/pc-exit-unwatched.patch) fails after it.
func TestPluginExitIsOneFinding(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	cfg := cleanPlugin(socketDir(t))
	crash := make(chan struct{})
	stopped := make(chan *testplugin.Plugin, 1)
	opts := Options{Dir: cfg.Dir, Seed: 1, Restart: true, Checks: 50, CallTimeout: time.Hour, RegisterTimeout: time.Hour,
		Launch: func(context.Context) error {
			p, err := testplugin.Start(cfg)
			if err != nil {
				stopped <- nil
				return err
			}
			<-crash
			p.Crash()
			stopped <- p
			return &ExitError{Status: "exit status 3"}
		},
		// The plugin dies once the generated calls have begun.
		Progress: func(int, int) {
			select {
			case <-crash:
			default:
				close(crash)
			}
		}}
	res, err := Check(ctx, opts)
	require.NoError(t, err)
	if p := <-stopped; p != nil {
		p.Stop()
	}
	require.False(t, res.Interrupted, "the run ended at once")
	require.Equal(t, []string{PluginAlive}, findingChecks(res), "findings: %+v", res.Findings)
	assert.Regexp(t, `^the plugin exited \(exit status 3\) during the generated kubelet calls, \S+ after it registered$`, res.Findings[0].Message)
	assert.False(t, res.Passed())
	assert.Zero(t, res.Counts[RestartReregister].Run, "the run ended before the restart")
}
