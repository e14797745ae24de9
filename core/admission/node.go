package admission

import (
	"fmt"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
)

// MaxPods bounds the active pods of a node (the kubelet's default maxPods
// is 110); it is preemption's bound on the pods it chooses among.
const MaxPods = preemption.MaxActivePods

// ActivePod is a pod the node runs.
type ActivePod struct {
	Pod *pod.Pod
	// Terminating is true for a preemption victim whose kill failed: it
	// still holds its resources and stays active, as upstream keeps a pod
	// whose termination is requested but not finished, until the caller
	// removes it.
	Terminating bool
}

type entry struct {
	pod         *pod.Pod
	terminating bool
	// requests are the pod's effective requests, what it uses of the node.
	requests pod.ResourceList
}

// Node is one node's admission state. It is not safe for concurrent use;
// the kubelet admits one pod at a time, and so does a Node: one Attempt is
// open at most. The Node keeps the pods it is given; the caller must not
// change them afterwards.
type Node struct {
	allocatable pod.ResourceList
	active      []*entry
	devices     *dm.Manager
	open        *Attempt
}

// NewNode returns a node with the given allocatable and no pods. devices
// is the node's device manager; nil means a node without device plugins,
// where extended resources are plain node resources. A node that has
// device plugins passes its manager, and keeps allocatable's device
// resources in step with the manager's GetCapacity, as the kubelet's node
// status does.
func NewNode(allocatable pod.ResourceList, devices *dm.Manager) (*Node, error) {
	n := &Node{devices: devices}
	if err := n.SetAllocatable(allocatable); err != nil {
		return nil, err
	}
	return n, nil
}

// SetAllocatable replaces the node's allocatable. Quantities are in
// core/pod's units; "pods" is the number of pods the node may run.
func (n *Node) SetAllocatable(allocatable pod.ResourceList) error {
	for _, name := range allocatable.Names() {
		q := allocatable[name]
		switch {
		case name == "":
			return fmt.Errorf("allocatable: a resource name must not be empty")
		case q < 0:
			return fmt.Errorf("allocatable[%s]: %d must not be negative", name, q)
		case q > preemption.MaxQuantity:
			return fmt.Errorf("allocatable[%s]: %d exceeds the bound of %d", name, q, preemption.MaxQuantity)
		}
	}
	n.allocatable = allocatable.Clone()
	if n.allocatable == nil {
		n.allocatable = pod.ResourceList{}
	}
	return nil
}

// Allocatable returns a copy of the node's allocatable.
func (n *Node) Allocatable() pod.ResourceList { return n.allocatable.Clone() }

// Active returns the node's active pods in the order they joined it.
func (n *Node) Active() []ActivePod {
	out := make([]ActivePod, len(n.active))
	for i, e := range n.active {
		out[i] = ActivePod{Pod: e.pod, Terminating: e.terminating}
	}
	return out
}

// Used returns the sum of the active pods' effective requests, what the
// fit counts as used.
func (n *Node) Used() pod.ResourceList {
	used := pod.ResourceList{}
	for _, e := range n.active {
		for name, q := range e.requests {
			used[name] += q
		}
	}
	return used
}

// AddRunning puts a pod on the node without admitting it: a pod that was
// running before the first decision the caller asks for. Its devices, if
// any, are not allocated.
func (n *Node) AddRunning(p *pod.Pod) error {
	if n.open != nil {
		return fmt.Errorf("pod %q: the admission of pod %q is in progress", podUID(p), n.open.pod.UID)
	}
	if err := n.checkNew(p, "pod"); err != nil {
		return err
	}
	n.add(p)
	return nil
}

// Remove takes a pod off the node: it finished, was deleted, or a
// terminating victim's kill finally succeeded. Its devices are released by
// the device manager's garbage collection at the next admission, as
// upstream.
func (n *Node) Remove(uid string) error {
	if n.open != nil && n.open.pod.UID == uid {
		return fmt.Errorf("pod %q: its admission is in progress", uid)
	}
	for i, e := range n.active {
		if e.pod.UID == uid {
			n.active = append(n.active[:i], n.active[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("pod %q: not active on the node", uid)
}

func podUID(p *pod.Pod) string {
	if p == nil {
		return ""
	}
	return p.UID
}

func (n *Node) checkNew(p *pod.Pod, field string) error {
	if err := preemption.ValidatePod(p, field); err != nil {
		return err
	}
	if n.find(p.UID) != nil {
		return fmt.Errorf("%s.uid: %q is already active on the node", field, p.UID)
	}
	if len(n.active) >= MaxPods {
		return fmt.Errorf("%s: the node already has %d active pods, the bound", field, MaxPods)
	}
	return nil
}

func (n *Node) find(uid string) *entry {
	for _, e := range n.active {
		if e.pod.UID == uid {
			return e
		}
	}
	return nil
}

func (n *Node) add(p *pod.Pod) {
	n.active = append(n.active, &entry{pod: p, requests: p.EffectiveRequests(pod.Options{})})
}

func (n *Node) activePods() []*pod.Pod {
	out := make([]*pod.Pod, len(n.active))
	for i, e := range n.active {
		out[i] = e.pod
	}
	return out
}

func (n *Node) usedLists() []pod.ResourceList {
	out := make([]pod.ResourceList, len(n.active))
	for i, e := range n.active {
		out[i] = e.requests
	}
	return out
}
