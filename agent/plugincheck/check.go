package plugincheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/nodeproof/nodeproof/agent/deviceplugin"
	"github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/phrase"
)

// Check serves kubelet.sock in opts.Dir, waits for a plugin to register and
// checks it. The error is for set-up failures only (a bad Options field,
// kubelet.sock that cannot be served, no registration in time, Launch
// failing); a plugin that breaks a rule gives a Result with Findings.
//
// When ctx ends before the run finished (the CLI's SIGINT or SIGTERM), the
// Result is Interrupted: the run stops, and the failures the end of ctx
// causes (calls cancelled, the stream closed, no registration after the
// restart) are not findings. The findings made before it are kept. A
// plugin whose Launch reports its exit after it registered ends the run
// the same way, with that exit as its one finding (watchExit).
func Check(ctx context.Context, opts Options) (*Result, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	// The run ends with ctx, or when the plugin exits.
	run, endRun := context.WithCancel(ctx)
	defer endRun()
	c := &checker{opts: opts, rec: newRecord(run), regs: make(chan registration, 4), done: make(chan struct{}),
		launch: newLaunchWatch()}
	res := &Result{Seed: opts.Seed, Replay: c.replay(opts.Seed, opts.Mute)}
	defer func() {
		c.rec.result(res)
		res.Seconds = time.Since(start).Seconds()
		res.Interrupted = ctx.Err() != nil
	}()
	defer close(c.done)
	if err := c.serve(); err != nil {
		return nil, err
	}
	defer func() { c.server.Stop() }()

	c.launch.start(ctx, opts.Launch)
	reg, err := c.awaitRegistration(run, c.launch.ended)
	if errors.Is(err, errRunEnded) {
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	c.setPhase("while the checker connected to it")
	go c.watchExit(time.Now(), endRun)
	res.Plugin = Plugin{ResourceName: reg.req.GetResourceName(), Endpoint: reg.req.GetEndpoint(), Version: reg.req.GetVersion(),
		Options: PluginOptions{PreStartRequired: reg.req.GetOptions().GetPreStartRequired(),
			GetPreferredAllocationAvailable: reg.req.GetOptions().GetGetPreferredAllocationAvailable()}}
	if !c.registered(reg) {
		return res, nil
	}
	conn, err := c.connect(run, reg)
	if err != nil {
		return res, nil
	}
	defer conn.Close()
	plugin := v1beta1.NewDevicePluginClient(conn)

	w := c.watch(run, plugin, "the first stream")
	first, ok := w.first(c.opts.CallTimeout)
	c.rec.check(LawFirstSnapshot, true)
	if !ok {
		c.settle(w.ended())
		w.stop()
		c.rec.fail(LawFirstSnapshot, "no device list within %v of opening ListAndWatch%s", c.opts.CallTimeout, w.endReason())
		return res, nil
	}
	res.Plugin.Devices = len(first)
	res.Plugin.Healthy = len(healthyIDs(first))

	c.setPhase("during the smoke pass")
	if failed, ok := c.smoke(run, plugin, res.Plugin.Options, w, first); ok {
		c.setPhase("during the generated kubelet calls")
		c.properties(run, plugin, res, w, failed)
	}
	w.stop()
	if run.Err() != nil {
		return res, nil
	}

	c.rec.check(LawStreamOpen, true)
	if end := w.ended(); end != nil {
		c.settle(end)
		c.rec.fail(LawStreamOpen, "the ListAndWatch stream ended before the kubelet closed it: %v", end)
	}
	c.setPhase("after the kubelet closed the ListAndWatch stream")
	c.streamDrop(run, plugin)
	if opts.Restart && run.Err() == nil {
		c.setPhase("during the kubelet restart")
		c.restart(run, reg, first)
	}
	return res, nil
}

func (o Options) withDefaults() (Options, error) {
	if o.Dir == "" {
		return o, errors.New("plugincheck: Options.Dir: must name the device plugin directory")
	}
	if o.RegisterTimeout < 0 || o.CallTimeout < 0 || o.Checks < 0 || o.ShrinkTime < 0 {
		return o, errors.New("plugincheck: Options.RegisterTimeout, CallTimeout, Checks and ShrinkTime must not be negative")
	}
	if o.RegisterTimeout == 0 {
		o.RegisterTimeout = DefaultRegisterTimeout
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.Checks == 0 {
		o.Checks = DefaultChecks
	}
	if o.ShrinkTime == 0 {
		o.ShrinkTime = DefaultShrinkTime
	}
	if o.Seed == 0 {
		if env := os.Getenv(SeedEnv); env != "" {
			seed, err := strconv.ParseUint(env, 10, 64)
			if err != nil || seed == 0 {
				return o, fmt.Errorf("plugincheck: %s=%q: must be a positive integer, the seed of a replay line", SeedEnv, env)
			}
			o.Seed = seed
		}
	}
	if env := os.Getenv(MuteEnv); env != "" {
		o.Mute = appendNew(slices.Clone(o.Mute), strings.Split(env, ",")...)
	}
	for _, id := range o.Mute {
		if !slices.Contains(propertyChecks, id) {
			return o, fmt.Errorf("plugincheck: Options.Mute (or %s): %q is not a check of the kubelet-call properties; they are %s",
				MuteEnv, id, strings.Join(propertyChecks, ", "))
		}
	}
	if o.Seed == 0 {
		// Within 53 bits, so that JSON readers holding numbers as float64
		// see the exact seed.
		o.Seed = uint64(time.Now().UnixNano())&(1<<53-1) | 1
	}
	if o.ReplayCommand == "" {
		o.ReplayCommand = "nodeproof plugin-check --dir " + o.Dir
	}
	return o, nil
}

// checker is one run's kubelet side.
type checker struct {
	opts   Options
	rec    *record
	server *deviceplugin.RegistrationServer
	regs   chan registration
	// done ends Register handlers still waiting to hand over a request.
	done chan struct{}
	// optionsAnswered says GetDevicePluginOptions answered when the
	// checker connected: only then is it a sign of life (alive).
	optionsAnswered bool
	launch          *launchWatch
}

// registration is a Register request with the checker's verdicts on it.
type registration struct {
	req      *v1beta1.RegisterRequest
	problems []problem
}

type problem struct{ check, reason string }

// registrar answers Register as a kubelet would: a registration that
// breaks the contract is refused with the reason.
type registrar struct {
	v1beta1.UnimplementedRegistrationServer
	c *checker
}

func (r registrar) Register(ctx context.Context, req *v1beta1.RegisterRequest) (*v1beta1.Empty, error) {
	reg := registration{req: req, problems: registrationProblems(r.c.opts.Dir, req)}
	select {
	case r.c.regs <- reg:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-r.c.done:
		return nil, errors.New("the plugin checker has finished")
	}
	if len(reg.problems) > 0 {
		return nil, errors.New(reg.problems[0].reason)
	}
	return &v1beta1.Empty{}, nil
}

func registrationProblems(dir string, req *v1beta1.RegisterRequest) []problem {
	var out []problem
	if !slices.Contains(devicemanager.SupportedVersions[:], req.GetVersion()) {
		out = append(out, problem{RegVersion, fmt.Sprintf("Register names version %q; the kubelet supports %q", req.GetVersion(), devicemanager.SupportedVersions)})
	}
	if !devicemanager.IsExtendedResourceName(req.GetResourceName()) {
		out = append(out, problem{RegResourceName, fmt.Sprintf("Register names resource %q, which is not an extended resource name", req.GetResourceName())})
	}
	if _, err := deviceplugin.EndpointPath(dir, req.GetEndpoint()); err != nil {
		out = append(out, problem{RegEndpoint, fmt.Sprintf("Register's endpoint: %v", err)})
	}
	return out
}

// serve removes a stale kubelet.sock and serves a new one.
func (c *checker) serve() error {
	sock := filepath.Join(c.opts.Dir, devicemanager.KubeletSocket)
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("plugincheck: removing the stale %s: %w", sock, err)
	}
	server, err := deviceplugin.ServeRegistration(c.opts.Dir, registrar{c: c}, nil)
	if err != nil {
		return fmt.Errorf("plugincheck: Options.Dir: %w", err)
	}
	c.server = server
	return nil
}

// errRunEnded says the run's context ended while the checker waited.
var errRunEnded = errors.New("plugincheck: the run ended")

// awaitRegistration waits for a Register, at most RegisterTimeout. Before
// the first, launched is closed when Launch returns, and an error it
// returned ends the wait; after, it is nil.
func (c *checker) awaitRegistration(ctx context.Context, launched <-chan struct{}) (registration, error) {
	timer := time.NewTimer(c.opts.RegisterTimeout)
	defer timer.Stop()
	for {
		select {
		case reg := <-c.regs:
			return reg, nil
		case <-launched:
			err := c.launch.err
			if err == nil {
				launched = nil // it started; wait for the registration
				continue
			}
			// A plugin that registered and exited at once did register:
			// watchExit reports its exit.
			select {
			case reg := <-c.regs:
				return reg, nil
			default:
			}
			var exit *ExitError
			if errors.As(err, &exit) {
				return registration{}, fmt.Errorf("plugincheck: the plugin exited before it registered: %s", exit.Status)
			}
			return registration{}, fmt.Errorf("plugincheck: starting the plugin: %w", err)
		case <-timer.C:
			return registration{}, fmt.Errorf("plugincheck: no plugin registered on %s within %v", c.server.Socket(), c.opts.RegisterTimeout)
		case <-ctx.Done():
			return registration{}, errRunEnded
		}
	}
}

// registered records the registration checks and reports whether the
// registration was accepted.
func (c *checker) registered(reg registration) bool {
	for _, id := range []string{RegVersion, RegResourceName, RegEndpoint} {
		c.rec.check(id, true)
	}
	for _, p := range reg.problems {
		c.rec.fail(p.check, "%s", p.reason)
	}
	return len(reg.problems) == 0
}

// connect dials the plugin and compares its options with its registration.
func (c *checker) connect(ctx context.Context, reg registration) (*grpc.ClientConn, error) {
	socket, _ := deviceplugin.EndpointPath(c.opts.Dir, reg.req.GetEndpoint())
	conn, err := deviceplugin.Dial(ctx, socket, c.opts.CallTimeout)
	if err != nil {
		c.rec.fail(RegEndpoint, "the plugin does not accept connections on %s: %v", socket, err)
		return nil, err
	}
	c.rec.check(RegOptions, true)
	callCtx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	defer cancel()
	got, err := v1beta1.NewDevicePluginClient(conn).GetDevicePluginOptions(callCtx, &v1beta1.Empty{})
	c.optionsAnswered = err == nil
	switch {
	case err != nil:
		c.settle(err)
		c.rec.fail(RegOptions, "GetDevicePluginOptions failed: %v", err)
	case !proto.Equal(optionsOf(got), optionsOf(reg.req.GetOptions())):
		c.rec.fail(RegOptions, "GetDevicePluginOptions answers %v, Register sent %v", describeOptions(got), describeOptions(reg.req.GetOptions()))
	}
	return conn, nil
}

// optionsOf keeps the fields of DevicePluginOptions the kubelet reads.
func optionsOf(o *v1beta1.DevicePluginOptions) *v1beta1.DevicePluginOptions {
	return &v1beta1.DevicePluginOptions{PreStartRequired: o.GetPreStartRequired(), GetPreferredAllocationAvailable: o.GetGetPreferredAllocationAvailable()}
}

func describeOptions(o *v1beta1.DevicePluginOptions) string {
	return fmt.Sprintf("{pre_start_required: %t, get_preferred_allocation_available: %t}", o.GetPreStartRequired(), o.GetGetPreferredAllocationAvailable())
}

// alive asks the plugin for its options, as a sign of life. A plugin
// whose GetDevicePluginOptions failed from the start (PC-REG-OPTIONS) gives
// none: alive then says nothing (nil), and PC-PLUGIN-ALIVE is not applied,
// rather than blaming every later failure, and a wait for the call bound
// each time, on a plugin that is gone.
func (c *checker) alive(ctx context.Context, plugin v1beta1.DevicePluginClient) error {
	if !c.optionsAnswered {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	defer cancel()
	_, err := plugin.GetDevicePluginOptions(ctx, &v1beta1.Empty{})
	c.settle(err)
	return err
}

// smoke makes each kind of call once, with the simplest arguments, and
// judges the answers with the properties' checks. A plugin that fails or
// hangs here is broken at the basics: the failure is reported as it is,
// without rapid, whose shrinking would repeat a hung call until its time
// runs out, and ok is false. A malformed answer is reported too, and its
// check returned in failed: the properties mute it and look for the rest.
// An Allocate refused because the device has since failed
// (refusalExcused) ends the smoke pass with ok: the properties draw their
// calls from the plugin's latest list.
func (c *checker) smoke(ctx context.Context, plugin v1beta1.DevicePluginClient, opts PluginOptions, w *watcher, devs []*v1beta1.Device) (failed []string, ok bool) {
	healthy := healthyIDs(devs)
	if len(healthy) == 0 {
		return nil, true
	}
	one := healthy[:1]
	// A smoke call's verdict on an answer: the check it fails (none when
	// check is "") with the reason, and the answer's detail lines.
	type verdict struct {
		check, reason string
		detail        []string
	}
	type smokeCall struct {
		check, step string
		// allocates are the devices of an Allocate, whose refusal
		// refusalExcused may excuse.
		allocates []string
		call      func(context.Context) (verdict, error)
	}
	calls := []smokeCall{{AllocAnswer, fmt.Sprintf("Allocate(%v)", one), one, func(ctx context.Context) (verdict, error) {
		req := &v1beta1.AllocateRequest{ContainerRequests: []*v1beta1.ContainerAllocateRequest{{DevicesIds: one}}}
		resp, err := plugin.Allocate(ctx, req)
		if err != nil {
			return verdict{}, err
		}
		c.rec.check(AllocSpecs, len(resp.GetContainerResponses()) > 0)
		check, reason := allocateProblem(req, resp)
		return verdict{check: check, reason: reason}, nil
	}}}
	if opts.PreStartRequired {
		calls = append(calls, smokeCall{PreStart, fmt.Sprintf("PreStartContainer(%v)", one), nil, func(ctx context.Context) (verdict, error) {
			_, err := plugin.PreStartContainer(ctx, &v1beta1.PreStartContainerRequest{DevicesIds: one})
			return verdict{}, err
		}})
	}
	if opts.GetPreferredAllocationAvailable {
		calls = append(calls, smokeCall{PrefAnswer, fmt.Sprintf("GetPreferredAllocation(available %v, size 1)", healthy), nil, func(ctx context.Context) (verdict, error) {
			req := &v1beta1.ContainerPreferredAllocationRequest{AvailableDeviceIDs: healthy, AllocationSize: 1}
			resp, err := plugin.GetPreferredAllocation(ctx, &v1beta1.PreferredAllocationRequest{ContainerRequests: []*v1beta1.ContainerPreferredAllocationRequest{req}})
			if err != nil {
				return verdict{}, err
			}
			if got := len(resp.GetContainerResponses()); got != 1 {
				return verdict{check: PrefAnswer, reason: fmt.Sprintf("GetPreferredAllocation answered %s to 1 container request", phrase.Count(got, "container response"))}, nil
			}
			ids := resp.GetContainerResponses()[0].GetDeviceIDs()
			for _, id := range []string{PrefAvailable, PrefMustInclude, PrefSize} {
				c.rec.check(id, true)
			}
			check, reason := preferredProblem(req, ids)
			return verdict{check: check, reason: reason, detail: []string{fmt.Sprintf("  answer %v", ids)}}, nil
		}})
	}
	for _, call := range calls {
		c.rec.check(call.check, true)
		callCtx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
		v, err := call.call(callCtx)
		cancel()
		if v.check != "" {
			c.rec.finding(Finding{Check: v.check, Message: v.reason, Steps: append([]string{call.step}, v.detail...)})
			failed = append(failed, v.check)
		}
		if err == nil {
			continue
		}
		c.rec.check(PluginAlive, c.optionsAnswered)
		if aliveErr := c.alive(ctx, plugin); aliveErr != nil {
			c.rec.finding(Finding{Check: PluginAlive, Steps: []string{call.step},
				Message: fmt.Sprintf("after %s failed (%v) the plugin no longer answers GetDevicePluginOptions: %v", call.step, err, aliveErr)})
			return failed, false
		}
		if call.allocates != nil && c.refusalExcused(w, call.allocates, err) != "" {
			return failed, true
		}
		c.rec.finding(Finding{Check: call.check, Steps: []string{call.step}, Message: fmt.Sprintf("%s failed: %v", call.step, err)})
		return failed, false
	}
	return failed, true
}

// streamDrop closes the kubelet's side of a stream and checks that the
// plugin answers a new one.
func (c *checker) streamDrop(ctx context.Context, plugin v1beta1.DevicePluginClient) {
	c.rec.check(RestartStreamDrop, true)
	if err := c.alive(ctx, plugin); err != nil {
		c.rec.fail(RestartStreamDrop, "after the kubelet closed the ListAndWatch stream the plugin no longer answers GetDevicePluginOptions: %v", err)
		return
	}
	w := c.watch(ctx, plugin, "the stream opened after the kubelet closed the first")
	defer w.stop()
	if _, ok := w.first(c.opts.CallTimeout); !ok {
		c.settle(w.ended())
		c.rec.fail(RestartStreamDrop, "after the kubelet closed the ListAndWatch stream a new stream sent no device list within %v%s", c.opts.CallTimeout, w.endReason())
	}
}

// restart plays a kubelet restart: kubelet.sock and every other socket in
// the directory go (upstream CleanupPluginDirectory), kubelet.sock is served
// anew, and the plugin must register again.
func (c *checker) restart(ctx context.Context, before registration, first []*v1beta1.Device) {
	c.rec.check(RestartReregister, true)
	c.server.Stop()
	// Drop any registration that arrived since the first.
	for len(c.regs) > 0 {
		<-c.regs
	}
	if err := deviceplugin.RemoveSockets(c.opts.Dir); err != nil {
		c.rec.fail(RestartReregister, "the checker could not remove the sockets in %s: %v", c.opts.Dir, err)
		return
	}
	server, err := deviceplugin.ServeRegistration(c.opts.Dir, registrar{c: c}, nil)
	if err != nil {
		c.rec.fail(RestartReregister, "the checker could not serve kubelet.sock again: %v", err)
		return
	}
	c.server = server
	reg, err := c.awaitRegistration(ctx, nil)
	if err != nil {
		c.rec.fail(RestartReregister, "after kubelet.sock was served anew no registration came within %v", c.opts.RegisterTimeout)
		return
	}
	if p := reregistrationProblem(before.req, reg); p != "" {
		c.rec.fail(RestartReregister, "%s", p)
		return
	}
	socket, _ := deviceplugin.EndpointPath(c.opts.Dir, reg.req.GetEndpoint())
	conn, err := deviceplugin.Dial(ctx, socket, c.opts.CallTimeout)
	if err != nil {
		c.rec.fail(RestartReregister, "the plugin registered again but does not accept connections on %s: %v", socket, err)
		return
	}
	defer conn.Close()
	plugin := v1beta1.NewDevicePluginClient(conn)
	// The kubelet's connection asks for the options before it takes the
	// plugin on (upstream ManagerImpl.PluginConnected).
	callCtx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	_, err = plugin.GetDevicePluginOptions(callCtx, &v1beta1.Empty{})
	cancel()
	if err != nil {
		c.rec.fail(RestartReregister, "the plugin registered again but GetDevicePluginOptions on %s failed: %v", socket, err)
		return
	}
	w := c.watch(ctx, plugin, "the stream after re-registering")
	defer w.stop()
	again, ok := w.first(c.opts.CallTimeout)
	if !ok {
		c.settle(w.ended())
		c.rec.fail(RestartReregister, "the plugin registered again but its ListAndWatch sent no device list within %v%s", c.opts.CallTimeout, w.endReason())
		return
	}
	c.rec.check(LawStableIDs, true)
	if was, is := sortedIDs(first), sortedIDs(again); !slices.Equal(was, is) {
		c.rec.fail(LawStableIDs, "the first device list after re-registering has IDs %v, before the restart %v", is, was)
	}
}

// reregistrationProblem judges a registration after the kubelet restart as
// the kubelet does, or returns "". The kubelet checks the version and the
// resource name and dials the endpoint, whatever the first registration
// said (upstream server.Register): a new socket name or new options are a
// plugin's right. Only a new resource name is a problem of its own: the
// plugin then registers another resource, and the first one stays without
// devices until the kubelet drops it.
func reregistrationProblem(before *v1beta1.RegisterRequest, after registration) string {
	if len(after.problems) > 0 {
		var reasons []string
		for _, p := range after.problems {
			reasons = append(reasons, p.reason)
		}
		return "the kubelet refuses the plugin's new registration: " + strings.Join(reasons, "; ")
	}
	if was, is := before.GetResourceName(), after.req.GetResourceName(); was != is {
		return fmt.Sprintf("the plugin registered again for resource %q, first for %q", is, was)
	}
	return ""
}

func sortedIDs(devs []*v1beta1.Device) []string {
	ids := make([]string, len(devs))
	for i, d := range devs {
		ids[i] = d.GetID()
	}
	slices.Sort(ids)
	return ids
}

func healthyIDs(devs []*v1beta1.Device) []string {
	var ids []string
	for _, d := range devs {
		if d.GetHealth() == v1beta1.Healthy {
			ids = append(ids, d.GetID())
		}
	}
	return ids
}

// refusalExcused says why an Allocate of ids that failed with err is no
// finding, or "" when it is one. api.proto asks a plugin that cannot
// allocate a device to send a ListAndWatch update and fail the call
// (AllocateResponse, "Failure Handling"), so a refusal is the plugin's
// right once it has listed one of the devices as unhealthy or dropped it.
// The update may reach the checker after the refusal: unless the latest
// list already excuses it, the checker gives the update the call bound
// (watcher.settled). A call that ran out of its bound is a hang, not a
// refusal, and is never excused.
func (c *checker) refusalExcused(w *watcher, ids []string, err error) string {
	if code := status.Code(err); code == codes.DeadlineExceeded || code == codes.Canceled {
		return ""
	}
	devs, received := w.latestCounted()
	if why := withdrawn(devs, ids); why != "" {
		return why
	}
	return withdrawn(w.settled(received, c.opts.CallTimeout), ids)
}

// withdrawn says which of ids devs lists as unhealthy or not at all, or "".
func withdrawn(devs []*v1beta1.Device, ids []string) string {
	for _, id := range ids {
		i := slices.IndexFunc(devs, func(d *v1beta1.Device) bool { return d.GetID() == id })
		switch {
		case i < 0:
			return fmt.Sprintf("the plugin has since dropped %s from its list", id)
		case devs[i].GetHealth() != v1beta1.Healthy:
			return fmt.Sprintf("the plugin has since listed %s as %s", id, devs[i].GetHealth())
		}
	}
	return ""
}

// watcher runs one ListAndWatch stream, checking every list it receives.
type watcher struct {
	c *checker
	// name tells the run's streams apart in a finding: "the first stream".
	name   string
	cancel context.CancelFunc
	done   chan struct{}
	// firstList is closed when the first list arrives.
	firstList chan struct{}

	mu     sync.Mutex
	lists  [][]*v1beta1.Device
	endErr error // why the stream ended, if it did before stop
	// listed is closed and replaced by every list received.
	listed chan struct{}
	// quietAt is the number of lists received when a wait of settled for
	// a new one ran out.
	quietAt int
}

func (c *checker) watch(ctx context.Context, plugin v1beta1.DevicePluginClient, name string) *watcher {
	ctx, cancel := context.WithCancel(ctx)
	w := newWatcher(c, name, cancel)
	go w.run(ctx, plugin)
	return w
}

// newWatcher is a watcher of the stream named name that has received
// nothing yet; cancel ends its stream.
func newWatcher(c *checker, name string, cancel context.CancelFunc) *watcher {
	return &watcher{c: c, name: name, cancel: cancel, done: make(chan struct{}), firstList: make(chan struct{}), listed: make(chan struct{})}
}

func (w *watcher) run(ctx context.Context, plugin v1beta1.DevicePluginClient) {
	defer close(w.done)
	stream, err := plugin.ListAndWatch(ctx, &v1beta1.Empty{})
	for err == nil {
		var resp *v1beta1.ListAndWatchResponse
		if resp, err = stream.Recv(); err == nil {
			w.received(resp.GetDevices())
		}
	}
	if ctx.Err() == nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("the plugin returned from ListAndWatch")
		}
		w.mu.Lock()
		w.endErr = err
		w.mu.Unlock()
	}
}

