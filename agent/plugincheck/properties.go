package plugincheck

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/verify"
)

// propertyChecks are the checks the rapid property evaluates.
var propertyChecks = []string{PrefAnswer, PrefSize, PrefAvailable, PrefMustInclude,
	AllocAnswer, AllocSpecs, AllocOrder, AllocUnknown, AllocConcurrent, PreStart, PluginAlive}

// PropertyChecks returns the checks the kubelet-call properties evaluate:
// the ones Options.Mute may name.
func PropertyChecks() []string {
	return slices.Clone(propertyChecks)
}

// properties draws sequences of kubelet calls, each call against the
// devices of the latest list the plugin streamed, as a kubelet allocates
// from its latest view of the devices, through properties.Run: rapid runs
// in-process, shrinks a failing sequence and reports its seed.
//
// One rapid run stops at its first failure, so one failing check would
// hide the others. After a failure attributed to a check, the property
// runs again from the same base seed with that check muted (judged and
// counted, never stopping a case) until a run finds nothing new: at most
// one run per check. The checks in muted (Options.Mute and what the smoke
// pass found) are muted from the start. Each finding's replay line names
// the seed of its failing case and the checks muted in its run.
func (c *checker) properties(ctx context.Context, plugin v1beta1.DevicePluginClient, res *Result, w *watcher, muted []string) {
	muted = appendNew(slices.Clone(c.opts.Mute), muted...)
	cases := 0
	for range propertyChecks {
		shrink := newShrinkClient(plugin, c.opts.ShrinkTime)
		calls := kubeletCalls{c: c, ctx: ctx, plugin: shrink, shrink: shrink, options: res.Plugin.Options, w: w, muted: slices.Clone(muted)}
		suite := properties.Suite{Name: "plugin-check", Subsystem: "deviceplugin", Property: calls.property}
		for _, id := range propertyChecks {
			suite.Invariants = append(suite.Invariants, verify.Property{ID: id, Subsystem: "deviceplugin"})
		}
		var progress func(done, total int)
		if c.opts.Progress != nil {
			before := cases
			progress = func(done, total int) { c.opts.Progress(before+done, before+total) }
		}
		run := properties.Run(suite, properties.RunOptions{
			Checks:     c.opts.Checks,
			Seed:       c.opts.Seed,
			ShrinkTime: c.opts.ShrinkTime,
			Progress:   progress,
			Replay:     func(seed uint64) string { return c.replay(seed, calls.muted) },
		})
		cases += run.Tally.Cases
		for _, id := range propertyChecks {
			c.rec.add(id, run.Tally.Checked[id], run.Tally.Applied[id])
		}
		f := run.Failure
		if f == nil || ctx.Err() != nil {
			return
		}
		id := f.Invariant
		message, _, _ := strings.Cut(f.Message, "\n")
		// The last of Steps is the verdict, which Message holds, and
		// Message's other lines are its replay lines, which Replay holds;
		// a panic's traceback is kept under the steps.
		steps := f.Steps[:max(0, len(f.Steps)-1)]
		if _, traceback, ok := strings.Cut(f.Message, "\ntraceback:\n"); ok {
			traceback, _, _ = strings.Cut(traceback, "\nreplay: ")
			steps = append(steps, "traceback:\n"+traceback)
		}
		if slices.Contains(propertyChecks, id) {
			// rapid attributes a failure by the ID its message starts
			// with; a finding names its check in Check alone.
			message = strings.TrimPrefix(message, id+": ")
		} else {
			// A panic or an unattributed failure inside the checker's
			// own calls: the plugin still failed a kubelet call sequence.
			id = PluginAlive
			message = "the checker failed (" + f.Invariant + "): " + message
		}
		bounded := shrink.bounded()
		if bounded {
			message += fmt.Sprintf(" (shrinking bounded by %v: the smallest failing calls found by then)", c.opts.ShrinkTime)
		}
		c.rec.finding(Finding{Check: id, Message: message, Steps: steps, Replay: f.Replay, ShrinkBounded: bounded})
		if id == PluginAlive || slices.Contains(muted, id) {
			// A plugin that no longer answers (or a checker that broke)
			// would fail every later run the same way.
			return
		}
		muted = append(muted, id)
	}
}

