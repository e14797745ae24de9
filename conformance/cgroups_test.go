package conformance

import (
	"testing"
	_ "unsafe" // for go:linkname to the kubelet's unexported getCPUWeight

	corev1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/cgroups"
)

// upstreamCPUWeight is the kubelet's shares → cpu.weight conversion for the
// cgroups it manages on v2. v1.36 keeps it unexported in pkg/kubelet/cm
// (cgroup_manager_linux.go), and calling it through the cgroup manager
// would need a cgroup hierarchy, so the test links to it by name.
//
//go:linkname upstreamCPUWeight k8s.io/kubernetes/pkg/kubelet/cm.getCPUWeight
func upstreamCPUWeight(cpuShares *uint64) uint64

// setGates sets the kubelet's feature gates that the functions under test
// read from the process-wide default gate. Tests here do not run in
// parallel, so one case's gates cannot leak into another's.
func setGates(customPeriod, podLevel bool) {
	gates := map[string]bool{
		string(kubefeatures.CPUCFSQuotaPeriod): customPeriod,
		string(kubefeatures.PodLevelResources): podLevel,
	}
	// The gates that depend on PodLevelResources follow it, on by default:
	// the gate refuses one on alone.
	for _, g := range podLevelDependents() {
		gates[string(g)] = podLevel
	}
	err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gates)
	if err != nil {
		panic(err)
	}
}

// resetGates restores the v1.36 defaults after a test that changed them.
func resetGates(t *testing.T) {
	t.Cleanup(func() { setGates(true, true) })
}

func genMilliCPU() *rapid.Generator[int64] {
	return rapid.OneOf(
		rapid.Int64Range(0, 20),
		rapid.Int64Range(0, 1<<20),
		// up to core/cgroups' bound for cpu quantities (G4), where the
		// products stay inside int64 on both sides.
		rapid.Int64Range(0, 1<<32),
	)
}

func TestMilliCPUToShares(t *testing.T) {
	Compare(t, Comparison[int64, uint64]{
		Name:   "cgroups.MilliCPUToShares",
		Gen:    genMilliCPU(),
		Ours:   cgroups.MilliCPUToShares,
		Theirs: cm.MilliCPUToShares,
	})
}

type quotaInput struct {
	MilliCPU     int64
	PeriodUS     uint64
	CustomPeriod bool
}

func TestMilliCPUToQuota(t *testing.T) {
	resetGates(t)
	Compare(t, Comparison[quotaInput, int64]{
		Name: "cgroups.MilliCPUToQuota",
		Gen: rapid.Custom(func(t *rapid.T) quotaInput {
			return quotaInput{
				MilliCPU: genMilliCPU().Draw(t, "milliCPU"),
				// the kubelet's cpuCFSQuotaPeriod range: 1ms to 1s.
				PeriodUS:     rapid.Uint64Range(1000, 1_000_000).Draw(t, "periodUS"),
				CustomPeriod: rapid.Bool().Draw(t, "customPeriodGate"),
			}
		}),
		Ours: func(in quotaInput) int64 { return cgroups.MilliCPUToQuota(in.MilliCPU, in.PeriodUS, in.CustomPeriod) },
		Theirs: func(in quotaInput) int64 {
			setGates(in.CustomPeriod, true)
			return cm.MilliCPUToQuota(in.MilliCPU, int64(in.PeriodUS))
		},
	})
}

func TestCPUWeightLinear(t *testing.T) {
	Compare(t, Comparison[uint64, uint64]{
		Name: "cgroups.CPUWeightLinear",
		Gen: rapid.OneOf(
			rapid.Uint64Range(0, 20),
			rapid.Uint64Range(0, 300_000),
			rapid.Uint64Range(262_000, 263_000),
		),
		Ours:   cgroups.CPUWeightLinear,
		Theirs: func(s uint64) uint64 { return upstreamCPUWeight(&s) },
		Deviations: []Deviation[uint64, uint64]{{
			// Upstream's unsigned arithmetic wraps below MinShares; the
			// kubelet never passes such shares.
			ID: "C3/G5", Applies: func(s uint64) bool { return s < cgroups.MinShares },
		}},
	})
}

// genHugePageList draws a list mixing hugepages under two spellings of
// one size with other resources, which HugePageLimits must ignore.
func genHugePageList() *rapid.Generator[corev1.ResourceList] {
	names := []corev1.ResourceName{"hugepages-2Mi", "hugepages-2048Ki", "hugepages-1Gi", "hugepages-64Ki", corev1.ResourceCPU, corev1.ResourceMemory, gpu}
	return rapid.Custom(func(t *rapid.T) corev1.ResourceList {
		l := corev1.ResourceList{}
		for _, name := range names {
			if rapid.Bool().Draw(t, "has."+string(name)) {
				l[name] = quantity(name, rapid.Int64Range(0, 1<<40).Draw(t, string(name)))
			}
		}
		return l
	})
}

