package cgroups

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nodeproof/nodeproof/core/pod"
)

// Driver is the kubelet's cgroupDriver.
type Driver string

// Cgroup drivers.
const (
	DriverCgroupfs Driver = "cgroupfs"
	DriverSystemd  Driver = "systemd"
)

// MemoryReservationPolicy is the v1.36 kubelet config field that decides
// what Memory QoS reserves (§5.2, §5.5; PRs #137584/#137719).
type MemoryReservationPolicy string

// Memory reservation policies.
const (
	// ReservationNone (the default) reserves nothing on pods and writes 0 to
	// the tiers' memory.min / memory.low.
	ReservationNone MemoryReservationPolicy = "None"
	// ReservationTiered sets memory.min on Guaranteed pods and kubepods and
	// memory.low on the other pods and the burstable tier.
	ReservationTiered MemoryReservationPolicy = "TieredReservation"
)

// Eviction signals that reserve capacity in node allocatable (§5.6).
const (
	SignalMemoryAvailable = "memory.available"
	SignalNodeFsAvailable = "nodefs.available"
)

// PIDs is the node-allocatable resource name of process IDs: kubepods'
// pids.max comes from it (upstream pidlimit.PIDs).
const PIDs pod.ResourceName = "pid"

// EvictionThreshold is one hard eviction threshold with operator LessThan,
// the only kind the kubelet subtracts from node allocatable.
type EvictionThreshold struct {
	// Signal is SignalMemoryAvailable or SignalNodeFsAvailable; thresholds on
	// other signals reserve nothing and are accepted and ignored.
	Signal string
	// Quantity in bytes, used when Percentage is 0.
	Quantity int64
	// Percentage of the capacity in (0, 1]; float32 as upstream, whose
	// rounding of 0.1 is part of the reserved byte count.
	Percentage float32
}

// Bounds of what Build accepts. Upstream has none; these keep every sum
// inside int64 and every collection bounded (DESIGN.md determinism rule 7).
const (
	// MaxPodsBound is the largest Config.MaxPods.
	MaxPodsBound = 2048
	// MaxContainersPerPod bounds init plus app containers of one pod.
	MaxContainersPerPod = 256
	// MaxMilliCPU bounds one cpu quantity (about 4.3 million CPUs).
	MaxMilliCPU = 1 << 32
	// MaxQuantity bounds every other quantity (64 TiB of memory).
	MaxQuantity = 1 << 46
	// MaxHugePageSizes bounds the host's hugepage sizes.
	MaxHugePageSizes = 8
	// MaxNameLength bounds a pod UID and a container name.
	MaxNameLength = 253
)