// appendNew appends the ids that list does not hold yet, in order.
func appendNew(list []string, ids ...string) []string {
	for _, id := range ids {
		if !slices.Contains(list, id) {
			list = append(list, id)
		}
	}
	return list
}

// replay is the replay line of a property's failing case.
func (c *checker) replay(seed uint64, muted []string) string {
	if c.opts.goTestReplay != nil {
		return c.opts.goTestReplay(seed, muted)
	}
	line := fmt.Sprintf("%s --seed %d", c.opts.ReplayCommand, seed)
	if len(muted) > 0 {
		line += " --mute " + strings.Join(muted, ",")
	}
	return line
}

// kubeletCalls is the property: one case is a short sequence of the calls
// a kubelet makes while admitting pods.
type kubeletCalls struct {
	c      *checker
	ctx    context.Context
	plugin v1beta1.DevicePluginClient
	// shrink is plugin as a shrinkClient: it keeps the plugin's answers
	// and says whether the current run was refused a call.
	shrink  *shrinkClient
	options PluginOptions
	// w is the ListAndWatch stream whose latest list each call draws
	// its devices from.
	w *watcher
	// muted checks are judged and counted but do not stop a case.
	muted []string
}

// The kinds of call a step makes.
const (
	callPreferred  = "GetPreferredAllocation"
	callAllocate   = "Allocate"
	callUnknown    = "Allocate(unknown or unhealthy)"
	callConcurrent = "Allocate(concurrent)"
)

func (k kubeletCalls) property(t *rapid.T, tally *properties.Tally) {
	k.shrink.beginRun()
	kinds := []string{callAllocate, callUnknown, callConcurrent}
	if k.options.GetPreferredAllocationAvailable {
		kinds = append(kinds, callPreferred)
	}
	n := rapid.IntRange(1, 4).Draw(t, "calls")
	for step := 1; step <= n; step++ {
		kind := rapid.SampledFrom(kinds).Draw(t, "call")
		tally.Action(kind)
		tally.Steps++
		switch kind {
		case callPreferred:
			k.preferred(t, tally, step)
		case callAllocate:
			k.allocate(t, tally, step)
		case callUnknown:
			k.unknown(t, tally, step)
		case callConcurrent:
			k.concurrent(t, tally, step)
		}
	}
}

func (k kubeletCalls) healthy() []string { return healthyIDs(k.w.latest()) }

// drawIDs draws 1 to 8 distinct IDs from ids.
func drawIDs(t *rapid.T, ids []string, label string) []string {
	return rapid.SliceOfNDistinct(rapid.SampledFrom(ids), 1, min(len(ids), 8), rapid.ID[string]).Draw(t, label)
}

func (k kubeletCalls) call() (context.Context, context.CancelFunc) {
	return context.WithTimeout(k.ctx, k.c.opts.CallTimeout)
}

// fail reports a failed check: it ends the case, unless the check is
// muted: then it logs the failure under the step and returns, and the
// caller ends the step.
func (k kubeletCalls) fail(t *rapid.T, check, format string, args ...any) {
	if k.shrink.refusedCall() {
		// A smaller case the shrinking gives up: rapid rejects a skip.
		t.Skip("a call not made before the shrink bound")
	}
	if slices.Contains(k.muted, check) {
		t.Logf("  %s (muted): %s", check, fmt.Sprintf(format, args...))
		return
	}
	k.shrink.failed()
	t.Fatalf("%s: %s", check, fmt.Sprintf(format, args...))
}

// failedCall reports a failed call: as PluginAlive when the plugin no
// longer answers at all, else as check. The caller ends the step.
func (k kubeletCalls) failedCall(t *rapid.T, tally *properties.Tally, check, format string, args ...any) {
	if k.pluginGone(t, tally, fmt.Sprintf(format, args...)) {
		return
	}
	k.fail(t, check, format, args...)
}

// failedAllocate reports an Allocate of ids that failed with err as
// failedCall does, unless the plugin has since withdrawn one of the devices
// (refusalExcused): then it notes why under the step. The caller ends the
// step.
func (k kubeletCalls) failedAllocate(t *rapid.T, tally *properties.Tally, ids []string, err error, format string, args ...any) {
	what := fmt.Sprintf(format, args...)
	if k.pluginGone(t, tally, what) {
		return
	}
	if why := k.c.refusalExcused(k.w, ids, err); why != "" {
		t.Logf("  %s: no finding, %s", what, why)
		return
	}
	k.fail(t, AllocAnswer, "%s", what)
}

