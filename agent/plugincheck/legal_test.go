package plugincheck

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
)

// The tests of this file turn on one legal behaviour of the test plugin
// each, a behaviour a kubelet accepts, and show that the checker blames
// none of it (issue #25). cleanPlugin has them all on at once.

// TestDeviceFailureNotBlamed: a device that turns Unhealthy during the run,
// streamed on ListAndWatch and refused by the very Allocate that found it
// broken, is the plugin doing what api.proto asks; the refusal is no
// finding, whether it comes in the smoke pass or in the generated calls,
// and the later calls no longer ask for the device as a healthy one.
func TestDeviceFailureNotBlamed(t *testing.T) {
	for name, failure := range map[string]testplugin.DeviceFailure{
		"in the smoke pass":      {ID: "d0", AfterAllocates: 0},
		"in the generated calls": {ID: "d3", AfterAllocates: 5},
	} {
		t.Run(name, func(t *testing.T) {
			// The two runs go on together, each with its own directory and
			// plugin: they wait on sockets more than they compute, and a
			// checker that blames the refusal waits the whole call bound
			// for a list that would excuse it, in each of them.
			t.Parallel()
			cfg := cleanPlugin(socketDir(t))
			cfg.ReregisterEndpoint, cfg.IDsPerHostDevice = "", 0
			cfg.DeviceFailure = &failure
			res, p, err := checkPluginKept(context.Background(), cfg, Options{Checks: 30, CallTimeout: callBound(cfg)})
			require.NoError(t, err)
			assert.Empty(t, describeAll(res))
			asked := slices.IndexFunc(p.Calls(testplugin.Allocate)[failure.AfterAllocates:], func(c testplugin.Call) bool { return slices.Contains(c.DeviceIDs, failure.ID) })
			require.GreaterOrEqual(t, asked, 0, "no Allocate asked for %s after %d calls: the device never failed", failure.ID, failure.AfterAllocates)
		})
	}
}

// describeAll writes every finding of res out in full, for a failure
// message.
func describeAll(res *Result) []string {
	var out []string
	for _, f := range res.Findings {
		out = append(out, describe(f))
	}
	return out
}

// TestReregisterOnNewSocketNotBlamed: a plugin that registers again after
// the kubelet restart on a socket with a new name is registered again, as
// the kubelet sees it: it dials whatever endpoint a registration names.
func TestReregisterOnNewSocketNotBlamed(t *testing.T) {
	cfg := cleanPlugin(socketDir(t))
	cfg.DeviceFailure, cfg.IDsPerHostDevice = nil, 0
	cfg.ReregisterEndpoint = "again.sock"
	res, p, err := checkPluginKept(context.Background(), cfg, Options{Checks: 10, Restart: true, CallTimeout: callBound(cfg)})
	require.NoError(t, err)
	assert.Empty(t, describeAll(res))
	assert.Equal(t, Count{Run: 1, Applied: 1}, res.Counts[RestartReregister])
	assert.Equal(t, "again.sock", p.Endpoint(), "the plugin moved to its new socket")
}

// TestSharedHostDeviceNotBlamed: a plugin listing one host device under
// two IDs answers an Allocate of both with its device spec and mount twice,
// the same container path with the same host path, which the kubelet
// skips: no finding.
func TestSharedHostDeviceNotBlamed(t *testing.T) {
	cfg := cleanPlugin(socketDir(t))
	cfg.DeviceFailure, cfg.ReregisterEndpoint = nil, ""
	cfg.IDsPerHostDevice = 2
	res, p, err := checkPluginKept(context.Background(), cfg, Options{Checks: 30, CallTimeout: callBound(cfg)})
	require.NoError(t, err)
	assert.Empty(t, describeAll(res))
	shared := slices.ContainsFunc(p.Calls(testplugin.Allocate), func(c testplugin.Call) bool {
		return slices.Contains(c.DeviceIDs, "d0") && slices.Contains(c.DeviceIDs, "d1")
	})
	assert.True(t, shared, "an Allocate asked for d0 and d1, which share a host device")
}

