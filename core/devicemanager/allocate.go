package devicemanager

import (
	"fmt"
	"slices"

	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/pod"
)

// PlanID identifies a pending allocation.
type PlanID uint64

// Preference is a plugin's answer to GetPreferredAllocation for one resource.
type Preference struct {
	DeviceIDs []string
	// Err is the RPC's error; upstream fails the allocation with it.
	Err error
}

// PlanInput is one container's allocation request.
type PlanInput struct {
	Pod       *pod.Pod
	Container string
	// ActivePods are the UIDs of the node's non-terminated pods, for the
	// garbage collection upstream runs before the first device resource.
	ActivePods []string
	// Preferred holds the plugins' preferred allocations by resource. It is
	// consulted only for plugins whose options advertise
	// GetPreferredAllocationAvailable; unknown or unavailable IDs in it are
	// ignored, as upstream intersects them with the free devices.
	Preferred map[string]Preference
}

// AllocateRequest is one Allocate RPC the caller must make.
type AllocateRequest struct {
	Resource string
	Endpoint EndpointID
	// DeviceIDs are in the order they were chosen.
	DeviceIDs []string
}

// Plan is a reservation of devices for one container, awaiting the
// plugins' Allocate answers.
type Plan struct {
	ID        PlanID
	PodUID    string
	Container string
	// Requests are the Allocate RPCs to make, one per resource that needs
	// devices, in resource name order. A plan may have none (nothing new
	// needed); it must still be committed so the reuse bookkeeping runs.
	Requests []AllocateRequest
	isInit   bool
	sidecar  bool
}

// isDevicePluginResource is upstream's test: the resource has healthy
// device state or allocated devices.
func (m *Manager) isDevicePluginResource(r string) bool {
	_, h := m.healthy[r]
	_, a := m.allocated[r]
	return h || a
}

// PlanContainer chooses devices for one container and reserves them
// (upstream Allocate up to the Allocate RPC). On error nothing stays
// reserved; the garbage collection and the reset of another pod's reusable
// devices that upstream does first have happened, as they do upstream.
func (m *Manager) PlanContainer(in PlanInput) (*Plan, error) {
	p := in.Pod
	if p == nil {
		return nil, newError(KindInvalidInput, "allocate: pod must not be nil")
	}
	c, ok := p.Container(in.Container)
	if !ok {
		return nil, newError(KindInvalidInput, "allocate: pod %q has no container %q", p.UID, in.Container)
	}
	if len(m.pending) >= m.limits.PendingPlans {
		return nil, newError(KindBoundExceeded, "allocate: %d allocations already pending", m.limits.PendingPlans)
	}
	if m.reusePod != p.UID {
		m.reusePod = p.UID
		m.reuse = map[string]deviceSet{}
	}
	isInit := p.IsInitContainer(c.Name)
	if _, held := m.pods[p.UID]; !held && len(m.pods) >= m.limits.Pods {
		return nil, newError(KindBoundExceeded, "allocate: %d pods already hold devices", m.limits.Pods)
	}

	plan := &Plan{PodUID: p.UID, Container: c.Name, isInit: isInit, sidecar: isInit && c.IsSidecar()}
	collected := false
	for _, name := range c.Limits.Names() {
		r := string(name)
		if !m.isDevicePluginResource(r) {
			continue
		}
		if !collected {
			m.UpdateAllocatedDevices(in.ActivePods)
			collected = true
		}
		ids, err := m.devicesToAllocate(p.UID, c.Name, r, int(c.Limits[name]), m.reuse[r], in.Preferred[r])
		if err != nil {
			m.release(plan)
			return nil, err
		}
		if len(ids) == 0 {
			continue
		}
		e, ok := m.endpoints[r]
		if !ok {
			// As upstream, the allocated cache is rebuilt from the committed
			// devices, which also drops this plan's reservations.
			m.rebuildAllocated()
			return nil, newError(KindUnknownPlugin, "unknown Device Plugin %s", r)
		}
		plan.Requests = append(plan.Requests, AllocateRequest{Resource: r, Endpoint: e.id, DeviceIDs: ids})
		if e.stopped() {
			// Upstream's Allocate RPC on a stopped endpoint fails, and the
			// failure resets the allocated cache.
			m.rebuildAllocated()
			return nil, newError(KindEndpointStopped, "endpoint %v has been stopped", e)
		}
	}
	m.nextPlan++
	plan.ID = m.nextPlan
	m.pending[plan.ID] = plan
	return plan, nil
}

