package kube

import (
	"fmt"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
)

// Given is a capacity the caller sets itself (a command's flag): Value is
// nil when it sets none, and Name names it in sources and errors
// ("--node-cpu").
type Given struct {
	Value *int64
	Name  string
}

// Capacity is one capacity figure of the node and where it came from.
type Capacity struct {
	Value int64
	// Source says where: the Given's name, "Node node-1" or "this host:
	// /proc/meminfo MemTotal".
	Source string
	// FromHost says the figure is this machine's, so the output depends
	// on where it runs.
	FromHost bool
}

// Sizing is what a node's kubelet configuration takes from a node file
// and the capacities given.
type Sizing struct {
	CPU, Memory Capacity
	// KubeReserved is the reservation read off the Node: capacity less
	// allocatable, less the hard eviction threshold and the hugepages;
	// nil without one.
	KubeReserved pod.ResourceList
	// Allocatable is what the node admits pods against.
	Allocatable pod.ResourceList
}

// GivenError is a given capacity that cannot describe a node, found only
// once the node file is read; the message names the Given, not the file.
// SizeNode returns it with the Sizing, whose capacities the caller may
// still want to show.
type GivenError struct{ error }

// SizeNode fills in cfg's capacity, hugepages sizes, maxPods and
// kube-reserved for the node nf describes and returns its Sizing. Each
// capacity is the Given's, else the Node's status.capacity, else this
// host's; a Node also gives the hugepages sizes and maxPods (its "pods"). A
// Node's allocatable is what the kubelet reported, capacity less its
// reservations: the gap becomes kube-reserved, less the default 100Mi
// memory.available hard eviction threshold and the hugepages, which the
// kubelet also takes off allocatable but not off the kubepods cgroup
// (§5.6). A Given sets a resource's capacity with no reservation, so its
// allocatable is the kubelet's default one, as without a Node.
func SizeNode(cfg *cgroups.Config, nf *NodeFile, cpu, memory Given) (*Sizing, error) {
	cfg.Capacity = pod.ResourceList{}
	node := nf.Node
	if node != nil {
		if err := takeNodeCapacity(cfg, nf); err != nil {
			return nil, err
		}
	}
	s := &Sizing{}
	var err error
	if s.CPU, err = pickCapacity(cpu, node, pod.CPU, hostCPU); err != nil {
		return nil, err
	}
	if s.Memory, err = pickCapacity(memory, node, pod.Memory, hostMemory); err != nil {
		return nil, err
	}
	cfg.Capacity[pod.CPU], cfg.Capacity[pod.Memory] = s.CPU.Value, s.Memory.Value

	fromGiven := map[pod.ResourceName]bool{pod.CPU: cpu.Value != nil, pod.Memory: memory.Value != nil}
	if node != nil {
		if reserved := kubeReserved(*cfg, nf, fromGiven); len(reserved) > 0 {
			cfg.KubeReserved, s.KubeReserved = reserved, reserved
		}
	}

	// The allocatable pods are admitted against: the Node's, but for a
	// resource a Given sets; without a Node, the kubelet's for this
	// capacity and maxPods.
	defaults := cgroups.ReportedAllocatable(*cfg)
	s.Allocatable = pod.ResourceList{pod.Pods: int64(cfg.MaxPods)}
	if node != nil {
		s.Allocatable = nf.Allocatable.Clone()
	}
	for name, set := range fromGiven {
		if set || node == nil {
			s.Allocatable[name] = defaults[name]
		}
	}
	// A capacity given so small that nothing of it is allocatable would
	// reject every pod, and the rejections would blame the pods.
	if fromGiven[pod.Memory] && s.Allocatable[pod.Memory] <= 0 {
		return s, GivenError{fmt.Errorf("%s %s leaves no allocatable memory: the kubelet keeps the memory.available hard eviction threshold (%s) off the capacity; give more than that",
			memory.Name, FormatQuantity(pod.Memory, s.Memory.Value), FormatQuantity(pod.Memory, hardEvictionMemory(*cfg)))}
	}
	if fromGiven[pod.CPU] && s.Allocatable[pod.CPU] <= 0 {
		return s, GivenError{fmt.Errorf("%s %s leaves no allocatable cpu; give a positive quantity", cpu.Name, FormatQuantity(pod.CPU, s.CPU.Value))}
	}
	return s, nil
}

