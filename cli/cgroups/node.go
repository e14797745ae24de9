package cgroups

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/nodeproof/nodeproof/agent/kube"
	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
)

// cgroupNode is everything the output shows: the configuration, the
// hierarchy and its rendered files, and who each pod cgroup belongs to.
type cgroupNode struct {
	cfg         cgroups.Config
	version     cgroups.Version
	cpu, memory kube.Capacity
	qosReserved string
	// reserved is the system and kube reservation read off the Node
	// (capacity less allocatable), for the header; nil without one.
	reserved  pod.ResourceList
	nodeName  string
	hierarchy cgroups.Hierarchy
	files     []cgroups.CgroupFiles
	podNames  map[string]string // pod UID → namespace/name
	// runtimeIDs holds each container's runtime ID by "podUID/name",
	// empty where the status has none.
	runtimeIDs map[string]string
}

// buildNode reads the node file as `nodeproof admit` does
// (kube.ReadNodeFile, kube.PlayNode): the Running pods are on the node,
// every other pod arrives and is admitted in file order, with preemption.
// It then builds and renders the hierarchy of the pods the node runs at the
// end. Notes about what it skipped, rejected or assumed go to stderr.
// Every error is about the input, a kube.GivenError about a flag.
func (o *Options) buildNode(data []byte, stderr io.Writer) (*cgroupNode, error) {
	nf, err := kube.ReadNodeFile(data)
	if err != nil {
		return nil, err
	}
	for _, note := range nf.Notes() {
		fmt.Fprintf(stderr, "nodeproof cgroups: note: %s\n", note)
	}

	cfg := cgroups.DefaultConfig()
	cfg.CgroupDriver = o.driver
	cfg.QOSReservedMemoryPercent = o.qosReserved
	size, err := kube.SizeNode(&cfg, nf, kube.Given{Value: o.nodeCPU, Name: "--node-cpu"}, kube.Given{Value: o.nodeMemory, Name: "--node-memory"})
	if size != nil {
		noteHostCapacity(stderr, size)
	}
	if err != nil {
		return nil, err
	}
	// The Memory QoS gate only takes effect on v2 (§5.2); it stays off, as
	// in v1.36, so both versions show the same configuration.
	n := &cgroupNode{cfg: cfg, version: o.version, cpu: size.CPU, memory: size.Memory, reserved: size.KubeReserved,
		qosReserved: o.QOSReserved, podNames: map[string]string{}, runtimeIDs: map[string]string{}}
	if nf.Node != nil {
		n.nodeName = nf.Node.Name
	}

	play, err := kube.PlayNode(nf, size.Allocatable, nf.NodeOrigin, nf.AllocatableField)
	if err != nil {
		return nil, err
	}
	for _, d := range play.Decisions {
		if !d.Result.Admitted {
			fmt.Fprintf(stderr, "nodeproof cgroups: note: %s arrives and is rejected, so it has no cgroup: %s: %s\n", d.Pod.Key(), d.Result.Reason, d.Result.Message)
		}
	}
	for _, v := range play.Preempted {
		fmt.Fprintf(stderr, "nodeproof cgroups: note: %s is preempted by a critical pod's admission, so it has no cgroup (nodeproof admit shows which)\n", v.Pod.Key())
	}
	pods := make([]*pod.Pod, len(play.OnNode))
	for i, p := range play.OnNode {
		pods[i] = p.Pod
		n.podNames[p.Pod.UID] = p.Pod.Key()
		for _, c := range cgroups.RunningContainers(p.Pod) {
			n.runtimeIDs[p.Pod.UID+"/"+c.Name] = c.RuntimeID
		}
		if p.StandInUID {
			fmt.Fprintf(stderr, "nodeproof cgroups: note: pod %s has no metadata.uid; its cgroup is named after a hash of its namespace and name, pod%s\n", p.Pod.Key(), p.Pod.UID)
		}
	}
	h, err := cgroups.Build(cfg, pods)
	if err != nil {
		return nil, namePod(err, play.OnNode)
	}
	files, err := h.Files(o.version)
	if err != nil {
		return nil, err
	}
	n.hierarchy, n.files = h, files
	return n, nil
}

// noteHostCapacity says which capacity is this machine's: the output then
// depends on where it runs, also with --json, which has no header.
func noteHostCapacity(stderr io.Writer, size *kube.Sizing) {
	var fromHost []string
	if size.CPU.FromHost {
		fromHost = append(fromHost, "cpu "+kube.FormatQuantity(pod.CPU, size.CPU.Value)+" ("+kube.HostSource(pod.CPU)+")")
	}
	if size.Memory.FromHost {
		fromHost = append(fromHost, "memory "+kube.FormatQuantity(pod.Memory, size.Memory.Value)+" ("+kube.HostSource(pod.Memory)+")")
	}
	if len(fromHost) > 0 {
		fmt.Fprintf(stderr, "nodeproof cgroups: node capacity of this host: %s; give --node-cpu and --node-memory for another node\n", strings.Join(fromHost, ", "))
	}
}

