package devicemanager

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
)

// Checkpoint returns the state upstream writes to kubelet_internal_checkpoint:
// every container's devices with its Allocate answer, and the healthy
// devices of each resource (unhealthy ones are not saved). Entries are in
// pod, container, resource order and ID lists sorted, where upstream uses
// map order; the checksum covers whatever order is written.
func (m *Manager) Checkpoint() checkpoint.Data {
	// The agent asks for this after every change and the properties after
	// every step, so the copies share two backing arrays (the ID lists' a
	// few when it grows), one for the ID lists and one for the answers,
	// each slice capped at its own end so that appending to one cannot
	// write into the next.
	var d checkpoint.Data
	held := m.allocationsInOrder()
	// The pool's size is a hint, taken from the sets' sizes without
	// iterating them: a device on two NUMA nodes is listed twice, and then
	// the pool grows (carved lists keep the array they were carved from).
	ids, respBytes := 0, 0
	for _, h := range held {
		respBytes += len(h.a.responseBytes)
		ids += len(h.a.devices)
	}
	for _, set := range m.healthy {
		ids += len(set)
	}
	idPool := make([]string, 0, ids)
	respPool := make([]byte, 0, respBytes)
	if len(held) > 0 {
		d.PodDeviceEntries = make([]checkpoint.PodDevicesEntry, 0, len(held))
	}
	for _, h := range held {
		byNUMA := make(checkpoint.DevicesPerNUMA, len(h.a.byNUMA))
		for n, list := range h.a.byNUMA {
			byNUMA[n], idPool = carve(idPool, list)
		}
		// AllocResp is never nil: the file spells an empty answer "".
		start := len(respPool)
		respPool = append(respPool, h.a.responseBytes...)
		d.PodDeviceEntries = append(d.PodDeviceEntries, checkpoint.PodDevicesEntry{
			PodUID: h.podUID, ContainerName: h.container, ResourceName: h.resource,
			DeviceIDs: byNUMA, AllocResp: respPool[start:len(respPool):len(respPool)],
		})
	}
	d.RegisteredDevices = make(map[string][]string, len(m.healthy))
	for r, set := range m.healthy {
		start := len(idPool)
		for id := range set {
			idPool = append(idPool, id)
		}
		sorted := idPool[start:len(idPool):len(idPool)]
		sort.Strings(sorted)
		d.RegisteredDevices[r] = sorted
	}
	return d
}

// carve copies list to the end of pool and returns the copy, capped at its
// length, and the grown pool. An empty list becomes nil, as
// append([]string(nil), list...) makes it: the file tells null from [].
func carve(pool, list []string) ([]string, []string) {
	if len(list) == 0 {
		return nil, pool
	}
	start := len(pool)
	pool = append(pool, list...)
	return pool[start:len(pool):len(pool)], pool
}

// ContainerRef names a container the runtime reported at kubelet start.
type ContainerRef struct {
	PodUID    string
	Container string
	Running   bool
}

// RestoreReport says what Restore could not take from the checkpoint.
type RestoreReport struct {
	// Skipped lists entries whose Allocate answer did not decode; upstream
	// logs and skips them too.
	Skipped []string
}

// Restore loads a checkpoint into a new manager, as upstream's Start does
// after a kubelet restart: the recorded allocations come back, and every
// registered resource gets a stopped endpoint with no devices, so capacity
// and allocatable are 0 until its plugin registers again or the grace
// period deletes it. containers are what the runtime reports; a running
// container keeps its devices without a new allocation until sources are
// ready (PR #118635).
func (m *Manager) Restore(d checkpoint.Data, now time.Time, containers []ContainerRef) (RestoreReport, error) {
	var report RestoreReport
	if len(m.endpoints) != 0 || len(m.pods) != 0 || len(m.healthy) != 0 {
		return report, newError(KindInvalidInput, "restore: the manager already has state; restore into a new manager")
	}
	if len(d.RegisteredDevices) > m.limits.Resources {
		return report, newError(KindBoundExceeded, "restore: RegisteredDevices: %d resources exceed the bound of %d", len(d.RegisteredDevices), m.limits.Resources)
	}
	pods := map[string]map[string]map[string]*allocation{}
	for i, e := range d.PodDeviceEntries {
		if err := m.checkEntry(i, e); err != nil {
			return report, err
		}
		resp, err := allocresp.Unmarshal(e.AllocResp)
		if err != nil {
			report.Skipped = append(report.Skipped, "PodDeviceEntries["+itoa(i)+"]: "+err.Error())
			continue
		}
		if pods[e.PodUID] == nil {
			if len(pods) >= m.limits.Pods {
				return report, newError(KindBoundExceeded, "restore: PodDeviceEntries: more than %d pods", m.limits.Pods)
			}
			pods[e.PodUID] = map[string]map[string]*allocation{}
		}
		if pods[e.PodUID][e.ContainerName] == nil {
			pods[e.PodUID][e.ContainerName] = map[string]*allocation{}
		}
		a := &allocation{byNUMA: map[int64][]string{}, devices: deviceSet{}, response: resp, responseBytes: append([]byte{}, e.AllocResp...)}
		for n, ids := range e.DeviceIDs {
			a.byNUMA[n] = append([]string(nil), ids...)
			for _, id := range ids {
				a.devices[id] = struct{}{}
			}
		}
		// A later entry for the same container and resource replaces an
		// earlier one, as upstream's insert does.
		pods[e.PodUID][e.ContainerName][e.ResourceName] = a
	}
	m.pods = pods
	m.rebuildAllocated()
	for r := range d.RegisteredDevices {
		m.healthy[r] = deviceSet{}
		m.unhealthy[r] = deviceSet{}
		m.endpoints[r] = &endpoint{resource: r, stopTime: now}
	}
	for _, c := range containers {
		if c.Running {
			m.runningAtStart[containerKey{c.PodUID, c.Container}] = true
		}
	}
	return report, nil
}

