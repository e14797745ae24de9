package devicemanager

import (
	"sort"
	"time"

	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
)

// Limits bound every collection the manager keeps; growth past a bound is an
// error of KindBoundExceeded, never a silent drop.
type Limits struct {
	// Resources is the most device plugin resources the node tracks.
	Resources int
	// DevicesPerResource is the most devices one ListAndWatch snapshot may list.
	DevicesPerResource int
	// Pods is the most pods that may hold devices at once.
	Pods int
	// PendingPlans is the most allocations that may await Commit or Abort.
	PendingPlans int
	// NameLength is the longest device ID, resource, pod UID or container name accepted.
	NameLength int
}

// DefaultLimits are generous for a real node (upstream has no bounds) and
// small enough that a hostile plugin cannot exhaust memory.
func DefaultLimits() Limits {
	return Limits{Resources: 256, DevicesPerResource: 16384, Pods: 4096, PendingPlans: 256, NameLength: 1024}
}

// EndpointID identifies one connection of a plugin. A plugin that registers
// again gets a new ID; the old connection's disconnect carries the old ID.
type EndpointID uint64

// endpoint is the manager's record of a plugin connection.
type endpoint struct {
	id       EndpointID
	resource string
	socket   string
	options  PluginOptions
	// stopTime is zero while the plugin is connected.
	stopTime time.Time
}

func (e *endpoint) stopped() bool { return !e.stopTime.IsZero() }

// gracePeriodExpired is strictly greater than, as upstream.
func (e *endpoint) gracePeriodExpired(now time.Time) bool {
	return e.stopped() && now.Sub(e.stopTime) > EndpointStopGracePeriod
}

// allocation is what one container holds of one resource.
type allocation struct {
	// byNUMA lists the devices under each NUMA node they report; a device on
	// several nodes is listed under each, one without topology under -1.
	byNUMA   map[int64][]string
	devices  deviceSet
	response allocresp.ContainerAllocateResponse
	// responseBytes is the protobuf encoding kept for the checkpoint.
	responseBytes []byte
}

// containerKey names one container of one pod.
type containerKey struct{ podUID, container string }

// Manager is the device plugin manager's state. It is not safe for
// concurrent use: the agent serialises calls, as upstream's mutex does.
type Manager struct {
	limits Limits

	nextEndpointID EndpointID
	endpoints      map[string]*endpoint
	allDevices     map[string]map[string]Device
	healthy        map[string]deviceSet
	unhealthy      map[string]deviceSet
	// allocated is upstream's allocatedDevices cache: devices committed to
	// containers plus those reserved by pending plans.
	allocated map[string]deviceSet
	// pods is upstream's podDevices: pod UID -> container -> resource.
	pods map[string]map[string]map[string]*allocation

	// reusePod and reuse are upstream's devicesToReuse, kept only for the
	// pod being admitted: devices its finished init containers release.
	reusePod string
	reuse    map[string]deviceSet

	pending  map[PlanID]*Plan
	nextPlan PlanID

	sourcesReady bool
	// runningAtStart holds the containers the runtime reported running when
	// the kubelet started; allocation skips them until sources are ready.
	runningAtStart map[containerKey]bool

	checkpointDue bool
}

// New returns an empty manager with the given bounds.
func New(limits Limits) *Manager {
	return &Manager{
		limits:         limits,
		endpoints:      map[string]*endpoint{},
		allDevices:     map[string]map[string]Device{},
		healthy:        map[string]deviceSet{},
		unhealthy:      map[string]deviceSet{},
		allocated:      map[string]deviceSet{},
		pods:           map[string]map[string]map[string]*allocation{},
		reuse:          map[string]deviceSet{},
		pending:        map[PlanID]*Plan{},
		runningAtStart: map[containerKey]bool{},
	}
}

// SetSourcesReady records that the kubelet has seen every pod source, which
// allows garbage collection and ends the restart grace for running containers.
func (m *Manager) SetSourcesReady() { m.sourcesReady = true }

