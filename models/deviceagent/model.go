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
	// Unknown marks an operation whose outcome the client never learnt; any
	// transition accepts it.
	Unknown bool
	// Err is the error kind an admission failed with, or a registration's
	// error; empty on success.
	Err string
	// Counts are a Capacity read's, sorted by resource.
	Counts []Count
}

// The admission failure kinds the model produces, named as the core's.
const (
	ErrNoHealthy      = "NoHealthy"
	ErrUnavailable    = "Unavailable"
	ErrAllocateFailed = "AllocateFailed"
)

// errNothingReserved is the model's answer to a Release with no
// reservation; the agent never gives it.
const errNothingReserved = "NothingReserved"

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
// model would not answer out. An Unknown answer (the client never learnt
// the outcome, say a snapshot sent just before its plugin crashed) leaves
// two: the operation took effect, or it never will.
func Next(s State, in Input, out Output) []State {
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
			r.devices = slices.Clone(r.devices)
			for j := range r.devices {
				r.devices[j].Healthy = false
			}
		}
		return s.with(i, r), Output{}
	case Admit, Reserve:
		return admit(s, in)
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

// admit follows the core's checks in its order, resource by resource in
// name order, and holds all requested devices or none. A resource no plugin
// ever registered is not a device plugin resource: upstream allocates
// nothing for it and admits the pod (the scheduler, not the kubelet, keeps
// such pods away).
func admit(s State, in Input) (State, Output) {
	next := s
	for _, w := range in.Wants {
		i, ok := next.find(w.Resource)
		if !ok {
			continue
		}
		r := next.resources[i]
		var healthy []string
		for _, d := range r.devices {
			if d.Healthy {
				healthy = append(healthy, d.ID)
			}
		}
		if len(healthy) == 0 {
			return s, Output{Err: ErrNoHealthy}
		}
		var free []string
		for _, id := range healthy {
			if !r.taken(id) {
				free = append(free, id)
			}
		}
		if len(free) < w.Count {
			return s, Output{Err: ErrUnavailable}
		}
		r.held = append(slices.Clone(r.held), holding{pod: in.Pod, devices: free[:w.Count:w.Count], reserved: in.Op == Reserve})
		next = next.with(i, r)
	}
	return next, Output{}
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
	for i, r := range s.resources {
		kept := slices.DeleteFunc(slices.Clone(r.held), func(h holding) bool { return h.pod == pod && h.reserved == reserved })
		if len(kept) != len(r.held) {
			r.held = kept
			next, found = next.with(i, r), true
		}
	}
	return next, found
}

// Equal reports whether two states are the same node.
func Equal(a, b State) bool {
	return slices.EqualFunc(a.resources, b.resources, func(x, y resource) bool {
		return x.name == y.name && slices.Equal(x.devices, y.devices) &&
			slices.EqualFunc(x.held, y.held, func(g, h holding) bool {
				return g.pod == h.pod && g.reserved == h.reserved && slices.Equal(g.devices, h.devices)
			})
	})
}
