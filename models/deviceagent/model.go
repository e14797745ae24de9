package deviceagent

import (
	"slices"
	"strings"
)

// Op names an operation.
type Op string

// The operations.
const (
	// Update replaces a resource's devices (a plugin's ListAndWatch snapshot).
	Update Op = "Update"
	// Crash is a plugin's stream ending: every device becomes unhealthy.
	Crash Op = "Crash"
	// Reregister is a plugin registering again: a new connection, the same
	// devices, nothing a client can see.
	Reregister Op = "Reregister"
	// Admit allocates a pod's one container, all requested resources or none.
	Admit Op = "Admit"
	// Reserve and Release are the two halves of an admission whose Allocate
	// RPC failed: the plan reserves devices, which other admissions see,
	// until the failure releases them. See Split.
	Reserve Op = "Reserve"
	Release Op = "Release"
	// Remove ends a pod. The agent frees its devices lazily, but every
	// admission collects garbage before it chooses, so to a client the
	// devices are free at once.
	Remove Op = "Remove"
	// Capacity reads capacity and allocatable of Input.Resources.
	Capacity Op = "Capacity"
	// Register is a plugin of a new resource registering with
	// Input.Endpoint. The model answers only for endpoints the agent must
	// refuse (docs/deviations.md A1: a socket name directly in the device
	// plugin directory, not the kubelet's own): ErrRefused, and nothing
	// changes. A registration it accepts starts a plugin the history would
	// then have to model; the workloads register new resources only with
	// endpoints the agent refuses.
	Register Op = "Register"
)

// Device is one device of a snapshot.
type Device struct {
	ID      string
	Healthy bool
}

// Want is a number of devices of one resource.
type Want struct {
	Resource string
	Count    int
}

// Input is one operation's arguments.
type Input struct {
	Op Op
	// Resources are the resources the operation touches, sorted: one for
	// Update, Crash and Reregister, the read ones for Capacity, the
	// requested ones for Admit, Reserve, Release and Remove.
	Resources []string
	// Devices is an Update's new device list.
	Devices []Device
	// Pod is the pod of Admit, Reserve, Release and Remove.
	Pod string
	// Wants are an Admit's or Reserve's requests, sorted by resource.
	Wants []Want
	// Endpoint is a Register's socket name, relative to the directory.
	Endpoint string
}

// Count is one resource's capacity (all devices) and allocatable (healthy
// devices).
type Count struct {
	Resource    string
	Capacity    int64
	Allocatable int64
}

// Output is one operation's answer.
type Output struct {
	// Unknown marks an operation whose outcome the client never learnt. An
	// Update of unknown outcome (sent just before its plugin crashed) leaves
	// a pending update on its resource; any other unknown operation may
	// have taken effect or not.
	Unknown bool
	// Err is the error kind an admission failed with, or a registration's
	// error; empty on success.
	Err string
	// Counts are a Capacity read's, sorted by resource.
	Counts []Count
	// Granted are the devices a successful Admit gave the pod, one entry per
	// requested device plugin resource, sorted by resource.
	Granted []Grant
}

// Grant is the devices one resource gave an admitted pod.
type Grant struct {
	Resource  string
	DeviceIDs []string
}

// The admission failure kinds the model produces, named as the core's.
const (
	ErrNoHealthy      = "NoHealthy"
	ErrUnavailable    = "Unavailable"
	ErrAllocateFailed = "AllocateFailed"
	// ErrRefused is a registration the agent refused.
	ErrRefused = "Refused"
)

// errNothingReserved is the model's answer to a Release with no
// reservation, and errNotGrantable its verdict on an admission whose
// granted devices are not free, healthy and as many as wanted; the agent
// never gives either.
const (
	errNothingReserved = "NothingReserved"
	errNotGrantable    = "NotGrantable"
)

// holding is one pod's devices of one resource; reserved marks a plan whose
// Allocate RPC will fail.
type holding struct {
	pod      string
	devices  []string
	reserved bool
}

type resource struct {
	name    string
	devices []Device // sorted by ID
	held    []holding
	// pending is an Update of unknown outcome: sent through a stream the
	// agent may or may not have read before the plugin crashed. It has no
	// effect until some later step applies it; the resource's Crash applies
	// or drops it, and clears it.
	pending    []Device // sorted by ID
	hasPending bool
}

// State is the node. The zero State has no resources.
type State struct {
	resources []resource // sorted by name
}

