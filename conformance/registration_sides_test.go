package conformance

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	_ "unsafe" // for go:linkname to the device manager's unexported constructor

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	"k8s.io/kubernetes/pkg/kubelet/checkpointmanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	upstreamdm "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager"
	upstreamcheckpoint "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/checkpoint"
	upstreamplugin "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/plugin/v1beta1"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"

	"github.com/nodeproof/nodeproof/agent/deviceplugin"
	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
	"github.com/nodeproof/nodeproof/core/devicemanager"
)

// The two kubelet sides and the two plugin sides of the registration
// comparison. Each kubelet side keeps kubelet.sock and its checkpoint in a
// directory of its own; the plugins' sockets go in the same directory, as
// the API requires.

// kubeletSide is what the scenario driver does to a kubelet.
type kubeletSide interface {
	dir() string
	// capacity returns capacity and allocatable per resource; a resource
	// without an allocatable entry is missing from the second map.
	capacity() (capacity, allocatable map[string]int64)
	// admit allocates devices to every container of the pod, init
	// containers first, and returns "" or the admission's message.
	admit(p *corev1.Pod) string
	// startContainer returns the container's runtime options, rendered.
	startContainer(p *corev1.Pod, container string) string
	remove(uid string)
	close()
}

// pluginSide is one running device plugin instance.
type pluginSide interface {
	update(devices []regDevice)
	stop()
	// calls lists what the kubelet asked, one RPC after another, each in
	// the order asked.
	calls() []string
}

// startPlugin starts a plugin of one kind and registers it.
type startPlugin func(dir, endpoint string, resource int, devices []regDevice, preStart bool) (pluginSide, error)

// --- nodeproof's agent -----------------------------------------------------

type agentSide struct {
	socketDir string
	agent     *deviceplugin.Agent
}

func startAgent(dir string) (kubeletSide, error) {
	a, err := deviceplugin.Start(deviceplugin.Options{
		Dir:    dir,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return nil, err
	}
	// Upstream's sources are ready once the kubelet has seen every pod
	// source; the scenario starts after that.
	a.SetSourcesReady()
	return &agentSide{socketDir: dir, agent: a}, nil
}

func (s *agentSide) dir() string { return s.socketDir }

func (s *agentSide) capacity() (map[string]int64, map[string]int64) {
	c := s.agent.Capacity()
	return c.Capacity, c.Allocatable
}

func (s *agentSide) admit(p *corev1.Pod) string {
	if err := s.agent.Admit(context.Background(), ourPod(p)); err != nil {
		return err.Error()
	}
	return ""
}

func (s *agentSide) startContainer(p *corev1.Pod, container string) string {
	opts, err := s.agent.StartContainer(context.Background(), ourPod(p), container)
	if err != nil {
		return "error: " + err.Error()
	}
	if opts == nil {
		return "no options"
	}
	return renderOptions(
		render(opts.Envs, func(e devicemanager.KeyValue) string { return e.Name + "=" + e.Value }),
		render(opts.Annotations, func(a devicemanager.KeyValue) string { return a.Name + "=" + a.Value }),
		render(opts.Mounts, func(m devicemanager.Mount) string {
			return fmt.Sprintf("%s:%s:%t", m.HostPath, m.ContainerPath, m.ReadOnly)
		}),
		render(opts.Devices, func(d devicemanager.DeviceNode) string {
			return fmt.Sprintf("%s:%s:%s", d.PathOnHost, d.PathInContainer, d.Permissions)
		}),
		opts.CDIDevices)
}

func (s *agentSide) remove(uid string) { s.agent.RemovePod(uid) }
func (s *agentSide) close()            { s.agent.Stop() }

// --- upstream's device manager ---------------------------------------------

// newUpstreamManager is the device manager's constructor with the socket
// path as a parameter. The exported NewManagerImpl fixes it to
// /var/lib/kubelet/device-plugins/kubelet.sock, which a test must not take
// from a kubelet that may run on the same machine.
//
// The signature is the same in v1.35.4, v1.36.3, v1.37.2 and
// v1.38.0-beta.0 (pkg/kubelet/cm/devicemanager/manager.go) but for the
// topology's element type: github.com/google/cadvisor/info/v1's Node through
// v1.36, github.com/google/cadvisor/lib/model's since v1.37 ("kubelet:
// depend on github.com/google/cadvisor/lib", kubernetes#139870). Importing
// either would make every release's module require both cadvisor modules
// (go mod tidy reads the files of every build tag) and move the versions
// the release selects, so topology is declared by its layout: a slice is
// passed as the same three words whatever its element type. It is always
// nil, a node without NUMA topology.
//
//go:linkname newUpstreamManager k8s.io/kubernetes/pkg/kubelet/cm/devicemanager.newManagerImpl
func newUpstreamManager(logger klog.Logger, socketPath string, topology []struct{}, store topologymanager.Store) (*upstreamdm.ManagerImpl, error)

type allSourcesReady struct{}

func (allSourcesReady) AddSource(string) {}
func (allSourcesReady) AllReady() bool   { return true }

type upstreamSide struct {
	socketDir string
	m         *upstreamdm.ManagerImpl

	mu     sync.Mutex
	active []*corev1.Pod // the kubelet's active pods, in admission order
}

func startUpstream(dir string) (kubeletSide, error) {
	logger := klog.Background()
	m, err := newUpstreamManager(logger, filepath.Join(dir, kubeletSocket), nil, newFakeTopologyManager(logger))
	if err != nil {
		return nil, err
	}
	s := &upstreamSide{socketDir: dir, m: m}
	if err := m.Start(logger, s.activePods, allSourcesReady{}, containermap.NewContainerMap(), sets.New[string]()); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *upstreamSide) activePods() []*corev1.Pod {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.active)
}

