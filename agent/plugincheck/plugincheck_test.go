package plugincheck

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"slices"
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
// IDs refused, and every legal behaviour a checker might mistake for a
// fault on (legal_test.go has a test of each alone). The mutants
// (mutants/pc-*.patch) each turn one fault knob on here.
func cleanPlugin(dir string) testplugin.Config {
	return testplugin.Config{
		DeviceFailure:      &testplugin.DeviceFailure{ID: "d3", AfterAllocates: 5},
		ReregisterEndpoint: "clean-again.sock",
		IDsPerHostDevice:   2,

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
	res, _, err := checkPluginKept(context.Background(), cfg, opts)
	return res, err
}

// checkPluginContext is checkPlugin with the run's context.
func checkPluginContext(ctx context.Context, cfg testplugin.Config, opts Options) (*Result, error) {
	res, _, err := checkPluginKept(ctx, cfg, opts)
	return res, err
}

// checkPluginKept is checkPluginContext that also returns the plugin,
// stopped, to read the calls it received; nil when it did not start.
func checkPluginKept(ctx context.Context, cfg testplugin.Config, opts Options) (*Result, *testplugin.Plugin, error) {
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	opts.Dir = cfg.Dir
	var stop func() (*testplugin.Plugin, error)
	opts.Launch, stop = launcher(cfg)
	res, err := Check(ctx, opts)
	p, stopErr := stop()
	if err == nil {
		err = stopErr
	}
	return res, p, err
}

// launcher returns a Launch that starts a test plugin of cfg, and the
// function that stops it once the run is over and returns it (nil when it
// did not start).
func launcher(cfg testplugin.Config) (launch func(context.Context) error, stop func() (*testplugin.Plugin, error)) {
	started := make(chan *testplugin.Plugin, 1)
	launch = func(context.Context) error {
		// A refused registration makes Start fail; reporting it is the
		// checker's job, so the error is not Launch's.
		p, _ := testplugin.Start(cfg)
		started <- p
		return nil
	}
	stop = func() (*testplugin.Plugin, error) {
		select {
		case p := <-started:
			if p != nil {
				p.Stop()
			}
			return p, nil
		case <-time.After(2 * cfg.RegisterTimeout):
			return nil, errors.New("the test plugin did not finish starting")
		}
	}
	return launch, stop
}

// TestCleanTestPluginPasses: the clean plugin passes every check, every
// check had something to judge, and every legal behaviour of the plugin
// came up in the run.
func TestCleanTestPluginPasses(t *testing.T) {
	cfg := cleanPlugin(socketDir(t))
	res, p, err := checkPluginKept(context.Background(), cfg, Options{Restart: true, CallTimeout: callBound(cfg)})
	require.NoError(t, err)
	allocates := p.Calls(testplugin.Allocate)
	asks := func(ids ...string) func(testplugin.Call) bool {
		return func(c testplugin.Call) bool {
			for _, id := range ids {
				if !slices.Contains(c.DeviceIDs, id) {
					return false
				}
			}
			return true
		}
	}
	failing := cfg.DeviceFailure
	assert.True(t, slices.ContainsFunc(allocates[failing.AfterAllocates:], asks(failing.ID)), "%s failed: an Allocate asked for it after %d calls", failing.ID, failing.AfterAllocates)
	assert.True(t, slices.ContainsFunc(allocates, asks("d0", "d1")) || slices.ContainsFunc(allocates, asks("d2", "d3")),
		"an Allocate asked for two IDs of one host device")
	assert.Equal(t, cfg.ReregisterEndpoint, p.Endpoint(), "the plugin registered again on its new socket")
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