// pluginGone reports PluginAlive when the plugin no longer answers after
// what failed, and says whether it did.
func (k kubeletCalls) pluginGone(t *rapid.T, tally *properties.Tally, what string) bool {
	tally.Check(PluginAlive, k.c.optionsAnswered)
	if err := k.c.alive(k.ctx, k.plugin); err != nil {
		k.fail(t, PluginAlive, "after %s the plugin no longer answers GetDevicePluginOptions: %v", what, err)
		return true
	}
	return false
}

// requestedIDs lists the devices of every container request of req.
func requestedIDs(req *v1beta1.AllocateRequest) []string {
	var ids []string
	for _, c := range req.GetContainerRequests() {
		ids = append(ids, c.GetDevicesIds()...)
	}
	return ids
}

func (k kubeletCalls) preferred(t *rapid.T, tally *properties.Tally, step int) {
	healthy := k.healthy()
	tally.Check(PrefAnswer, len(healthy) > 0)
	if len(healthy) == 0 {
		return
	}
	available := drawIDs(t, healthy, "available")
	size := rapid.IntRange(1, len(available)).Draw(t, "size")
	must := rapid.SliceOfNDistinct(rapid.SampledFrom(available), 0, size, rapid.ID[string]).Draw(t, "must include")
	req := &v1beta1.ContainerPreferredAllocationRequest{AvailableDeviceIDs: available, MustIncludeDeviceIDs: must, AllocationSize: int32(size)}
	t.Logf("step %d: GetPreferredAllocation(available %v, must include %v, size %d)", step, available, must, size)
	ctx, cancel := k.call()
	defer cancel()
	resp, err := k.plugin.GetPreferredAllocation(ctx, &v1beta1.PreferredAllocationRequest{ContainerRequests: []*v1beta1.ContainerPreferredAllocationRequest{req}})
	if err != nil {
		k.failedCall(t, tally, PrefAnswer, "GetPreferredAllocation failed: %v", err)
		return
	}
	if got := len(resp.GetContainerResponses()); got != 1 {
		k.fail(t, PrefAnswer, "GetPreferredAllocation answered %s to 1 container request", phrase.Count(got, "container response"))
		return
	}
	ids := resp.GetContainerResponses()[0].GetDeviceIDs()
	t.Logf("  answer %v", ids)
	for _, id := range []string{PrefAvailable, PrefMustInclude, PrefSize} {
		tally.Check(id, true)
	}
	if check, reason := preferredProblem(req, ids); check != "" {
		k.fail(t, check, "%s", reason)
	}
}

// allocateRequest draws one to two containers' devices.
func allocateRequest(t *rapid.T, healthy []string) *v1beta1.AllocateRequest {
	req := &v1beta1.AllocateRequest{}
	for range rapid.IntRange(1, 2).Draw(t, "containers") {
		req.ContainerRequests = append(req.ContainerRequests, &v1beta1.ContainerAllocateRequest{DevicesIds: drawIDs(t, healthy, "devices")})
	}
	return req
}

func (k kubeletCalls) allocate(t *rapid.T, tally *properties.Tally, step int) {
	healthy := k.healthy()
	tally.Check(AllocAnswer, len(healthy) > 0)
	if len(healthy) == 0 {
		return
	}
	req := allocateRequest(t, healthy)
	t.Logf("step %d: %s", step, describeAllocate(req))
	if !k.answer(t, tally, req) {
		return
	}
	if !k.options.PreStartRequired {
		tally.Check(PreStart, false)
		return
	}
	for _, c := range req.GetContainerRequests() {
		tally.Check(PreStart, true)
		t.Logf("  PreStartContainer(%v)", c.GetDevicesIds())
		ctx, cancel := k.call()
		_, err := k.plugin.PreStartContainer(ctx, &v1beta1.PreStartContainerRequest{DevicesIds: c.GetDevicesIds()})
		cancel()
		if err != nil {
			k.failedCall(t, tally, PreStart, "PreStartContainer(%v) after %v failed: %v", c.GetDevicesIds(), describeAllocate(req), err)
			return
		}
	}
}