func (s *upstreamSide) dir() string { return s.socketDir }

func (s *upstreamSide) capacity() (map[string]int64, map[string]int64) {
	capacity, allocatable := deviceCapacity(klog.Background(), s.m)
	return counts(capacity), counts(allocatable)
}

func counts(l corev1.ResourceList) map[string]int64 {
	out := make(map[string]int64, len(l))
	for k, v := range l {
		out[string(k)] = v.Value()
	}
	return out
}

// admit is the kubelet's resource allocation admit handler as far as the
// device manager goes: the pod is active while it is admitted (the pod
// manager has it), each container is allocated in upstream's order, and a
// failure rejects the pod with the handler's message.
func (s *upstreamSide) admit(p *corev1.Pod) string {
	p = upstreamPod(p)
	s.mu.Lock()
	s.active = append(s.active, p)
	s.mu.Unlock()
	for _, c := range slices.Concat(p.Spec.InitContainers, p.Spec.Containers) {
		if err := allocate(context.Background(), s.m, p, &c); err != nil {
			s.remove(string(p.UID))
			return fmt.Sprintf("Allocate failed due to %v, which is unexpected", err)
		}
	}
	return ""
}

func (s *upstreamSide) startContainer(p *corev1.Pod, name string) string {
	p = upstreamPod(p)
	var c *corev1.Container
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			if cs[i].Name == name {
				c = &cs[i]
			}
		}
	}
	opts, err := s.m.GetDeviceRunContainerOptions(context.Background(), p, c)
	if err != nil {
		return "error: " + err.Error()
	}
	if opts == nil {
		return "no options"
	}
	return renderOptions(
		render(opts.Envs, func(e kubecontainer.EnvVar) string { return e.Name + "=" + e.Value }),
		render(opts.Annotations, func(a kubecontainer.Annotation) string { return a.Name + "=" + a.Value }),
		render(opts.Mounts, func(m kubecontainer.Mount) string {
			return fmt.Sprintf("%s:%s:%t", m.HostPath, m.ContainerPath, m.ReadOnly)
		}),
		render(opts.Devices, func(d kubecontainer.DeviceInfo) string {
			return fmt.Sprintf("%s:%s:%s", d.PathOnHost, d.PathInContainer, d.Permissions)
		}),
		render(opts.CDIDevices, func(d kubecontainer.CDIDevice) string { return d.Name }))
}

func (s *upstreamSide) remove(uid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active = slices.DeleteFunc(s.active, func(p *corev1.Pod) bool { return p.UID == types.UID(uid) })
}

func (s *upstreamSide) close() { _ = s.m.Stop(klog.Background()) }