// Init returns a node whose resources have the given devices, as after each
// plugin's first snapshot.
func Init(devices map[string][]Device) State {
	var s State
	for name, devs := range devices {
		s.resources = append(s.resources, resource{name: name, devices: sortedDevices(devs)})
	}
	slices.SortFunc(s.resources, func(a, b resource) int { return strings.Compare(a.name, b.name) })
	return s
}

func sortedDevices(devs []Device) []Device {
	out := slices.Clone(devs)
	slices.SortFunc(out, func(a, b Device) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func (s State) find(name string) (int, bool) {
	return slices.BinarySearchFunc(s.resources, name, func(r resource, n string) int { return strings.Compare(r.name, n) })
}

// with returns a copy of s whose resource i is r; the other resources are
// shared, which is safe because no State is ever changed in place.
func (s State) with(i int, r resource) State {
	out := State{resources: slices.Clone(s.resources)}
	out.resources[i] = r
	return out
}

// Next lists the states s can be in after in answered out: none when the
// model would not answer out. Two things make it nondeterministic. A
// resource with a pending update may first apply it, so every step that
// touches the resource has a branch with and one without it. And an
// admission whose devices the client did not see (a reservation of a
// failed Allocate, an admission of unknown outcome) may have taken any of
// the free devices, so it has a branch for each choice.
func Next(s State, in Input, out Output) []State {
	var next []State
	for _, before := range resolvePending(s, in.Resources) {
		for _, after := range step(before, in, out) {
			if !slices.ContainsFunc(next, func(n State) bool { return Equal(n, after) }) {
				next = append(next, after)
			}
		}
	}
	return next
}

// resolvePending lists s and, for every subset of the named resources that
// have a pending update, s with those updates applied.
func resolvePending(s State, names []string) []State {
	out := []State{s}
	for _, name := range names {
		i, ok := s.find(name)
		if !ok || !s.resources[i].hasPending {
			continue
		}
		for _, st := range out {
			r := st.resources[i]
			r.devices, r.pending, r.hasPending = r.pending, nil, false
			out = append(out, st.with(i, r))
		}
	}
	return out
}

// step runs in on s and lists the states after it when out is an answer
// the model can give.
func step(s State, in Input, out Output) []State {
	switch {
	case in.Op == Update && out.Unknown:
		i, ok := s.find(in.Resources[0])
		if !ok {
			return []State{s}
		}
		r := s.resources[i]
		r.pending, r.hasPending = sortedDevices(in.Devices), true
		return []State{s.with(i, r)}
	case in.Op == Reserve || in.Op == Admit && out.Unknown:
		next, err := admitAny(s, in)
		if out.Unknown {
			return append(next, s)
		}
		if err != "" {
			return nil
		}
		return next
	case in.Op == Admit:
		next, err := admitGranted(s, in, out.Granted)
		if err != out.Err {
			return nil
		}
		return []State{next}
	}
	next, want := Apply(s, in)
	if out.Unknown {
		if Equal(next, s) {
			return []State{s}
		}
		return []State{next, s}
	}
	if out.Err != want.Err || !slices.Equal(out.Counts, want.Counts) {
		return nil
	}
	return []State{next}
}

// Apply runs in on s and returns the state after and the model's answer.
// An admission takes the lowest free IDs, as the core does for plugins
// without a preferred allocation; a pending update stays pending.
func Apply(s State, in Input) (State, Output) {
	switch in.Op {
	case Update, Crash:
		i, ok := s.find(in.Resources[0])
		if !ok {
			return s, Output{}
		}
		r := s.resources[i]
		if in.Op == Update {
			r.devices = sortedDevices(in.Devices)
		} else {
			// The crash ends the stream: a pending update has been read by
			// now or never will be.
			r.pending, r.hasPending = nil, false
			r.devices = slices.Clone(r.devices)
			for j := range r.devices {
				r.devices[j].Healthy = false
			}
		}
		return s.with(i, r), Output{}
	case Admit, Reserve:
		next, out := admitLowest(s, in)
		return next, out
	case Remove:
		next, _ := drop(s, in.Pod, false)
		return next, Output{}
	case Release:
		// A Release before its Reserve would let the reservation outlive
		// the admission; refusing it keeps the two in order.
		next, found := drop(s, in.Pod, true)
		if !found {
			return s, Output{Err: errNothingReserved}
		}
		return next, Output{}
	case Register:
		if endpointRefused(in.Endpoint) {
			return s, Output{Err: ErrRefused}
		}
		return s, Output{}
	case Capacity:
		var out Output
		for _, name := range in.Resources {
			if i, ok := s.find(name); ok {
				c := Count{Resource: name, Capacity: int64(len(s.resources[i].devices))}
				for _, d := range s.resources[i].devices {
					if d.Healthy {
						c.Allocatable++
					}
				}
				out.Counts = append(out.Counts, c)
			}
		}
		return s, out
	}
	return s, Output{}
}

// freeDevices follows the core's checks for one resource: the healthy
// devices no pod holds or reserves, or the error kind that refuses want.
// A resource no plugin ever registered is not a device plugin resource:
// upstream allocates nothing for it and admits the pod (the scheduler, not
// the kubelet, keeps such pods away); ok is false for it.
func freeDevices(s State, w Want) (i int, free []string, err string, ok bool) {
	i, ok = s.find(w.Resource)
	if !ok {
		return 0, nil, "", false
	}
	r := s.resources[i]
	healthy := 0
	for _, d := range r.devices {
		if !d.Healthy {
			continue
		}
		healthy++
		if !r.taken(d.ID) {
			free = append(free, d.ID)
		}
	}
	switch {
	case healthy == 0:
		return i, nil, ErrNoHealthy, true
	case len(free) < w.Count:
		return i, nil, ErrUnavailable, true
	}
	return i, free, "", true
}

// admitGranted is an admission whose devices the client saw. The core
// checks resource by resource in name order and holds all requested
// devices or none: the first refusal is the answer. A successful one takes
// the granted devices when they are healthy, free and as many as wanted,
// and is refused otherwise (errNotGrantable), so a device handed out twice
// is illegal at once.
func admitGranted(s State, in Input, granted []Grant) (State, string) {
	type choice struct {
		i    int
		free []string
		want Want
	}
	var chosen []choice
	for _, w := range in.Wants {
		i, free, err, ok := freeDevices(s, w)
		if !ok {
			continue
		}
		if err != "" {
			return s, err
		}
		chosen = append(chosen, choice{i, free, w})
	}
	if len(chosen) != len(granted) {
		return s, errNotGrantable
	}
	next := s
	for _, c := range chosen {
		g := slices.IndexFunc(granted, func(g Grant) bool { return g.Resource == c.want.Resource })
		if g < 0 {
			return s, errNotGrantable
		}
		ids := slices.Sorted(slices.Values(granted[g].DeviceIDs))
		if len(ids) != c.want.Count || len(slices.Compact(slices.Clone(ids))) != len(ids) {
			return s, errNotGrantable
		}
		for _, id := range ids {
			if !slices.Contains(c.free, id) {
				return s, errNotGrantable
			}
		}
		next = next.hold(c.i, in, ids)
	}
	return next, ""
}

// admitAny is an admission whose devices nobody saw: it lists a state for
// every choice of free devices, or the error kind that refuses it.
func admitAny(s State, in Input) ([]State, string) {
	states := []State{s}
	for _, w := range in.Wants {
		i, free, err, ok := freeDevices(s, w)
		if !ok {
			continue
		}
		if err != "" {
			return nil, err
		}
		var next []State
		for _, ids := range subsets(free, w.Count) {
			for _, st := range states {
				next = append(next, st.hold(i, in, ids))
			}
		}
		states = next
	}
	return states, ""
}

// admitLowest is an admission that takes the lowest free IDs.
func admitLowest(s State, in Input) (State, Output) {
	next := s
	var out Output
	for _, w := range in.Wants {
		i, free, err, ok := freeDevices(next, w)
		if !ok {
			continue
		}
		if err != "" {
			return s, Output{Err: err}
		}
		next = next.hold(i, in, free[:w.Count:w.Count])
		out.Granted = append(out.Granted, Grant{Resource: w.Resource, DeviceIDs: free[:w.Count:w.Count]})
	}
	return next, out
}

// hold returns s with in's pod holding (or, for a Reserve, reserving) ids
// of resource i.
func (s State) hold(i int, in Input, ids []string) State {
	r := s.resources[i]
	r.held = append(slices.Clone(r.held), holding{pod: in.Pod, devices: ids, reserved: in.Op == Reserve})
	return s.with(i, r)
}

// subsets lists the k-element subsets of ids, each in the order of ids.
func subsets(ids []string, k int) [][]string {
	if k == 0 {
		return [][]string{nil}
	}
	var out [][]string
	for i := 0; i+k <= len(ids); i++ {
		for _, rest := range subsets(ids[i+1:], k-1) {
			out = append(out, append([]string{ids[i]}, rest...))
		}
	}
	return out
}

func (r resource) taken(id string) bool {
	for _, h := range r.held {
		if slices.Contains(h.devices, id) {
			return true
		}
	}
	return false
}

// drop removes a pod's holdings, its reservations or what it holds, and
// reports whether there were any.
func drop(s State, pod string, reserved bool) (State, bool) {
	next, found := s, false
	of := func(h holding) bool { return h.pod == pod && h.reserved == reserved }
	for i, r := range s.resources {
		// Only a resource the pod holds is copied: the checkers step
		// every state of a search through here.
		if slices.ContainsFunc(r.held, of) {
			r.held = slices.DeleteFunc(slices.Clone(r.held), of)
			next, found = next.with(i, r), true
		}
	}
	return next, found
}

// Filter reports whether an operation only filters states: from every
// state with no pending update on in.Resources, Next answers the state
// itself or nothing. Reads, refused admissions, registrations and
// re-registrations change nothing a client sees; a pending update is what
// could make any of them change a state, by applying it first. A checker
// may place a filter as early as it may go once it changes nothing there
// (package linearizability/frontier).
func Filter(in Input, out Output) bool {
	if out.Unknown {
		return false
	}
	switch in.Op {
	case Capacity, Register, Reregister:
		return true
	case Admit:
		return out.Err != ""
	}
	return false
}

// Equal reports whether two states are the same node, pending updates
// included. States share every part a step did not change (see with), so
// parts at the same address are equal without a look inside: the checkers
// compare states at every step, most often a state with one stepped from
// it.
func Equal(a, b State) bool {
	if shared(a.resources, b.resources) {
		return true
	}
	return slices.EqualFunc(a.resources, b.resources, func(x, y resource) bool {
		return x.name == y.name && x.hasPending == y.hasPending &&
			(shared(x.devices, y.devices) || slices.Equal(x.devices, y.devices)) &&
			(shared(x.pending, y.pending) || slices.Equal(x.pending, y.pending)) &&
			(shared(x.held, y.held) || slices.EqualFunc(x.held, y.held, func(g, h holding) bool {
				return g.pod == h.pod && g.reserved == h.reserved && slices.Equal(g.devices, h.devices)
			}))
	})
}

// shared reports whether two slices are the same elements of one array.
func shared[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// endpointRefused says whether the agent must refuse a registration with
// this endpoint: empty, absolute, with a path element or "..", or the
// kubelet's own socket name.
func endpointRefused(endpoint string) bool {
	return endpoint == "" || endpoint == "." || endpoint == "kubelet.sock" ||
		strings.HasPrefix(endpoint, "/") || strings.Contains(endpoint, "/") || strings.Contains(endpoint, "..")
}

// Hash is a hash of a state that Equal states share: it reads what Equal
// compares, in the same order. The checkers compare sets of states at
// every step; with it they compare hashes and call Equal only when two
// hashes agree. FNV-1a, written out so that hashing allocates nothing and
// gives the same value in every process.
func Hash(s State) uint64 {
	h := fnvHash(fnvOffset)
	for _, r := range s.resources {
		h = h.text(r.name).flag(r.hasPending).devices(r.devices).devices(r.pending).number(len(r.held))
		for _, g := range r.held {
			h = h.text(g.pod).flag(g.reserved).number(len(g.devices))
			for _, id := range g.devices {
				h = h.text(id)
			}
		}
	}
	return uint64(h)
}

type fnvHash uint64

const (
	fnvOffset fnvHash = 14695981039346656037
	fnvPrime  fnvHash = 1099511628211
)

func (h fnvHash) byte(b byte) fnvHash { return (h ^ fnvHash(b)) * fnvPrime }

// text hashes a string and its end, so that "ab","c" and "a","bc" differ.
func (h fnvHash) text(s string) fnvHash {
	for i := range len(s) {
		h = h.byte(s[i])
	}
	return h.byte(0xff)
}

func (h fnvHash) flag(b bool) fnvHash {
	if b {
		return h.byte(1)
	}
	return h.byte(0)
}

func (h fnvHash) number(n int) fnvHash {
	for range 4 {
		h, n = h.byte(byte(n)), n>>8
	}
	return h
}

func (h fnvHash) devices(devs []Device) fnvHash {
	h = h.number(len(devs))
	for _, d := range devs {
		h = h.text(d.ID).flag(d.Healthy)
	}
	return h
}
