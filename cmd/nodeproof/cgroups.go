package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodeproof/nodeproof/agent/kube"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
)

// hostMeminfo is where the node's memory comes from when neither a flag nor
// a Node manifest gives it: MemTotal, which is what the kubelet (cadvisor)
// reports as the machine's memory capacity.
const hostMeminfo = "/proc/meminfo"

// cgroupsOptions are the validated arguments of `nodeproof cgroups`.
type cgroupsOptions struct {
	file    string // "-" is stdin
	version cgroups.Version
	driver  cgroups.Driver
	asJSON  bool
	// nodeCPU (millicores) and nodeMemory (bytes) are nil when the flag was
	// not given, so the Node manifest or the host may fill them in.
	nodeCPU, nodeMemory *int64
	// qosReserved is --qos-reserved's memory percentage; nil without one.
	qosReserved     *int64
	qosReservedFlag string
}

func runCgroups(opts cgroupsOptions, stdin io.Reader, stdout, stderr io.Writer) int {
	data, err := readManifestFile(opts.file, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "nodeproof cgroups: %v\n", err)
		return 2
	}
	node, err := buildNode(opts, data, stderr)
	var bad flagValueError
	switch {
	case errors.As(err, &bad):
		// The flag is at fault, not the file.
		fmt.Fprintf(stderr, "nodeproof cgroups: %v\n", err)
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "nodeproof cgroups: %s: %v\n", opts.displayFile(), err)
		return 2
	}
	if opts.asJSON {
		err = writeCgroupsJSON(stdout, node)
	} else {
		err = writeCgroupsTree(stdout, node)
	}
	if err != nil {
		fmt.Fprintf(stderr, "nodeproof cgroups: writing the output: %v\n", err)
		return 1
	}
	return 0
}

func (o cgroupsOptions) displayFile() string {
	if o.file == "-" {
		return "stdin"
	}
	return o.file
}