// render prints each element of a list of runtime options.
func render[T any](list []T, line func(T) string) []string {
	out := make([]string, len(list))
	for i, x := range list {
		out[i] = line(x)
	}
	return out
}

// renderOptions prints runtime options with every list sorted: upstream
// builds them from Go maps.
func renderOptions(envs, annotations, mounts, devices, cdi []string) string {
	var b strings.Builder
	for _, part := range []struct {
		name string
		list []string
	}{{"env", envs}, {"annotations", annotations}, {"mounts", mounts}, {"devices", devices}, {"cdi", cdi}} {
		if len(part.list) > 0 {
			fmt.Fprintf(&b, " %s=[%s]", part.name, strings.Join(slices.Sorted(slices.Values(part.list)), " "))
		}
	}
	if b.Len() == 0 {
		return "empty options"
	}
	return b.String()[1:]
}

// readCheckpoint reads a side's checkpoint with upstream's reader (which
// verifies the checksum) and renders it with every list sorted: upstream
// writes entries and device lists in Go map order.
func readCheckpoint(dir string) (registered map[string][]string, entries []string, err error) {
	cm, err := checkpointmanager.NewCheckpointManager(dir)
	if err != nil {
		return nil, nil, err
	}
	cp := upstreamcheckpoint.New(nil, nil)
	if err := cm.GetCheckpoint(devicemanager.CheckpointName, cp); err != nil {
		return nil, nil, err
	}
	podEntries, devices := cp.GetData()
	registered = make(map[string][]string, len(devices))
	for r, ids := range devices {
		registered[r] = slices.Sorted(slices.Values(ids))
	}
	for _, e := range podEntries {
		var perNUMA []string
		for _, node := range slices.Sorted(maps.Keys(e.DeviceIDs)) {
			perNUMA = append(perNUMA, fmt.Sprintf("%d:%s", node, strings.Join(slices.Sorted(slices.Values(e.DeviceIDs[node])), ",")))
		}
		resp := &pluginapi.ContainerAllocateResponse{}
		if err := proto.Unmarshal(e.AllocResp, resp); err != nil {
			return nil, nil, fmt.Errorf("entry %s/%s/%s: AllocResp: %w", e.PodUID, e.ContainerName, e.ResourceName, err)
		}
		entries = append(entries, fmt.Sprintf("%s/%s %s %s env=%v", e.PodUID, e.ContainerName, e.ResourceName, strings.Join(perNUMA, " "), resp.Envs))
	}
	slices.Sort(entries)
	return registered, entries, nil
}

// --- upstream's device plugin stub -----------------------------------------

// stubPlugin is upstream's exported device plugin stub with the same
// allocation policy and answers as nodeproof's test plugin, so that the two
// plugin kinds are interchangeable and a difference in outcome belongs to
// the kubelet sides.
type stubPlugin struct {
	stub *upstreamplugin.Stub

	mu        sync.Mutex
	preferred []string // GetPreferredAllocation calls, in order
	allocated []string // Allocate calls, in order
}

func startStub(dir, endpoint string, resource int, devices []regDevice, preStart bool) (pluginSide, error) {
	logger := klog.Background()
	socket := filepath.Join(dir, endpoint)
	s := &stubPlugin{stub: upstreamplugin.NewDevicePluginStub(logger, apiDevices(devices), socket, regResources[resource], preStart, true)}
	key := answerKeys[resource]
	s.stub.SetGetPreferredAllocFunc(func(r *pluginapi.PreferredAllocationRequest, _ map[string]*pluginapi.Device) (*pluginapi.PreferredAllocationResponse, error) {
		resp := &pluginapi.PreferredAllocationResponse{}
		for _, c := range r.ContainerRequests {
			s.record(&s.preferred, "GetPreferredAllocation available=%v mustInclude=%v size=%d", sorted(c.AvailableDeviceIDs), sorted(c.MustIncludeDeviceIDs), c.AllocationSize)
			resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerPreferredAllocationResponse{
				DeviceIDs: preferHighest(c.AvailableDeviceIDs, c.MustIncludeDeviceIDs, int(c.AllocationSize)),
			})
		}
		return resp, nil
	})
	s.stub.SetAllocFunc(func(r *pluginapi.AllocateRequest, _ map[string]*pluginapi.Device) (*pluginapi.AllocateResponse, error) {
		resp := &pluginapi.AllocateResponse{}
		for _, c := range r.ContainerRequests {
			s.record(&s.allocated, "Allocate %v", sorted(c.DevicesIds))
			resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerAllocateResponse{
				Envs:        map[string]string{key: strings.Join(sorted(c.DevicesIds), ",")},
				Annotations: map[string]string{"testplugin/" + strings.ToLower(key): regResources[resource]},
			})
		}
		return resp, nil
	})
	ctx := klog.NewContext(context.Background(), logger)
	if err := s.stub.Start(ctx); err != nil {
		return nil, err
	}
	if err := s.stub.Register(ctx, filepath.Join(dir, kubeletSocket), regResources[resource], ""); err != nil {
		_ = s.stub.Stop(logger)
		return nil, err
	}
	return s, nil
}

