package kube

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/nodeproof/nodeproof/agent/manifest"
	"github.com/nodeproof/nodeproof/core/pod"
)

// NodeFile is a manifest file read as one node and the pods bound to it:
// the one reading every nodeproof command that takes a node file shares
// (docs/node-file.md). Pods keep the file's order within each group.
type NodeFile struct {
	// Node is the file's Node; nil when the file holds none.
	Node *Node
	// NodeOrigin is where the Node sits (zero without a Node).
	NodeOrigin Origin
	// Allocatable is what the node admits pods against, as the kubelet's
	// admission does: status.allocatable, or status.capacity for a Node
	// without allocatable, as the API server's defaulting copies it.
	// AllocatableField names the one used. Both are empty without a Node.
	Allocatable      pod.ResourceList
	AllocatableField string
	// Running pods (status.phase Running) are on the node already.
	// Arriving pods (any other phase but a terminal one) are to be
	// admitted, in file order. Finished pods (Succeeded, Failed) are
	// neither admitted nor counted by the kubelet.
	Running, Arriving, Finished []PlacedPod
	// Skipped lists documents of other kinds, left out.
	Skipped []Skipped
}

// PlacedPod is a pod and where the file holds it.
type PlacedPod struct {
	Pod    *pod.Pod
	Origin Origin
	// StandInUID says the manifest had no metadata.uid and Pod.UID is
	// StandInUID's.
	StandInUID bool
}

// ReadNodeFile decodes a node file, strictly as Decode does: at most one
// Node (with "pods" in the list it admits against), Pods of unique
// namespace/name and uid, and documents of other kinds skipped (an
// application's Deployments and Services can sit in the same file). A pod
// without metadata.uid gets StandInUID. Every error is an *Error naming the
// object, the document and the field.
func ReadNodeFile(data []byte) (*NodeFile, error) {
	m, err := Decode(data, Options{SkipUnknownKinds: true})
	if err != nil {
		return nil, err
	}
	nf := &NodeFile{Skipped: m.Skipped}
	if len(m.Nodes) > 1 {
		return nil, m.NodeOrigins[1].Errorf("", "a second Node (the first, %q, is %s): a node file holds one node", m.Nodes[0].Name, m.NodeOrigins[0])
	}
	if len(m.Nodes) == 1 {
		nf.Node, nf.NodeOrigin = &m.Nodes[0], m.NodeOrigins[0]
		nf.Allocatable, nf.AllocatableField = nf.Node.Allocatable, "status.allocatable"
		if len(nf.Allocatable) == 0 {
			nf.Allocatable, nf.AllocatableField = nf.Node.Capacity, "status.capacity"
		}
		if _, ok := nf.Allocatable[pod.Pods]; !ok {
			return nil, nf.NodeOrigin.Errorf(nf.AllocatableField+".pods", "must be set: the kubelet always reports how many pods the node may run (maxPods, 110 by default), and without it every pod is rejected OutOfpods")
		}
		if err := checkAllocatable(nf.Node, nf.NodeOrigin); err != nil {
			return nil, err
		}
	}

	byKey := map[string]Origin{}
	byUID := map[string]Origin{}
	for i := range m.Pods {
		p, origin := &m.Pods[i], m.PodOrigins[i]
		if first, dup := byKey[p.Key()]; dup {
			return nil, origin.Errorf("metadata.name", "pod %q is also %s", p.Key(), first)
		}
		byKey[p.Key()] = origin
		placed := PlacedPod{Pod: p, Origin: origin}
		if p.UID == "" {
			p.UID, placed.StandInUID = StandInUID(p.Namespace, p.Name), true
		} else if !isCgroupName(p.UID) {
			return nil, origin.Errorf("metadata.uid", "%q must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit, at most %d characters: the pod's cgroup is named after it", p.UID, maxUIDLength)
		}
		if first, dup := byUID[p.UID]; dup {
			return nil, origin.Errorf("metadata.uid", "%q is also the uid of the pod in %s", p.UID, first)
		}
		byUID[p.UID] = origin
		switch {
		case p.Phase == pod.Running:
			nf.Running = append(nf.Running, placed)
		case p.IsTerminal():
			nf.Finished = append(nf.Finished, placed)
		default:
			nf.Arriving = append(nf.Arriving, placed)
		}
	}
	return nf, nil
}

// checkAllocatable holds the kubelet's allocatable to what it can report:
// capacity less reservations, so at most the capacity, and for memory at
// most the capacity less every hugepages-* capacity (§5.6). A resource the
// capacity does not list is not checked.
func checkAllocatable(n *Node, origin Origin) error {
	for _, name := range n.Allocatable.Names() {
		capacity, listed := n.Capacity[name]
		if !listed {
			continue
		}
		if name == pod.Memory {
			var hugePages int64
			for hp, q := range n.Capacity {
				if pod.IsHugePages(hp) {
					hugePages += q
				}
			}
			if hugePages > 0 {
				if n.Allocatable[name] > capacity-hugePages {
					return origin.Errorf("status.allocatable.memory", "%s exceeds status.capacity.memory less the hugepages capacity, %s: the kubelet takes hugepages off allocatable memory",
						FormatQuantity(name, n.Allocatable[name]), FormatQuantity(name, capacity-hugePages))
				}
				continue
			}
		}
		if n.Allocatable[name] > capacity {
			return origin.Errorf(manifest.KeyPath("status.allocatable", string(name)), "%s exceeds status.capacity of %s: the kubelet reports capacity less its reservations",
				FormatQuantity(name, n.Allocatable[name]), FormatQuantity(name, capacity))
		}
	}
	return nil
}

// StandInUID is the uid of a pod whose manifest has none (a hand-written
// one): the md5 of "namespace/name" in hex, the shape of the UIDs the
// kubelet gives static pods (a hash of their manifest). It is stable, so
// the pod's cgroup keeps its name from run to run.
func StandInUID(namespace, name string) string {
	sum := md5.Sum([]byte(namespace + "/" + name))
	return hex.EncodeToString(sum[:])
}

// maxUIDLength bounds a uid, as core/cgroups bounds a cgroup name.
const maxUIDLength = 253

// isCgroupName reports whether s can name a cgroup in both drivers'
// forms: letters, digits, '-', '_' and '.', starting and ending with a
// letter or digit (a UUID and a container runtime's ID are).
func isCgroupName(s string) bool {
	if len(s) == 0 || len(s) > maxUIDLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (!strings.ContainsRune("-_.", rune(c)) || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

// Note is what a command prints about a skipped document.
func (s Skipped) Note() string {
	where := fmt.Sprintf("document %d", s.Document)
	if s.Path != "" {
		where += " " + s.Path
	}
	what := s.APIVersion + " " + s.Kind
	if s.Name != "" {
		what += fmt.Sprintf(" %q", s.Name)
	}
	return fmt.Sprintf("skipped %s: %s (a node file holds a Node and Pods; other kinds are left out)", where, what)
}