// release takes a failed plan's new reservations out of the allocated cache.
// Devices the container reused, or any other pod holds, stay allocated.
func (m *Manager) release(plan *Plan) {
	for _, req := range plan.Requests {
		for _, id := range req.DeviceIDs {
			if !m.heldElsewhere(req.Resource, id, plan) {
				delete(m.allocated[req.Resource], id)
			}
		}
	}
}

func (m *Manager) heldElsewhere(r, id string, plan *Plan) bool {
	for _, containers := range m.pods {
		for _, resources := range containers {
			if a, ok := resources[r]; ok && a.devices.has(id) {
				return true
			}
		}
	}
	for _, other := range m.pending {
		if other == plan {
			continue
		}
		for _, req := range other.Requests {
			if req.Resource != r {
				continue
			}
			for _, held := range req.DeviceIDs {
				if held == id {
					return true
				}
			}
		}
	}
	return false
}

// containerDevices returns the devices a container holds of a resource, and
// nil when it has no record (upstream containerDevices).
func (m *Manager) containerDevices(uid, container, r string) deviceSet {
	if a, ok := m.pods[uid][container][r]; ok {
		return a.devices
	}
	return nil
}

// outlook is what an allocation of one resource to one container will find,
// computed without reserving anything: the reusable devices it takes, the
// free healthy devices left after them, and how many it still needs.
type outlook struct {
	// none: the container gets nothing new (it holds its devices, or the
	// kubelet restarted under it).
	none bool
	// choosing: the allocation got as far as choosing devices, where
	// upstream creates the resource's entry in the allocated cache; from
	// then on the resource counts as a device plugin resource even if the
	// choice fails and no device is allocated.
	choosing  bool
	reused    []string
	available []string
	needed    int
}

// allocationOutlook runs upstream's checks for one resource in upstream's
// order (spec §1.7) up to the plugin's preference, and says what the
// allocation will choose from. Its error is the allocation's.
func (m *Manager) allocationOutlook(uid, container, r string, required int, reusable deviceSet) (outlook, error) {
	held := m.containerDevices(uid, container, r)
	needed := required
	if held != nil {
		needed = required - len(held)
		if needed != 0 {
			return outlook{}, newError(KindRequestChanged, "pod %q container %q changed request for resource %q from %d to %d", uid, container, r, len(held), required)
		}
	}
	if !m.sourcesReady && m.runningAtStart[containerKey{uid, container}] {
		// The kubelet restarted under a running container: its devices are
		// in the checkpoint already (PR #118635).
		return outlook{none: true}, nil
	}
	healthy, registered := m.healthy[r]
	if !registered {
		return outlook{}, newError(KindUnregistered, "cannot allocate unregistered device %s", r)
	}
	if len(healthy) == 0 {
		return outlook{}, newError(KindNoHealthy, "no healthy devices present; cannot allocate unhealthy devices %s", r)
	}
	if !healthy.containsAll(held) {
		return outlook{}, newError(KindPreviouslyAllocatedUnhealthy, "previously allocated devices are no longer healthy; cannot allocate unhealthy devices %s", r)
	}
	if needed == 0 {
		return outlook{none: true}, nil
	}
	o := outlook{needed: needed, choosing: true}
	for _, id := range reusable.sorted() {
		if o.needed == 0 {
			return o, nil
		}
		o.reused = append(o.reused, id)
		o.needed--
	}
	if o.needed == 0 {
		return o, nil
	}
	for _, id := range healthy.sorted() {
		if !m.allocated[r].has(id) && !slices.Contains(o.reused, id) {
			o.available = append(o.available, id)
		}
	}
	if len(o.available) < o.needed {
		return outlook{choosing: true}, newError(KindUnavailable, "requested number of devices unavailable for %s. Requested: %d, Available: %d", r, o.needed, len(o.available))
	}
	return o, nil
}

