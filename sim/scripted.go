package sim

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nodeproof/nodeproof/core/cgroups"
	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/prober"
)

// ScriptConfig is a scripted node's one device plugin: the extended
// resource it registers and its devices' IDs.
type ScriptConfig struct {
	Resource string
	Devices  []string
}

// Validate names the first field that breaks its rule.
func (c ScriptConfig) Validate() error {
	if !dm.IsExtendedResourceName(c.Resource) {
		return fmt.Errorf("resource: %q is not an extended resource name", c.Resource)
	}
	if len(c.Devices) == 0 {
		return fmt.Errorf("devices: must not be empty")
	}
	for i, id := range c.Devices {
		switch {
		case id == "":
			return fmt.Errorf("devices[%d]: must not be empty", i)
		case slices.Contains(c.Devices[:i], id):
			return fmt.Errorf("devices[%d]: %q is listed twice", i, id)
		}
	}
	return nil
}

// Scripted is the simulated node driven from outside, step by step: the
// same world and kubelet glue as a drawn simulation (admission with device
// allocation, the device manager and its checkpoint file, the cgroups, the
// restart from the checkpoint and the runtime), with no pod arriving, no
// fault firing and no periodic plugin trouble unless a step says so. Each
// step runs the events it causes until the node has settled, on the
// simulation's virtual clock; every draw the glue makes (a latency, a
// plugin's delay in registering again) is its zero, the quickest.
//
// Its pods are static pods with no probes whose images the node has. A
// regular init container exits, successfully, as soon as it has started;
// a sidecar runs on beside the app containers. A pod's containers all start
// when it is admitted: the order in which they start matters to no
// subsystem the node models. A refused pod whose manifest is still there is
// admitted again by a restarted kubelet, as the running ones are: a static
// pod's status lives in the kubelet's memory only.
type Scripted struct {
	sim      *Sim
	resource string
	// pods are the pods added and not removed: name to UID.
	pods map[string]string
}

// scriptedHorizon is a scripted node's simulated duration: longer than any
// script runs, so that its events are never cut off.
const scriptedHorizon = 100 * 365 * 24 * time.Hour

// settleEvents bounds the events one step may cause before the node must
// have settled: a step causes a few dozen; more means events that never
// stop coming.
const settleEvents = 10_000

// NewScripted starts a node whose plugin has registered and sent its
// devices, all healthy.
func NewScripted(cfg ScriptConfig) (*Scripted, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// An empty script answers every draw with its zero; no fault has a rate.
	s := newNode(Config{Duration: scriptedHorizon, Pods: 1}, NewScript(""))
	pl := newPlugin(cfg.Resource, 0)
	pl.devices = slices.Clone(cfg.Devices)
	s.plugins = []*plugin{pl}
	s.startKubelet()
	s.schedule(&queued{at: s.now, kind: evPluginRegister, name: cfg.Resource})
	n := &Scripted{sim: s, resource: cfg.Resource, pods: map[string]string{}}
	s.refusedAgain = func(uid string) bool { return slices.Contains(slices.Collect(maps.Values(n.pods)), uid) }
	return n, n.settle()
}

// AddPod puts a static pod on the node and lets the kubelet admit it. Its
// UID, if empty, is its name; a name or UID already used is refused.
func (n *Scripted) AddPod(p pod.Pod) error {
	s := n.sim
	if p.Name == "" {
		return fmt.Errorf("pod.name: must not be empty")
	}
	if p.UID == "" {
		p.UID = p.Name
	}
	if _, used := n.pods[p.Name]; used {
		return fmt.Errorf("pod.name: %q is on the node already", p.Name)
	}
	if _, used := s.pods[p.UID]; used {
		return fmt.Errorf("pod.uid: %q was used already", p.UID)
	}
	spec := p
	spec.InitContainers = slices.Clone(p.InitContainers)
	spec.Containers = slices.Clone(p.Containers)
	sp := &simPod{spec: &spec}
	probes := prober.Pod{UID: spec.UID, Namespace: spec.Namespace, Name: spec.Name}
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		probes.Containers = append(probes.Containers, prober.Container{Name: c.Name})
		sp.containers = append(sp.containers, &simContainer{name: c.Name, image: s.images[0].id})
	}
	sp.probes = probes.WithDefaults()
	s.pods[spec.UID] = sp
	s.podOrder = append(s.podOrder, spec.UID)
	n.pods[spec.Name] = spec.UID
	s.kubelet.admitQueue = append(s.kubelet.admitQueue, spec.UID)
	s.kickAdmission()
	return n.settle()
}

// RemovePod deletes the named pod; it is killed at once (a grace period of
// zero) and leaves the node.
func (n *Scripted) RemovePod(name string) error {
	uid, ok := n.pods[name]
	if !ok {
		return fmt.Errorf("name: no pod %q on the node", name)
	}
	delete(n.pods, name)
	n.sim.schedule(&queued{at: n.sim.now, kind: evPodDelete, podUID: uid})
	return n.settle()
}

