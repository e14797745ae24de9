package cgroups

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	model "github.com/nodeproof/nodeproof/models/cgroups"
	"github.com/nodeproof/nodeproof/properties/cgroupscheck"
)

// FuzzCgroupsBuild decodes the fuzzer's bytes into a kubelet config and the
// pods on its node (decodeNode), builds the hierarchy with cgroups.Build,
// renders it for cgroup v1 and v2, and checks, for every input:
//
//  1. nothing panics, and Build and the rendering are deterministic: a second
//     call gives the same hierarchy, error and file writes, and Build leaves
//     the pods and the config's lists as they were;
//  2. Build refuses exactly the bad inputs, and names the field: with bad
//     config fields, the joined error names every one of them and no other;
//     else a reservation above capacity gets models/cgroups' message, word
//     for word; else more pods than maxPods names "pods"; else the error
//     names one of the bad fields of the first bad pod; else two pods the
//     model places at one path name "pods"; and anything else is accepted;
//  3. bounds on whatever Build accepts: cpu.shares within [2, 262144], a CFS
//     quota unset (nil or 0, neither is written), -1 or at least 1000µs,
//     hugetlb limits non-negative, memory limits non-negative (on the QoS
//     tiers only on a node whose pods fit, since --qos-reserved subtracts the
//     admitted pods' requests from allocatable memory), and on cgroup v2
//     every cpu.weight within [1, 10000];
//  4. rendering fails only where a bound may not hold, a tier's negative
//     memory limit on a node whose pods do not fit, with an error naming the
//     memory field;
//  5. where the model applies (every pod as the API server admits it: see
//     decodeNode), core's files on v1 and v2 are the model's, cgroup for
//     cgroup, through the property suite's own comparison
//     (properties/cgroupscheck).
//
// The property suite (properties/cgroups) walks a node through admissions
// and config changes with generators that stay close to real nodes; this
// target reaches what those generators do not draw: zero quantities that are
// present, values at and beyond core's bounds, hugepage sizes named two
// ways, reservations that exceed capacity, every bad field in any
// combination, and raw pods the API server would refuse. It decodes the bytes
// itself rather than through rapid.MakeFuzz, which go-118-fuzz-build cannot
// run (docs/fuzzing.md), so OSS-Fuzz builds it. The seed corpus is in
// testdata/fuzz/FuzzCgroupsBuild; seeds_test.go says what each seed is for.
//
// Failures are reported with t.Fatalf, not testify, whose assert package
// would link net/http into the fuzzing binary (fuzz/doc.go).
func FuzzCgroupsBuild(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		in := decodeNode(data)
		snapshot := in.clone()
		h, err := cgroups.Build(in.cfg, in.pods)
		again, errAgain := cgroups.Build(in.cfg, in.pods)
		if !reflect.DeepEqual(h, again) || fmt.Sprint(err) != fmt.Sprint(errAgain) {
			t.Fatalf("a second Build differs:\n  first:  %v %v\n  second: %v %v\n%s", h, err, again, errAgain, in)
		}
		if !snapshot.same(in) {
			t.Fatalf("Build changed its input:\n  before: %s\n  after:  %s", snapshot, in)
		}

		// The model reads only well-formed configs, and names no bad field.
		var want []model.Group
		var modelErr error
		if len(in.configFaults) == 0 {
			want, modelErr = model.Expected(cgroupscheck.ModelInput(in.cfg, in.pods))
		}
		var fe *cgroups.FieldError
		switch podFaults := in.firstPodFaults(); {
		case len(in.configFaults) > 0:
			reported := map[string]bool{}
			var joined interface{ Unwrap() []error }
			if errors.As(err, &joined) {
				for _, e := range joined.Unwrap() {
					if errors.As(e, &fe) {
						reported[fe.Field] = true
					}
				}
			}
			if !reflect.DeepEqual(reported, in.configFaults) {
				t.Fatalf("bad config fields %v: Build's error names %v: %v\n%s", keys(in.configFaults), keys(reported), err, in)
			}
			return
		case modelErr != nil:
			if !errors.As(err, &fe) || fe.Field != "nodeAllocatable" || err.Error() != modelErr.Error() {
				t.Fatalf("reservations above capacity: Build's error %v, the model's %q\n%s", err, modelErr, in)
			}
			return
		case len(in.pods) > in.cfg.MaxPods:
			if !errors.As(err, &fe) || fe.Field != "pods" {
				t.Fatalf("%d pods under maxPods %d: Build's error %v, want one naming pods\n%s", len(in.pods), in.cfg.MaxPods, err, in)
			}
			return
		case podFaults != nil:
			if !errors.As(err, &fe) || !podFaults[fe.Field] {
				t.Fatalf("bad pod fields %v: Build's error %v names none of them\n%s", keys(podFaults), err, in)
			}
			return
		case sharedPath(want):
			if !errors.As(err, &fe) || fe.Field != "pods" {
				t.Fatalf("two pods at one path under the model: Build's error %v, want one naming pods\n%s", err, in)
			}
			return
		case err != nil:
			t.Fatalf("Build refuses a well-formed node: %v\n%s", err, in)
		}

		// Only the pods the kubelet has admitted are in a steady state, and
		// the API server admits no raw pod.
		steady := !in.raw && cgroupscheck.Fits(in.cfg, in.pods)
		files := map[cgroups.Version][]cgroups.CgroupFiles{}
		var renderErr error
		for _, v := range []cgroups.Version{cgroups.V1, cgroups.V2} {
			got, err := h.Files(v)
			if gotAgain, errAgain := h.Files(v); !reflect.DeepEqual(got, gotAgain) || fmt.Sprint(err) != fmt.Sprint(errAgain) {
				t.Fatalf("rendering v%d twice differs: %v then %v\n%s", v, err, errAgain, in)
			}
			if err != nil {
				renderErr = err
			}
			files[v] = got
		}
		if renderErr != nil && (steady || !errors.As(renderErr, &fe) || fe.Field != "memory" || in.cfg.QOSReservedMemoryPercent == nil) {
			t.Fatalf("rendering a hierarchy Build accepted (pods fit: %t): %v\n%s", steady, renderErr, in)
		}
		for _, cg := range h {
			checkBounds(t, cg, steady || cg.Kind != cgroups.KindQOS, in)
		}
		if renderErr != nil {
			return
		}
		for _, cf := range files[cgroups.V2] {
			for _, file := range cf.Files {
				if file.Name != "cpu.weight" {
					continue
				}
				if w, err := strconv.ParseUint(file.Value, 10, 64); err != nil || w < cgroups.MinWeight || w > cgroups.MaxWeight {
					t.Fatalf("%s: cpu.weight %q outside [1, 10000]\n%s", cf.Path, file.Value, in)
				}
			}
		}
		// On an overcommitted node a QoS tier's memory limit can go
		// negative, and core and the model render it apart (-1 is "max" to
		// core on v2, "-1" to the model): the model, like the cgroups suite
		// that drives it, covers what an admitted node reaches, so such a
		// hierarchy is not compared (FuzzCgroupsBuild found it in its first
		// minute). Every other hierarchy of well-formed pods is.
		if !in.raw && !negativeTierMemory(h) {
			if err := cgroupscheck.CompareWithModel(files, want); err != nil {
				t.Fatalf("core and the model differ: %v\n%s", err, in)
			}
		}
	})
}