// Connected records a validated plugin whose socket answered and whose
// options are known (upstream PluginConnected). It replaces any previous
// endpoint of the resource without touching its devices: capacity comes back
// only with the plugin's first ListAndWatch snapshot.
func (m *Manager) Connected(resource, socket string, options PluginOptions) (EndpointID, error) {
	if _, known := m.endpoints[resource]; !known && m.trackedResources() >= m.limits.Resources {
		return 0, newError(KindBoundExceeded, "cannot register %s: the node already tracks %d resources", resource, m.limits.Resources)
	}
	m.nextEndpointID++
	m.endpoints[resource] = &endpoint{id: m.nextEndpointID, resource: resource, socket: socket, options: options}
	return m.nextEndpointID, nil
}

// trackedResources counts resources with any state, the quantity Limits.Resources bounds.
func (m *Manager) trackedResources() int {
	n := len(m.endpoints)
	for r := range m.healthy {
		if _, ok := m.endpoints[r]; !ok {
			n++
		}
	}
	return n
}

// Update applies one ListAndWatch snapshot: it replaces the resource's whole
// device state. Any health other than "Healthy" counts as unhealthy. A
// malformed snapshot is rejected whole and leaves the state as it was.
func (m *Manager) Update(resource string, devices []Device) error {
	if err := validateDevices(resource, devices, m.limits); err != nil {
		return err
	}
	if _, known := m.healthy[resource]; !known && m.endpoints[resource] == nil && m.trackedResources() >= m.limits.Resources {
		return newError(KindBoundExceeded, "ListAndWatch of %s: the node already tracks %d resources", resource, m.limits.Resources)
	}
	all := make(map[string]Device, len(devices))
	healthy := deviceSet{}
	unhealthy := deviceSet{}
	for _, d := range devices {
		d.NUMANodes = append([]int64(nil), d.NUMANodes...)
		all[d.ID] = d
		if d.Health == Healthy {
			healthy[d.ID] = struct{}{}
		} else {
			unhealthy[d.ID] = struct{}{}
		}
	}
	m.allDevices[resource] = all
	m.healthy[resource] = healthy
	m.unhealthy[resource] = unhealthy
	m.checkpointDue = true
	return nil
}

// Disconnected records that the ListAndWatch stream of connection id ended:
// the resource's devices all become unhealthy and its grace period starts.
//
// Only the resource's current connection counts. Upstream v1.30–v1.36 looks
// up whichever connection is current, so an old plugin instance's late
// disconnect wipes a newer registration (#127803); the core follows the fix
// on master (#135437). A disconnect of an unknown or superseded connection
// reports false.
func (m *Manager) Disconnected(resource string, id EndpointID, now time.Time) bool {
	e, ok := m.endpoints[resource]
	if !ok || e.id != id || e.stopped() {
		return false
	}
	m.markUnhealthy(resource)
	e.stopTime = now
	return true
}

// markUnhealthy moves every healthy device to the unhealthy set. Like
// upstream it creates an unhealthy entry but no healthy one, so a plugin that
// disconnects before its first snapshot shows capacity 0 and no allocatable.
func (m *Manager) markUnhealthy(resource string) {
	if m.unhealthy[resource] == nil {
		m.unhealthy[resource] = deviceSet{}
	}
	healthy, ok := m.healthy[resource]
	if !ok {
		return
	}
	for id := range healthy {
		m.unhealthy[resource][id] = struct{}{}
	}
	m.healthy[resource] = deviceSet{}
}

// Capacity is the node status view of the device plugin resources.
type Capacity struct {
	// Capacity counts healthy and unhealthy devices.
	Capacity map[string]int64
	// Allocatable counts healthy devices; a resource with only unhealthy
	// devices has no entry, as upstream.
	Allocatable map[string]int64
	// Deleted lists, sorted, the resources removed by this call because
	// their plugin's grace period expired or they lost their endpoint.
	Deleted []string
}