// CrashContainer ends the named running container of pod name as a crash
// would; the kubelet starts it again at once (restart policy Always, an
// app container's and a sidecar's; the node has its image), holding the
// devices it held, for nothing is allocated anew at a container's start.
func (n *Scripted) CrashContainer(name, container string) error {
	uid, ok := n.pods[name]
	if !ok {
		return fmt.Errorf("name: no pod %q on the node", name)
	}
	p := n.sim.pods[uid]
	i := slices.IndexFunc(p.containers, func(c *simContainer) bool { return c.name == container })
	switch {
	case i < 0:
		return fmt.Errorf("container: pod %q has no container %q", name, container)
	case p.phase != phaseRunning || !p.containers[i].running:
		return fmt.Errorf("container: %s of pod %q is not running", container, name)
	}
	c := p.containers[i]
	c.restarts++
	c.running = false
	n.sim.startContainer(p, c)
	n.sim.kubelet.containerStarted(n.sim, p, c)
	return n.settle()
}

// RestartKubelet kills the kubelet and starts a new one, which restores the
// device manager from the checkpoint file and admits again the pods it
// finds running, before the plugin has registered again.
func (n *Scripted) RestartKubelet() error {
	n.sim.restartKubelet("by the script")
	return n.settle()
}

// RestartPlugin crashes the plugin of resource and starts a new one at
// once, which registers with the same devices and health.
func (n *Scripted) RestartPlugin(resource string) error {
	pl, err := n.plugin(resource)
	if err != nil {
		return err
	}
	if pl.up {
		n.sim.crashPlugin(pl)
	}
	pl.registerPending = true
	n.sim.schedule(&queued{at: n.sim.now, kind: evPluginRegister, name: resource})
	return n.settle()
}

// SetHealth makes the plugin of resource report device id healthy or not.
func (n *Scripted) SetHealth(resource, id string, healthy bool) error {
	pl, err := n.plugin(resource)
	if err != nil {
		return err
	}
	if !slices.Contains(pl.devices, id) {
		return fmt.Errorf("id: the plugin of %s has no device %q", resource, id)
	}
	pl.unhealthy[id] = !healthy
	if pl.up {
		n.sim.kubelet.listAndWatch(n.sim, pl)
	}
	return n.settle()
}

func (n *Scripted) plugin(resource string) (*plugin, error) {
	if pl := n.sim.plugin(resource); pl != nil {
		return pl, nil
	}
	return nil, fmt.Errorf("resource: no plugin of %q on the node", resource)
}

// settle runs the events due until only the periodic image GC pass is
// left, exiting regular init containers as they start. A core refusing
// what the glue handed it is an error.
func (n *Scripted) settle() error {
	s := n.sim
	for range settleEvents {
		n.exitInitContainers()
		if !n.busy() {
			if len(s.coreErrs) > 0 {
				err := fmt.Errorf("a core refused the glue: %s", strings.Join(s.coreErrs, "; "))
				s.coreErrs = nil
				return err
			}
			return nil
		}
		s.Step()
	}
	return fmt.Errorf("the node did not settle in %d events; the last: %s", settleEvents, s.last)
}

// busy: an event other than the next image GC pass is queued, or a probe
// is due.
func (n *Scripted) busy() bool {
	if _, _, due := n.sim.kubelet.prober.NextDue(); due {
		return true
	}
	return slices.ContainsFunc(n.sim.queue, func(e *queued) bool {
		return e.kind != evGC && (e.kubelet == 0 || e.kubelet == n.sim.kubeletGen)
	})
}

// exitInitContainers stops the running regular init containers: each
// exits with 0 as soon as it has started.
func (n *Scripted) exitInitContainers() {
	for _, uid := range n.sim.podOrder {
		p := n.sim.pods[uid]
		for _, ic := range p.spec.InitContainers {
			if ic.IsSidecar() {
				continue
			}
			for _, c := range p.containers {
				if c.name == ic.Name {
					c.running = false
				}
			}
		}
	}
}

// Prediction is what the scripted node shows after a step.
type Prediction struct {
	// Pods are the pods added and not removed, by name.
	Pods map[string]PodPrediction
	// Allocatable is how many devices of the plugin's resource the node's
	// allocatable counts.
	Allocatable int64
	// Checkpoint are the entries of the plugin's resource in the device
	// manager's checkpoint file as last written.
	Checkpoint []checkpoint.PodDevicesEntry
}

