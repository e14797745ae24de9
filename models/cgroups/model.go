package cgroups

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Container is an init or app container. Quantities: cpu in millicores,
// bytes otherwise. A name missing from a map is "not set".
type Container struct {
	Name     string
	Requests map[string]int64
	Limits   map[string]int64
	// Sidecar marks a restartable init container.
	Sidecar bool
}

// Pod is the model's pod.
type Pod struct {
	UID      string
	Init     []Container
	Apps     []Container
	Overhead map[string]int64
	// HasPodResources is true when spec.resources is set; PodRequests and
	// PodLimits are its lists.
	HasPodResources        bool
	PodRequests, PodLimits map[string]int64
}

// Node is the kubelet configuration the model reads.
type Node struct {
	Systemd bool
	// Root are the cgroup root's path components (none for "/").
	Root []string
	// Capacity, SystemReserved, KubeReserved as in the kubelet; keys "cpu",
	// "memory", "pid", "ephemeral-storage", "hugepages-<size>".
	Capacity, SystemReserved, KubeReserved map[string]int64
	// EvictionMemory is the memory.available hard threshold in bytes (0 for none);
	// EvictionNodefsPercent the nodefs.available one as a fraction (0 for none).
	EvictionMemory        int64
	EvictionNodefsPercent float32
	EnforcePods           bool // "pods" in enforceNodeAllocatable
	CFSQuota              bool
	PeriodUS              int64
	PeriodGate            bool  // CustomCPUCFSQuotaPeriod
	PodLevelGate          bool  // PodLevelResources
	QOSReserved           int64 // percent; -1 when not set
	MemoryQoS             bool
	Tiered                bool // memoryReservationPolicy TieredReservation
	PageSizes             []int64
	PodPids               int64
	QuadraticContainers   bool // runtime's new cpu.weight formula for containers
}

// File is one write.
type File struct{ Name, Value string }

// Group is one cgroup and its writes in order on cgroup v1 and v2.
type Group struct {
	Path   string
	V1, V2 []File
}

// --- arithmetic of §5.1 and §5.7 -----------------------------------------

func shares(milli int64) int64 {
	s := milli * 1024 / 1000
	if s < 2 {
		s = 2
	}
	if s > 262144 {
		s = 262144
	}
	return s
}

// quota over the period the gate allows; 0 for no limit.
func quota(milli, period int64, gate bool) int64 {
	if milli == 0 {
		return 0
	}
	if !gate {
		period = 100000
	}
	q := milli * period / 1000
	if q < 1000 {
		q = 1000
	}
	return q
}

func linearWeight(s int64) int64 {
	if s >= 262144 {
		return 10000
	}
	return 1 + (s-2)*9999/262142
}

func quadraticWeight(s int64) int64 {
	if s <= 2 {
		return 1
	}
	if s >= 262144 {
		return 10000
	}
	l := math.Log2(float64(s))
	return int64(math.Ceil(math.Pow(10, (l*l+125*l)/612-7.0/34)))
}

// --- §5.4: effective requests and limits -----------------------------------

func add(dst, src map[string]int64) {
	for k, v := range src {
		dst[k] += v
	}
}

// aggregate is the most the pod needs at once: app containers plus all
// sidecars, or any init phase (a regular init container with the sidecars
// before it; a sidecar with itself and the sidecars before it).
func aggregate(p Pod, pick func(Container) map[string]int64) map[string]int64 {
	steady := map[string]int64{}
	for _, c := range p.Apps {
		add(steady, pick(c))
	}
	var phases []map[string]int64
	sidecarsSoFar := map[string]int64{}
	for _, c := range p.Init {
		phase := map[string]int64{}
		add(phase, pick(c))
		add(phase, sidecarsSoFar)
		if c.Sidecar {
			add(sidecarsSoFar, pick(c))
			add(steady, pick(c))
		}
		phases = append(phases, phase)
	}
	out := map[string]int64{}
	for k, v := range steady {
		out[k] = v
	}
	for _, ph := range phases {
		for k, v := range ph {
			if cur, ok := out[k]; !ok || v > cur {
				out[k] = v
			}
		}
	}
	return out
}

