package devicemanager

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// GracePeriod is how long a stopped plugin's resource is kept.
const GracePeriod = 5 * time.Minute

// Device is one device of a snapshot.
type Device struct {
	ID      string
	Healthy bool
}

// Options are the plugin options the model cares about.
type Options struct{ Preferred, PreStart bool }

type endpoint struct {
	conn    int // 0 for an endpoint restored from a checkpoint
	opts    Options
	stopped bool
	stopAt  time.Time
}

// resource mirrors upstream's per-resource entries. hasHealthy and
// hasUnhealthy matter on their own: upstream's maps can hold an empty set,
// and an entry, even empty, shows up in capacity.
type resource struct {
	name         string
	ep           *endpoint
	hasHealthy   bool
	hasUnhealthy bool
	healthy      []string
	unhealthy    []string
}

// Holding is one container's devices of one resource.
type Holding struct {
	Pod, Container, Resource string
	Devices                  []string
}

// Request is one resource's devices in a plan.
type Request struct {
	Resource string
	Devices  []string
}

// Plan is a pending allocation.
type Plan struct {
	ID             int
	Pod, Container string
	RegularInit    bool
	Requests       []Request
}

// Container describes the container being allocated: its limits, one per
// resource (non-device resources included), and its kind. A list, not maps:
// the properties build one for every container they admit, and a small Go
// map costs two allocations.
type Container struct {
	Name    string
	Limits  []Limit
	Init    bool
	Sidecar bool
}

// Limit is a container's limit of one resource, with the plugin's answer to
// GetPreferredAllocation for it: the devices it prefers, or whether the RPC
// failed.
type Limit struct {
	Resource     string
	Count        int64
	Preferred    []string
	PreferredErr bool
}

// limitsByName returns c's limits in resource name order, the order
// upstream's allocation visits them in (sorted here, where upstream ranges
// over a map).
func limitsByName(c Container) []Limit {
	byName := func(a, b Limit) int { return strings.Compare(a.Resource, b.Resource) }
	if slices.IsSortedFunc(c.Limits, byName) {
		return c.Limits
	}
	return slices.SortedFunc(slices.Values(c.Limits), byName)
}

// Failure is an allocation error: its kind (the core's Kind names) and text.
type Failure struct{ Kind, Message string }

// Model is the reference state.
type Model struct {
	resources []*resource
	holdings  []Holding
	plans     []Plan
	nextPlan  int
	nextConn  int
	// cacheKeys are the resources that have an entry in upstream's
	// allocatedDevices map; an entry makes a resource count as a device
	// plugin resource even after its plugin is gone.
	cacheKeys      map[string]bool
	reusePod       string
	reuse          map[string][]string
	sourcesReady   bool
	runningAtStart map[[2]string]bool
}

// New returns an empty model.
func New() *Model {
	return &Model{cacheKeys: map[string]bool{}, reuse: map[string][]string{}, runningAtStart: map[[2]string]bool{}}
}

func (m *Model) find(name string) *resource {
	for _, r := range m.resources {
		if r.name == name {
			return r
		}
	}
	return nil
}

func (m *Model) findOrAdd(name string) *resource {
	if r := m.find(name); r != nil {
		return r
	}
	r := &resource{name: name}
	m.resources = append(m.resources, r)
	return r
}

// Register connects a plugin and returns its connection number.
func (m *Model) Register(name string, opts Options) int {
	m.nextConn++
	m.findOrAdd(name).ep = &endpoint{conn: m.nextConn, opts: opts}
	return m.nextConn
}

// Update replaces a resource's devices.
func (m *Model) Update(name string, devices []Device) {
	r := m.findOrAdd(name)
	r.hasHealthy, r.hasUnhealthy = true, true
	r.healthy, r.unhealthy = nil, nil
	for _, d := range devices {
		if d.Healthy {
			r.healthy = append(r.healthy, d.ID)
		} else {
			r.unhealthy = append(r.unhealthy, d.ID)
		}
	}
	sort.Strings(r.healthy)
	sort.Strings(r.unhealthy)
}

// Disconnect ends connection conn; only the current connection counts.
func (m *Model) Disconnect(name string, conn int, now time.Time) {
	r := m.find(name)
	if r == nil || r.ep == nil || r.ep.conn != conn || r.ep.stopped {
		return
	}
	r.ep.stopped, r.ep.stopAt = true, now
	r.hasUnhealthy = true
	if r.hasHealthy {
		r.unhealthy = sortedUnion(r.unhealthy, r.healthy)
		r.healthy = nil
	}
}