var podIndex = regexp.MustCompile(`^pods\[(\d+)\]\.?`)

// namePod turns a core error about pods[i], an index the reader never
// wrote, into one naming the pod's document. Reading the file and the
// admission leave few such errors.
func namePod(err error, pods []kube.PlacedPod) error {
	var fe *cgroups.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	m := podIndex.FindStringSubmatch(fe.Field)
	if m == nil {
		return err
	}
	i, convErr := strconv.Atoi(m[1])
	if convErr != nil || i >= len(pods) {
		return err
	}
	return pods[i].Origin.Errorf("", "%v", err)
}

// cgroupJSON is one element of --json's output. Files is a list, not an
// object, because the order of the writes is part of the answer: a parent's
// limits and a cgroup v1 period go in before what depends on them.
type cgroupJSON struct {
	Path      string         `json:"path"`
	Container *containerJSON `json:"container,omitempty"`
	Files     []fileJSON     `json:"files"`
}

// containerJSON says whose a container cgroup is: the container's name and
// its runtime ID, "" where the status has none and the cgroup is named
// after the container instead.
type containerJSON struct {
	Name string `json:"name"`
	ID   string `json:"id"`
}

// fileJSON is one write: the file, relative to its cgroup, and its value.
type fileJSON struct {
	File  string `json:"file"`
	Value string `json:"value"`
}

// json is the --json output: every cgroup, parents first, with its writes
// in order.
func (n *cgroupNode) json() []cgroupJSON {
	out := make([]cgroupJSON, 0, len(n.files))
	for i, cf := range n.files {
		writes := make([]fileJSON, 0, len(cf.Files))
		for _, f := range cf.Files {
			writes = append(writes, fileJSON{File: f.Name, Value: f.Value})
		}
		e := cgroupJSON{Path: cf.Path, Files: writes}
		if cg := n.hierarchy[i]; cg.Kind == cgroups.KindContainer {
			e.Container = &containerJSON{Name: cg.Container, ID: n.runtimeIDs[cg.PodUID+"/"+cg.Container]}
		}
		out = append(out, e)
	}
	return out
}

// writeTree prints a header saying what the node is, then the
// hierarchy as an indented tree: each cgroup's name with a slash, then its
// files, one `name = value` per line in the order they are written, then
// its children. The hierarchy lists parents first and siblings by name.
func (n *cgroupNode) writeTree(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# cgroup v%d, driver %s; node cpu %s (%s), memory %s (%s)", n.version, n.cfg.CgroupDriver,
		kube.FormatQuantity(pod.CPU, n.cpu.Value), n.cpu.Source, kube.FormatQuantity(pod.Memory, n.memory.Value), n.memory.Source)
	if len(n.reserved) > 0 {
		fmt.Fprintf(bw, "; kube-reserved %s (Node %s's capacity less allocatable, hard eviction and hugepages)", kube.FormatResources(n.reserved), n.nodeName)
	}
	if n.qosReserved != "" {
		fmt.Fprintf(bw, "; --qos-reserved %s", n.qosReserved)
	}
	fmt.Fprintln(bw)
	for i, cg := range n.hierarchy {
		depth := strings.Count(cg.Path, "/")
		indent := strings.Repeat("  ", depth)
		name := cg.Path[strings.LastIndexByte(cg.Path, '/')+1:]
		fmt.Fprintf(bw, "%s%s/%s\n", indent, name, n.describeCgroup(cg))
		for _, f := range n.files[i].Files {
			fmt.Fprintf(bw, "%s  %s = %s\n", indent, f.Name, f.Value)
		}
	}
	return bw.Flush()
}

// describeCgroup is the comment after a cgroup's name: what it is for,
// and for a container, whose it is or why it is named after the container.
func (n *cgroupNode) describeCgroup(cg cgroups.Cgroup) string {
	switch cg.Kind {
	case cgroups.KindNodeAllocatable:
		return "  # node allocatable; Guaranteed pods"
	case cgroups.KindQOS:
		return "  # " + string(cg.QOS) + " pods"
	case cgroups.KindPod:
		return "  # pod " + n.podNames[cg.PodUID] + ", " + string(cg.QOS)
	case cgroups.KindContainer:
		if n.runtimeIDs[cg.PodUID+"/"+cg.Container] == "" {
			return "  # no containerID in status; named after the container"
		}
		return "  # container " + cg.Container
	}
	return ""
}