func supportedAtPodLevel(name string) bool {
	return name == "cpu" || name == "memory" || strings.HasPrefix(name, "hugepages-")
}

// Requests are the pod's effective requests (§5.4): the aggregate, pod-level
// requests replacing it where podLevel allows, plus overhead.
func Requests(p Pod, podLevel bool) map[string]int64 {
	r := aggregate(p, func(c Container) map[string]int64 { return c.Requests })
	if podLevel && p.HasPodResources {
		for k, v := range p.PodRequests {
			if supportedAtPodLevel(k) {
				r[k] = v
			}
		}
	}
	add(r, p.Overhead)
	return r
}

// Limits are the pod's effective limits (§5.4): overhead is added only to
// limits that are present.
func Limits(p Pod, podLevel bool) map[string]int64 {
	l := aggregate(p, func(c Container) map[string]int64 { return c.Limits })
	if podLevel && p.HasPodResources {
		for k, v := range p.PodLimits {
			if supportedAtPodLevel(k) {
				l[k] = v
			}
		}
	}
	for k, v := range p.Overhead {
		if _, ok := l[k]; ok {
			l[k] += v
		}
	}
	return l
}

// QOS classifies a pod as v1.36 does (GetPodQOS without a status): by
// spec.resources when it is set and the PodLevelResources gate is on, else
// by the containers.
func QOS(p Pod, podLevelGate bool) string {
	var reqCPU, reqMem, limCPU, limMem int64
	allLimited := true
	if podLevelGate && p.HasPodResources {
		reqCPU, reqMem = p.PodRequests["cpu"], p.PodRequests["memory"]
		limCPU, limMem = p.PodLimits["cpu"], p.PodLimits["memory"]
		allLimited = limCPU > 0 && limMem > 0
	} else {
		for _, c := range append(append([]Container(nil), p.Init...), p.Apps...) {
			reqCPU += c.Requests["cpu"]
			reqMem += c.Requests["memory"]
			limCPU += c.Limits["cpu"]
			limMem += c.Limits["memory"]
			if c.Limits["cpu"] <= 0 || c.Limits["memory"] <= 0 {
				allLimited = false
			}
		}
	}
	if reqCPU == 0 && reqMem == 0 && limCPU == 0 && limMem == 0 {
		return "BestEffort"
	}
	if allLimited && reqCPU == limCPU && reqMem == limMem {
		return "Guaranteed"
	}
	return "Burstable"
}

// --- names (§5.7) ----------------------------------------------------------

func (n Node) path(components ...string) string {
	all := append(append([]string(nil), n.Root...), components...)
	if !n.Systemd {
		return strings.Join(all, "/")
	}
	var parts []string
	name := ""
	for i, c := range all {
		if i > 0 {
			name += "-"
		}
		name += strings.ReplaceAll(c, "-", "_")
		parts = append(parts, name+".slice")
	}
	return strings.Join(parts, "/")
}

func (n Node) podPath(qos, uid string) string {
	switch qos {
	case "Burstable":
		return n.path("kubepods", "burstable", "pod"+uid)
	case "BestEffort":
		return n.path("kubepods", "besteffort", "pod"+uid)
	}
	return n.path("kubepods", "pod"+uid)
}

func (n Node) containerPath(podPath, name string) string {
	if n.Systemd {
		return podPath + "/cri-containerd-" + name + ".scope"
	}
	return podPath + "/" + name
}

// --- rendering ---------------------------------------------------------------

// cg collects one cgroup's settings; a nil pointer is not written.
type cg struct {
	shares, quota, period, memory, pids *int64
	quadratic                           bool
	unified                             map[string]string
	huge                                map[int64]int64
}

func ptr(v int64) *int64 { return &v }