// Count is one resource's line of the node status: its capacity, and its
// allocatable when it has a healthy entry (without one, the resource has a
// capacity and no allocatable at all).
type Count struct {
	Resource       string
	Capacity       int64
	HasAllocatable bool
	Allocatable    int64
}

// CapacityView reports capacity and allocatable, one Count for each
// resource with device entries, and the resources a capacity read would
// delete now, without deleting them. It is a list, not maps, because the
// properties read it after every step.
func (m *Model) CapacityView(now time.Time) (counts []Count, deleted []string) {
	for _, r := range m.resources {
		if m.gone(r, now) {
			deleted = append(deleted, r.name)
			continue
		}
		if !r.hasHealthy && !r.hasUnhealthy {
			continue
		}
		c := Count{Resource: r.name}
		if r.hasHealthy {
			c.Capacity, c.HasAllocatable, c.Allocatable = int64(len(r.healthy)), true, int64(len(r.healthy))
		}
		if r.hasUnhealthy {
			c.Capacity += int64(len(r.unhealthy))
		}
		counts = append(counts, c)
	}
	sort.Strings(deleted)
	return counts, deleted
}

// gone: the resource has device entries but no endpoint, or its plugin
// stopped more than the grace period ago.
func (m *Model) gone(r *resource, now time.Time) bool {
	expired := r.ep == nil || (r.ep.stopped && now.Sub(r.ep.stopAt) > GracePeriod)
	return expired && (r.hasHealthy || r.hasUnhealthy)
}

// Capacity is a capacity read: CapacityView, then the deletions.
func (m *Model) Capacity(now time.Time) (counts []Count, deleted []string) {
	counts, deleted = m.CapacityView(now)
	var kept []*resource
	for _, r := range m.resources {
		if !m.gone(r, now) {
			kept = append(kept, r)
		}
	}
	m.resources = kept
	return counts, deleted
}

// SourcesReady marks all pod sources seen.
func (m *Model) SourcesReady() { m.sourcesReady = true }

// GC drops the holdings of inactive pods once sources are ready.
func (m *Model) GC(active []string) {
	if !m.sourcesReady {
		return
	}
	var kept []Holding
	removed := false
	for _, h := range m.holdings {
		if contains(active, h.Pod) {
			kept = append(kept, h)
		} else {
			removed = true
		}
	}
	m.holdings = kept
	if removed {
		m.resetCacheKeys()
	}
}

// resetCacheKeys is upstream rebuilding allocatedDevices from podDevices.
func (m *Model) resetCacheKeys() {
	m.cacheKeys = map[string]bool{}
	for _, h := range m.holdings {
		m.cacheKeys[h.Resource] = true
	}
	for _, p := range m.plans {
		for _, q := range p.Requests {
			m.cacheKeys[q.Resource] = true
		}
	}
}

// taken is every device some container holds or a pending plan reserves.
func (m *Model) taken(resource string) []string {
	var ids []string
	for _, h := range m.holdings {
		if h.Resource == resource {
			ids = append(ids, h.Devices...)
		}
	}
	for _, p := range m.plans {
		for _, q := range p.Requests {
			if q.Resource == resource {
				ids = append(ids, q.Devices...)
			}
		}
	}
	return ids
}

func (m *Model) holding(pod, container, resource string) *Holding {
	for i := range m.holdings {
		h := &m.holdings[i]
		if h.Pod == pod && h.Container == container && h.Resource == resource {
			return h
		}
	}
	return nil
}