// devicesToAllocate reserves devices for one resource: the reusable ones
// first, then the plugin's preferred ones, then the lowest IDs.
func (m *Manager) devicesToAllocate(uid, container, r string, required int, reusable deviceSet, pref Preference) ([]string, error) {
	o, err := m.allocationOutlook(uid, container, r, required, reusable)
	if o.choosing && m.allocated[r] == nil {
		m.allocated[r] = deviceSet{}
	}
	if err != nil || o.none {
		return nil, err
	}
	allocated := m.allocated[r]
	chosen := make([]string, 0, required)
	for _, id := range o.reused {
		allocated[id] = struct{}{}
		chosen = append(chosen, id)
	}
	if o.needed == 0 {
		return chosen, nil
	}
	needed := o.needed
	picked := deviceSet{}
	take := func(id string) bool {
		if picked.has(id) {
			return false
		}
		allocated[id] = struct{}{}
		picked[id] = struct{}{}
		chosen = append(chosen, id)
		needed--
		return needed == 0
	}
	// Upstream asks for the plugin's preference on every allocation that
	// reusable devices did not satisfy; a missing endpoint fails here, and a
	// stopped one fails the RPC.
	e, ok := m.endpoints[r]
	if !ok {
		return nil, newError(KindEndpointNotFound, "endpoint not found in cache for a registered resource: %s", r)
	}
	if e.options.GetPreferredAllocationAvailable {
		cause := pref.Err
		if e.stopped() {
			cause = fmt.Errorf("endpoint %v has been stopped", e)
		}
		if cause != nil {
			return nil, &Error{Kind: KindPreferredAllocationFailed, msg: "device plugin GetPreferredAllocation rpc failed with err: " + cause.Error(), cause: cause}
		}
		free := newDeviceSet(o.available...)
		for _, id := range pref.DeviceIDs {
			if free.has(id) && take(id) {
				return chosen, nil
			}
		}
	}
	for _, id := range o.available {
		if take(id) {
			return chosen, nil
		}
	}
	// Unreachable: len(o.available) >= needed and every available ID is free.
	return chosen, nil
}

// Abort releases a plan whose Allocate RPC failed; cause is the plugin's
// error. As upstream, the allocated cache is rebuilt from the committed
// devices. The returned error is what the admission fails with.
func (m *Manager) Abort(id PlanID, cause error) error {
	if _, ok := m.pending[id]; !ok {
		return newError(KindInvalidInput, "allocate: plan %d is not pending", id)
	}
	delete(m.pending, id)
	m.rebuildAllocated()
	msg := "<nil>"
	if cause != nil {
		msg = cause.Error()
	}
	return &Error{Kind: KindAllocateFailed, msg: msg, cause: cause}
}

// Commit records the plugins' Allocate answers, one per plan request in the
// same order, each the response's ContainerResponses list. Upstream uses the
// first container response and ignores the rest. An answer with no
// container response fails the whole plan and releases its devices.
func (m *Manager) Commit(id PlanID, answers [][]allocresp.ContainerAllocateResponse) error {
	plan, ok := m.pending[id]
	if !ok {
		return newError(KindInvalidInput, "allocate: plan %d is not pending", id)
	}
	if len(answers) != len(plan.Requests) {
		delete(m.pending, id)
		m.rebuildAllocated()
		return newError(KindInvalidInput, "allocate: plan %d has %d requests but %d answers were given", id, len(plan.Requests), len(answers))
	}
	for _, a := range answers {
		if len(a) == 0 {
			delete(m.pending, id)
			m.rebuildAllocated()
			// Upstream formats the AllocateResponse message; v1.36's
			// generated String() prints one without container responses
			// as an empty string.
			return newError(KindNoContainerResponses, "no containers return in allocation response ")
		}
	}
	delete(m.pending, id)
	for i, req := range plan.Requests {
		m.insert(plan.PodUID, plan.Container, req.Resource, req.DeviceIDs, answers[i][0])
	}
	m.updateReuse(plan)
	if len(plan.Requests) > 0 {
		m.checkpointDue = true
	}
	return nil
}