func (s *stubPlugin) record(log *[]string, format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*log = append(*log, fmt.Sprintf(format, args...))
}

func (s *stubPlugin) update(devices []regDevice) { s.stub.Update(apiDevices(devices)) }
func (s *stubPlugin) stop()                      { _ = s.stub.Stop(klog.Background()) }

// calls lists the GetPreferredAllocation calls, then the Allocate calls, as
// the test plugin's calls does; the stub answers PreStartContainer without a
// hook to record it.
func (s *stubPlugin) calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Concat(s.preferred, s.allocated)
}

func apiDevices(devices []regDevice) []*pluginapi.Device {
	out := make([]*pluginapi.Device, len(devices))
	for i, d := range devices {
		health := pluginapi.Unhealthy
		if d.Healthy {
			health = pluginapi.Healthy
		}
		out[i] = &pluginapi.Device{ID: d.ID, Health: health}
	}
	return out
}

// preferHighest is the test plugin's policy (testplugin's prefer): the
// required devices, then the highest IDs.
func preferHighest(available, mustInclude []string, size int) []string {
	out := sorted(mustInclude)
	byID := sorted(available)
	for i := len(byID) - 1; i >= 0 && len(out) < size; i-- {
		if !slices.Contains(out, byID[i]) {
			out = append(out, byID[i])
		}
	}
	return out
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

// --- nodeproof's test plugin -----------------------------------------------

type nodeproofPlugin struct{ p *testplugin.Plugin }

func startTestPlugin(dir, endpoint string, resource int, devices []regDevice, preStart bool) (pluginSide, error) {
	p, err := testplugin.Start(testplugin.Config{
		Dir:                             dir,
		Endpoint:                        endpoint,
		ResourceName:                    regResources[resource],
		Devices:                         testDevices(devices),
		PreStartRequired:                preStart,
		GetPreferredAllocationAvailable: true,
		AnswerKey:                       answerKeys[resource],
		Logger:                          slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return nil, err
	}
	return nodeproofPlugin{p}, nil
}

func (n nodeproofPlugin) update(devices []regDevice) { n.p.Update(testDevices(devices)) }
func (n nodeproofPlugin) stop()                      { n.p.Stop() }

func (n nodeproofPlugin) calls() []string {
	var out []string
	for _, rpc := range []testplugin.RPC{testplugin.GetPreferredAllocation, testplugin.Allocate, testplugin.PreStartContainer} {
		for _, c := range n.p.Calls(rpc) {
			switch rpc {
			case testplugin.GetPreferredAllocation:
				out = append(out, fmt.Sprintf("GetPreferredAllocation available=%v mustInclude=%v size=%d", sorted(c.DeviceIDs), sorted(c.MustInclude), c.Size))
			default:
				out = append(out, fmt.Sprintf("%s %v", rpc, sorted(c.DeviceIDs)))
			}
		}
	}
	return out
}

func testDevices(devices []regDevice) []testplugin.Device {
	out := make([]testplugin.Device, len(devices))
	for i, d := range devices {
		out[i] = testplugin.Device{ID: d.ID, Health: pluginapi.Unhealthy}
		if d.Healthy {
			out[i].Health = pluginapi.Healthy
		}
	}
	return out
}