// takeNodeCapacity copies the Node's ephemeral storage and hugepages
// capacity into cfg, with the hugepages sizes, and its pods as maxPods.
func takeNodeCapacity(cfg *cgroups.Config, nf *NodeFile) error {
	node := nf.Node
	for _, name := range node.Capacity.Names() {
		switch {
		case name == pod.EphemeralStorage:
			cfg.Capacity[name] = node.Capacity[name]
		case pod.IsHugePages(name):
			size, err := cgroups.HugePageSizeFromResourceName(name)
			if err != nil {
				return nf.NodeOrigin.Errorf("status.capacity."+string(name), "%v", err)
			}
			cfg.HugePageSizes = append(cfg.HugePageSizes, size)
			cfg.Capacity[name] = node.Capacity[name]
		case name == pod.Pods:
			v := node.Capacity[name]
			if v < 1 || v > cgroups.MaxPodsBound {
				return nf.NodeOrigin.Errorf("status.capacity.pods", "%d must be within 1 and %d", v, cgroups.MaxPodsBound)
			}
			cfg.MaxPods = int(v)
		}
	}
	return nil
}

// kubeReserved is the Node's capacity less its allocatable, less what the
// kubelet takes off allocatable but not off the kubepods cgroup (the hard
// eviction threshold, the hugepages), for each resource no Given sets.
func kubeReserved(cfg cgroups.Config, nf *NodeFile, fromGiven map[pod.ResourceName]bool) pod.ResourceList {
	node := nf.Node
	var hugePages int64
	for name, q := range node.Capacity {
		if pod.IsHugePages(name) {
			hugePages += q
		}
	}
	gap := func(name pod.ResourceName) int64 { return node.Capacity[name] - nf.Allocatable[name] }
	reserved := pod.ResourceList{}
	if !fromGiven[pod.CPU] && gap(pod.CPU) > 0 {
		reserved[pod.CPU] = gap(pod.CPU)
	}
	if g := gap(pod.Memory) - hugePages - hardEvictionMemory(cfg); !fromGiven[pod.Memory] && g > 0 {
		reserved[pod.Memory] = g
	}
	return reserved
}

// hardEvictionMemory is what the configuration's memory.available hard
// eviction threshold holds back of allocatable.
func hardEvictionMemory(cfg cgroups.Config) int64 {
	withoutEviction := cfg
	withoutEviction.HardEviction = nil
	return cgroups.NodeAllocatableReservation(cfg)[pod.Memory] - cgroups.NodeAllocatableReservation(withoutEviction)[pod.Memory]
}

// pickCapacity takes the Given's value, else the Node's capacity, else the
// host's.
func pickCapacity(given Given, node *Node, name pod.ResourceName, host func() (int64, error)) (Capacity, error) {
	if given.Value != nil {
		return Capacity{Value: *given.Value, Source: given.Name}, nil
	}
	if node != nil {
		if v, ok := node.Capacity[name]; ok && v > 0 {
			return Capacity{Value: v, Source: "Node " + node.Name}, nil
		}
		return Capacity{}, fmt.Errorf("status.capacity of Node %s has no %s: give %s", node.Name, name, given.Name)
	}
	v, err := host()
	if err != nil {
		return Capacity{}, fmt.Errorf("this host's %s capacity: %v; give %s", name, err, given.Name)
	}
	return Capacity{Value: v, Source: "this host: " + HostSource(name), FromHost: true}, nil
}