// Config is the part of the kubelet's configuration and feature gates that
// decides the pod and QoS cgroups. DefaultConfig gives v1.36's defaults.
type Config struct {
	// CgroupDriver is cgroupfs or systemd; it only changes the names.
	CgroupDriver Driver
	// CgroupRoot is the kubelet's cgroupRoot, "/" by default: an absolute
	// slash-separated path under which kubepods is created.
	CgroupRoot string
	// CPUCFSQuota is the kubelet's cpuCFSQuota (enforceCPULimits), default
	// true; false gives Guaranteed and limited Burstable pods quota -1 and
	// containers no quota at all.
	CPUCFSQuota bool
	// CPUCFSQuotaPeriod is cpuCFSQuotaPeriod, default 100ms; with the gate it
	// must be within 1ms..1s, without it exactly 100ms.
	CPUCFSQuotaPeriod time.Duration
	// CustomCPUCFSQuotaPeriod is the feature gate, GA and on in v1.36
	// (PR #136339): quotas are computed over CPUCFSQuotaPeriod.
	CustomCPUCFSQuotaPeriod bool
	// PodLevelResources is the feature gate, on by default in v1.36: pod
	// spec.resources replaces the containers' aggregate.
	PodLevelResources bool
	// QOSReservedMemoryPercent is --qos-reserved=memory=P% with the
	// QOSReserved gate on; nil (the default) when the gate is off or no
	// memory percentage is set. ParseQOSReserved reads the flag's form.
	QOSReservedMemoryPercent *int64
	// MemoryQoS is the MemoryQoS gate (alpha, off) on a cgroup v2 host; on v1
	// the gate has no effect, and Values drops Unified files on v1 anyway.
	MemoryQoS bool
	// MemoryReservationPolicy is None (default) or TieredReservation.
	MemoryReservationPolicy MemoryReservationPolicy
	// EnforceNodeAllocatablePods is "pods" ∈ enforceNodeAllocatable (the
	// default): kubepods gets capacity minus the reservations rather than
	// the whole capacity.
	EnforceNodeAllocatablePods bool
	// Capacity is the node's capacity: cpu in millicores, memory,
	// ephemeral-storage and hugepages-<size> in bytes, pid in process IDs.
	Capacity pod.ResourceList
	// SystemReserved and KubeReserved are the reservations; only cpu,
	// memory, ephemeral-storage and pid may be reserved.
	SystemReserved pod.ResourceList
	KubeReserved   pod.ResourceList
	// HardEviction are the hard eviction thresholds that reserve capacity
	// when the node-allocatable configuration is validated.
	HardEviction []EvictionThreshold
	// HugePageSizes are the host's hugepage sizes in bytes; every cgroup
	// the kubelet writes gets a hugetlb limit for each of them.
	HugePageSizes []int64
	// PodPidsLimit is podPidsLimit: pids.max of every pod cgroup when > 0;
	// -1 (the default) or 0 leaves pids unlimited.
	PodPidsLimit int64
	// MaxPods is the kubelet's maxPods (default 110): Build rejects more.
	MaxPods int
	// ContainerCPUWeight is the formula the container runtime uses for
	// containers' cpu.weight on v2; current runtimes use WeightQuadratic.
	ContainerCPUWeight WeightFormula
}

// DefaultConfig returns v1.36's defaults for a node whose capacity and
// hugepage sizes the caller still has to fill in.
func DefaultConfig() Config {
	return Config{
		CgroupDriver:               DriverCgroupfs,
		CgroupRoot:                 "/",
		CPUCFSQuota:                true,
		CPUCFSQuotaPeriod:          100 * time.Millisecond,
		CustomCPUCFSQuotaPeriod:    true,
		PodLevelResources:          true,
		MemoryReservationPolicy:    ReservationNone,
		EnforceNodeAllocatablePods: true,
		// The kubelet's default hard eviction thresholds that reserve
		// capacity; imagefs and inode thresholds reserve nothing.
		HardEviction: []EvictionThreshold{
			{Signal: SignalMemoryAvailable, Quantity: 100 << 20},
			{Signal: SignalNodeFsAvailable, Percentage: 0.1},
		},
		PodPidsLimit:       -1,
		MaxPods:            110,
		ContainerCPUWeight: WeightQuadratic,
	}
}

// FieldError is every error of this package: Field names the input (a
// kubelet config field, or a path into the pods such as
// "pods[2].containers[0].requests[cpu]") and Error() is the message, which
// names the field and the rule, in upstream's words where upstream has them.
type FieldError struct {
	Field string
	msg   string
}

func (e *FieldError) Error() string { return e.msg }

// fieldErr builds our own message: "<field>: <rule>".
func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, msg: field + ": " + fmt.Sprintf(format, args...)}
}

// upstreamErr keeps upstream's text verbatim; it already names the field.
func upstreamErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, msg: fmt.Sprintf(format, args...)}
}

// PeriodUS is CPUCFSQuotaPeriod in microseconds, the unit of cpu.cfs_period_us.
func (c Config) PeriodUS() uint64 {
	if c.CPUCFSQuotaPeriod <= 0 {
		return 0
	}
	return uint64(c.CPUCFSQuotaPeriod / time.Microsecond)
}

// ContainerPeriodUS is the period containers get: the configured one with
// the gate, else 100ms (§5.1 last paragraph; kuberuntime).
func (c Config) ContainerPeriodUS() uint64 {
	if c.CustomCPUCFSQuotaPeriod {
		return c.PeriodUS()
	}
	return QuotaPeriod
}