// negativeTierMemory says whether a QoS tier's memory limit is negative:
// its pods ask for more memory than the node has.
func negativeTierMemory(h cgroups.Hierarchy) bool {
	for _, cg := range h {
		if m := cg.Config.Memory; cg.Kind == cgroups.KindQOS && m != nil && *m < 0 {
			return true
		}
	}
	return false
}

// checkBounds holds one cgroup's config to the kernel's bounds; memory only
// where memoryBounded.
func checkBounds(t *testing.T, cg cgroups.Cgroup, memoryBounded bool, in *node) {
	rc := cg.Config
	if s := rc.CPUShares; s != nil && (*s < cgroups.MinShares || *s > cgroups.MaxShares) {
		t.Fatalf("%s: cpu.shares %d outside [2, 262144]\n%s", cg.Path, *s, in)
	}
	if q := rc.CPUQuota; q != nil && *q != 0 && *q != -1 && *q < cgroups.MinQuotaPeriod {
		t.Fatalf("%s: CFS quota %dµs, neither -1 nor at least 1000µs\n%s", cg.Path, *q, in)
	}
	if m := rc.Memory; memoryBounded && m != nil && *m < 0 {
		t.Fatalf("%s: memory limit %d\n%s", cg.Path, *m, in)
	}
	for size, limit := range rc.HugePageLimit {
		if limit < 0 {
			t.Fatalf("%s: hugetlb limit %d for page size %d\n%s", cg.Path, limit, size, in)
		}
	}
}