var pageNames = map[int64]string{64 << 10: "64KB", 2 << 20: "2MB", 32 << 20: "32MB", 512 << 20: "512MB", 1 << 30: "1GB", 16 << 30: "16GB"}

func (c cg) render(version int) []File {
	var out []File
	w := func(name string, v int64) { out = append(out, File{name, strconv.FormatInt(v, 10)}) }
	if version == 1 {
		if c.shares != nil {
			w("cpu.shares", *c.shares)
		}
		// runc's order: the period first, so the quota is checked against it.
		if c.period != nil {
			w("cpu.cfs_period_us", *c.period)
		}
		if c.quota != nil && *c.quota != 0 {
			w("cpu.cfs_quota_us", *c.quota)
		}
		if c.memory != nil && *c.memory != 0 {
			w("memory.limit_in_bytes", *c.memory)
		}
	} else {
		if c.shares != nil {
			if c.quadratic {
				w("cpu.weight", quadraticWeight(*c.shares))
			} else {
				w("cpu.weight", linearWeight(*c.shares))
			}
		}
		if c.period != nil {
			q := "max"
			if c.quota != nil && *c.quota > 0 {
				q = strconv.FormatInt(*c.quota, 10)
			}
			out = append(out, File{"cpu.max", q + " " + strconv.FormatInt(*c.period, 10)})
		}
		if c.memory != nil && *c.memory != 0 {
			w("memory.max", *c.memory)
		}
		var keys []string
		for k := range c.unified {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, File{k, c.unified[k]})
		}
	}
	var sizes []int64
	for s := range c.huge {
		sizes = append(sizes, s)
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	for _, s := range sizes {
		if version == 1 {
			w("hugetlb."+pageNames[s]+".limit_in_bytes", c.huge[s])
		} else {
			w("hugetlb."+pageNames[s]+".max", c.huge[s])
		}
	}
	if c.pids != nil && *c.pids != 0 {
		w("pids.max", *c.pids)
	}
	return out
}

var hugeSizes = map[string]int64{"hugepages-64Ki": 64 << 10, "hugepages-2Mi": 2 << 20, "hugepages-2048Ki": 2 << 20, "hugepages-1Gi": 1 << 30}

// hostHuge gives every host page size the value v.
func (n Node) hostHuge(v int64) map[int64]int64 {
	m := map[int64]int64{}
	for _, s := range n.PageSizes {
		m[s] = v
	}
	return m
}

// --- the hierarchy -----------------------------------------------------------

// Allocatable is capacity − system − kube, at least 0 (no eviction).
func (n Node) Allocatable() map[string]int64 {
	out := map[string]int64{}
	for k, v := range n.Capacity {
		a := v - n.SystemReserved[k] - n.KubeReserved[k]
		if a < 0 {
			a = 0
		}
		out[k] = a
	}
	return out
}

// Running lists the containers that have a cgroup while the pod runs: its
// sidecars, then its app containers. Regular init containers have exited.
func Running(p Pod) []Container {
	var running []Container
	for _, c := range p.Init {
		if c.Sidecar {
			running = append(running, c)
		}
	}
	return append(running, p.Apps...)
}