// TestReregistrationJudgedAsKubelet: after the restart a new endpoint and
// new options pass, as the kubelet takes them; a registration the kubelet
// refuses, or one for another resource, does not.
func TestReregistrationJudgedAsKubelet(t *testing.T) {
	first := &v1beta1.RegisterRequest{Version: v1beta1.Version, Endpoint: "a.sock", ResourceName: "example.com/dev",
		Options: &v1beta1.DevicePluginOptions{PreStartRequired: true}}
	// The endpoints are not served: registrationProblems would find
	// them missing, so the problems are given here.
	again := func(change func(*v1beta1.RegisterRequest), problems ...problem) registration {
		req := proto.Clone(first).(*v1beta1.RegisterRequest)
		change(req)
		return registration{req: req, problems: problems}
	}
	assert.Empty(t, reregistrationProblem(first, again(func(*v1beta1.RegisterRequest) {})))
	assert.Empty(t, reregistrationProblem(first, again(func(r *v1beta1.RegisterRequest) {
		r.Endpoint = "b.sock"
		r.Options = &v1beta1.DevicePluginOptions{GetPreferredAllocationAvailable: true}
	})))
	assert.Equal(t, `the plugin registered again for resource "example.com/other", first for "example.com/dev"`,
		reregistrationProblem(first, again(func(r *v1beta1.RegisterRequest) { r.ResourceName = "example.com/other" })))
	version := problem{RegVersion, `Register names version "v1alpha1"; the kubelet supports ["v1beta1"]`}
	assert.Equal(t, `the kubelet refuses the plugin's new registration: Register names version "v1alpha1"; the kubelet supports ["v1beta1"]`,
		reregistrationProblem(first, again(func(r *v1beta1.RegisterRequest) { r.Version = "v1alpha1" }, version)))
}

// TestRefusalExcused: a refused Allocate is excused by a list that marks
// one of its devices unhealthy or drops it, whether that list came before
// the refusal was judged or comes while the checker waits for it; a call
// that ran out of its bound never is; and a plugin that let the call bound
// pass without a new list is not waited for again.
func TestRefusalExcused(t *testing.T) {
	refused := status.Error(codes.InvalidArgument, "device withdrawn")
	healthy := func(ids ...string) []*v1beta1.Device {
		var devs []*v1beta1.Device
		for _, id := range ids {
			devs = append(devs, &v1beta1.Device{ID: id, Health: v1beta1.Healthy})
		}
		return devs
	}
	c := &checker{rec: newRecord(context.Background()), opts: Options{CallTimeout: time.Hour}}
	watcherOf := func(lists ...[]*v1beta1.Device) *watcher {
		w := newWatcher(c, "the first stream", func() {})
		for _, l := range lists {
			w.received(l)
		}
		return w
	}

	w := watcherOf(healthy("d0", "d1"), append(healthy("d0"), &v1beta1.Device{ID: "d1", Health: v1beta1.Unhealthy}))
	assert.Equal(t, "the plugin has since listed d1 as Unhealthy", within(t, func() string { return c.refusalExcused(w, []string{"d0", "d1"}, refused) }))
	assert.Empty(t, within(t, func() string {
		return c.refusalExcused(w, []string{"d1"}, status.Error(codes.DeadlineExceeded, "hung"))
	}), "a hang is no refusal")

	w = watcherOf(healthy("d0", "d1"))
	judged := make(chan string, 1)
	go func() { judged <- c.refusalExcused(w, []string{"d1"}, refused) }()
	w.received(healthy("d0"))
	select {
	case why := <-judged:
		assert.Equal(t, "the plugin has since dropped d1 from its list", why)
	case <-time.After(waitBound):
		require.FailNow(t, "the list that drops d1 did not end the wait")
	}

	quick := &checker{rec: newRecord(context.Background()), opts: Options{CallTimeout: time.Millisecond}}
	w = watcherOf(healthy("d0"))
	assert.Empty(t, within(t, func() string { return quick.refusalExcused(w, []string{"d0"}, refused) }))
	assert.Empty(t, within(t, func() string { return c.refusalExcused(w, []string{"d0"}, refused) }),
		"after a wait that ran out, no new wait until a new list")
}

// waitBound bounds a wait on something that is due at once: generous, so
// that only a wait that never ends reaches it.
const waitBound = 10 * time.Second

// within returns f's result, failing the test if f does not return within
// waitBound.
func within(t *testing.T, f func() string) string {
	t.Helper()
	done := make(chan string, 1)
	go func() { done <- f() }()
	select {
	case s := <-done:
		return s
	case <-time.After(waitBound):
		require.FailNow(t, "no answer within the bound")
		return ""
	}
}