// sharedPath reports whether two of the model's cgroups have one path:
// pods whose UIDs differ only in '-' against '_' under the systemd driver,
// in one QoS tier. The model sorts by path, so such cgroups are neighbours.
func sharedPath(groups []model.Group) bool {
	for i := 1; i < len(groups); i++ {
		if groups[i].Path == groups[i-1].Path {
			return true
		}
	}
	return false
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// --- the decoder -------------------------------------------------------------

// node is one decoded input with what the decoder knows of it.
type node struct {
	cfg  cgroups.Config
	pods []*pod.Pod
	// configFaults are the config fields the decoder made bad, by the
	// names core's errors give them.
	configFaults map[string]bool
	// podFaults[i] are the fields of pods[i] the decoder made bad.
	podFaults []map[string]bool
	// raw is set when some pod is one the API server would refuse (a
	// request above its limit, a container above the pod's limit, pod-level
	// resources with the PodLevelResources gate off) or one with a bad
	// field. The model is stated for admitted pods only.
	raw bool
}

func (in *node) firstPodFaults() map[string]bool {
	for _, f := range in.podFaults {
		if len(f) > 0 {
			return f
		}
	}
	return nil
}

// String prints the input for a failure message.
func (in *node) String() string {
	c := in.cfg
	qr := "off"
	if c.QOSReservedMemoryPercent != nil {
		qr = strconv.FormatInt(*c.QOSReservedMemoryPercent, 10) + "%"
	}
	s := fmt.Sprintf("  config: driver=%s root=%s capacity=%s system=%s kube=%s eviction=%+v enforcePods=%t cfsQuota=%t period=%s gate=%t podLevel=%t qosReserved=%s memoryQoS=%t/%s hugepages=%v pids=%d maxPods=%d weight=%s\n",
		c.CgroupDriver, c.CgroupRoot, c.Capacity, c.SystemReserved, c.KubeReserved, c.HardEviction, c.EnforceNodeAllocatablePods, c.CPUCFSQuota,
		c.CPUCFSQuotaPeriod, c.CustomCPUCFSQuotaPeriod, c.PodLevelResources, qr, c.MemoryQoS, c.MemoryReservationPolicy, c.HugePageSizes,
		c.PodPidsLimit, c.MaxPods, c.ContainerCPUWeight)
	for i, p := range in.pods {
		s += fmt.Sprintf("  pods[%d] %q overhead=%s", i, p.UID, p.Overhead)
		if p.Resources != nil {
			s += fmt.Sprintf(" pod-level req=%s lim=%s", p.Resources.Requests, p.Resources.Limits)
		}
		for _, ctr := range p.InitContainers {
			s += fmt.Sprintf("\n    init %q sidecar=%t req=%s lim=%s", ctr.Name, ctr.IsSidecar(), ctr.Requests, ctr.Limits)
		}
		for _, ctr := range p.Containers {
			s += fmt.Sprintf("\n    app %q req=%s lim=%s", ctr.Name, ctr.Requests, ctr.Limits)
		}
		s += "\n"
	}
	return s + fmt.Sprintf("  config faults %v, pod faults %v, raw %t", keys(in.configFaults), in.podFaults, in.raw)
}

// clone copies what Build could change in place: the pods and the config's
// resource lists and page sizes.
func (in *node) clone() *node {
	out := *in
	out.cfg.Capacity = in.cfg.Capacity.Clone()
	out.cfg.SystemReserved = in.cfg.SystemReserved.Clone()
	out.cfg.KubeReserved = in.cfg.KubeReserved.Clone()
	out.cfg.HugePageSizes = slices.Clone(in.cfg.HugePageSizes)
	out.pods = slices.Clone(in.pods)
	containers := func(cs []pod.Container) []pod.Container {
		out := slices.Clone(cs)
		for i := range out {
			out[i].Requests, out[i].Limits = cs[i].Requests.Clone(), cs[i].Limits.Clone()
		}
		return out
	}
	for i, p := range in.pods {
		q := *p
		q.InitContainers, q.Containers, q.Overhead = containers(p.InitContainers), containers(p.Containers), p.Overhead.Clone()
		if p.Resources != nil {
			q.Resources = &pod.Resources{Requests: p.Resources.Requests.Clone(), Limits: p.Resources.Limits.Clone()}
		}
		out.pods[i] = &q
	}
	return &out
}

// same compares what clone copied.
func (in *node) same(other *node) bool {
	a, b := in.cfg, other.cfg
	return reflect.DeepEqual(a.Capacity, b.Capacity) && reflect.DeepEqual(a.SystemReserved, b.SystemReserved) &&
		reflect.DeepEqual(a.KubeReserved, b.KubeReserved) && slices.Equal(a.HugePageSizes, b.HugePageSizes) &&
		reflect.DeepEqual(in.pods, other.pods)
}

// reader hands out the fuzzer's bytes, and zeros once they run out, so that
// every input decodes and a short one ends in the first choice of each
// remaining question. The first choice is always a well-formed one, and the
// bad ones come last.
type reader struct{ data []byte }

func (r *reader) next() byte {
	if len(r.data) == 0 {
		return 0
	}
	b := r.data[0]
	r.data = r.data[1:]
	return b
}

// pick chooses one of n (n ≤ 256).
func (r *reader) pick(n int) int { return int(r.next()) % n }

func (r *reader) uint64() uint64 {
	var b [8]byte
	n := copy(b[:], r.data)
	r.data = r.data[n:]
	return binary.LittleEndian.Uint64(b[:])
}

// The quantities a table choice picks from: cpu in millicores (from below
// one share to above MaxShares' worth), byte counts (whole and odd), and
// process counts.
var (
	milliCPUs  = []int64{1, 5, 10, 99, 125, 250, 500, 1000, 1001, 2000, 3000, 64000, 300000}
	byteCounts = []int64{1, 1000, 32 << 20, 64 << 20, 100 << 20, 100_000_000, 1 << 30, 2 << 30, 8 << 30, 5<<30 + 12345, 64 << 30}
	pidCounts  = []int64{1, 100, 1024, 4096, 32768}
)

// quantity reads one entry of a resource list: absent, present and 0, a
// value from the tables, any value within core's bound, the bound itself,
// or (bad) above the bound or negative.
func (r *reader) quantity(name pod.ResourceName) (q int64, present, bad bool) {
	bound, table := bound(name), byteCounts
	switch name {
	case pod.CPU:
		table = milliCPUs
	case cgroups.PIDs:
		table = pidCounts
	}
	switch c := r.pick(16); {
	case c == 0:
		return 0, false, false
	case c == 1:
		return 0, true, false
	case c <= 9:
		return table[r.pick(len(table))], true, false
	case c <= 11:
		return int64(r.uint64() % uint64(bound+1)), true, false
	case c == 12:
		return bound, true, false
	case c == 13:
		return bound + 1 + int64(r.next()), true, true
	default:
		return -1 - int64(r.next()), true, true
	}
}

// bound is the largest quantity of name core accepts.
func bound(name pod.ResourceName) int64 {
	if name == pod.CPU {
		return cgroups.MaxMilliCPU
	}
	return cgroups.MaxQuantity
}

// entry reads name's quantity into l, noting a bad one as field[name].
func (r *reader) entry(l pod.ResourceList, field string, name pod.ResourceName, faults map[string]bool) {
	q, present, bad := r.quantity(name)
	if !present {
		return
	}
	l[name] = q
	if bad {
		faults[field+"["+string(name)+"]"] = true
	}
}

// defaultFlags are DefaultConfig's switches in decodeConfig's flag byte:
// cpuCFSQuota, CustomCPUCFSQuotaPeriod, PodLevelResources,
// enforceNodeAllocatable=pods and the runtime's quadratic weight.
const defaultFlags = 1 | 2 | 4 | 32 | 128

// Host page sizes: first those the model can name, then two core refuses.
var pageSizes = []int64{2 << 20, 1 << 30, 64 << 10, 32 << 20, 512 << 20, 16 << 30, 3 << 20, 32 << 30}

const goodPageSizes = 6

// Hugepage resources a container may ask for: the names the model knows
// (2Mi twice, as "hugepages-2Mi" and "hugepages-2048Ki", which core must
// add up as one size), then one no page size has.
var (
	pageNames    = []pod.ResourceName{"hugepages-2Mi", "hugepages-2048Ki", "hugepages-1Gi", "hugepages-64Ki", "hugepages-3Mi"}
	pageNameSize = []int64{2 << 20, 2 << 20, 1 << 30, 64 << 10, 0}
)

// decodeNode reads a config, then up to five pods. Each pod is made one the
// API server would admit (its requests within its limits, its containers
// within its pod-level limits, its pod-level requests covering its
// containers', no pod-level resources with the gate off) and is defaulted as
// the API server defaults it, unless the bytes ask for a raw pod or one of
// its fields is bad; then it is only defaulted.
func decodeNode(data []byte) *node {
	r := &reader{data: data}
	in := &node{}
	in.cfg, in.configFaults = r.config()
	listed := map[int64]bool{}
	for _, size := range in.cfg.HugePageSizes {
		listed[size] = true
	}
	for i := range r.pick(6) {
		p, faults, raw := r.pod(i, in.cfg, in.pods, listed)
		in.pods = append(in.pods, p)
		in.podFaults = append(in.podFaults, faults)
		in.raw = in.raw || raw
	}
	return in
}

func (r *reader) config() (cgroups.Config, map[string]bool) {
	c := cgroups.DefaultConfig()
	faults := map[string]bool{}
	flags := r.next() ^ defaultFlags
	c.CPUCFSQuota = flags&1 != 0
	c.CustomCPUCFSQuotaPeriod = flags&2 != 0
	c.PodLevelResources = flags&4 != 0
	c.MemoryQoS = flags&8 != 0
	if flags&16 != 0 {
		c.MemoryReservationPolicy = cgroups.ReservationTiered
	}
	c.EnforceNodeAllocatablePods = flags&32 != 0
	if flags&64 != 0 {
		c.CgroupDriver = cgroups.DriverSystemd
	}
	if flags&128 == 0 {
		c.ContainerCPUWeight = cgroups.WeightLinear
	}
	switch r.pick(16) {
	case 13:
		c.CgroupDriver, faults["cgroupDriver"] = "docker", true
	case 14:
		c.ContainerCPUWeight, faults["containerCPUWeight"] = 9, true
	case 15:
		c.MemoryReservationPolicy, faults["memoryReservationPolicy"] = "Reserved", true
	}

	roots := []string{"/", "/custom", "/node-a/pods", "/a.b/c_d-e", "kubepods", "/x/../y"}
	if k := r.pick(len(roots)); k > 0 {
		c.CgroupRoot = roots[k]
		faults["cgroupRoot"] = k >= 4
	}
	periods := []time.Duration{100 * time.Millisecond, 50 * time.Millisecond, 10 * time.Millisecond, time.Millisecond,
		1500 * time.Microsecond, time.Second, 999 * time.Microsecond, 1001 * time.Millisecond, 0}
	c.CPUCFSQuotaPeriod = periods[r.pick(len(periods))]
	if c.CustomCPUCFSQuotaPeriod && (c.CPUCFSQuotaPeriod < time.Millisecond || c.CPUCFSQuotaPeriod > time.Second) ||
		!c.CustomCPUCFSQuotaPeriod && c.CPUCFSQuotaPeriod != 100*time.Millisecond {
		faults["cpuCFSQuotaPeriod"] = true
	}

	c.Capacity = pod.ResourceList{}
	for _, name := range []pod.ResourceName{pod.CPU, pod.Memory, cgroups.PIDs, pod.EphemeralStorage} {
		r.entry(c.Capacity, "capacity", name, faults)
	}
	listed := map[int64]bool{}
	for i := range r.pick(4) {
		k := r.pick(len(pageSizes))
		size := pageSizes[k]
		if k >= goodPageSizes || listed[size] {
			faults[fmt.Sprintf("hugePageSizes[%d]", i)] = true
		} else {
			r.entry(c.Capacity, "capacity", cgroups.HugePageResourceName(size), faults)
		}
		c.HugePageSizes = append(c.HugePageSizes, size)
		listed[size] = true
	}
	if !listed[1<<30] && r.pick(16) == 15 {
		c.Capacity["hugepages-1Gi"], faults["capacity[hugepages-1Gi]"] = 1<<30, true
	}

	c.SystemReserved, c.KubeReserved = pod.ResourceList{}, pod.ResourceList{}
	for _, reserved := range []struct {
		field string
		l     pod.ResourceList
	}{{"systemReserved", c.SystemReserved}, {"kubeReserved", c.KubeReserved}} {
		for _, name := range []pod.ResourceName{pod.CPU, pod.Memory, cgroups.PIDs, pod.EphemeralStorage} {
			r.entry(reserved.l, reserved.field, name, faults)
		}
		if r.pick(16) == 15 {
			reserved.l["hugepages-2Mi"], faults[reserved.field+"[hugepages-2Mi]"] = 2<<20, true
		}
	}

	// Hard eviction in the forms the model states (memory.available as a
	// quantity, nodefs.available as a percentage), a signal that reserves
	// nothing, and percentages outside (0, 1].
	c.HardEviction = nil
	for i := range r.pick(4) {
		field := fmt.Sprintf("evictionHard[%d]", i)
		var th cgroups.EvictionThreshold
		switch r.pick(8) {
		case 0, 1, 2:
			q, _, bad := r.quantity(pod.Memory)
			th = cgroups.EvictionThreshold{Signal: cgroups.SignalMemoryAvailable, Quantity: q}
			faults[field] = bad
		case 3, 4, 5:
			th = cgroups.EvictionThreshold{Signal: cgroups.SignalNodeFsAvailable, Percentage: []float32{0.05, 0.1, 0.15, 0.5, 1}[r.pick(5)]}
		case 6:
			th = cgroups.EvictionThreshold{Signal: "imagefs.available", Quantity: byteCounts[r.pick(len(byteCounts))]}
		default:
			th = cgroups.EvictionThreshold{Signal: cgroups.SignalMemoryAvailable, Percentage: []float32{-0.1, 1.5, float32(math.NaN())}[r.pick(3)]}
			faults[field] = true
		}
		c.HardEviction = append(c.HardEviction, th)
	}

	if k := r.pick(9); k >= 4 {
		percent := []int64{0, 33, 50, 100, 101}[k-4]
		if percent == 101 && r.pick(2) == 1 {
			percent = -1
		}
		c.QOSReservedMemoryPercent = &percent
		faults["qosReserved[memory]"] = percent < 0 || percent > 100
	}
	c.PodPidsLimit = []int64{-1, 0, 1, 1024}[r.pick(4)]
	switch r.pick(16) {
	case 13:
		c.MaxPods = 1
	case 14:
		c.MaxPods = 2
	case 15:
		c.MaxPods, faults["maxPods"] = 0, true
	}
	for field, bad := range faults {
		if !bad {
			delete(faults, field)
		}
	}
	return c, faults
}

// pod reads pods[i]: its UID, up to two init containers and one to three
// app containers (or, bad, none), overhead and pod-level resources. It
// returns the pod's bad fields, with both requests[x] and limits[x] for a
// bad limit, which defaulting copies into a missing request.
func (r *reader) pod(i int, c cgroups.Config, earlier []*pod.Pod, hostSizes map[int64]bool) (*pod.Pod, map[string]bool, bool) {
	field := "pods[" + strconv.Itoa(i) + "]"
	faults := map[string]bool{}
	p := &pod.Pod{UID: "uid-" + strconv.Itoa(i), Namespace: "default", Phase: pod.Running}
	switch r.pick(16) {
	case 12:
		// Under the systemd driver it names the same slice as "uid-0",
		// which Build refuses if the two pods share a QoS tier.
		p.UID = "uid_0"
	case 13:
		if i > 0 {
			p.UID = earlier[i-1].UID
		}
	case 14:
		p.UID = ""
	case 15:
		p.UID = "-uid"
	}
	if p.UID == "" || p.UID[0] == '-' {
		faults[field+".uid"] = true
	}
	for _, e := range earlier {
		if e.UID == p.UID {
			faults[field+".uid"] = true
		}
	}
	p.Name = p.UID

	var names []string
	for j := range r.pick(3) {
		ctr := r.container(fmt.Sprintf("%s.initContainers[%d]", field, j), "init-"+strconv.Itoa(j), names, hostSizes, faults)
		if r.pick(2) == 1 {
			ctr.RestartPolicy = pod.RestartAlways
		}
		p.InitContainers = append(p.InitContainers, ctr)
		names = append(names, ctr.Name)
	}
	apps := []int{1, 2, 3, 0}[r.pick(4)]
	if apps == 0 {
		faults[field+".containers"] = true
	}
	for j := range apps {
		ctr := r.container(fmt.Sprintf("%s.containers[%d]", field, j), "app-"+strconv.Itoa(j), names, hostSizes, faults)
		p.Containers = append(p.Containers, ctr)
		names = append(names, ctr.Name)
	}
	if r.pick(4) == 3 {
		p.Overhead = pod.ResourceList{}
		for _, name := range []pod.ResourceName{pod.CPU, pod.Memory} {
			r.entry(p.Overhead, field+".overhead", name, faults)
		}
	}
	podLevel := false
	switch r.pick(8) {
	case 5:
		// An empty spec.resources: with the gate on it makes the pod's
		// class its own (BestEffort), with it off it counts for nothing.
		p.Resources = &pod.Resources{}
	case 6, 7:
		p.Resources = &pod.Resources{Requests: pod.ResourceList{}, Limits: pod.ResourceList{}}
		for _, name := range []pod.ResourceName{pod.CPU, pod.Memory} {
			r.entry(p.Resources.Requests, field+".resources.requests", name, faults)
			r.limit(p.Resources.Limits, field+".resources", name, faults)
		}
		podLevel = len(p.Resources.Requests)+len(p.Resources.Limits) > 0
	}
	raw := r.pick(8) == 7 || len(faults) > 0 || podLevel && !c.PodLevelResources
	if !raw {
		admissible(p)
	}
	p.ApplyDefaults()
	// Pod-level values that admissible or defaulting took from the
	// containers' aggregate can exceed core's bound even where no container
	// does.
	if p.Resources != nil {
		for _, l := range []struct {
			kind string
			l    pod.ResourceList
		}{{"requests", p.Resources.Requests}, {"limits", p.Resources.Limits}} {
			for name, q := range l.l {
				if q > bound(name) {
					faults[field+".resources."+l.kind+"["+string(name)+"]"] = true
				}
			}
		}
	}
	return p, faults, raw || len(faults) > 0
}

// container reads one container: its name (or, bad, a name it shares with
// an earlier container, or no DNS label), cpu and memory requests and
// limits, one hugepage size with its request equal to its limit, and rarely
// an extended resource, which the cgroups ignore.
func (r *reader) container(field, name string, taken []string, hostSizes map[int64]bool, faults map[string]bool) pod.Container {
	ctr := pod.Container{Name: name, Requests: pod.ResourceList{}, Limits: pod.ResourceList{}}
	switch r.pick(16) {
	case 14:
		if len(taken) > 0 {
			ctr.Name, faults[field+".name"] = taken[len(taken)-1], true
		}
	case 15:
		ctr.Name, faults[field+".name"] = "Not_A_Label", true
	}
	for _, res := range []pod.ResourceName{pod.CPU, pod.Memory} {
		r.entry(ctr.Requests, field+".requests", res, faults)
		r.limit(ctr.Limits, field, res, faults)
	}
	if r.pick(8) >= 5 {
		k := r.pick(len(pageNames))
		name := pageNames[k]
		if q, present, bad := r.quantity(name); present {
			ctr.Requests[name], ctr.Limits[name] = q, q
			if bad || !hostSizes[pageNameSize[k]] {
				faults[field+".requests["+string(name)+"]"] = true
				faults[field+".limits["+string(name)+"]"] = true
			}
		}
	}
	if r.pick(16) == 15 {
		ctr.Requests["example.com/gpu"], ctr.Limits["example.com/gpu"] = 1, 1
	}
	return ctr
}

// limit reads a limit into l; a bad one names both field.limits[name] and
// field.requests[name], since defaulting copies it into a missing request.
func (r *reader) limit(l pod.ResourceList, field string, name pod.ResourceName, faults map[string]bool) {
	q, present, bad := r.quantity(name)
	if !present {
		return
	}
	l[name] = q
	if bad {
		faults[field+".limits["+string(name)+"]"] = true
		faults[field+".requests["+string(name)+"]"] = true
	}
}

// admissible lowers and raises the pod's quantities into what API
// validation accepts: every container's limit within its pod-level limit
// and every request within its limit, then the pod-level requests at least
// the containers' aggregate and the pod-level limits at least the requests.
func admissible(p *pod.Pod) {
	var podLimits pod.ResourceList
	if p.Resources != nil {
		podLimits = p.Resources.Limits
	}
	for _, cs := range [][]pod.Container{p.InitContainers, p.Containers} {
		for i := range cs {
			for name, limit := range podLimits {
				if cs[i].Limits[name] > limit {
					cs[i].Limits[name] = limit
				}
				if cs[i].Requests[name] > limit {
					cs[i].Requests[name] = limit
				}
			}
			for name, limit := range cs[i].Limits {
				if cs[i].Requests[name] > limit {
					cs[i].Requests[name] = limit
				}
			}
		}
	}
	if p.Resources == nil {
		return
	}
	agg := p.EffectiveRequests(pod.Options{ExcludeOverhead: true, SkipPodLevelResources: true})
	for _, name := range []pod.ResourceName{pod.CPU, pod.Memory} {
		request, set := p.Resources.Requests[name]
		if !set || request < agg[name] {
			// A missing request defaults to the aggregate when the pod has
			// limits (pod.ApplyDefaults).
			request = agg[name]
			if set {
				p.Resources.Requests[name] = request
			}
		}
		if limit, ok := p.Resources.Limits[name]; ok && limit < request {
			p.Resources.Limits[name] = request
		}
	}
}
