package sim

import (
	"maps"
	"slices"
	"time"

	"github.com/nodeproof/nodeproof/core/admission"
	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	"github.com/nodeproof/nodeproof/core/imagegc"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/prober"
)

// kubelet is everything the kubelet process keeps in memory: the cores'
// state and the glue's own bookkeeping (its pod workers, the status
// manager, the plugin connections). A kubelet restart drops all of it and
// builds a new one from what outlives the process: the checkpoint file,
// the runtime, the API server and the cgroupfs.
type kubelet struct {
	gen     int
	started time.Time
	devices *dm.Manager
	node    *admission.Node
	prober  *prober.Manager
	gc      *imagegc.Manager
	gcLoop  imagegc.GCLoop
	beganGC time.Time
	// endpoints are the plugin connections the device manager knows, by
	// resource.
	endpoints map[string]dm.EndpointID
	// status is the status manager: each pod's status as the kubelet
	// last computed it.
	status map[string]*prober.PodStatus
	// pods are the pod workers: the admitted pods the kubelet runs, in
	// admission order. The pod cgroups follow them.
	pods []string
	// podManager holds the pods this kubelet admitted, in admission order,
	// finished ones included until the API server deletes them (a deleted
	// pod once it is terminated, a preemption victim, Failed, only when the
	// world forgets it), and phases the phase the status manager last gave
	// each. The kubelet's active pods (activePods), which the QoS container
	// manager and the device manager both read, come from these two, as
	// upstream's GetActivePods filters the pod manager's pods by their
	// terminal phase.
	podManager []string
	phases     map[string]prober.Phase
	// admitQueue holds pods awaiting admission, in arrival order.
	admitQueue []string
	admitting  *admitting
	pass       *gcPass
	// collected: an admission that garbage-collects device holdings has
	// begun in this kubelet.
	collected bool
}

// admitting is one admission in progress.
type admitting struct {
	uid     string
	attempt *admission.Attempt
}

// pluginAnswers are the plugins' answers to one plan's Allocate RPCs, as
// they travel back to the kubelet that made the calls: each request's
// container responses in plan order, or the first RPC error. caller is
// that kubelet's generation, and sent what each successful call granted,
// the world's side of the answers (deliver).
type pluginAnswers struct {
	answers [][]allocresp.ContainerAllocateResponse
	rpcErr  error
	caller  int
	sent    []sentGrant
}

// sentGrant is what one successful Allocate call granted a container.
type sentGrant struct {
	plugin         *plugin
	uid, container string
	grant          grant
}

// gcPass is an image GC pass in progress; detectedAt is when its
// detection read the runtime, and seenStarts how many container starts the
// runtime had made by then (simContainer.startSeq).
type gcPass struct {
	pass       *imagegc.Pass
	detectedAt time.Time
	seenStarts int
	removal    imagegc.Removal
}

// newKubelet is a kubelet process starting now: a new generation with
// empty state and no cores yet.
func (s *Sim) newKubelet() *kubelet {
	s.kubeletGen++
	return &kubelet{gen: s.kubeletGen, started: s.now, endpoints: map[string]dm.EndpointID{},
		status: map[string]*prober.PodStatus{}, phases: map[string]prober.Phase{}, beganGC: s.now}
}

// startCores creates the cores that start empty in every kubelet process,
// around k's device manager: admission, the prober (whose start is now, for
// its kubelet-restart rules) and image GC.
func (s *Sim) startCores(k *kubelet) {
	var err error
	k.node, err = admission.NewNode(s.nodeCapacity(), k.devices)
	s.coreErr("admission.NewNode", err)
	k.prober, err = prober.NewManager(prober.Options{KubeletStart: s.now})
	s.coreErr("prober.NewManager", err)
	k.gc, err = imagegc.NewManager(imagegc.DefaultPolicy(), imagegc.Options{})
	s.coreErr("imagegc.NewManager", err)
}

// startKubelet starts the first kubelet on a fresh node.
func (s *Sim) startKubelet() {
	k := s.newKubelet()
	k.devices = dm.New(dm.DefaultLimits())
	k.devices.SetSourcesReady()
	s.startCores(k)
	s.kubelet = k
	// The container manager creates kubepods and the QoS tiers at start.
	s.syncCgroups()
	s.schedule(&queued{at: s.now.Add(imagegc.GCPeriod), kind: evGC, kubelet: k.gen})
}

// connect is a plugin's registration: Connected, then its first snapshot.
func (k *kubelet) connect(s *Sim, p *plugin) {
	id, err := k.devices.Connected(p.resource, "/var/lib/kubelet/device-plugins/"+p.resource+".sock", dm.PluginOptions{})
	s.coreErr("devicemanager.Connected", err)
	k.endpoints[p.resource] = id
	k.listAndWatch(s, p)
}

// listAndWatch delivers the plugin's current snapshot.
func (k *kubelet) listAndWatch(s *Sim, p *plugin) {
	s.coreErr("devicemanager.Update", k.devices.Update(p.resource, p.snapshot()))
	s.nodeStatus()
}

// disconnect is the end of the plugin's ListAndWatch stream.
func (k *kubelet) disconnect(s *Sim, p *plugin) {
	k.devices.Disconnected(p.resource, k.endpoints[p.resource], s.now)
	s.nodeStatus()
}

// reregister is a plugin registering again while connected; the old
// connection's stream ends afterwards and must change nothing.
func (k *kubelet) reregister(s *Sim, p *plugin) {
	old := k.endpoints[p.resource]
	k.connect(s, p)
	k.devices.Disconnected(p.resource, old, s.now)
	s.nodeStatus()
}

// nodeStatus is the kubelet's node status update: device capacity from
// the device manager into the node's allocatable, then the checkpoint the
// device manager asks for.
func (s *Sim) nodeStatus() {
	k := s.kubelet
	c := k.devices.GetCapacity(s.now)
	alloc := s.nodeCapacity()
	for _, r := range slices.Sorted(maps.Keys(c.Allocatable)) {
		alloc[pod.ResourceName(r)] = c.Allocatable[r]
	}
	s.coreErr("admission.SetAllocatable", k.node.SetAllocatable(alloc))
	s.writeCheckpoint()
}

// writeCheckpoint writes the device manager's checkpoint when it is due,
// through the real encoder, so that a restart restores real bytes.
func (s *Sim) writeCheckpoint() {
	k := s.kubelet
	if !k.devices.CheckpointDue() {
		return
	}
	d := k.devices.Checkpoint()
	b, err := checkpoint.Encode(d)
	s.coreErr("checkpoint.Encode", err)
	if err == nil {
		s.disk = b
		s.persist(d)
	}
}