// Plan chooses devices for one container of pod.
func (m *Model) Plan(pod string, c Container, active []string) (Plan, *Failure) {
	if m.reusePod != pod {
		m.reusePod, m.reuse = pod, map[string][]string{}
	}
	plan := Plan{Pod: pod, Container: c.Name, RegularInit: c.Init && !c.Sidecar}
	collected := false
	for _, limit := range limitsByName(c) {
		name := limit.Resource
		r := m.find(name)
		isDevice := (r != nil && r.hasHealthy) || m.cacheKeys[name]
		if !isDevice {
			continue
		}
		if !collected {
			m.GC(active)
			collected = true
		}
		ids, f := m.choose(pod, c.Name, limit, plan)
		if f != nil {
			return Plan{}, f
		}
		if len(ids) == 0 {
			continue
		}
		plan.Requests = append(plan.Requests, Request{Resource: name, Devices: ids})
		if r == nil || r.ep == nil {
			m.resetCacheKeys()
			return Plan{}, &Failure{"UnknownPlugin", "unknown Device Plugin " + name}
		}
		if r.ep.stopped {
			m.resetCacheKeys()
			return Plan{}, &Failure{"EndpointStopped", ""}
		}
	}
	m.nextPlan++
	plan.ID = m.nextPlan
	m.plans = append(m.plans, plan)
	return plan, nil
}

func (m *Model) choose(pod, container string, limit Limit, plan Plan) ([]string, *Failure) {
	name, required := limit.Resource, int(limit.Count)
	held := m.holding(pod, container, name)
	needed := required
	if held != nil {
		needed = required - len(held.Devices)
		if needed != 0 {
			return nil, &Failure{"RequestChanged", fmt.Sprintf("pod %q container %q changed request for resource %q from %d to %d", pod, container, name, len(held.Devices), required)}
		}
	}
	if !m.sourcesReady && m.runningAtStart[[2]string{pod, container}] {
		return nil, nil
	}
	r := m.find(name)
	if r == nil || !r.hasHealthy {
		return nil, &Failure{"Unregistered", "cannot allocate unregistered device " + name}
	}
	if len(r.healthy) == 0 {
		return nil, &Failure{"NoHealthy", "no healthy devices present; cannot allocate unhealthy devices " + name}
	}
	if held != nil {
		for _, id := range held.Devices {
			if !contains(r.healthy, id) {
				return nil, &Failure{"PreviouslyAllocatedUnhealthy", "previously allocated devices are no longer healthy; cannot allocate unhealthy devices " + name}
			}
		}
	}
	if needed == 0 {
		return nil, nil
	}
	m.cacheKeys[name] = true
	var chosen []string
	reusable := append([]string(nil), m.reuse[name]...)
	sort.Strings(reusable)
	for _, id := range reusable {
		if len(chosen) < needed && !contains(chosen, id) {
			chosen = append(chosen, id)
		}
	}
	if len(chosen) == needed {
		return chosen, nil
	}
	taken := append(m.taken(name), chosen...)
	for _, q := range plan.Requests {
		if q.Resource == name {
			taken = append(taken, q.Devices...)
		}
	}
	var free []string
	for _, id := range r.healthy {
		if !contains(taken, id) {
			free = append(free, id)
		}
	}
	stillNeeded := needed - len(chosen)
	if len(free) < stillNeeded {
		return nil, &Failure{"Unavailable", fmt.Sprintf("requested number of devices unavailable for %s. Requested: %d, Available: %d", name, stillNeeded, len(free))}
	}
	if r.ep == nil {
		return nil, &Failure{"EndpointNotFound", "endpoint not found in cache for a registered resource: " + name}
	}
	if r.ep.opts.Preferred {
		if r.ep.stopped || limit.PreferredErr {
			return nil, &Failure{"PreferredAllocationFailed", ""}
		}
		for _, id := range limit.Preferred {
			if len(chosen) < needed && contains(free, id) && !contains(chosen, id) {
				chosen = append(chosen, id)
			}
		}
	}
	for _, id := range free {
		if len(chosen) < needed && !contains(chosen, id) {
			chosen = append(chosen, id)
		}
	}
	return chosen, nil
}

func (m *Model) takePlan(id int) (Plan, bool) {
	for i, p := range m.plans {
		if p.ID == id {
			m.plans = append(m.plans[:i:i], m.plans[i+1:]...)
			return p, true
		}
	}
	return Plan{}, false
}