// Validate checks every field. Errors name the field and the rule; the
// period and qos-reserved rules use the kubelet's own messages. All
// problems are reported, joined by newlines.
func (c Config) Validate() error {
	var errs []error
	switch c.CgroupDriver {
	case DriverCgroupfs, DriverSystemd:
	default:
		errs = append(errs, fieldErr("cgroupDriver", "%q must be %q or %q", c.CgroupDriver, DriverCgroupfs, DriverSystemd))
	}
	if _, err := rootComponents(c.CgroupRoot); err != nil {
		errs = append(errs, err)
	}
	// The kubelet's own wording (pkg/kubelet/apis/config/validation); the
	// period prints as a Go duration, as metav1.Duration does.
	const defaultPeriod = 100 * time.Millisecond
	if !c.CustomCPUCFSQuotaPeriod && c.CPUCFSQuotaPeriod != defaultPeriod {
		errs = append(errs, upstreamErr("cpuCFSQuotaPeriod", "invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) %v requires feature gate CustomCPUCFSQuotaPeriod", c.CPUCFSQuotaPeriod))
	}
	if c.CustomCPUCFSQuotaPeriod && (c.CPUCFSQuotaPeriod < time.Millisecond || c.CPUCFSQuotaPeriod > time.Second) {
		errs = append(errs, upstreamErr("cpuCFSQuotaPeriod", "invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) %v must be between 1ms and 1sec, inclusive", c.CPUCFSQuotaPeriod))
	}
	if p := c.QOSReservedMemoryPercent; p != nil && (*p < 0 || *p > 100) {
		errs = append(errs, upstreamErr("qosReserved[memory]", "failed to parse percentage %q for %q resource: percentage must be between 0 and 100", strconv.FormatInt(*p, 10)+"%", "memory"))
	}
	switch c.MemoryReservationPolicy {
	case ReservationNone, ReservationTiered:
	default:
		errs = append(errs, fieldErr("memoryReservationPolicy", "%q must be %q or %q", c.MemoryReservationPolicy, ReservationNone, ReservationTiered))
	}
	errs = append(errs, checkList("capacity", c.Capacity, nil)...)
	reservable := map[pod.ResourceName]bool{pod.CPU: true, pod.Memory: true, pod.EphemeralStorage: true, PIDs: true}
	errs = append(errs, checkList("systemReserved", c.SystemReserved, reservable)...)
	errs = append(errs, checkList("kubeReserved", c.KubeReserved, reservable)...)
	for i, th := range c.HardEviction {
		field := fmt.Sprintf("evictionHard[%d]", i)
		switch {
		case th.Percentage < 0 || th.Percentage > 1 || math.IsNaN(float64(th.Percentage)):
			errs = append(errs, fieldErr(field, "percentage %v must be within 0 and 1 (0%% to 100%%)", th.Percentage))
		case th.Percentage == 0 && (th.Quantity < 0 || th.Quantity > MaxQuantity):
			errs = append(errs, fieldErr(field, "quantity %d must be within 0 and %d", th.Quantity, int64(MaxQuantity)))
		}
	}
	if len(c.HugePageSizes) > MaxHugePageSizes {
		errs = append(errs, fieldErr("hugePageSizes", "%d sizes exceed the bound of %d", len(c.HugePageSizes), MaxHugePageSizes))
	}
	seen := map[int64]bool{}
	for i, size := range c.HugePageSizes {
		field := fmt.Sprintf("hugePageSizes[%d]", i)
		if err := checkPageSize(size); err != nil {
			errs = append(errs, fieldErr(field, "%v", err))
		} else if seen[size] {
			errs = append(errs, fieldErr(field, "page size %d is listed twice", size))
		}
		seen[size] = true
	}
	for _, name := range c.Capacity.Names() {
		if !pod.IsHugePages(name) {
			continue
		}
		if size, err := HugePageSizeFromResourceName(name); err == nil && !seen[size] {
			errs = append(errs, fieldErr("capacity["+string(name)+"]", "page size %d is not one of hugePageSizes", size))
		}
	}
	if c.MaxPods < 1 || c.MaxPods > MaxPodsBound {
		errs = append(errs, fieldErr("maxPods", "%d must be within 1 and %d", c.MaxPods, MaxPodsBound))
	}
	switch c.ContainerCPUWeight {
	case WeightLinear, WeightQuadratic:
	default:
		errs = append(errs, fieldErr("containerCPUWeight", "%d is not a known weight formula", int(c.ContainerCPUWeight)))
	}
	return errors.Join(errs...)
}

