package main

import (
	"bufio"
	"crypto/md5"
	"encoding/hex"
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
	if err != nil {
		fmt.Fprintf(stderr, "nodeproof cgroups: %s: %v\n", opts.displayFile(), err)
		return 2
	}
	if opts.asJSON {
		err = writeCgroupsJSON(stdout, node.files)
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
		Long: `Reads Pod manifests, builds the pod and QoS cgroups a v1.36 kubelet keeps for them
(core/cgroups: kubepods, the burstable and besteffort tiers, one cgroup per pod and per
running container) and prints each cgroup, parents first, with every file the kubelet or
the container runtime writes and its value. Paths are relative to the cgroup root.

The node's capacity comes from --node-cpu and --node-memory; for a flag not given, from
the status.capacity of a Node manifest in the file (with its hugepages sizes and pods);
else from this host, as the kubelet reads its machine (the CPUs this process may use,
MemTotal of /proc/meminfo). Everything else is the v1.36 kubelet's default: no system or
kube reservation, the default hard eviction thresholds, CFS quota on with a 100ms
period, pod pids unlimited, maxPods 110, Memory QoS off, and containers' cpu.weight by
the runtimes' current formula (runc >= 1.3.2, crun >= 1.23).

Documents of other kinds (Deployments, Services) and finished pods are skipped, and a pod
without metadata.uid is named after a hash of its namespace and name, each with a note on
stderr. Bad manifests, pods that would not fit the node and bad flags exit 2 with the
document and field, or the flag, at fault.`,
		DisableFlagsInUseLine: true,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError(fmt.Errorf("unexpected argument %q (one -f FILE holds every manifest)", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.options(cmd.Flags().Changed)
			if err != nil {
				return usageError(err)
			}
			return exitWith(runCgroups(opts, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "filename", "f", "", "`FILE` of Pod manifests (YAML or JSON, several documents, a v1 List); - reads stdin")
	fl.StringVar(&f.cpu, "node-cpu", "", "the node's cpu capacity as a `QUANTITY` (3, 2500m)")
	fl.StringVar(&f.memory, "node-memory", "", "the node's memory capacity as a `QUANTITY` (8Gi, 16G)")
	fl.StringVar(&f.qosReserved, "qos-reserved", "", "the kubelet's --qos-reserved, `memory=P%`: the QoS tiers keep P% of the higher tiers' memory requests free (default: none, as the QOSReserved gate is off)")
	fl.StringVar(&f.version, "cgroup-version", "1", "cgroup `VERSION` whose files to print: 1 (the kubelet's own units, cpu.shares) or 2 (cpu.weight, cpu.max, memory.max)")
	fl.StringVar(&f.driver, "driver", string(cgroups.DriverCgroupfs), "the kubelet's cgroup `DRIVER`, cgroupfs or systemd (slice names)")
	fl.BoolVar(&f.asJSON, "json", false, `print [{"path": ..., "files": {...}}, ...] instead of the tree`)
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
	hierarchy   cgroups.Hierarchy
	files       []cgroups.CgroupFiles
	podNames    map[string]string // pod UID → namespace/name
}

// buildNode decodes the manifests, settles the node's capacity and builds
// and renders the hierarchy. Documents of other kinds are skipped, so that
// an application's manifests (Deployments, Services) can be read whole;
// notes about what it skipped or assumed go to stderr. Every error is
// about the input.
func buildNode(opts cgroupsOptions, data []byte, stderr io.Writer) (*cgroupNode, error) {
	manifests, err := kube.Decode(data, kube.Options{SkipUnknownKinds: true})
	if err != nil {
		return nil, err
	}
	for _, s := range manifests.Skipped {
		where := fmt.Sprintf("document %d", s.Document)
		if s.Path != "" {
			where += " " + s.Path
		}
		what := s.APIVersion + " " + s.Kind
		if s.Name != "" {
			what += fmt.Sprintf(" %q", s.Name)
		}
		fmt.Fprintf(stderr, "nodeproof cgroups: skipped %s: %s (only Pods and Nodes are read)\n", where, what)
	}

	cfg := cgroups.DefaultConfig()
	cfg.CgroupDriver = opts.driver
	cfg.QOSReservedMemoryPercent = opts.qosReserved
	n := &cgroupNode{version: opts.version, qosReserved: opts.qosReservedFlag, podNames: map[string]string{}}
	if err := n.settleCapacity(&cfg, opts, manifests.Nodes, stderr); err != nil {
		return nil, err
	}
	// The Memory QoS gate only takes effect on v2 (§5.2); it stays off, as
	// in v1.36, so both versions show the same configuration.
	n.cfg = cfg

	var pods []*pod.Pod
	for i := range manifests.Pods {
		p := &manifests.Pods[i]
		if p.IsTerminal() {
			fmt.Fprintf(stderr, "nodeproof cgroups: skipped pod %s: phase %s (the kubelet removes a finished pod's cgroups)\n", p.Key(), p.Phase)
			continue
		}
		if p.UID == "" {
			p.UID = standInUID(p)
			fmt.Fprintf(stderr, "nodeproof cgroups: pod %s has no metadata.uid; its cgroup is named after a hash of its namespace and name, pod%s\n", p.Key(), p.UID)
		}
		n.podNames[p.UID] = p.Key()
		pods = append(pods, p)
	}
	h, err := cgroups.Build(cfg, pods)
	if err != nil {
		return nil, namePod(err, pods)
	}
	if err := checkAdmitted(cfg, pods); err != nil {
		return nil, err
	}
	files, err := h.Files(opts.version)
	if err != nil {
		return nil, err
	}
	n.hierarchy, n.files = h, files
	return n, nil
}

// settleCapacity fills in the node's capacity: each flag given, else the
// Node manifest's status.capacity, else this host. A Node manifest also
// gives the hugepages sizes and maxPods (its "pods" capacity).
func (n *cgroupNode) settleCapacity(cfg *cgroups.Config, opts cgroupsOptions, nodes []kube.Node, stderr io.Writer) error {
	cfg.Capacity = pod.ResourceList{}
	needNode := opts.nodeCPU == nil || opts.nodeMemory == nil
	var node *kube.Node
	if len(nodes) > 1 && needNode {
		names := make([]string, len(nodes))
		for i, nd := range nodes {
			names[i] = nd.Name
		}
		return fmt.Errorf("%d Node manifests (%s): keep one, or give --node-cpu and --node-memory", len(nodes), strings.Join(names, ", "))
	}
	if len(nodes) == 1 {
		node = &nodes[0]
		for _, name := range node.Capacity.Names() {
			switch {
			case name == pod.EphemeralStorage:
				cfg.Capacity[name] = node.Capacity[name]
			case pod.IsHugePages(name):
				size, err := cgroups.HugePageSizeFromResourceName(name)
				if err != nil {
					return fmt.Errorf("status.capacity[%s] of Node %s: %v", name, node.Name, err)
				}
				cfg.HugePageSizes = append(cfg.HugePageSizes, size)
				cfg.Capacity[name] = node.Capacity[name]
			case name == pod.Pods:
				if v := node.Capacity[name]; v >= 1 && v <= cgroups.MaxPodsBound {
					cfg.MaxPods = int(v)
				} else {
					return fmt.Errorf("status.capacity.pods of Node %s: %d must be within 1 and %d", node.Name, v, cgroups.MaxPodsBound)
				}
			}
		}
	}
	var err error
	if n.cpu, err = pickCapacity(opts.nodeCPU, "--node-cpu", node, pod.CPU, hostCPU); err != nil {
		return err
	}
	if n.memory, err = pickCapacity(opts.nodeMemory, "--node-memory", node, pod.Memory, hostMemory); err != nil {
		return err
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
	return nil
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

// checkAdmitted refuses pods that could not all run on the node, which Build
// has validated: the
// kubelet admits a pod only while the cpu and memory requests of the pods
// it runs (overhead included) fit the allocatable it reports, so no kubelet
// holds such a set, and with --qos-reserved their memory would give the
// QoS tiers negative limits.
func checkAdmitted(cfg cgroups.Config, pods []*pod.Pod) error {
	allocatable := cgroups.ReportedAllocatable(cfg)
	for _, name := range []pod.ResourceName{pod.CPU, pod.Memory} {
		// Build has bounded every quantity (a pod's requests stay far below
		// 1<<62), so a sum held at 1<<62 cannot overflow.
		var sum int64
		for _, p := range pods {
			sum = min(sum+p.EffectiveRequests(pod.Options{})[name], 1<<62)
		}
		if sum > allocatable[name] {
			format := func(v int64) string { return resource.NewQuantity(v, resource.BinarySI).String() }
			if name == pod.CPU {
				format = func(v int64) string { return resource.NewMilliQuantity(v, resource.DecimalSI).String() }
			}
			return fmt.Errorf("the pods request %s %s in all, more than the node's allocatable %s (capacity %s less reservations and hard eviction thresholds): the kubelet would not admit them all",
				format(sum), name, format(allocatable[name]), format(cfg.Capacity[name]))
		}
	}
	return nil
}

// standInUID names a pod without metadata.uid (a hand-written manifest)
// deterministically: the md5 of namespace/name in hex, the shape of the
// UIDs the kubelet gives static pods (a hash of their manifest).
func standInUID(p *pod.Pod) string {
	sum := md5.Sum([]byte(p.Key()))
	return hex.EncodeToString(sum[:])
}

var podIndex = regexp.MustCompile(`^pods\[(\d+)\]`)

// namePod puts the pod's namespace/name in front of a core error about
// pods[i], which is an index the reader never wrote.
func namePod(err error, pods []*pod.Pod) error {
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
	return fmt.Errorf("pod %s: %w", pods[i].Key(), err)
}

// cgroupJSON is one element of --json's output.
type cgroupJSON struct {
	Path  string            `json:"path"`
	Files map[string]string `json:"files"`
}

func writeCgroupsJSON(w io.Writer, files []cgroups.CgroupFiles) error {
	out := make([]cgroupJSON, 0, len(files))
	for _, cf := range files {
		m := make(map[string]string, len(cf.Files))
		for _, f := range cf.Files {
			m[f.Name] = f.Value
		}
		out = append(out, cgroupJSON{Path: cf.Path, Files: m})
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
	if n.qosReserved != "" {
		fmt.Fprintf(bw, "; --qos-reserved %s", n.qosReserved)
	}
	fmt.Fprintln(bw)
	for i, cg := range n.hierarchy {
		depth := strings.Count(cg.Path, "/")
		indent := strings.Repeat("  ", depth)
		name := cg.Path[strings.LastIndexByte(cg.Path, '/')+1:]
		fmt.Fprintf(bw, "%s%s/%s\n", indent, name, describeCgroup(cg, n.podNames))
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

// describeCgroup is the comment after a cgroup's name: what it is for.
func describeCgroup(cg cgroups.Cgroup, podNames map[string]string) string {
	switch cg.Kind {
	case cgroups.KindNodeAllocatable:
		return "  # node allocatable; Guaranteed pods"
	case cgroups.KindQOS:
		return "  # " + string(cg.QOS) + " pods"
	case cgroups.KindPod:
		return "  # pod " + podNames[cg.PodUID] + ", " + string(cg.QOS)
	}
	return ""
}