// PodPrediction is one pod as the scripted node shows it.
type PodPrediction struct {
	UID string
	// Phase is Running for an admitted pod, Failed for a refused one,
	// Pending for one awaiting admission; Reason and Message are a refused
	// pod's.
	Phase           pod.Phase
	Reason, Message string
	QOS             pod.QOSClass
	// Held are the devices of the plugin's resource the device manager
	// holds for each of a running pod's app containers and sidecars (the
	// containers PodResources List shows), sorted; only those holding any.
	Held map[string][]string
	// Cgroup is the pod's cgroup as the cgroupfs holds it; nil when there
	// is none.
	Cgroup *PodCgroup
	// Restarts sums the restarts of the pod's containers.
	Restarts int
}

// PodCgroup is a pod cgroup's path and limits: MemoryLimit in bytes and
// CPUQuota in microseconds per CPUPeriod, each Unlimited when the cgroup
// sets none.
type PodCgroup struct {
	Path                             string
	MemoryLimit, CPUQuota, CPUPeriod int64
}

// Unlimited is a limit the cgroup does not set.
const Unlimited = -1

// Predict reads the node as the scenario's observer does, through
// PodResources List among others, whose every call first collects the
// devices of the pods no longer active (UpdateAllocatedDevices, once the
// pod sources are ready), in the device manager's memory: the checkpoint
// file keeps them until its next write.
func (n *Scripted) Predict() (Prediction, error) {
	s := n.sim
	var active []string
	for _, p := range s.kubelet.activePods(s) {
		active = append(active, p.UID)
	}
	s.kubelet.devices.UpdateAllocatedDevices(active)
	out := Prediction{Pods: map[string]PodPrediction{}, Allocatable: s.kubelet.node.Allocatable()[pod.ResourceName(n.resource)]}
	if s.disk != nil {
		d, err := checkpoint.Decode(s.disk)
		if err != nil {
			return Prediction{}, fmt.Errorf("the checkpoint file: %w", err)
		}
		for _, e := range d.PodDeviceEntries {
			if e.ResourceName == n.resource {
				out.Checkpoint = append(out.Checkpoint, e)
			}
		}
	}
	held := map[string]map[string][]string{}
	for _, h := range s.kubelet.devices.Holdings() {
		if h.Resource != n.resource {
			continue
		}
		if held[h.PodUID] == nil {
			held[h.PodUID] = map[string][]string{}
		}
		held[h.PodUID][h.Container] = slices.Sorted(slices.Values(h.DeviceIDs))
	}
	for _, name := range slices.Sorted(maps.Keys(n.pods)) {
		p := s.pods[n.pods[name]]
		pp := PodPrediction{UID: p.spec.UID, Phase: pod.Pending, QOS: p.spec.QOS(), Held: map[string][]string{}}
		switch {
		case p.rejected:
			pp.Phase, pp.Reason, pp.Message = pod.Failed, p.reason, p.message
		case p.phase == phaseRunning:
			pp.Phase = pod.Running
			for c, ids := range held[p.spec.UID] {
				if spec, _ := p.spec.Container(c); !p.spec.IsInitContainer(c) || spec.IsSidecar() {
					pp.Held[c] = ids
				}
			}
			cg, err := n.podCgroup(p.spec)
			if err != nil {
				return Prediction{}, fmt.Errorf("pod %s: %w", name, err)
			}
			pp.Cgroup = cg
		}
		for _, c := range p.containers {
			pp.Restarts += c.restarts
		}
		out.Pods[name] = pp
	}
	return out, nil
}

// podCgroup reads the pod's cgroup from the cgroupfs, whose files are
// cgroup v2's: memory.max and cpu.max ("max" for no limit).
func (n *Scripted) podCgroup(p *pod.Pod) (*PodCgroup, error) {
	path, err := cgroups.PodPath(n.sim.cgCfg, n.sim.cgCfg.PodQOS(p), p.UID)
	if err != nil {
		return nil, err
	}
	files, ok := n.sim.fs.dirs[path]
	if !ok {
		return nil, nil
	}
	cg := &PodCgroup{Path: path, MemoryLimit: Unlimited, CPUQuota: Unlimited, CPUPeriod: Unlimited}
	for _, f := range files {
		switch f.Name {
		case "memory.max":
			if cg.MemoryLimit, err = limit(f.Value); err != nil {
				return nil, fmt.Errorf("%s/memory.max: %w", path, err)
			}
		case "cpu.max":
			quota, period, _ := strings.Cut(f.Value, " ")
			if cg.CPUQuota, err = limit(quota); err != nil {
				return nil, fmt.Errorf("%s/cpu.max: %w", path, err)
			}
			if cg.CPUPeriod, err = limit(period); err != nil {
				return nil, fmt.Errorf("%s/cpu.max: %w", path, err)
			}
		}
	}
	return cg, nil
}

// limit reads a cgroup v2 limit: a number, or "max".
func limit(v string) (int64, error) {
	if v == "max" {
		return Unlimited, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is neither a limit nor max", v)
	}
	return n, nil
}
