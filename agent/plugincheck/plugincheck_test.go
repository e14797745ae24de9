package plugincheck

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// cleanPlugin is the test plugin every check must pass: four healthy
// devices and an unhealthy one with a topology, every option on, unknown
// IDs refused. The mutants (mutants/pc-*.patch) each turn one knob on here.
func cleanPlugin(dir string) testplugin.Config {
	return testplugin.Config{
		Dir:          dir,
		Endpoint:     "clean.sock",
		ResourceName: "example.com/dev",
		Devices: append(testplugin.Healthy("d0", "d1", "d2", "d3"),
			testplugin.Device{ID: "d4", Health: v1beta1.Unhealthy, NUMANodes: []int64{0, 1}}),
		PreStartRequired:                true,
		GetPreferredAllocationAvailable: true,
		RejectUnknownIDs:                true,
		RegisterTimeout:                 5 * time.Second,
		Logger:                          slog.New(slog.NewTextHandler(io.Discard, nil)),
		Faults:                          map[testplugin.RPC]testplugin.Fault{},
	}
}

// socketDir is a directory whose socket paths fit a Unix socket address,
// which t.TempDir's long names may not.
func socketDir(t testing.TB) string {
	dir, err := os.MkdirTemp("", "pc")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// checkPlugin runs the checker against a test plugin of cfg, started by
// Launch, and stops the plugin afterwards. A zero Seed is 1. It does not
// use a testing.TB, so that runs can go on in goroutines of their own.
func checkPlugin(cfg testplugin.Config, opts Options) (*Result, error) {
	return checkPluginContext(context.Background(), cfg, opts)
}

// checkPluginContext is checkPlugin with the run's context.
func checkPluginContext(ctx context.Context, cfg testplugin.Config, opts Options) (*Result, error) {
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	opts.Dir = cfg.Dir
	var stop func() error
	opts.Launch, stop = launcher(cfg)
	res, err := Check(ctx, opts)
	if stopErr := stop(); err == nil {
		err = stopErr
	}
	return res, err
}

// launcher returns a Launch that starts a test plugin of cfg, and the
// function that stops it once the run is over.
func launcher(cfg testplugin.Config) (launch func(context.Context) error, stop func() error) {
	started := make(chan *testplugin.Plugin, 1)
	launch = func(context.Context) error {
		// A refused registration makes Start fail; reporting it is the
		// checker's job, so the error is not Launch's.
		p, _ := testplugin.Start(cfg)
		started <- p
		return nil
	}
	stop = func() error {
		select {
		case p := <-started:
			if p != nil {
				p.Stop()
			}
			return nil
		case <-time.After(2 * cfg.RegisterTimeout):
			return errors.New("the test plugin did not finish starting")
		}
	}
	return launch, stop
}

// TestCleanTestPluginPasses: the clean plugin passes every check, and every
// check had something to judge.
func TestCleanTestPluginPasses(t *testing.T) {
	res, err := checkPlugin(cleanPlugin(socketDir(t)), Options{Restart: true, CallTimeout: 5 * time.Second})
	require.NoError(t, err)
	for _, f := range res.Findings {
		t.Error(describe(f))
	}
	assert.True(t, res.Passed())
	for _, c := range Checks() {
		assert.Positive(t, res.Counts[c.ID].Applied, "%s never applied: counts %+v", c.ID, res.Counts[c.ID])
	}
	assert.Equal(t, Plugin{ResourceName: "example.com/dev", Endpoint: "clean.sock", Version: v1beta1.Version,
		Options: PluginOptions{PreStartRequired: true, GetPreferredAllocationAvailable: true}, Devices: 5, Healthy: 4}, res.Plugin)
}