// Expected returns every cgroup the kubelet keeps for the pods on node n,
// parents first and siblings by name, with the writes for both versions.
func Expected(n Node, pods []Pod) ([]Group, error) {
	if err := Validate(n); err != nil {
		return nil, err
	}
	var groups []Group
	put := func(path string, c cg) { groups = append(groups, Group{path, c.render(1), c.render(2)}) }

	// Per-class sums for the QoS tiers (§5.5).
	var burstableCPU, guaranteedMem, burstableMem int64
	for _, p := range pods {
		switch QOS(p, n.PodLevelGate) {
		case "Burstable":
			burstableCPU += Requests(p, n.PodLevelGate)["cpu"]
			burstableMem += Requests(p, true)["memory"]
		case "Guaranteed":
			guaranteedMem += Requests(p, true)["memory"]
		}
	}

	// kubepods: node allocatable, then the QoS update's hugepages and memory.min.
	alloc := n.Allocatable()
	if !n.EnforcePods {
		alloc = n.Capacity
	}
	var root cg
	if v, ok := alloc["cpu"]; ok {
		root.shares = ptr(shares(v))
	}
	if v, ok := alloc["memory"]; ok {
		root.memory = ptr(v)
	}
	if v, ok := alloc["pid"]; ok {
		root.pids = ptr(v)
	}
	root.huge = n.hostHuge(1 << 62)
	burstable := cg{shares: ptr(shares(burstableCPU)), huge: n.hostHuge(1 << 62)}
	besteffort := cg{shares: ptr(2), huge: n.hostHuge(1 << 62)}
	// Unified files exist only on v2; render leaves them out of v1.
	if n.MemoryQoS {
		if n.Tiered {
			root.unified = map[string]string{"memory.min": strconv.FormatInt(guaranteedMem+burstableMem, 10)}
			burstable.unified = map[string]string{"memory.low": strconv.FormatInt(burstableMem, 10)}
		} else {
			root.unified = map[string]string{"memory.min": "0"}
			burstable.unified = map[string]string{"memory.low": "0"}
		}
	}
	if mem := n.Allocatable()["memory"]; n.QOSReserved >= 0 && mem > 0 {
		burstable.memory = ptr(mem - guaranteedMem*n.QOSReserved/100)
		besteffort.memory = ptr(*burstable.memory - burstableMem*n.QOSReserved/100)
	}
	put(n.path("kubepods"), root)
	put(n.path("kubepods", "burstable"), burstable)
	put(n.path("kubepods", "besteffort"), besteffort)

	for _, p := range pods {
		qos := QOS(p, n.PodLevelGate)
		pp := n.podPath(qos, p.UID)
		put(pp, podGroup(n, p, qos))
		for _, c := range Running(p) {
			put(n.containerPath(pp, c.Name), containerGroup(n, c))
		}
	}
	keys := make(map[string][]string, len(groups))
	for _, g := range groups {
		keys[g.Path] = strings.Split(g.Path, "/")
	}
	sort.SliceStable(groups, func(i, j int) bool { return lessComponents(keys[groups[i].Path], keys[groups[j].Path]) })
	return groups, nil
}