// checkList checks a node resource list: no negative or oversized
// quantity, hugepages names that parse, and, for reservations, only the
// resources the kubelet lets an operator reserve.
func checkList(field string, l pod.ResourceList, allowed map[pod.ResourceName]bool) []error {
	clean := true
	for name, q := range l {
		if allowed != nil && !allowed[name] || q < 0 || q > MaxQuantity || name == pod.CPU && q > MaxMilliCPU || pod.IsHugePages(name) {
			clean = false
			break
		}
	}
	if clean {
		return nil
	}
	var errs []error
	for _, name := range l.Names() {
		q := l[name]
		f := field + "[" + string(name) + "]"
		if allowed != nil && !allowed[name] {
			errs = append(errs, upstreamErr(f, "cannot reserve %q resource", string(name)))
			continue
		}
		if q < 0 {
			errs = append(errs, upstreamErr(f, "resource quantity for %q cannot be negative: %d", string(name), q))
			continue
		}
		if err := checkQuantity(f, name, q); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// checkQuantity enforces the per-quantity bound that keeps sums in int64.
func checkQuantity(field string, name pod.ResourceName, q int64) error {
	if q < 0 {
		return fieldErr(field, "%d must not be negative", q)
	}
	limit := int64(MaxQuantity)
	if name == pod.CPU {
		limit = MaxMilliCPU
	}
	if q > limit {
		return fieldErr(field, "%d exceeds the bound of %d", q, limit)
	}
	if pod.IsHugePages(name) {
		if _, err := HugePageSizeFromResourceName(name); err != nil {
			return fieldErr(field, "%v", err)
		}
	}
	return nil
}

// rootComponents splits CgroupRoot into its path components: it must be
// absolute, and each component a plain name (the systemd driver turns
// components into slice names, which cannot hold a slash or be empty).
func rootComponents(root string) ([]string, error) {
	if !strings.HasPrefix(root, "/") {
		return nil, fieldErr("cgroupRoot", "%q must be an absolute path", root)
	}
	var parts []string
	for _, part := range strings.Split(root, "/") {
		if part == "" {
			continue
		}
		if part == "." || part == ".." || !isRootComponent(part) || len(part) > MaxNameLength {
			return nil, fieldErr("cgroupRoot", "component %q must be a name of letters, digits, '_', '.' and '-'", part)
		}
		parts = append(parts, part)
	}
	return parts, nil
}

// isRootComponent reports whether s is made of letters, digits, '_', '.'
// and '-' only.
func isRootComponent(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// ParseQOSReserved reads the kubelet's --qos-reserved map (resource →
// "P%"). Only memory may be reserved; the messages are upstream's
// (pkg/kubelet/cm/container_manager.go). Keys are read in sorted order so
// that the first error is always the same one.
func ParseQOSReserved(m map[string]string) (*int64, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var memory *int64
	for _, k := range keys {
		v := m[k]
		if pod.ResourceName(k) != pod.Memory {
			return nil, upstreamErr("qosReserved["+k+"]", "cannot reserve %q resource", k)
		}
		p, err := parsePercentage(v)
		if err != nil {
			return nil, upstreamErr("qosReserved["+k+"]", "failed to parse percentage %q for %q resource: %v", v, k, err)
		}
		memory = &p
	}
	return memory, nil
}

func parsePercentage(v string) (int64, error) {
	if !strings.HasSuffix(v, "%") {
		return 0, fmt.Errorf("percentage expected, got '%s'", v)
	}
	p, err := strconv.ParseInt(strings.TrimRight(v, "%"), 10, 0)
	if err != nil {
		return 0, fmt.Errorf("invalid number in percentage '%s'", v)
	}
	if p < 0 || p > 100 {
		return 0, errors.New("percentage must be between 0 and 100")
	}
	return p, nil
}