// answer makes one Allocate and checks its answer; it reports whether the
// answer passed.
func (k kubeletCalls) answer(t *rapid.T, tally *properties.Tally, req *v1beta1.AllocateRequest) bool {
	ctx, cancel := k.call()
	defer cancel()
	resp, err := k.plugin.Allocate(ctx, req)
	if err != nil {
		k.failedAllocate(t, tally, requestedIDs(req), err, "%s failed: %v", describeAllocate(req), err)
		return false
	}
	return k.checkAnswer(t, tally, req, resp)
}

// checkAnswer judges an Allocate answer and reports whether it passed.
func (k kubeletCalls) checkAnswer(t *rapid.T, tally *properties.Tally, req *v1beta1.AllocateRequest, resp *v1beta1.AllocateResponse) bool {
	if len(resp.GetContainerResponses()) == len(req.GetContainerRequests()) {
		for _, r := range resp.GetContainerResponses() {
			tally.Check(AllocSpecs, len(r.GetEnvs())+len(r.GetMounts())+len(r.GetDevices())+len(r.GetAnnotations())+len(r.GetCdiDevices()) > 0)
		}
	}
	if check, reason := allocateProblem(req, resp); check != "" {
		k.fail(t, check, "%s", reason)
		return false
	}
	// The kubelet sends one container request per call; the order of
	// several is the checker going beyond it, hence advice.
	problem, applied := orderProblem(req, resp)
	tally.Check(AllocOrder, applied)
	if problem != "" {
		k.fail(t, AllocOrder, "%s: %s", describeAllocate(req), problem)
		return false
	}
	return true
}

func (k kubeletCalls) unknown(t *rapid.T, tally *properties.Tally, step int) {
	var unhealthy []string
	for _, d := range k.w.latest() {
		if d.GetHealth() != v1beta1.Healthy {
			unhealthy = append(unhealthy, d.GetID())
		}
	}
	ids := []string{fmt.Sprintf("plugincheck-unknown-%d", rapid.IntRange(0, 9).Draw(t, "unknown"))}
	if len(unhealthy) > 0 && rapid.Bool().Draw(t, "unhealthy") {
		ids = drawIDs(t, unhealthy, "unhealthy devices")
	}
	req := &v1beta1.AllocateRequest{ContainerRequests: []*v1beta1.ContainerAllocateRequest{{DevicesIds: ids}}}
	t.Logf("step %d: %s", step, describeAllocate(req))
	tally.Check(AllocUnknown, true)
	tally.Check(PluginAlive, k.c.optionsAnswered)
	ctx, cancel := k.call()
	defer cancel()
	_, err := k.plugin.Allocate(ctx, req)
	if aliveErr := k.c.alive(k.ctx, k.plugin); aliveErr != nil {
		k.fail(t, PluginAlive, "after %s (answered %v) the plugin no longer answers GetDevicePluginOptions: %v", describeAllocate(req), err, aliveErr)
		return
	}
	if err == nil {
		k.fail(t, AllocUnknown, "%s of devices the plugin does not list as healthy succeeded", describeAllocate(req))
	}
}

func (k kubeletCalls) concurrent(t *rapid.T, tally *properties.Tally, step int) {
	healthy := k.healthy()
	tally.Check(AllocConcurrent, len(healthy) > 0)
	if len(healthy) == 0 {
		return
	}
	req := allocateRequest(t, healthy)
	n := rapid.IntRange(2, 3).Draw(t, "in flight")
	t.Logf("step %d: %d × %s at once", step, n, describeAllocate(req))
	resps := make([]*v1beta1.AllocateResponse, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ctx, cancel := k.call()
			defer cancel()
			resps[i], errs[i] = k.plugin.Allocate(ctx, req)
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			k.failedAllocate(t, tally, requestedIDs(req), errs[i], "%s, one of %d at once, failed: %v", describeAllocate(req), n, errs[i])
			return
		}
		if !k.checkAnswer(t, tally, req, resps[i]) {
			return
		}
		if !proto.Equal(resps[i], resps[0]) {
			k.fail(t, AllocConcurrent, "%d identical %s at once got different answers: %v and %v", n, describeAllocate(req), resps[0], resps[i])
			return
		}
	}
}