// CapacityView reports what GetCapacity would, without deleting anything:
// Deleted lists the resources GetCapacity would delete now.
func (m *Manager) CapacityView(now time.Time) Capacity {
	var c Capacity
	m.CapacityViewInto(&c, now)
	return c
}

// CapacityViewInto is CapacityView into c: it empties c's maps and fills
// them again, making them when c has none, and sets Deleted (nil when
// nothing would be deleted). A caller that reads the capacity after every
// step, as the properties do, spares the two maps and their growth.
func (m *Manager) CapacityViewInto(c *Capacity, now time.Time) {
	if c.Capacity == nil {
		c.Capacity = map[string]int64{}
	}
	if c.Allocatable == nil {
		c.Allocatable = map[string]int64{}
	}
	clear(c.Capacity)
	clear(c.Allocatable)
	c.Deleted = nil
	gone := func(r string) bool {
		e, ok := m.endpoints[r]
		return !ok || e.gracePeriodExpired(now)
	}
	for r, devs := range m.healthy {
		if gone(r) {
			c.Deleted = append(c.Deleted, r)
			continue
		}
		c.Capacity[r] = int64(len(devs))
		c.Allocatable[r] = int64(len(devs))
	}
	for r, devs := range m.unhealthy {
		if gone(r) {
			// A resource in both maps was listed by the healthy pass.
			if _, listed := m.healthy[r]; !listed {
				c.Deleted = append(c.Deleted, r)
			}
			continue
		}
		c.Capacity[r] += int64(len(devs))
	}
	sort.Strings(c.Deleted)
}

// GetCapacity reports capacity and allocatable and deletes resources whose
// plugin has been gone longer than the grace period, or that lost their
// endpoint (upstream GetCapacity). As in v1.35+ (#133724) the endpoint and
// both device maps are deleted after both passes, so no unhealthy entry is
// left behind.
func (m *Manager) GetCapacity(now time.Time) Capacity {
	c := m.CapacityView(now)
	for _, r := range c.Deleted {
		delete(m.endpoints, r)
		delete(m.healthy, r)
		delete(m.unhealthy, r)
	}
	if len(c.Deleted) > 0 {
		m.checkpointDue = true
	}
	return c
}

// CheckpointDue reports whether upstream would have written the checkpoint
// since the last call (after a snapshot, a deletion or an allocation), and
// clears the flag. The agent writes Checkpoint() when it is true.
func (m *Manager) CheckpointDue() bool {
	due := m.checkpointDue
	m.checkpointDue = false
	return due
}

// UpdateAllocatedDevices garbage-collects the devices of pods that are no
// longer active. As upstream, it does nothing until sources are ready, and it
// rebuilds the allocated cache only when it removed at least one pod.
func (m *Manager) UpdateAllocatedDevices(activePods []string) {
	if !m.sourcesReady {
		return
	}
	active := make(map[string]bool, len(activePods))
	for _, uid := range activePods {
		active[uid] = true
	}
	removed := false
	for uid := range m.pods {
		if !active[uid] {
			delete(m.pods, uid)
			removed = true
		}
	}
	if removed {
		m.rebuildAllocated()
	}
}

// rebuildAllocated sets the allocated cache to the committed devices plus
// the reservations of pending plans (upstream: podDevices.devices(); the
// pending part is empty there because upstream admits one pod at a time).
func (m *Manager) rebuildAllocated() {
	m.allocated = map[string]deviceSet{}
	for _, containers := range m.pods {
		for _, resources := range containers {
			for r, a := range resources {
				set := m.allocated[r]
				if set == nil {
					set = deviceSet{}
					m.allocated[r] = set
				}
				for id := range a.devices {
					set[id] = struct{}{}
				}
			}
		}
	}
	for _, p := range m.pending {
		for _, req := range p.Requests {
			set := m.allocated[req.Resource]
			if set == nil {
				set = deviceSet{}
				m.allocated[req.Resource] = set
			}
			for _, id := range req.DeviceIDs {
				set[id] = struct{}{}
			}
		}
	}
}
