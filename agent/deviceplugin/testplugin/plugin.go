package testplugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// kubeletSocket is the name of the kubelet's registration socket.
const kubeletSocket = "kubelet.sock"

// Device is one device the plugin reports.
type Device struct {
	ID string
	// Health is v1beta1.Healthy or v1beta1.Unhealthy; the plugin sends any
	// string as given, so tests can send what a kubelet must cope with.
	Health string
	// NUMANodes is the device's topology; empty for none.
	NUMANodes []int64
}

// Healthy returns healthy devices with the given IDs.
func Healthy(ids ...string) []Device {
	devs := make([]Device, len(ids))
	for i, id := range ids {
		devs[i] = Device{ID: id, Health: v1beta1.Healthy}
	}
	return devs
}

// Config describes a plugin. Dir, Endpoint and ResourceName are required.
type Config struct {
	// Dir is the kubelet's device plugin directory, holding kubelet.sock.
	Dir string
	// Endpoint is the name of the plugin's socket in Dir. An existing file of
	// that name is replaced, as real plugins do when they restart.
	Endpoint string
	// ResourceName is the extended resource the plugin registers.
	ResourceName string
	// Devices is the first snapshot ListAndWatch sends.
	Devices []Device
	// PreStartRequired asks the kubelet to call PreStartContainer.
	PreStartRequired bool
	// GetPreferredAllocationAvailable asks the kubelet to call
	// GetPreferredAllocation before choosing devices.
	GetPreferredAllocationAvailable bool
	// Version is the API version sent in Register; empty means v1beta1.
	Version string
	// RegisterTimeout bounds each Register call; zero means 10 s.
	RegisterTimeout time.Duration
	// Logger receives the plugin's log records; nil means slog.Default().
	Logger *slog.Logger
	// AnswerKey is the environment variable an Allocate answer lists the
	// devices under, and (lower-cased, after "testplugin/") the annotation
	// naming the resource; empty means TESTPLUGIN_DEVICES and
	// testplugin/resource. A kubelet merges a container's answers first
	// writer wins, in map order upstream, so plugins whose answers meet in
	// one container need keys of their own for the merge to be observable.
	AnswerKey string
	// RejectUnknownIDs makes Allocate fail with InvalidArgument for a
	// device the plugin does not list as healthy, as a careful plugin does.
	// Off by default: a kubelet may allocate a device whose turn to
	// unhealthy it has not seen yet, and tests of that race need an answer.
	RejectUnknownIDs bool
	// Faults are in force from the start, before the first call; SetFault
	// changes them later.
	Faults map[RPC]Fault
	// NoReregister stops the plugin registering again when kubelet.sock is
	// created anew: a plugin that misses a kubelet restart.
	NoReregister bool
	// RegisteredEndpoint, when set, is the endpoint named in Register in
	// place of Endpoint, which the plugin still serves: a plugin that
	// registers a socket it does not serve.
	RegisteredEndpoint string
	// RegisteredOptions, when set, are the options sent in Register in
	// place of the ones GetDevicePluginOptions answers: a plugin whose
	// registration and options disagree.
	RegisteredOptions *v1beta1.DevicePluginOptions
	// DeviceFailure, when set, turns a device Unhealthy by itself in the
	// middle of a run, as failing hardware does: a legal behaviour a
	// kubelet (and a plugin checker) must take in its stride.
	DeviceFailure *DeviceFailure
	// ReregisterEndpoint, when set, is the name of the socket the plugin
	// serves and registers, in place of Endpoint, once a kubelet restart
	// has removed its socket: a plugin whose socket name changes from one
	// start to the next (named after its process, say). Legal: the
	// kubelet dials whatever endpoint a registration names.
	ReregisterEndpoint string
	// IDsPerHostDevice, when positive, makes every IDsPerHostDevice
	// consecutive devices of the list stand for one host device, as a
	// plugin whose count setting lets one device be scheduled several
	// times does. Allocate answers, for each device asked for, a device
	// spec and a read-only mount of its host device, so two devices of one
	// host device in one request repeat them: the same container path with
	// the same host path, which the kubelet skips. Host device K is
	// /dev/testpluginK and /var/run/testpluginK in the container, both of
	// /dev/null on the host, which every Linux host has.
	IDsPerHostDevice int
}

