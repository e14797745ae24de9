package sim

import (
	"fmt"
	"strings"
	"time"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
)

// plugin is a simulated device plugin: its devices and their health, and
// what it answered to Allocate, which is the world's record of the devices
// each container was granted.
type plugin struct {
	resource  string
	devices   []string
	unhealthy map[string]bool
	// up: the plugin process runs and has registered with the current
	// kubelet.
	up bool
	// registerPending: a re-registration is scheduled.
	registerPending bool
	// answers are the devices of the last successful Allocate answer for
	// each pod and container.
	answers map[string]map[string][]string
	// allocations counts the successful Allocate answers the plugin has
	// sent; allocationDirs is the host directory of the last one for each
	// pod and container (allocationMount).
	allocations    int
	allocationDirs map[string]map[string]string
	// busyUntil is when the plugin sends its latest Allocate answer: it
	// answers one call at a time, so a call made before then is answered
	// after it. Only an allocate-slow answer outlasts the kubelet's wait
	// for it, so without that fault every call finds the plugin idle.
	busyUntil time.Time
}

func newPlugin(resource string, n int) *plugin {
	p := &plugin{resource: resource, unhealthy: map[string]bool{}, answers: map[string]map[string][]string{},
		allocationDirs: map[string]map[string]string{}}
	short := resource[strings.IndexByte(resource, '/')+1:]
	for i := range n {
		p.devices = append(p.devices, fmt.Sprintf("%s-%d", short, i))
	}
	return p
}

func (p *plugin) snapshot() []dm.Device {
	out := make([]dm.Device, len(p.devices))
	for i, id := range p.devices {
		h := dm.Healthy
		if p.unhealthy[id] {
			h = dm.Unhealthy
		}
		out[i] = dm.Device{ID: id, Health: h}
	}
	return out
}

func (s *Sim) plugin(resource string) *plugin {
	for _, p := range s.plugins {
		if p.resource == resource {
			return p
		}
	}
	return nil
}

// pluginRegister is the plugin (re)registering with the kubelet: Register,
// GetDevicePluginOptions, then its first ListAndWatch snapshot.
func (s *Sim) pluginRegister(resource string) string {
	p := s.plugin(resource)
	p.up, p.registerPending = true, false
	s.kubelet.connect(s, p)
	return resource + " registered"
}

// pluginTick is one plugin's periodic opportunity for trouble: a crash, a
// re-registration while connected, or a device changing health.
func (s *Sim) pluginTick(resource string) string {
	p := s.plugin(resource)
	s.schedule(&queued{at: s.now.Add(pluginTickPeriod + time.Duration(s.src.Intn(30))*time.Second), kind: evPluginTick, name: resource})
	if !p.up {
		return s.nothingHappened(resource + " down")
	}
	switch {
	case s.fault(PluginCrash):
		p.up = false
		// The process that was busy answering is gone.
		p.busyUntil = time.Time{}
		s.kubelet.disconnect(s, p)
		// Sometimes back within the endpoint grace period, sometimes after.
		delay := time.Duration(1+s.src.Intn(600)) * time.Second
		p.registerPending = true
		s.schedule(&queued{at: s.now.Add(delay), kind: evPluginRegister, name: resource})
		return fmt.Sprintf("%s crashed; back in %v", resource, delay)
	case s.fault(PluginReregister):
		s.kubelet.reregister(s, p)
		return resource + " registered again while connected"
	case s.src.Intn(8) == 1:
		id := p.devices[s.src.Intn(len(p.devices))]
		p.unhealthy[id] = !p.unhealthy[id]
		s.kubelet.listAndWatch(s, p)
		return fmt.Sprintf("%s: %s unhealthy=%v", resource, id, p.unhealthy[id])
	}
	return s.nothingHappened(resource + " healthy")
}

// allocate is the plugin answering one Allocate RPC, with the faults. The
// returned latency is when the answer reaches the kubelet.
func (s *Sim) allocate(uid, container string, req dm.AllocateRequest) ([]allocresp.ContainerAllocateResponse, time.Duration, error) {
	p := s.plugin(req.Resource)
	latency := time.Duration(1+s.src.Intn(50)) * time.Millisecond
	switch {
	case s.fault(AllocateError):
		return nil, p.answerAfter(s.now, latency), fmt.Errorf("rpc error: code = Internal desc = %s: allocation failed", req.Resource)
	case s.fault(AllocateHang):
		return nil, allocateDeadline, fmt.Errorf("rpc error: code = DeadlineExceeded desc = context deadline exceeded")
	case s.fault(AllocateMalformed):
		return []allocresp.ContainerAllocateResponse{}, p.answerAfter(s.now, latency), nil
	}
	if s.faultFrom(s.slowSrc, AllocateSlow) {
		// The zero draw is the longest wait, the one most likely to
		// outlast a kubelet restart, so that a shrunk case keeps it.
		latency = time.Duration(maxSlowAllocateSeconds-s.slowSrc.Intn(maxSlowAllocateSeconds)) * time.Second
	}
	latency = p.answerAfter(s.now, latency)
	if p.answers[uid] == nil {
		p.answers[uid] = map[string][]string{}
	}
	p.answers[uid][container] = append([]string(nil), req.DeviceIDs...)
	p.allocations++
	dir := fmt.Sprintf("/var/lib/%s/allocation-%d", p.resource, p.allocations)
	if p.allocationDirs[uid] == nil {
		p.allocationDirs[uid] = map[string]string{}
	}
	p.allocationDirs[uid][container] = dir
	// The answer names each device twice, as real plugins do: in an
	// environment variable for the workload and as a device node for the
	// runtime to expose. It also mounts a directory of this answer's own,
	// as plugins that write a configuration per allocation do, so that an
	// answer given to one call differs from every other call's even for
	// the same devices.
	resp := allocresp.ContainerAllocateResponse{Envs: map[string]string{"DEVICES": strings.Join(req.DeviceIDs, ",")},
		Mounts: []allocresp.Mount{{ContainerPath: allocationMount(p.resource), HostPath: dir, ReadOnly: true}}}
	for _, id := range req.DeviceIDs {
		resp.Devices = append(resp.Devices, allocresp.DeviceSpec{ContainerPath: devicePath(id), HostPath: devicePath(id), Permissions: "rw"})
	}
	return []allocresp.ContainerAllocateResponse{resp}, latency, nil
}

// allocationMount is where a container sees the directory of the Allocate
// answer its resource's plugin gave it.
func allocationMount(resource string) string { return "/run/" + resource }

// maxSlowAllocateSeconds bounds an allocate-slow answer's delay: long
// enough to outlast a kubelet restart, the plugins' registering again (up
// to 20 s) and the new kubelet's next admission (30 s after its start).
const maxSlowAllocateSeconds = 180

// answerAfter is how long after now the answer to a call made now reaches
// the kubelet, when the answer itself takes took: the plugin first finishes
// the answers it is still busy with. It marks the plugin busy until then.
func (p *plugin) answerAfter(now time.Time, took time.Duration) time.Duration {
	start := now
	if p.busyUntil.After(now) {
		start = p.busyUntil
	}
	p.busyUntil = start.Add(took)
	return p.busyUntil.Sub(now)
}

// devicePath is the host device node of a device; the plugins' device IDs
// are unique across resources, so their nodes are too.
func devicePath(id string) string { return "/dev/" + id }
