package plugincheck

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
)

// TestStreamFindingNamesUpdate: a finding on a ListAndWatch list says
// which stream and which update of it broke the rule, and shows the list
// before it: here the plugin's second list names a device twice.
func TestStreamFindingNamesUpdate(t *testing.T) {
	cfg := cleanPlugin(socketDir(t))
	started := make(chan *testplugin.Plugin, 1)
	var plugin *testplugin.Plugin
	opts := Options{Dir: cfg.Dir, Seed: 1, Checks: 5, CallTimeout: callBound(cfg),
		Launch: func(context.Context) error {
			p, err := testplugin.Start(cfg)
			started <- p
			return err
		},
		// Once the generated calls run, the plugin sends a second list
		// naming d0 twice.
		Progress: func(done, _ int) {
			if plugin != nil {
				return
			}
			plugin = <-started
			require.NotNil(t, plugin)
			plugin.SetFault(testplugin.ListAndWatch, testplugin.Fault{Malformed: testplugin.DuplicateDeviceIDs})
			plugin.Update(cfg.Devices)
		}}
	res, err := Check(context.Background(), opts)
	require.NoError(t, err)
	if plugin == nil {
		plugin = <-started
	}
	plugin.Stop()

	// The list with d0 twice also differs from the one before it. A call
	// drawn after that list may also meet its unhealthy copy of d0 and be
	// answered (PC-ALLOC-UNKNOWN, advice), or not, as the list and the
	// calls interleave (seen under make test-busy): the stream's findings
	// come first either way, and only advice may follow them.
	require.GreaterOrEqual(t, len(res.Findings), 2, "findings: %+v", res.Findings)
	require.Equal(t, []string{LawIDs, LawStableIDs}, findingChecks(res)[:2], "findings: %+v", res.Findings)
	for _, f := range res.Findings[2:] {
		assert.Equal(t, AllocUnknown, f.Check, "findings: %+v", res.Findings)
	}
	lists := []string{"ListAndWatch (the first stream)",
		"  update 1: [d0 d1 d2 d3 d4(Unhealthy, NUMA 0 1)]",
		"  update 2: [d0 d1 d2 d3 d4(Unhealthy, NUMA 0 1) d0(Unhealthy)]"}
	assert.Equal(t, Finding{Check: LawIDs, Severity: Contract,
		Message: `ListAndWatch update 2 (the first stream): device ID "d0" is listed twice`, Steps: lists}, res.Findings[0])
	assert.Equal(t, Finding{Check: LawStableIDs, Severity: Advice,
		Message: "ListAndWatch update 2 (the first stream) changed the device IDs from [d0 d1 d2 d3 d4] to [d0 d0 d1 d2 d3 d4], with nothing changing on the node",
		Steps:   lists}, res.Findings[1])
}

// TestVerdict: the verdict counts the findings that fail a run apart from
// advice, which does not.
func TestVerdict(t *testing.T) {
	advice := Finding{Check: AllocUnknown, Severity: Advice}
	contract := Finding{Check: AllocAnswer, Severity: Contract}
	kubelet := Finding{Check: PluginAlive, Severity: Kubelet}
	for _, tc := range []struct {
		findings []Finding
		want     string
	}{
		{nil, "passed"},
		{[]Finding{advice}, "passed, with 1 piece of advice"},
		{[]Finding{advice, {Check: AllocConcurrent, Severity: Advice}}, "passed, with 2 pieces of advice"},
		{[]Finding{contract}, "FAILED: 1 finding"},
		{[]Finding{contract, kubelet}, "FAILED: 2 findings"},
		{[]Finding{contract, advice}, "FAILED: 1 finding, and 1 piece of advice"},
	} {
		res := &Result{Findings: tc.findings}
		assert.Equal(t, tc.want, res.Verdict(), "findings %+v", tc.findings)
	}
	// Findings made before an interrupt are kept, and counted as such.
	interrupted := &Result{Interrupted: true, Findings: []Finding{contract, advice}}
	assert.Equal(t, "INTERRUPTED before the run finished, with 2 findings by then", interrupted.Verdict())
}

// TestDescribeDevices: a device list is written with each device's health
// when it is not Healthy and its NUMA nodes, and a long one is cut.
func TestDescribeDevices(t *testing.T) {
	devs := []*v1beta1.Device{{ID: "a", Health: v1beta1.Healthy},
		{ID: "b", Health: "Sick", Topology: &v1beta1.TopologyInfo{Nodes: []*v1beta1.NUMANode{{ID: 1}}}}}
	assert.Equal(t, "[a b(Sick, NUMA 1)]", describeDevices(devs))
	assert.Equal(t, "[]", describeDevices(nil))
	var many []*v1beta1.Device
	for range maxDescribedDevices + 3 {
		many = append(many, &v1beta1.Device{ID: "x", Health: v1beta1.Healthy})
	}
	assert.Regexp(t, `^\[(x ){16}… and 3 more\]$`, describeDevices(many))
}
