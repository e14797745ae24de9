package plugincheck

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
)

// TestKnobsCaught: every fault knob of the test plugin is caught by the
// check that names it.
func TestKnobsCaught(t *testing.T) {
	fault := func(rpc testplugin.RPC, f testplugin.Fault) func(*testplugin.Config) {
		return func(c *testplugin.Config) { c.Faults[rpc] = f }
	}
	failing := testplugin.Fault{Err: errors.New("knob: failing")}
	hang := testplugin.Fault{Hang: true}
	crash := testplugin.Fault{Crash: true}
	var knobs []knob
	for _, tc := range []struct {
		knob  string
		turn  func(*testplugin.Config)
		check string
	}{
		{"version", func(c *testplugin.Config) { c.Version = "v1alpha1" }, RegVersion},
		{"resource name", func(c *testplugin.Config) { c.ResourceName = "dev" }, RegResourceName},
		{"registered endpoint not served", func(c *testplugin.Config) { c.RegisteredEndpoint = "elsewhere.sock" }, RegEndpoint},
		{"registered options differ", func(c *testplugin.Config) {
			c.RegisteredOptions = &v1beta1.DevicePluginOptions{PreStartRequired: true}
		}, RegOptions},
		{"options error", fault(testplugin.GetDevicePluginOptions, failing), RegOptions},
		{"options hang", fault(testplugin.GetDevicePluginOptions, hang), RegOptions},
		{"options crash", fault(testplugin.GetDevicePluginOptions, crash), RegOptions},
		{"list error", fault(testplugin.ListAndWatch, failing), LawFirstSnapshot},
		{"list hang", fault(testplugin.ListAndWatch, hang), LawFirstSnapshot},
		{"list crash", fault(testplugin.ListAndWatch, crash), LawFirstSnapshot},
		{"duplicate IDs", fault(testplugin.ListAndWatch, testplugin.Fault{Malformed: testplugin.DuplicateDeviceIDs}), LawIDs},
		{"stream ends", fault(testplugin.ListAndWatch, testplugin.Fault{Malformed: testplugin.EndsStream}), LawStreamOpen},
		{"unknown health", func(c *testplugin.Config) { c.Devices[0].Health = "Sick" }, LawHealth},
		{"negative NUMA node", func(c *testplugin.Config) { c.Devices[4].NUMANodes = []int64{-1} }, LawTopology},
		{"preferred error", fault(testplugin.GetPreferredAllocation, failing), PrefAnswer},
		{"preferred hang", fault(testplugin.GetPreferredAllocation, hang), PrefAnswer},
		{"preferred crash", fault(testplugin.GetPreferredAllocation, crash), PluginAlive},
		{"preferred unknown IDs", fault(testplugin.GetPreferredAllocation, testplugin.Fault{Malformed: testplugin.UnknownDeviceIDs}), PrefAvailable},
		{"preferred wrong size", fault(testplugin.GetPreferredAllocation, testplugin.Fault{Malformed: testplugin.WrongPreferredSize}), PrefSize},
		{"preferred misses must-include", fault(testplugin.GetPreferredAllocation, testplugin.Fault{Malformed: testplugin.MissingMustInclude}), PrefMustInclude},
		{"allocate error", fault(testplugin.Allocate, failing), AllocAnswer},
		{"allocate hang", fault(testplugin.Allocate, hang), AllocAnswer},
		{"allocate blocked", fault(testplugin.Allocate, testplugin.Fault{Block: make(chan struct{})}), AllocAnswer},
		{"allocate slow", fault(testplugin.Allocate, testplugin.Fault{Delay: time.Minute}), AllocAnswer},
		{"allocate crash", fault(testplugin.Allocate, crash), PluginAlive},
		{"no container responses", fault(testplugin.Allocate, testplugin.Fault{Malformed: testplugin.NoContainerResponses}), AllocAnswer},
		{"extra container responses", fault(testplugin.Allocate, testplugin.Fault{Malformed: testplugin.ExtraContainerResponses}), AllocAnswer},
		{"relative device paths", fault(testplugin.Allocate, testplugin.Fault{Malformed: testplugin.RelativeDevicePaths}), AllocSpecs},
		{"reversed container responses", fault(testplugin.Allocate, testplugin.Fault{Malformed: testplugin.ReversedContainerResponses}), AllocOrder},
		{"accepts unknown IDs", func(c *testplugin.Config) { c.RejectUnknownIDs = false }, AllocUnknown},
		{"prestart error", fault(testplugin.PreStartContainer, failing), PreStart},
		{"prestart hang", fault(testplugin.PreStartContainer, hang), PreStart},
		{"prestart crash", fault(testplugin.PreStartContainer, crash), PluginAlive},
		{"never re-registers", func(c *testplugin.Config) { c.NoReregister = true }, RestartReregister},
	} {
		tc := tc
		knobs = append(knobs, knob{name: tc.knob, check: tc.check, cfg: cleanPlugin(socketDir(t))})
		tc.turn(&knobs[len(knobs)-1].cfg)
	}
	// Most of a knob's run waits on a bound (a hung call, a registration
	// that never comes), so the runs go on together, a few at a time, each
	// with a directory and a plugin of its own; properties.Run takes their
	// rapid sequences one at a time. The verdicts are then subtests.
	results := make([]knobResult, len(knobs))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, k := range knobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			opts := Options{Restart: true, Checks: 10, CallTimeout: callBound(k.cfg), RegisterTimeout: registerBound(k.cfg)}
			results[i].res, results[i].err = checkPlugin(k.cfg, opts)
		})
	}
	wg.Wait()
	for i, k := range knobs {
		t.Run(k.name, func(t *testing.T) {
			res, err := results[i].res, results[i].err
			require.NoError(t, err)
			require.Contains(t, findingChecks(res), k.check, "findings: %+v", res.Findings)
			assert.Equal(t, severityOf(k.check) == Advice, res.Passed(), "Passed() with findings %+v", res.Findings)
		})
	}
}