func TestHugePageLimits(t *testing.T) {
	Compare(t, Comparison[corev1.ResourceList, map[int64]int64]{
		Name: "cgroups.HugePageLimits",
		Gen:  genHugePageList(),
		Ours: func(l corev1.ResourceList) map[int64]int64 {
			m, err := cgroups.HugePageLimits(coreList(l))
			if err != nil {
				panic(err)
			}
			return m
		},
		Theirs: cm.HugePageLimits,
	})
}

type podConfigInput struct {
	Pod              *corev1.Pod
	EnforceCPULimits bool
	PeriodUS         uint64
	CustomPeriod     bool
	PodLevel         bool
	MemoryQoS        bool
	Tiered           bool
}

// config is the comparable part of a ResourceConfig: what both sides set.
type config struct {
	CPUShares *uint64
	CPUQuota  *int64
	CPUPeriod *uint64
	Memory    *int64
	HugePages map[int64]int64
	PidsLimit *int64
	Unified   map[string]string
}

func sameConfig(a, b config) bool {
	eqU := func(x, y *uint64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	eqI := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	if !eqU(a.CPUShares, b.CPUShares) || !eqI(a.CPUQuota, b.CPUQuota) || !eqU(a.CPUPeriod, b.CPUPeriod) ||
		!eqI(a.Memory, b.Memory) || !eqI(a.PidsLimit, b.PidsLimit) || len(a.HugePages) != len(b.HugePages) ||
		len(a.Unified) != len(b.Unified) {
		return false
	}
	for k, v := range a.HugePages {
		if w, ok := b.HugePages[k]; !ok || v != w {
			return false
		}
	}
	for k, v := range a.Unified {
		if w, ok := b.Unified[k]; !ok || v != w {
			return false
		}
	}
	return true
}

func genPodConfigInput() *rapid.Generator[podConfigInput] {
	return rapid.Custom(func(t *rapid.T) podConfigInput {
		return podConfigInput{
			Pod:              genPod().Draw(t, "pod"),
			EnforceCPULimits: rapid.Bool().Draw(t, "enforceCPULimits"),
			PeriodUS:         rapid.SampledFrom([]uint64{100_000, 1000, 50_000, 250_000, 1_000_000}).Draw(t, "periodUS"),
			CustomPeriod:     rapid.Bool().Draw(t, "customPeriodGate"),
			PodLevel:         rapid.Bool().Draw(t, "podLevelResourcesGate"),
			MemoryQoS:        rapid.Bool().Draw(t, "memoryQoS"),
			Tiered:           rapid.Bool().Draw(t, "tieredReservation"),
		}
	})
}

func TestResourceConfigForPod(t *testing.T) {
	resetGates(t)
	Compare(t, Comparison[podConfigInput, config]{
		Name: "cgroups.ResourceConfigForPod",
		Gen:  genPodConfigInput(),
		Ours: func(in podConfigInput) config {
			policy := cgroups.ReservationNone
			if in.Tiered {
				policy = cgroups.ReservationTiered
			}
			rc, err := cgroups.ResourceConfigForPod(ourPod(in.Pod), cgroups.PodOptions{
				EnforceCPULimits: in.EnforceCPULimits, CPUPeriodUS: in.PeriodUS, CustomPeriodGate: in.CustomPeriod,
				PodLevelResources: in.PodLevel, EnforceMemoryQoS: in.MemoryQoS, MemoryReservationPolicy: policy,
			})
			if err != nil {
				panic(err)
			}
			return config{rc.CPUShares, rc.CPUQuota, rc.CPUPeriod, rc.Memory, rc.HugePageLimit, rc.PidsLimit, rc.Unified}
		},
		Theirs: func(in podConfigInput) config {
			// The API server defaults the pod with its own gates (v1.36
			// defaults); the kubelet's gates are the input's.
			setGates(true, true)
			p := upstreamPod(in.Pod)
			setGates(in.CustomPeriod, in.PodLevel)
			policy := memoryPolicyNone
			if in.Tiered {
				policy = memoryPolicyTiered
			}
			rc := resourceConfigForPod(p, in.EnforceCPULimits, in.PeriodUS, in.MemoryQoS, policy)
			return config{rc.CPUShares, rc.CPUQuota, rc.CPUPeriod, rc.Memory, rc.HugePageLimit, rc.PidsLimit, rc.Unified}
		},
		Equal: sameConfig,
	})
}