// received checks one list and keeps it. A finding names the stream and
// the update that broke the rule, and shows that list and the one before.
func (w *watcher) received(devs []*v1beta1.Device) {
	// Only this goroutine appends to lists.
	w.mu.Lock()
	update := len(w.lists) + 1
	var before []*v1beta1.Device
	if update > 1 {
		before = w.lists[update-2]
	}
	w.mu.Unlock()
	where := fmt.Sprintf("ListAndWatch update %d (%s)", update, w.name)
	steps := []string{"ListAndWatch (" + w.name + ")"}
	if update > 1 {
		steps = append(steps, fmt.Sprintf("  update %d: %s", update-1, describeDevices(before)))
	}
	steps = append(steps, fmt.Sprintf("  update %d: %s", update, describeDevices(devs)))
	fail := func(check, message string) {
		w.c.rec.finding(Finding{Check: check, Message: message, Steps: steps})
	}
	rec := w.c.rec
	rec.check(LawIDs, len(devs) > 0)
	if p := snapshotIDsProblem(devs); p != "" {
		fail(LawIDs, where+": "+p)
	}
	rec.check(LawHealth, len(devs) > 0)
	if p := healthProblem(devs); p != "" {
		fail(LawHealth, where+": "+p)
	}
	rec.check(LawTopology, hasTopology(devs))
	if p := topologyProblem(devs); p != "" {
		fail(LawTopology, where+": "+p)
	}
	if update > 1 {
		was, is := sortedIDs(before), sortedIDs(devs)
		rec.check(LawStableIDs, true)
		if !slices.Equal(was, is) {
			fail(LawStableIDs, fmt.Sprintf("%s changed the device IDs from %v to %v, with nothing changing on the node", where, was, is))
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lists = append(w.lists, devs)
	if update == 1 {
		close(w.firstList)
	}
	close(w.listed)
	w.listed = make(chan struct{})
}

// maxDescribedDevices bounds the devices a finding lists: a plugin may
// have hundreds.
const maxDescribedDevices = 16

// describeDevices writes a device list for a finding: each ID, with its
// health when it is not Healthy and its NUMA nodes.
func describeDevices(devs []*v1beta1.Device) string {
	var parts []string
	for i, d := range devs {
		if i == maxDescribedDevices {
			parts = append(parts, fmt.Sprintf("… and %d more", len(devs)-i))
			break
		}
		var notes []string
		if h := d.GetHealth(); h != v1beta1.Healthy {
			notes = append(notes, h)
		}
		if nodes := d.GetTopology().GetNodes(); len(nodes) > 0 {
			ids := make([]string, len(nodes))
			for j, n := range nodes {
				ids[j] = strconv.FormatInt(n.GetID(), 10)
			}
			notes = append(notes, "NUMA "+strings.Join(ids, " "))
		}
		part := d.GetID()
		if len(notes) > 0 {
			part += "(" + strings.Join(notes, ", ") + ")"
		}
		parts = append(parts, part)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// first waits at most timeout for the first list.
func (w *watcher) first(timeout time.Duration) ([]*v1beta1.Device, bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-w.firstList:
	case <-w.done:
		select {
		case <-w.firstList:
		default:
			return nil, false
		}
	case <-timer.C:
		return nil, false
	}
	return w.latest(), true
}

// latest is the last list received.
func (w *watcher) latest() []*v1beta1.Device {
	devs, _ := w.latestCounted()
	return devs
}

// latestCounted is the last list received and the number of lists
// received so far.
func (w *watcher) latestCounted() ([]*v1beta1.Device, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lists[len(w.lists)-1], len(w.lists)
}

// settled returns the latest list once the plugin has had timeout to
// stream a change after its received-th list: at once when a later list
// has come, else at the next list, at the end of the stream or at the end
// of timeout. A plugin that let a whole timeout pass without a new list is
// not waited for again until it sends one, so that a plugin refusing
// devices it keeps listing healthy costs one wait, not one for each call
// of every case rapid shrinks.
func (w *watcher) settled(received int, timeout time.Duration) []*v1beta1.Device {
	w.mu.Lock()
	wait := len(w.lists) == received && w.quietAt != received
	listed := w.listed
	w.mu.Unlock()
	if wait {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		select {
		case <-listed:
		case <-w.done:
		case <-timer.C:
			w.mu.Lock()
			w.quietAt = received
			w.mu.Unlock()
		}
	}
	return w.latest()
}

// ended returns why the stream ended before stop, or nil.
func (w *watcher) ended() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.endErr
}

// endReason says why the stream ended, for a message; "" if it is open.
func (w *watcher) endReason() string {
	if err := w.ended(); err != nil {
		return " (the stream ended: " + strings.TrimSpace(err.Error()) + ")"
	}
	return ""
}

// stop ends the stream from the kubelet's side and waits for its goroutine.
func (w *watcher) stop() {
	w.cancel()
	<-w.done
}