// DeviceFailure is a device that turns Unhealthy during a run: the plugin
// finds it broken when an Allocate asks for it, and does what api.proto's
// AllocateResponse asks ("send a ListAndWatch update and fail the
// Allocation request"). The new list goes out on every open ListAndWatch
// stream and, with RejectUnknownIDs, Allocate refuses the device from then
// on, starting with the call that found it broken. That call does not wait
// for the list to reach the kubelet, so the kubelet may see the refusal
// first, as it may from a real plugin.
type DeviceFailure struct {
	// ID is the device that fails: the ID of one of Config.Devices.
	ID string
	// AfterAllocates is how many Allocate calls the plugin receives before
	// the device can fail; the first later call that asks for it finds it
	// broken.
	AfterAllocates int
}

// RPC names a device plugin RPC.
type RPC string

// The RPCs of the DevicePlugin service.
const (
	GetDevicePluginOptions RPC = "GetDevicePluginOptions"
	ListAndWatch           RPC = "ListAndWatch"
	GetPreferredAllocation RPC = "GetPreferredAllocation"
	Allocate               RPC = "Allocate"
	PreStartContainer      RPC = "PreStartContainer"
)

// Malformation is a way to answer wrongly.
type Malformation int

// The malformed answers a kubelet must reject or tolerate.
const (
	// WellFormed answers correctly.
	WellFormed Malformation = iota
	// NoContainerResponses answers Allocate with no container response.
	NoContainerResponses
	// ExtraContainerResponses answers Allocate with one container response
	// more than requested.
	ExtraContainerResponses
	// UnknownDeviceIDs answers GetPreferredAllocation with IDs that were not
	// offered.
	UnknownDeviceIDs
	// DuplicateDeviceIDs makes every later ListAndWatch snapshot list the
	// first device a second time, as unhealthy; set before the plugin
	// starts, the first snapshot too.
	DuplicateDeviceIDs
	// WrongPreferredSize answers GetPreferredAllocation with one device
	// fewer than the allocation size.
	WrongPreferredSize
	// MissingMustInclude answers GetPreferredAllocation without the devices
	// it must include (the highest other available ones instead).
	MissingMustInclude
	// RelativeDevicePaths adds a device to every Allocate answer whose host
	// path is relative.
	RelativeDevicePaths
	// EndsStream makes ListAndWatch return after its first snapshot.
	EndsStream
	// ReversedContainerResponses answers an Allocate of several container
	// requests with their responses in reverse order.
	ReversedContainerResponses
)

// Fault changes how the plugin answers one RPC. The steps apply in field
// order: delay, block, hang, crash, error, then a (possibly malformed)
// answer.
type Fault struct {
	// Delay postpones the answer; the call fails if its context ends first.
	Delay time.Duration
	// Block, when set, holds the call until the channel is closed; the call
	// fails if its context ends first. Unlike Delay it lets a test decide
	// when the answer goes out, so calls can be kept in flight together.
	Block <-chan struct{}
	// Hang blocks the call until its context ends.
	Hang bool
	// Crash stops the plugin's gRPC server abruptly while the call is in
	// flight, closing every connection, and the plugin stays down.
	Crash bool
	// Err, when set, is returned instead of an answer.
	Err error
	// Malformed makes the answer wrong.
	Malformed Malformation
}

// Call is one RPC the plugin received.
type Call struct {
	RPC RPC
	// DeviceIDs are the devices of an Allocate or PreStartContainer
	// request, or the available devices of a GetPreferredAllocation request.
	DeviceIDs []string
	// MustInclude and Size are a GetPreferredAllocation request's.
	MustInclude []string
	Size        int
}