// insert records a container's devices of one resource, grouped by the NUMA
// nodes the devices report now.
func (m *Manager) insert(uid, container, r string, ids []string, resp allocresp.ContainerAllocateResponse) {
	a := &allocation{byNUMA: map[int64][]string{}, devices: newDeviceSet(ids...), response: resp, responseBytes: allocresp.Marshal(resp)}
	for _, id := range ids {
		nodes := m.allDevices[r][id].NUMANodes
		if len(nodes) == 0 {
			a.byNUMA[NodeWithoutTopology] = append(a.byNUMA[NodeWithoutTopology], id)
			continue
		}
		for _, n := range nodes {
			a.byNUMA[n] = append(a.byNUMA[n], id)
		}
	}
	if m.pods[uid] == nil {
		m.pods[uid] = map[string]map[string]*allocation{}
	}
	if m.pods[uid][container] == nil {
		m.pods[uid][container] = map[string]*allocation{}
	}
	m.pods[uid][container][r] = a
	if m.allocated[r] == nil {
		m.allocated[r] = deviceSet{}
	}
	for _, id := range ids {
		m.allocated[r][id] = struct{}{}
	}
}

// updateReuse is upstream's bookkeeping after each container: a regular init
// container's devices become reusable by the containers after it; a sidecar's
// or an app container's devices are never shared (PR #120461, #56022).
func (m *Manager) updateReuse(plan *Plan) {
	if m.reusePod != plan.PodUID {
		m.reusePod = plan.PodUID
		m.reuse = map[string]deviceSet{}
	}
	for r, a := range m.pods[plan.PodUID][plan.Container] {
		if plan.isInit && !plan.sidecar {
			if m.reuse[r] == nil {
				m.reuse[r] = deviceSet{}
			}
			for id := range a.devices {
				m.reuse[r][id] = struct{}{}
			}
			continue
		}
		for id := range a.devices {
			delete(m.reuse[r], id)
		}
	}
}

// PreferredRequest is one GetPreferredAllocation RPC the caller should make
// before PlanContainer, with upstream's arguments.
type PreferredRequest struct {
	Resource string
	Endpoint EndpointID
	// Available are the free healthy devices plus MustInclude.
	Available []string
	// MustInclude are the reusable devices already chosen.
	MustInclude []string
	// Size is the container's total request for the resource.
	Size int
}

// PreferredAllocationRequests lists the GetPreferredAllocation RPCs that
// the allocation of a container will make, in the order PlanContainer visits
// the resources: upstream asks a plugin only when the allocation gets that
// far (the resource is registered, has healthy devices, reusable devices do
// not cover the request, and enough devices are free), so the list ends at
// the first resource whose allocation will fail. Like PlanContainer, it
// first frees the devices of pods that are no longer active, so that it
// sees the free devices upstream's checks see.
func (m *Manager) PreferredAllocationRequests(p *pod.Pod, container string, activePods []string) []PreferredRequest {
	c, ok := p.Container(container)
	if !ok {
		return nil
	}
	reuse := m.reuse
	if m.reusePod != p.UID {
		reuse = nil
	}
	var out []PreferredRequest
	collected := false
	for _, name := range c.Limits.Names() {
		r := string(name)
		if !m.isDevicePluginResource(r) {
			continue
		}
		if !collected {
			m.UpdateAllocatedDevices(activePods)
			collected = true
		}
		required := int(c.Limits[name])
		o, err := m.allocationOutlook(p.UID, container, r, required, reuse[r])
		if err != nil {
			return out
		}
		if o.none || o.needed == 0 {
			continue
		}
		e, ok := m.endpoints[r]
		if !ok || e.stopped() {
			// The allocation fails here: the endpoint is missing, or the
			// RPC to a stopped one fails.
			return out
		}
		if !e.options.GetPreferredAllocationAvailable {
			continue
		}
		out = append(out, PreferredRequest{Resource: r, Endpoint: e.id, Available: slices.Concat(o.reused, o.available), MustInclude: o.reused, Size: required})
	}
	return out
}