func newCgroupsCommand() *cobra.Command {
	var f cgroupsFlags
	cmd := &cobra.Command{
		Use:   "cgroups -f FILE [--node-cpu QUANTITY] [--node-memory QUANTITY] [--qos-reserved memory=P%] [--cgroup-version 1|2] [--driver cgroupfs|systemd] [--json]",
		Short: "print the pod and QoS cgroups, with every file value, the kubelet keeps for Pod manifests",
		Long: `Reads a node file (docs/node-file.md, the reading nodeproof admit shares: YAML or
JSON, several documents or a v1 List; an optional Node and the pods bound to it),
plays the kubelet's admission of the arriving pods as nodeproof admit does, and builds
the pod and QoS cgroups a v1.36 kubelet keeps for the pods the node then runs
(core/cgroups: kubepods, the burstable and besteffort tiers, one cgroup per pod and per
running container). It prints each cgroup, parents first, with every file the kubelet
or the container runtime writes and its value, in write order. Paths are relative to
the cgroup root. A container's cgroup is named after its runtime ID
(status.containerStatuses[].containerID) where the manifest has one, else
after the container, which the output says.

The node's capacity comes from --node-cpu and --node-memory; for a flag not given, from
the Node's status.capacity (with its hugepages sizes and pods), and then the Node's
status.allocatable is what the kubelet reported: capacity less allocatable becomes
kube-reserved. Without a Node, from this host, as the kubelet reads its machine (the
CPUs this process may use, MemTotal of /proc/meminfo). Everything else is the v1.36
kubelet's default: no system or kube reservation, the default hard eviction thresholds,
CFS quota on with a 100ms period, pod pids unlimited, maxPods 110, Memory QoS off, and
containers' cpu.weight by the runtimes' current formula (runc >= 1.3.2, crun >= 1.23).

Notes on stderr say what was skipped (other kinds, finished pods), rejected or
preempted, and which pods got a stand-in uid. A bad node file or bad flags exit 2 with
the document and field, or the flag, at fault.`,
		DisableFlagsInUseLine: true,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cli.UsageError(fmt.Errorf("unexpected argument %q (one -f FILE holds every manifest)", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.options(cmd.Flags().Changed)
			if err != nil {
				return cli.UsageError(err)
			}
			return cli.Exit(runCgroups(opts, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "filename", "f", "", "node `FILE`: an optional Node and its pods (YAML or JSON, several documents, a v1 List); - reads stdin")
	fl.StringVar(&f.cpu, "node-cpu", "", "the node's cpu capacity as a `QUANTITY` (3, 2500m)")
	fl.StringVar(&f.memory, "node-memory", "", "the node's memory capacity as a `QUANTITY` (8Gi, 16G)")
	fl.StringVar(&f.qosReserved, "qos-reserved", "", "the kubelet's --qos-reserved, `memory=P%`: the QoS tiers keep P% of the higher tiers' memory requests free (default: none, as the QOSReserved gate is off)")
	fl.StringVar(&f.version, "cgroup-version", "1", "cgroup `VERSION` whose files to print: 1 (the kubelet's own units, cpu.shares) or 2 (cpu.weight, cpu.max, memory.max)")
	fl.StringVar(&f.driver, "driver", string(cgroups.DriverCgroupfs), "the kubelet's cgroup `DRIVER`, cgroupfs or systemd (slice names)")
	fl.BoolVar(&f.asJSON, "json", false, `print [{"path": ..., "container": {"name", "id"}, "files": [{"file": ..., "value": ...}, ...]}, ...] instead of the tree, files in write order ("container" on container cgroups only)`)
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.RegisterFlagCompletionFunc("cgroup-version", cobra.FixedCompletions([]string{"1", "2"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("driver", cobra.FixedCompletions([]string{string(cgroups.DriverCgroupfs), string(cgroups.DriverSystemd)}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// cgroupsFlags are the flags of `nodeproof cgroups` as typed.
type cgroupsFlags struct {
	file, cpu, memory, qosReserved, version, driver string
	asJSON                                          bool
}

// options validates the flags; changed says whether a flag was given.
func (f cgroupsFlags) options(changed func(name string) bool) (cgroupsOptions, error) {
	opts := cgroupsOptions{file: f.file, asJSON: f.asJSON}
	if opts.file == "" {
		return opts, errors.New("-f FILE is required (- reads stdin)")
	}
	var err error
	if changed("node-cpu") {
		if opts.nodeCPU, err = parseNodeQuantity("--node-cpu", f.cpu, pod.CPU); err != nil {
			return opts, err
		}
	}
	if changed("node-memory") {
		if opts.nodeMemory, err = parseNodeQuantity("--node-memory", f.memory, pod.Memory); err != nil {
			return opts, err
		}
	}
	if opts.qosReserved, err = parseQOSReservedFlag(f.qosReserved); err != nil {
		return opts, err
	}
	opts.qosReservedFlag = f.qosReserved
	switch f.version {
	case "1":
		opts.version = cgroups.V1
	case "2":
		opts.version = cgroups.V2
	default:
		return opts, fmt.Errorf("--cgroup-version %q: must be 1 or 2", f.version)
	}
	switch d := cgroups.Driver(f.driver); d {
	case cgroups.DriverCgroupfs, cgroups.DriverSystemd:
		opts.driver = d
	default:
		return opts, fmt.Errorf("--driver %q: must be %s or %s", f.driver, cgroups.DriverCgroupfs, cgroups.DriverSystemd)
	}
	return opts, nil
}

// parseNodeQuantity reads a capacity flag as a Kubernetes quantity, in core
// units (cpu in millicores, memory in bytes, both rounded up as the kubelet
// reads quantities), within the bounds core accepts.
func parseNodeQuantity(flagName, s string, name pod.ResourceName) (*int64, error) {
	what, example, limit := "bytes", "8Gi", int64(cgroups.MaxQuantity)
	if name == pod.CPU {
		what, example, limit = "CPUs", "3 or 2500m", cgroups.MaxMilliCPU
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return nil, fmt.Errorf("%s %q: must be a quantity of %s such as %s: %v", flagName, s, what, example, err)
	}
	bound := resource.NewQuantity(limit, resource.BinarySI)
	if name == pod.CPU {
		bound = resource.NewMilliQuantity(limit, resource.DecimalSI)
	}
	if q.Sign() <= 0 || q.Cmp(*bound) > 0 {
		return nil, fmt.Errorf("%s %q: must be more than 0 and at most %s %s", flagName, s, bound.String(), what)
	}
	v := q.Value()
	if name == pod.CPU {
		v = q.MilliValue()
	}
	return &v, nil
}

// parseQOSReservedFlag reads the kubelet's --qos-reserved: resource=P%
// pairs separated by commas (a later pair for the same resource wins, as
// with the kubelet's map flags), checked by core with the kubelet's words.
func parseQOSReservedFlag(s string) (*int64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	m := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--qos-reserved %q: %q must be resource=percentage, such as memory=100%%", s, pair)
		}
		m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	p, err := cgroups.ParseQOSReserved(m)
	if err != nil {
		return nil, fmt.Errorf("--qos-reserved %q: %v", s, err)
	}
	return p, nil
}

// capacitySource says where one capacity figure came from, for the header.
type capacitySource struct {
	value    int64
	source   string // "--node-cpu", "Node node-1", "this host: /proc/meminfo MemTotal"
	fromHost bool
}

// cgroupNode is everything the output shows: the configuration, the
// hierarchy and its rendered files, and who each pod cgroup belongs to.
type cgroupNode struct {
	cfg         cgroups.Config
	version     cgroups.Version
	cpu, memory capacitySource
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
// (kube.ReadNodeFile, playNode): the Running pods are on the node, every
// other pod arrives and is admitted in file order, with preemption. It
// then builds and renders the hierarchy of the pods the node runs at the
// end. Notes about what it skipped, rejected or assumed go to stderr.
// Every error is about the input.
func buildNode(opts cgroupsOptions, data []byte, stderr io.Writer) (*cgroupNode, error) {
	nf, err := kube.ReadNodeFile(data)
	if err != nil {
		return nil, err
	}
	noteSkipped(stderr, "cgroups", nf)

	cfg := cgroups.DefaultConfig()
	cfg.CgroupDriver = opts.driver
	cfg.QOSReservedMemoryPercent = opts.qosReserved
	n := &cgroupNode{version: opts.version, qosReserved: opts.qosReservedFlag, podNames: map[string]string{}, runtimeIDs: map[string]string{}}
	allocatable, err := n.settleNode(&cfg, opts, nf, stderr)
	if err != nil {
		return nil, err
	}
	// The Memory QoS gate only takes effect on v2 (§5.2); it stays off, as
	// in v1.36, so both versions show the same configuration.
	n.cfg = cfg

	play, err := playNode(nf, allocatable, nf.NodeOrigin, nf.AllocatableField)
	if err != nil {
		return nil, err
	}
	for _, d := range play.decisions {
		if !d.result.Admitted {
			fmt.Fprintf(stderr, "nodeproof cgroups: note: %s arrives and is rejected, so it has no cgroup: %s: %s\n", d.pod.Key(), d.result.Reason, d.result.Message)
		}
	}
	for _, v := range play.preempted {
		fmt.Fprintf(stderr, "nodeproof cgroups: note: %s is preempted by a critical pod's admission, so it has no cgroup (nodeproof admit shows which)\n", v.Pod.Key())
	}
	pods := make([]*pod.Pod, len(play.onNode))
	for i, p := range play.onNode {
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
		return nil, namePod(err, play.onNode)
	}
	files, err := h.Files(opts.version)
	if err != nil {
		return nil, err
	}
	n.hierarchy, n.files = h, files
	return n, nil
}

// flagValueError is a flag's value that cannot describe a node, found only
// once the node file is read; the message names the flag, not the file.
type flagValueError struct{ error }

// settleNode fills in the kubelet's configuration for the node and returns
// the allocatable pods are admitted against. The capacity is each flag
// given, else the Node's status.capacity, else this host; a Node also gives
// the hugepages sizes and maxPods (its "pods"). A Node's allocatable is
// what the kubelet reported, capacity less its reservations: the gap
// becomes kube-reserved, less the default 100Mi memory.available hard
// eviction threshold and the hugepages, which the kubelet also takes off
// allocatable but not off the kubepods cgroup (§5.6). A flag sets a
// resource's capacity with no reservation, so its allocatable is the
// kubelet's default one, as without a Node.
func (n *cgroupNode) settleNode(cfg *cgroups.Config, opts cgroupsOptions, nf *kube.NodeFile, stderr io.Writer) (pod.ResourceList, error) {
	cfg.Capacity = pod.ResourceList{}
	node := nf.Node
	if node != nil {
		n.nodeName = node.Name
		for _, name := range node.Capacity.Names() {
			switch {
			case name == pod.EphemeralStorage:
				cfg.Capacity[name] = node.Capacity[name]
			case pod.IsHugePages(name):
				size, err := cgroups.HugePageSizeFromResourceName(name)
				if err != nil {
					return nil, nf.NodeOrigin.Errorf("status.capacity."+string(name), "%v", err)
				}
				cfg.HugePageSizes = append(cfg.HugePageSizes, size)
				cfg.Capacity[name] = node.Capacity[name]
			case name == pod.Pods:
				if v := node.Capacity[name]; v >= 1 && v <= cgroups.MaxPodsBound {
					cfg.MaxPods = int(v)
				} else {
					return nil, nf.NodeOrigin.Errorf("status.capacity.pods", "%d must be within 1 and %d", v, cgroups.MaxPodsBound)
				}
			}
		}
	}
	var err error
	if n.cpu, err = pickCapacity(opts.nodeCPU, "--node-cpu", node, pod.CPU, hostCPU); err != nil {
		return nil, err
	}
	if n.memory, err = pickCapacity(opts.nodeMemory, "--node-memory", node, pod.Memory, hostMemory); err != nil {
		return nil, err
	}
	cfg.Capacity[pod.CPU], cfg.Capacity[pod.Memory] = n.cpu.value, n.memory.value
	// Output that depends on the machine it runs on says so, also with
	// --json, which has no header.
	var fromHost []string
	if n.cpu.fromHost {
		fromHost = append(fromHost, "cpu "+n.cpuString()+" ("+hostSourceOf(pod.CPU)+")")
	}
	if n.memory.fromHost {
		fromHost = append(fromHost, "memory "+n.memoryString()+" ("+hostSourceOf(pod.Memory)+")")
	}
	if len(fromHost) > 0 {
		fmt.Fprintf(stderr, "nodeproof cgroups: node capacity of this host: %s; give --node-cpu and --node-memory for another node\n", strings.Join(fromHost, ", "))
	}

	fromFlag := map[pod.ResourceName]bool{pod.CPU: opts.nodeCPU != nil, pod.Memory: opts.nodeMemory != nil}
	if node != nil {
		var hugePages int64
		for name, q := range node.Capacity {
			if pod.IsHugePages(name) {
				hugePages += q
			}
		}
		evictionMemory := hardEvictionMemory(*cfg)
		gap := func(name pod.ResourceName) int64 { return node.Capacity[name] - nf.Allocatable[name] }
		reserved := pod.ResourceList{}
		if !fromFlag[pod.CPU] && gap(pod.CPU) > 0 {
			reserved[pod.CPU] = gap(pod.CPU)
		}
		if g := gap(pod.Memory) - hugePages - evictionMemory; !fromFlag[pod.Memory] && g > 0 {
			reserved[pod.Memory] = g
		}
		if len(reserved) > 0 {
			cfg.KubeReserved, n.reserved = reserved, reserved
		}
	}

	// The allocatable pods are admitted against: the Node's, but for a
	// resource a flag sets; without a Node, the kubelet's for this capacity
	// and maxPods.
	defaults := cgroups.ReportedAllocatable(*cfg)
	allocatable := pod.ResourceList{pod.Pods: int64(cfg.MaxPods)}
	if node != nil {
		allocatable = nf.Allocatable.Clone()
	}
	for name, set := range fromFlag {
		if set || node == nil {
			allocatable[name] = defaults[name]
		}
	}
	// A capacity the flag set so small that nothing of it is allocatable
	// would reject every pod, and the rejections would blame the pods.
	if fromFlag[pod.Memory] && allocatable[pod.Memory] <= 0 {
		return nil, flagValueError{fmt.Errorf("--node-memory %s leaves no allocatable memory: the kubelet keeps the memory.available hard eviction threshold (%s) off the capacity; give more than that",
			n.memoryString(), kube.FormatQuantity(pod.Memory, hardEvictionMemory(*cfg)))}
	}
	if fromFlag[pod.CPU] && allocatable[pod.CPU] <= 0 {
		return nil, flagValueError{fmt.Errorf("--node-cpu %s leaves no allocatable cpu; give a positive quantity", n.cpuString())}
	}
	return allocatable, nil
}

// hardEvictionMemory is what the configuration's memory.available hard
// eviction threshold holds back of allocatable.
func hardEvictionMemory(cfg cgroups.Config) int64 {
	withoutEviction := cfg
	withoutEviction.HardEviction = nil
	return cgroups.NodeAllocatableReservation(cfg)[pod.Memory] - cgroups.NodeAllocatableReservation(withoutEviction)[pod.Memory]
}

// pickCapacity takes a flag's value, else the Node's capacity, else the
// host's.
func pickCapacity(flagValue *int64, flagName string, node *kube.Node, name pod.ResourceName, host func() (int64, error)) (capacitySource, error) {
	if flagValue != nil {
		return capacitySource{value: *flagValue, source: flagName}, nil
	}
	if node != nil {
		if v, ok := node.Capacity[name]; ok && v > 0 {
			return capacitySource{value: v, source: "Node " + node.Name}, nil
		}
		return capacitySource{}, fmt.Errorf("status.capacity of Node %s has no %s: give %s", node.Name, name, flagName)
	}
	v, err := host()
	if err != nil {
		return capacitySource{}, fmt.Errorf("this host's %s capacity: %v; give %s", name, err, flagName)
	}
	return capacitySource{v, "this host: " + hostSourceOf(name), true}, nil
}

func hostSourceOf(name pod.ResourceName) string {
	if name == pod.CPU {
		return "the CPUs this process may use"
	}
	return hostMeminfo + " MemTotal"
}

func hostCPU() (int64, error) { return int64(runtime.NumCPU()) * 1000, nil }

// memTotal matches the MemTotal line of /proc/meminfo, in KiB.
var memTotal = regexp.MustCompile(`^MemTotal:\s+(\d+) kB$`)

func hostMemory() (int64, error) {
	f, err := os.Open(hostMeminfo)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := memTotal.FindStringSubmatch(sc.Text()); m != nil {
			kib, err := strconv.ParseInt(m[1], 10, 64)
			if err != nil || kib <= 0 || kib > cgroups.MaxQuantity>>10 {
				return 0, fmt.Errorf("%s: MemTotal %q is not a usable size", hostMeminfo, m[1])
			}
			return kib << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s has no MemTotal line", hostMeminfo)
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

func writeCgroupsJSON(w io.Writer, n *cgroupNode) error {
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
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// writeCgroupsTree prints a header saying what the node is, then the
// hierarchy as an indented tree: each cgroup's name with a slash, then its
// files, one `name = value` per line in the order they are written, then
// its children. The hierarchy lists parents first and siblings by name.
func writeCgroupsTree(w io.Writer, n *cgroupNode) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# cgroup v%d, driver %s; node cpu %s (%s), memory %s (%s)", n.version, n.cfg.CgroupDriver,
		n.cpuString(), n.cpu.source, n.memoryString(), n.memory.source)
	if len(n.reserved) > 0 {
		fmt.Fprintf(bw, "; kube-reserved %s (Node %s's capacity less allocatable, hard eviction and hugepages)", formatResources(n.reserved), n.nodeName)
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

// cpuString and memoryString print the capacity as Kubernetes quantities
// ("3", "2500m"; "8Gi").
func (n *cgroupNode) cpuString() string {
	return resource.NewMilliQuantity(n.cpu.value, resource.DecimalSI).String()
}

func (n *cgroupNode) memoryString() string {
	return resource.NewQuantity(n.memory.value, resource.BinarySI).String()
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