// Plugin is a running device plugin. Its methods are safe for concurrent use.
type Plugin struct {
	cfg Config
	log *slog.Logger

	mu sync.Mutex
	// endpoint is the name of the socket served, socket its path: the
	// ones of Config.Endpoint, or of ReregisterEndpoint after a restart.
	endpoint string
	socket   string
	devices  []Device
	changed  chan struct{} // closed and replaced by every Update
	faults   map[RPC]Fault
	calls    []Call
	server   *grpc.Server
	listener *net.UnixListener
	// socketInfo identifies the socket file this plugin created, so Stop
	// removes it only if no newer plugin has replaced it.
	socketInfo    os.FileInfo
	crashed       bool
	stopped       bool
	registrations int
	watching      int  // ListAndWatch streams open
	allocates     int  // Allocate calls received, for DeviceFailure
	deviceFailed  bool // DeviceFailure happened

	watcher *dirWatcher
	// ctx bounds the re-registrations; Stop cancels it.
	ctx        context.Context
	cancel     context.CancelFunc
	goroutines sync.WaitGroup
	stopOnce   sync.Once
}

// Start serves the plugin on <Dir>/<Endpoint>, starts watching Dir for a new
// kubelet.sock and registers. If the registration fails, the plugin is
// stopped and the kubelet's error returned.
func Start(cfg Config) (*Plugin, error) {
	if cfg.Dir == "" || cfg.Endpoint == "" || cfg.ResourceName == "" {
		return nil, errors.New("testplugin: Config.Dir, Endpoint and ResourceName are required")
	}
	if err := cfg.checkDeviceFailure(); err != nil {
		return nil, err
	}
	if cfg.IDsPerHostDevice < 0 {
		return nil, fmt.Errorf("testplugin: Config.IDsPerHostDevice %d: must not be negative", cfg.IDsPerHostDevice)
	}
	if cfg.Version == "" {
		cfg.Version = v1beta1.Version
	}
	if cfg.RegisterTimeout <= 0 {
		cfg.RegisterTimeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	p := &Plugin{
		cfg:      cfg,
		log:      cfg.Logger.With("plugin", cfg.ResourceName),
		endpoint: cfg.Endpoint,
		socket:   filepath.Join(cfg.Dir, cfg.Endpoint),
		devices:  slices.Clone(cfg.Devices),
		changed:  make(chan struct{}),
		faults:   maps.Clone(cfg.Faults),
	}
	if p.faults == nil {
		p.faults = map[RPC]Fault{}
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.mu.Lock()
	err := p.serveLocked()
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	w, err := watchDir(cfg.Dir)
	if err != nil {
		p.Stop()
		return nil, fmt.Errorf("testplugin: watching %s: %w", cfg.Dir, err)
	}
	p.watcher = w
	p.goroutines.Add(1)
	go p.reregister()
	if err := p.Register(context.Background()); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

func (cfg Config) checkDeviceFailure() error {
	fail := cfg.DeviceFailure
	switch {
	case fail == nil:
		return nil
	case !slices.ContainsFunc(cfg.Devices, func(d Device) bool { return d.ID == fail.ID }):
		return fmt.Errorf("testplugin: Config.DeviceFailure.ID %q: must be the ID of one of Config.Devices", fail.ID)
	case fail.AfterAllocates < 0:
		return fmt.Errorf("testplugin: Config.DeviceFailure.AfterAllocates %d: must not be negative", fail.AfterAllocates)
	}
	return nil
}

// serveLocked listens on the plugin's socket and serves on it. p.mu must be
// held.
func (p *Plugin) serveLocked() error {
	if err := os.Remove(p.socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("testplugin: %w", err)
	}
	lis, err := net.ListenUnix("unix", &net.UnixAddr{Name: p.socket, Net: "unix"})
	if err != nil {
		return fmt.Errorf("testplugin: %w", err)
	}
	// A newer plugin instance may take over the socket's name; closing this
	// listener must not delete that plugin's socket.
	lis.SetUnlinkOnClose(false)
	info, err := os.Lstat(p.socket)
	if err != nil {
		lis.Close()
		return fmt.Errorf("testplugin: %w", err)
	}
	server := grpc.NewServer()
	v1beta1.RegisterDevicePluginServer(server, service{p: p})
	p.server, p.listener, p.socketInfo = server, lis, info
	p.goroutines.Add(1)
	go func() {
		defer p.goroutines.Done()
		if err := server.Serve(lis); err != nil {
			p.log.Info("plugin server ended", "err", err)
		}
	}()
	return nil
}

// Register registers the plugin with kubelet.sock and returns the kubelet's
// answer. Start calls it; call it again to re-register by hand.
func (p *Plugin) Register(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.RegisterTimeout)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+filepath.Join(p.cfg.Dir, kubeletSocket), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	// WaitForReady rides out the moment between the kubelet's bind and
	// listen, when a connection is refused.
	p.mu.Lock()
	endpoint := p.endpoint
	p.mu.Unlock()
	req := &v1beta1.RegisterRequest{
		Version:      p.cfg.Version,
		Endpoint:     endpoint,
		ResourceName: p.cfg.ResourceName,
		Options:      p.options(),
	}
	if p.cfg.RegisteredEndpoint != "" {
		req.Endpoint = p.cfg.RegisteredEndpoint
	}
	if p.cfg.RegisteredOptions != nil {
		req.Options = p.cfg.RegisteredOptions
	}
	_, err = v1beta1.NewRegistrationClient(conn).Register(ctx, req, grpc.WaitForReady(true))
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.registrations++
	p.mu.Unlock()
	return nil
}

func (p *Plugin) options() *v1beta1.DevicePluginOptions {
	return &v1beta1.DevicePluginOptions{
		PreStartRequired:                p.cfg.PreStartRequired,
		GetPreferredAllocationAvailable: p.cfg.GetPreferredAllocationAvailable,
	}
}

// reregister registers again each time kubelet.sock is created, first
// serving on a new socket if the kubelet's start removed the old one. It
// runs until the watcher is closed.
func (p *Plugin) reregister() {
	defer p.goroutines.Done()
	for p.watcher.wait(kubeletSocket) == nil {
		p.mu.Lock()
		if p.crashed || p.stopped || p.cfg.NoReregister {
			p.mu.Unlock()
			continue
		}
		var err error
		if _, statErr := os.Lstat(p.socket); errors.Is(statErr, os.ErrNotExist) {
			p.server.Stop()
			if p.cfg.ReregisterEndpoint != "" {
				p.endpoint = p.cfg.ReregisterEndpoint
				p.socket = filepath.Join(p.cfg.Dir, p.endpoint)
			}
			err = p.serveLocked()
		}
		p.mu.Unlock()
		if err == nil {
			err = p.Register(p.ctx)
		}
		if err != nil {
			p.log.Error("re-registration failed", "err", err)
			continue
		}
		p.log.Info("re-registered after kubelet.sock was created", "endpoint", p.Endpoint())
	}
}

// Endpoint is the name of the socket the plugin serves now.
func (p *Plugin) Endpoint() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.endpoint
}

// Registrations counts the plugin's successful Register calls.
func (p *Plugin) Registrations() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.registrations
}