func (m *Manager) checkEntry(i int, e checkpoint.PodDevicesEntry) error {
	field := func(name string) string { return "restore: PodDeviceEntries[" + itoa(i) + "]." + name }
	for _, f := range []struct{ name, value string }{{"PodUID", e.PodUID}, {"ContainerName", e.ContainerName}, {"ResourceName", e.ResourceName}} {
		if f.value == "" {
			return newError(KindInvalidInput, "%s: must not be empty", field(f.name))
		}
		if len(f.value) > m.limits.NameLength {
			return newError(KindInvalidInput, "%s: longer than %d bytes", field(f.name), m.limits.NameLength)
		}
	}
	total := 0
	for _, ids := range e.DeviceIDs {
		total += len(ids)
	}
	if total > m.limits.DevicesPerResource {
		return newError(KindBoundExceeded, "%s: %d devices exceed the bound of %d", field("DeviceIDs"), total, m.limits.DevicesPerResource)
	}
	return nil
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}

// ContainerDevices returns, by resource, the sorted devices a container holds.
func (m *Manager) ContainerDevices(podUID, container string) map[string][]string {
	out := map[string][]string{}
	for r, a := range m.pods[podUID][container] {
		out[r] = a.devices.sorted()
	}
	return out
}

// Holding is one container's devices of one resource.
type Holding struct {
	PodUID, Container, Resource string
	DeviceIDs                   []string
}

// Holdings lists every recorded allocation in pod, container, resource order.
// The device lists share one backing array, each capped at its own end.
func (m *Manager) Holdings() []Holding {
	held := m.allocationsInOrder()
	if len(held) == 0 {
		return nil
	}
	ids := 0
	for _, h := range held {
		ids += len(h.a.devices)
	}
	idPool := make([]string, 0, ids)
	out := make([]Holding, len(held))
	for i, h := range held {
		start := len(idPool)
		for id := range h.a.devices {
			idPool = append(idPool, id)
		}
		sorted := idPool[start:len(idPool):len(idPool)]
		sort.Strings(sorted)
		out[i] = Holding{h.podUID, h.container, h.resource, sorted}
	}
	return out
}

// heldAllocation is one container's allocation of one resource, with the
// keys it is recorded under.
type heldAllocation struct {
	podUID, container, resource string
	a                           *allocation
}

// allocationsInOrder lists every recorded allocation in pod, container,
// resource order: one list sorted once, where sorting the keys of each map
// level would allocate a list per pod and per container. The keys are
// unique, so the order does not depend on the maps' iteration order.
func (m *Manager) allocationsInOrder() []heldAllocation {
	// One walk over the maps, into a list sized for two allocations a pod
	// (iterating a map costs more than growing the list now and then).
	out := make([]heldAllocation, 0, 2*len(m.pods))
	for uid, containers := range m.pods {
		for c, resources := range containers {
			for r, a := range resources {
				out = append(out, heldAllocation{uid, c, r, a})
			}
		}
	}
	slices.SortFunc(out, func(x, y heldAllocation) int {
		return cmp.Or(strings.Compare(x.podUID, y.podUID), strings.Compare(x.container, y.container), strings.Compare(x.resource, y.resource))
	})
	return out
}

// Allocated returns, by resource, the sorted allocated cache.
func (m *Manager) Allocated() map[string][]string {
	out := map[string][]string{}
	for r, set := range m.allocated {
		out[r] = set.sorted()
	}
	return out
}

// HealthyDevices returns, by resource, the sorted healthy devices.
func (m *Manager) HealthyDevices() map[string][]string {
	out := map[string][]string{}
	for r, set := range m.healthy {
		out[r] = set.sorted()
	}
	return out
}

// PendingPlans returns the IDs of plans awaiting Commit or Abort, ascending.
func (m *Manager) PendingPlans() []PlanID {
	ids := make([]PlanID, 0, len(m.pending))
	for id := range m.pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
