package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
)

// plugin is a simulated device plugin: its devices and their health, and
// what it answered to Allocate that the kubelet received, which is the
// world's record of the devices each container was granted.
type plugin struct {
	resource  string
	devices   []string
	unhealthy map[string]bool
	// up: the plugin process runs and has registered with the current
	// kubelet.
	up bool
	// registerPending: a re-registration is scheduled.
	registerPending bool
	// allocations counts the successful Allocate answers the plugin has
	// sent; each mounts a host directory named after its number.
	allocations int
	// delivered are, for each pod and container, the last answer that
	// reached the kubelet process that made the call, since that process
	// started (deliver); persisted are the answers the last checkpoint
	// write holds, the ones a restarted kubelet starts from (persist). An
	// answer sent to a kubelet that restarted before it arrived is in
	// neither: it died with the connection, however long ago the plugin
	// sent it.
	delivered map[string]map[string]grant
	persisted map[string]map[string]grant
	// busyUntil is when the plugin sends its latest Allocate answer: it
	// answers one call at a time, so a call made before then is answered
	// after it. Only an allocate-slow answer outlasts the kubelet's wait
	// for it, so without that fault every call finds the plugin idle.
	busyUntil time.Time
}

func newPlugin(resource string, n int) *plugin {
	p := &plugin{resource: resource, unhealthy: map[string]bool{}, delivered: map[string]map[string]grant{},
		persisted: map[string]map[string]grant{}}
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
		s.crashPlugin(p)
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

// crashPlugin is the plugin process dying: its ListAndWatch stream ends.
func (s *Sim) crashPlugin(p *plugin) {
	p.up = false
	// The process that was busy answering is gone.
	p.busyUntil = time.Time{}
	s.kubelet.disconnect(s, p)
}

// grant is one successful Allocate answer as the world records it: the
// devices it granted and the host directory it mounts (allocationMount).
type grant struct {
	devices []string
	dir     string
}

// granted is the answer the kubelet must run a pod's container with: the
// last one the running kubelet received for it, else the one its
// checkpoint restored.
func (p *plugin) granted(uid, container string) (grant, bool) {
	if g, ok := p.delivered[uid][container]; ok {
		return g, true
	}
	g, ok := p.persisted[uid][container]
	return g, ok
}

// grantsOf is granted for each of the pod's containers that has an answer.
func (p *plugin) grantsOf(uid string) map[string]grant {
	out := map[string]grant{}
	for _, byContainer := range []map[string]grant{p.persisted[uid], p.delivered[uid]} {
		for c, g := range byContainer {
			out[c] = g
		}
	}
	return out
}

// forget drops the plugin's records of a pod.
func (p *plugin) forget(uid string) {
	delete(p.delivered, uid)
	delete(p.persisted, uid)
}

// deliver records the plan's answers as received when the kubelet that
// made the calls is the one running: a restart closed the connections
// they travelled on, so a later kubelet never receives them, whatever its
// glue does with the event. Called as the admission reads them.
func (s *Sim) deliver(got *pluginAnswers) {
	if got.caller != s.kubeletGen {
		return
	}
	for _, sent := range got.sent {
		pl := sent.plugin
		if pl.delivered[sent.uid] == nil {
			pl.delivered[sent.uid] = map[string]grant{}
		}
		pl.delivered[sent.uid][sent.container] = sent.grant
	}
}

// persist records which answers the checkpoint just written holds: its
// entries, each with the answer the world expects the kubelet to have for
// it. An entry the world has no answer for stays out, so that a kubelet
// restored from it runs a container with devices no answer granted, which
// SIM-DEVICES-HELD reports.
func (s *Sim) persist(d checkpoint.Data) {
	next := map[*plugin]map[string]map[string]grant{}
	for _, e := range d.PodDeviceEntries {
		pl := s.plugin(e.ResourceName)
		if pl == nil {
			continue
		}
		g, ok := pl.granted(e.PodUID, e.ContainerName)
		if !ok {
			continue
		}
		if next[pl] == nil {
			next[pl] = map[string]map[string]grant{}
		}
		if next[pl][e.PodUID] == nil {
			next[pl][e.PodUID] = map[string]grant{}
		}
		next[pl][e.PodUID][e.ContainerName] = g
	}
	for _, pl := range s.plugins {
		pl.persisted = next[pl]
		if pl.persisted == nil {
			pl.persisted = map[string]map[string]grant{}
		}
	}
}

// allocate is the plugin answering one Allocate RPC, with the faults. The
// returned latency is when the answer reaches the kubelet; the grant is
// what a successful answer gave, for deliver to record if it arrives.
func (s *Sim) allocate(uid, container string, req dm.AllocateRequest) ([]allocresp.ContainerAllocateResponse, grant, time.Duration, error) {
	p := s.plugin(req.Resource)
	latency := time.Duration(1+s.src.Intn(50)) * time.Millisecond
	switch {
	case s.fault(AllocateError):
		return nil, grant{}, p.answerAfter(s.now, latency), fmt.Errorf("rpc error: code = Internal desc = %s: allocation failed", req.Resource)
	case s.fault(AllocateHang):
		return nil, grant{}, allocateDeadline, fmt.Errorf("rpc error: code = DeadlineExceeded desc = context deadline exceeded")
	case s.fault(AllocateMalformed):
		return []allocresp.ContainerAllocateResponse{}, grant{}, p.answerAfter(s.now, latency), nil
	}
	if s.faultFrom(s.slowSrc, AllocateSlow) {
		// The zero draw is the longest wait, the one most likely to
		// outlast a kubelet restart, so that a shrunk case keeps it.
		latency = time.Duration(maxSlowAllocateSeconds-s.slowSrc.Intn(maxSlowAllocateSeconds)) * time.Second
	}
	latency = p.answerAfter(s.now, latency)
	p.allocations++
	dir := fmt.Sprintf("/var/lib/%s/allocation-%d", p.resource, p.allocations)
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
	return []allocresp.ContainerAllocateResponse{resp}, grant{devices: slices.Clone(req.DeviceIDs), dir: dir}, latency, nil
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