// Watching counts the ListAndWatch streams open now: 0 once the kubelet
// has closed the one it opened after the plugin's last registration.
func (p *Plugin) Watching() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.watching
}

func (p *Plugin) watch(delta int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watching += delta
}

// Update replaces the device list and sends it through every open
// ListAndWatch stream.
func (p *Plugin) Update(devices []Device) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.devices = slices.Clone(devices)
	p.listChangedLocked()
}

// listChangedLocked wakes every open ListAndWatch stream to send the
// device list. p.mu must be held.
func (p *Plugin) listChangedLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// allocateArrived counts an Allocate call of ids and, when it is the call
// DeviceFailure names, fails the device before the call is judged.
func (p *Plugin) allocateArrived(ids []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.allocates++
	fail := p.cfg.DeviceFailure
	if fail == nil || p.deviceFailed || p.allocates <= fail.AfterAllocates || !slices.Contains(ids, fail.ID) {
		return
	}
	p.deviceFailed = true
	for i := range p.devices {
		if p.devices[i].ID == fail.ID {
			p.devices[i].Health = v1beta1.Unhealthy
		}
	}
	p.listChangedLocked()
	p.log.Info("device failed", "device", fail.ID)
}

// SetFault makes every later call of rpc behave as f says, until changed.
// A zero Fault restores normal answers.
func (p *Plugin) SetFault(rpc RPC, f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults[rpc] = f
}