func lessComponents(a, b []string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// podGroup is §5.2 plus the creation extras (pids, hugepages 0 for every
// other host size).
func podGroup(n Node, p Pod, qos string) cg {
	req := Requests(p, n.PodLevelGate)
	lim := Limits(p, n.PodLevelGate)
	var c cg
	q := quota(lim["cpu"], n.PeriodUS, n.PeriodGate)
	if !n.CFSQuota {
		q = -1
	}
	switch qos {
	case "Guaranteed":
		c = cg{shares: ptr(shares(req["cpu"])), quota: ptr(q), period: ptr(n.PeriodUS), memory: ptr(lim["memory"])}
	case "Burstable":
		c = cg{shares: ptr(shares(req["cpu"]))}
		cpuAll, memAll := declaresAll(p)
		if n.PodLevelGate && p.HasPodResources {
			cpuAll = cpuAll || p.PodLimits["cpu"] != 0
			memAll = memAll || p.PodLimits["memory"] != 0
		}
		if cpuAll {
			c.quota, c.period = ptr(q), ptr(n.PeriodUS)
		}
		if memAll {
			c.memory = ptr(lim["memory"])
		}
	default:
		c = cg{shares: ptr(2)}
	}
	c.huge = n.hostHuge(0)
	for name, v := range req {
		if size, ok := hugeSizes[name]; ok {
			c.huge[size] += v
		}
	}
	if n.PodPids > 0 {
		c.pids = ptr(n.PodPids)
	}
	if n.MemoryQoS && n.Tiered && req["memory"] > 0 {
		key := "memory.low"
		if qos == "Guaranteed" {
			key = "memory.min"
		}
		c.unified = map[string]string{key: strconv.FormatInt(req["memory"], 10)}
	}
	return c
}

// declaresAll reports whether every app container, and every init
// container seen with the sidecars before it, has a cpu (memory) limit.
func declaresAll(p Pod) (cpu, mem bool) {
	cpu, mem = true, true
	check := func(l map[string]int64) {
		cpu = cpu && l["cpu"] != 0
		mem = mem && l["memory"] != 0
	}
	for _, c := range p.Apps {
		check(c.Limits)
	}
	before := map[string]int64{}
	for _, c := range p.Init {
		seen := map[string]int64{}
		add(seen, before)
		add(seen, c.Limits)
		if c.Sidecar {
			add(before, c.Limits)
		}
		check(seen)
	}
	return cpu, mem
}

// containerGroup is kuberuntime's container config (§5.1 last paragraph).
func containerGroup(n Node, c Container) cg {
	req, hasReq := c.Requests["cpu"]
	if !hasReq && c.Limits["cpu"] != 0 {
		req = c.Limits["cpu"]
	}
	g := cg{shares: ptr(shares(req)), quadratic: n.QuadraticContainers}
	if n.CFSQuota {
		period := int64(100000)
		if n.PeriodGate {
			period = n.PeriodUS
		}
		g.period = ptr(period)
		if q := quota(c.Limits["cpu"], period, true); q != 0 {
			g.quota = ptr(q)
		}
	}
	if m := c.Limits["memory"]; m != 0 {
		g.memory = ptr(m)
	}
	g.huge = n.hostHuge(0)
	for name, v := range c.Limits {
		if size, ok := hugeSizes[name]; ok {
			g.huge[size] = v
		}
	}
	for name, v := range c.Requests {
		if size, ok := hugeSizes[name]; ok {
			g.huge[size] = v
		}
	}
	return g
}

// --- §5.6 validation ---------------------------------------------------------

// Validate is the kubelet's validateNodeAllocatable: every reservation,
// hard eviction included, within its capacity; resources listed by name.
func Validate(n Node) error {
	reserved := map[string]int64{}
	for k := range n.Capacity {
		reserved[k] = n.SystemReserved[k] + n.KubeReserved[k]
	}
	if _, ok := n.Capacity["memory"]; ok && n.EvictionMemory > 0 {
		reserved["memory"] += n.EvictionMemory
	}
	if es, ok := n.Capacity["ephemeral-storage"]; ok && n.EvictionNodefsPercent > 0 {
		reserved["ephemeral-storage"] += int64(float64(es) * float64(n.EvictionNodefsPercent))
	}
	var names []string
	for k := range reserved {
		names = append(names, k)
	}
	sort.Strings(names)
	var msgs []string
	for _, k := range names {
		if reserved[k] != 0 && reserved[k] > n.Capacity[k] {
			msgs = append(msgs, fmt.Sprintf("Resource %q has a reservation of %s but capacity of %s. Expected capacity >= reservation.",
				k, quantityString(k, reserved[k]), quantityString(k, n.Capacity[k])))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New("invalid Node Allocatable configuration. " + strings.Join(msgs, " "))
}

// quantityString prints the canonical Kubernetes quantity: cpu as
// millicores in decimal units, byte counts in binary units (decimal below
// 1024), counts in decimal units.
func quantityString(name string, v int64) string {
	decimal := func(m int64, exp int) string {
		units := map[int]string{-3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
		if m == 0 {
			return "0"
		}
		for m%1000 == 0 && exp < 18 {
			m /= 1000
			exp += 3
		}
		return strconv.FormatInt(m, 10) + units[exp]
	}
	switch {
	case name == "cpu":
		return decimal(v, -3)
	case name == "memory" || name == "ephemeral-storage" || strings.HasPrefix(name, "hugepages-"):
		if v < 1024 {
			return decimal(v, 0)
		}
		units := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
		i := 0
		for v%1024 == 0 && i < len(units)-1 {
			v /= 1024
			i++
		}
		return strconv.FormatInt(v, 10) + units[i]
	}
	return decimal(v, 0)
}