// Commit records a plan's devices.
func (m *Model) Commit(id int) {
	p, ok := m.takePlan(id)
	if !ok {
		return
	}
	for _, q := range p.Requests {
		if h := m.holding(p.Pod, p.Container, q.Resource); h != nil {
			h.Devices = sortedCopy(q.Devices)
		} else {
			m.holdings = append(m.holdings, Holding{p.Pod, p.Container, q.Resource, sortedCopy(q.Devices)})
		}
	}
	if m.reusePod != p.Pod {
		m.reusePod, m.reuse = p.Pod, map[string][]string{}
	}
	for _, h := range m.holdings {
		if h.Pod != p.Pod || h.Container != p.Container {
			continue
		}
		if p.RegularInit {
			m.reuse[h.Resource] = sortedUnion(m.reuse[h.Resource], h.Devices)
		} else {
			m.reuse[h.Resource] = without(m.reuse[h.Resource], h.Devices)
		}
	}
}

// Abort drops a plan; upstream rebuilds its allocated cache.
func (m *Model) Abort(id int) {
	if _, ok := m.takePlan(id); ok {
		m.resetCacheKeys()
	}
}

// Holdings returns every holding sorted by pod, container, resource.
func (m *Model) Holdings() []Holding {
	out := append([]Holding(nil), m.holdings...)
	slices.SortFunc(out, func(a, b Holding) int {
		if a.Pod != b.Pod {
			return strings.Compare(a.Pod, b.Pod)
		}
		if a.Container != b.Container {
			return strings.Compare(a.Container, b.Container)
		}
		return strings.Compare(a.Resource, b.Resource)
	})
	return out
}

// Registration is a resource a checkpoint lists, with its healthy devices.
type Registration struct {
	Resource string
	Devices  []string
}

// Registered returns the resources a checkpoint lists, with their healthy
// devices, one Registration per resource. The device lists are the model's
// own, for reading: the properties call this after every step, and the
// model replaces a list whole instead of changing it.
func (m *Model) Registered() []Registration {
	var out []Registration
	for _, r := range m.resources {
		if r.hasHealthy {
			out = append(out, Registration{r.name, r.healthy})
		}
	}
	return out
}

// Restart is a kubelet restart: pending plans are lost, holdings survive,
// every resource the checkpoint lists comes back with a stopped endpoint
// and no devices, and running containers keep their devices until sources
// are ready.
func (m *Model) Restart(now time.Time, running [][2]string) {
	var resources []*resource
	for _, r := range m.resources {
		if r.hasHealthy {
			resources = append(resources, &resource{name: r.name, ep: &endpoint{stopped: true, stopAt: now}, hasHealthy: true, hasUnhealthy: true})
		}
	}
	m.resources = resources
	m.plans = nil
	m.reusePod, m.reuse = "", map[string][]string{}
	m.sourcesReady = false
	m.runningAtStart = map[[2]string]bool{}
	for _, c := range running {
		m.runningAtStart[c] = true
	}
	m.cacheKeys = map[string]bool{}
	for _, h := range m.holdings {
		m.cacheKeys[h.Resource] = true
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedCopy(ids []string) []string {
	out := append([]string(nil), ids...)
	sort.Strings(out)
	return out
}

func sortedUnion(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, id := range b {
		if !contains(out, id) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

func without(a, b []string) []string {
	var out []string
	for _, id := range a {
		if !contains(b, id) {
			out = append(out, id)
		}
	}
	return out
}

// PreStartCall is one PreStartContainer RPC.
type PreStartCall struct {
	Resource string
	Devices  []string
}

// PreStart lists the PreStartContainer RPCs before a container starts, and
// whether an active pod's container must be allocated again because it has
// a device resource but no devices recorded.
func (m *Model) PreStart(pod string, c Container, active bool) ([]PreStartCall, bool, *Failure) {
	var calls []PreStartCall
	reallocate := false
	for _, limit := range limitsByName(c) {
		name := limit.Resource
		r := m.find(name)
		isDevice := (r != nil && r.hasHealthy) || m.cacheKeys[name]
		if !isDevice || limit.Count == 0 {
			continue
		}
		held := m.holding(pod, c.Name, name)
		if r == nil || r.ep == nil {
			return nil, false, &Failure{"EndpointNotFound", "endpoint not found in cache for a registered resource: " + name}
		}
		if r.ep.opts.PreStart {
			if held == nil {
				return nil, false, &Failure{"PreStartNoDevices", fmt.Sprintf("no devices found allocated in local cache for pod %s, container %s, resource %s", pod, c.Name, name)}
			}
			calls = append(calls, PreStartCall{name, sortedCopy(held.Devices)})
		}
		if active && held == nil {
			reallocate = true
		}
	}
	return calls, reallocate, nil
}