// Calls returns the calls of rpc received so far, oldest first.
func (p *Plugin) Calls(rpc RPC) []Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Call
	for _, c := range p.calls {
		if c.RPC == rpc {
			out = append(out, c)
		}
	}
	return out
}

// Crash stops the gRPC server abruptly, as a plugin process dying would:
// every connection closes, every stream ends. The plugin does not come back;
// Stop still has to be called.
func (p *Plugin) Crash() {
	p.mu.Lock()
	p.crashed = true
	server := p.server
	p.mu.Unlock()
	server.Stop()
}

// Stop stops the plugin and its watcher, removes its socket if it is still
// its own, and waits for every goroutine it started. It may be called more
// than once.
func (p *Plugin) Stop() {
	p.stopOnce.Do(func() {
		p.mu.Lock()
		p.stopped = true
		server, socket, info := p.server, p.socket, p.socketInfo
		p.mu.Unlock()
		p.cancel()
		if p.watcher != nil {
			p.watcher.close()
		}
		server.Stop()
		if now, err := os.Lstat(socket); err == nil && os.SameFile(now, info) {
			os.Remove(socket)
		}
		p.goroutines.Wait()
	})
}

// record notes a call and returns the fault to apply to it.
func (p *Plugin) record(c Call) Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, c)
	return p.faults[c.RPC]
}