// The bounds of the knobs' runs. A bound a healthy answer can reach turns
// a loaded machine into findings (TestKnobsCaught once failed at load 12
// with 500 ms: a clean first list and a clean dial came late), so a run
// whose plugin always answers gets a bound no answer meets. Only a knob
// whose plugin never answers (a call that hangs, blocks or is slower than
// any bound, a registration that never comes) needs a bound that fires,
// and its run waits that bound out for real, at every hung call it makes.
// callBound and registerBound choose. The other tests of cleanPlugin take
// callBound too, so that a mutant that turns a hang on in cleanPlugin
// (mutants/pc-allocate-hang.patch) fails them after stallBound rather
// than after healthyBound.
const (
	healthyBound = 30 * time.Second
	stallBound   = 2 * time.Second
)

// callBound is the call bound of a run against cfg's plugin: stallBound
// when the run waits the bound out (stalls), else healthyBound.
func callBound(cfg testplugin.Config) time.Duration {
	if stalls(cfg) {
		return stallBound
	}
	return healthyBound
}

// registerBound is the bound on the waits for Register of a run against
// cfg's plugin: stallBound when no registration comes after the kubelet
// restart, because the plugin does not register again or has crashed by
// then, else healthyBound.
func registerBound(cfg testplugin.Config) time.Duration {
	if cfg.NoReregister {
		return stallBound
	}
	for _, f := range cfg.Faults {
		if f.Crash {
			return stallBound
		}
	}
	return healthyBound
}

// stalls says whether a run against cfg's plugin waits out its call
// bound: the plugin has a call that never answers, or refuses Allocate
// without the list update that would excuse the refusal, which the
// checker waits the call bound for (refusalExcused).
func stalls(cfg testplugin.Config) bool {
	for rpc, f := range cfg.Faults {
		if f.Hang || f.Block != nil || f.Delay >= healthyBound || rpc == testplugin.Allocate && f.Err != nil {
			return true
		}
	}
	return false
}

// knob is one fault of TestKnobsCaught: the plugin with it turned on and
// the check that must catch it.
type knob struct {
	name, check string
	cfg         testplugin.Config
}

type knobResult struct {
	res *Result
	err error
}