// apply runs a fault's delay, hang, crash and error steps. A non-nil result
// ends the call with that error.
func (p *Plugin) apply(ctx context.Context, f Fault) error {
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if f.Block != nil {
		select {
		case <-f.Block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if f.Hang {
		<-ctx.Done()
		return ctx.Err()
	}
	if f.Crash {
		// Stopping the server from inside one of its handlers is safe
		// (Stop does not wait for handlers), and the call's context ends
		// when its connection closes.
		p.Crash()
		<-ctx.Done()
		return ctx.Err()
	}
	return f.Err
}

// snapshot returns the devices to send, the channel that Update closes and
// whether the stream ends after this snapshot. A ListAndWatch fault's
// Malformed field is read for every snapshot, so it applies to open
// streams; its other steps apply when a stream opens.
func (p *Plugin) snapshot() ([]*v1beta1.Device, chan struct{}, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	malformed := p.faults[ListAndWatch].Malformed
	out := make([]*v1beta1.Device, 0, len(p.devices)+1)
	for _, d := range p.devices {
		dev := &v1beta1.Device{ID: d.ID, Health: d.Health}
		if len(d.NUMANodes) > 0 {
			dev.Topology = &v1beta1.TopologyInfo{}
			for _, n := range d.NUMANodes {
				dev.Topology.Nodes = append(dev.Topology.Nodes, &v1beta1.NUMANode{ID: n})
			}
		}
		out = append(out, dev)
	}
	if malformed == DuplicateDeviceIDs && len(out) > 0 {
		out = append(out, &v1beta1.Device{ID: out[0].ID, Health: v1beta1.Unhealthy})
	}
	return out, p.changed, malformed == EndsStream
}

// service implements the DevicePlugin gRPC service for a Plugin.
type service struct {
	v1beta1.UnimplementedDevicePluginServer
	p *Plugin
}

func (s service) GetDevicePluginOptions(ctx context.Context, _ *v1beta1.Empty) (*v1beta1.DevicePluginOptions, error) {
	if err := s.p.apply(ctx, s.p.record(Call{RPC: GetDevicePluginOptions})); err != nil {
		return nil, err
	}
	return s.p.options(), nil
}

func (s service) ListAndWatch(_ *v1beta1.Empty, stream v1beta1.DevicePlugin_ListAndWatchServer) error {
	ctx := stream.Context()
	if err := s.p.apply(ctx, s.p.record(Call{RPC: ListAndWatch})); err != nil {
		return err
	}
	s.p.watch(1)
	defer s.p.watch(-1)
	for {
		devices, changed, ends := s.p.snapshot()
		if err := stream.Send(&v1beta1.ListAndWatchResponse{Devices: devices}); err != nil {
			return err
		}
		if ends {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil
		}
	}
}

func (s service) GetPreferredAllocation(ctx context.Context, req *v1beta1.PreferredAllocationRequest) (*v1beta1.PreferredAllocationResponse, error) {
	var first *v1beta1.ContainerPreferredAllocationRequest
	if rs := req.GetContainerRequests(); len(rs) > 0 {
		first = rs[0]
	}
	f := s.p.record(Call{
		RPC:         GetPreferredAllocation,
		DeviceIDs:   first.GetAvailableDeviceIDs(),
		MustInclude: first.GetMustIncludeDeviceIDs(),
		Size:        int(first.GetAllocationSize()),
	})
	if err := s.p.apply(ctx, f); err != nil {
		return nil, err
	}
	resp := &v1beta1.PreferredAllocationResponse{}
	for _, r := range req.GetContainerRequests() {
		ids := prefer(r.GetAvailableDeviceIDs(), r.GetMustIncludeDeviceIDs(), int(r.GetAllocationSize()))
		switch f.Malformed {
		case UnknownDeviceIDs:
			ids = []string{"no-such-device", "another-unknown-device"}
		case WrongPreferredSize:
			ids = ids[:max(0, len(ids)-1)]
		case MissingMustInclude:
			if must := r.GetMustIncludeDeviceIDs(); len(must) > 0 {
				others := slices.DeleteFunc(slices.Clone(r.GetAvailableDeviceIDs()), func(id string) bool { return slices.Contains(must, id) })
				ids = prefer(others, nil, int(r.GetAllocationSize()))
			}
		}
		resp.ContainerResponses = append(resp.ContainerResponses, &v1beta1.ContainerPreferredAllocationResponse{DeviceIDs: ids})
	}
	return resp, nil
}

// prefer is the plugin's allocation policy: the required devices, then the
// available ones with the highest IDs. nodeproof's own choice is the lowest
// IDs, so a test sees the preference win over the default. The upstream
// kubelet lists the devices in Go map order, so the policy sorts them first
// and answers the same whatever order it was offered.
func prefer(available, mustInclude []string, size int) []string {
	out := slices.Sorted(slices.Values(mustInclude))
	byID := slices.Sorted(slices.Values(available))
	for i := len(byID) - 1; i >= 0 && len(out) < size; i-- {
		if !slices.Contains(out, byID[i]) {
			out = append(out, byID[i])
		}
	}
	return out
}

func (s service) Allocate(ctx context.Context, req *v1beta1.AllocateRequest) (*v1beta1.AllocateResponse, error) {
	var ids []string
	for _, r := range req.GetContainerRequests() {
		ids = append(ids, r.GetDevicesIds()...)
	}
	f := s.p.record(Call{RPC: Allocate, DeviceIDs: ids})
	s.p.allocateArrived(ids)
	if err := s.p.apply(ctx, f); err != nil {
		return nil, err
	}
	if err := s.p.checkHealthy(ids); err != nil {
		return nil, err
	}
	resp := &v1beta1.AllocateResponse{}
	for _, r := range req.GetContainerRequests() {
		resp.ContainerResponses = append(resp.ContainerResponses, s.p.answer(r.GetDevicesIds()))
	}
	switch f.Malformed {
	case NoContainerResponses:
		resp.ContainerResponses = nil
	case ExtraContainerResponses:
		resp.ContainerResponses = append(resp.ContainerResponses, s.p.answer(nil))
	case ReversedContainerResponses:
		slices.Reverse(resp.ContainerResponses)
	case RelativeDevicePaths:
		for _, r := range resp.ContainerResponses {
			r.Devices = append(r.Devices, &v1beta1.DeviceSpec{ContainerPath: "/dev/testplugin", HostPath: "dev/testplugin", Permissions: "rw"})
		}
	}
	return resp, nil
}

// checkHealthy fails, with RejectUnknownIDs, for a device the plugin does
// not list as healthy.
func (p *Plugin) checkHealthy(ids []string) error {
	if !p.cfg.RejectUnknownIDs {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range ids {
		if !slices.ContainsFunc(p.devices, func(d Device) bool { return d.ID == id && d.Health == v1beta1.Healthy }) {
			return status.Errorf(codes.InvalidArgument, "device %q is not a healthy device of %s", id, p.cfg.ResourceName)
		}
	}
	return nil
}

// answer tells the container which devices it got, the way real plugins
// do (NVIDIA_VISIBLE_DEVICES and the like), so tests can check that the
// kubelet passes the plugin's answer on. The IDs are sorted: the upstream
// kubelet sends them in Go map order.
func (p *Plugin) answer(ids []string) *v1beta1.ContainerAllocateResponse {
	env, annotation := "TESTPLUGIN_DEVICES", "testplugin/resource"
	if p.cfg.AnswerKey != "" {
		env, annotation = p.cfg.AnswerKey, "testplugin/"+strings.ToLower(p.cfg.AnswerKey)
	}
	resp := &v1beta1.ContainerAllocateResponse{
		Envs:        map[string]string{env: strings.Join(slices.Sorted(slices.Values(ids)), ",")},
		Annotations: map[string]string{annotation: p.cfg.ResourceName},
	}
	p.addHostDevices(resp, ids)
	return resp
}

// addHostDevices adds to resp the device spec and the mount of the host
// device of each of ids, with IDsPerHostDevice, in the order of ids.
func (p *Plugin) addHostDevices(resp *v1beta1.ContainerAllocateResponse, ids []string) {
	per := p.cfg.IDsPerHostDevice
	if per == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range ids {
		i := slices.IndexFunc(p.devices, func(d Device) bool { return d.ID == id })
		if i < 0 {
			continue
		}
		host := i / per
		resp.Devices = append(resp.Devices, &v1beta1.DeviceSpec{ContainerPath: fmt.Sprintf("/dev/testplugin%d", host), HostPath: "/dev/null", Permissions: "rw"})
		resp.Mounts = append(resp.Mounts, &v1beta1.Mount{ContainerPath: fmt.Sprintf("/var/run/testplugin%d", host), HostPath: "/dev/null", ReadOnly: true})
	}
}

func (s service) PreStartContainer(ctx context.Context, req *v1beta1.PreStartContainerRequest) (*v1beta1.PreStartContainerResponse, error) {
	f := s.p.record(Call{RPC: PreStartContainer, DeviceIDs: req.GetDevicesIds()})
	if err := s.p.apply(ctx, f); err != nil {
		return nil, err
	}
	return &v1beta1.PreStartContainerResponse{}, nil
}
