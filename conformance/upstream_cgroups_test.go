package conformance

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	v1qos "k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/kubelet/cm"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/properties"
	cgsuite "github.com/nodeproof/nodeproof/properties/cgroups"
)

// The cgroups suite with upstream's own cgroup configuration as its system
// under test: each node the suite generates (a kubelet config and the pods
// admitted to it) reaches this release's code in-process, and the contract
// properties judge the hierarchy it gives. The pods are the manifests the
// kubelet holds (kubeletPod: the API server's defaults under its own
// gates), and the kubelet's feature gates are the config's (setGates).
//
//   - The cgroups are named as the kubelet names them: kubepods under the
//     cgroup root, the QoS tiers the QoS container manager starts, each
//     pod under the tier of v1qos.GetPodQOS with cm.GetPodCgroupNameSuffix
//     (what podContainerManagerImpl.GetPodContainerName does), rendered by
//     the config's driver (CgroupName.ToCgroupfs or ToSystemd).
//   - kubepods and the tiers carry what the QoS container manager's Memory
//     QoS step writes (setMemoryQoS, as TestFindingCGBurstableMemoryLowVoid
//     calls it), run when the config has Memory QoS, which upstream runs on
//     a cgroup v2 host with the MemoryQoS gate on.
//   - Each pod carries cm.ResourceConfigForPod under the config.
//   - Each running container (app containers and sidecars) carries the CPU
//     quota and period kuberuntime's calculateLinuxResources gives it:
//     cm.MilliCPUToQuota of its cpu limit over the configured period with
//     the CPUCFSQuotaPeriod gate on, over cm.QuotaPeriod without, and only
//     with cpuCFSQuota on. Those are the method's own two lines, restated,
//     since its receiver (the runtime manager) cannot be built outside its
//     package; TestFindingCGQuotaFloorExceedsLimit reads the quota the same
//     way. A container without a cpu limit of its own gets none here, where
//     upstream may take the pod-level one: CG-C-CPU-LIMIT judges a
//     container's own limit only. The runtime names the container's cgroup;
//     the adapter names it as core does.
//
// What the contract properties do not read (the node-allocatable values,
// shares, memory limits, hugetlb and pids limits of the tiers and
// containers) is left out: only the suite's fidelity invariants, which
// judge core, are about them.

// upstreamCgroups is the cgroups suite's Kubelet with this release's code.
type upstreamCgroups struct {
	mu sync.Mutex
	// active are the pods of the node being built: the QoS managers'
	// active pods. Start's update loop reads them too, hence mu.
	active []*corev1.Pod
	// managers are the QoS container managers started, by kubepods' name
	// and memory reservation policy: Start launches a loop that never
	// ends, so one manager serves every node that has them.
	managers map[string]cm.QOSContainerManager
}

// newUpstreamCgroups is the cgroups suite's Kubelet with this release's
// code; the release has the memory reservation policies from v1.36.
func newUpstreamCgroups() cgsuite.Kubelet {
	u := &upstreamCgroups{managers: map[string]cm.QOSContainerManager{}}
	return cgsuite.Kubelet{Build: u.build, TieredReservation: tieredMemoryQoS}
}

func (u *upstreamCgroups) build(cfg cgroups.Config, pods []*pod.Pod) (cgroups.Hierarchy, error) {
	// The API server defaults the pods with its own gates (v1.36
	// defaults); the kubelet's gates are the config's.
	setGates(true, true)
	theirs := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		theirs[i] = kubeletPod(p)
	}
	setGates(cfg.CustomCPUCFSQuotaPeriod, cfg.PodLevelResources)
	defer setGates(true, true)

	policy := memoryPolicyNone
	if cfg.MemoryReservationPolicy == cgroups.ReservationTiered {
		policy = memoryPolicyTiered
	}
	kubepods := cm.NewCgroupName(cm.ParseCgroupfsToCgroupName(cfg.CgroupRoot), "kubepods")
	qm, err := u.manager(kubepods, policy)
	if err != nil {
		return nil, err
	}
	info := qm.GetQOSContainersInfo()
	tiers := map[corev1.PodQOSClass]*cm.CgroupConfig{
		corev1.PodQOSGuaranteed: {Name: info.Guaranteed, ResourceParameters: &cm.ResourceConfig{}},
		corev1.PodQOSBurstable:  {Name: info.Burstable, ResourceParameters: &cm.ResourceConfig{}},
		corev1.PodQOSBestEffort: {Name: info.BestEffort, ResourceParameters: &cm.ResourceConfig{}},
	}
	if cfg.MemoryQoS {
		u.mu.Lock()
		u.active = theirs
		u.mu.Unlock()
		upstreamSetMemoryQoS(reflect.ValueOf(qm).UnsafePointer(), logr.Discard(), tiers)
	}
	path := func(name cm.CgroupName) string {
		if cfg.CgroupDriver == cgroups.DriverSystemd {
			return strings.TrimPrefix(name.ToSystemd(), "/")
		}
		return strings.TrimPrefix(name.ToCgroupfs(), "/")
	}
	h := cgroups.Hierarchy{
		{Path: path(info.Guaranteed), Config: ourConfig(tiers[corev1.PodQOSGuaranteed].ResourceParameters), Kind: cgroups.KindNodeAllocatable, QOS: pod.Guaranteed},
		{Path: path(info.Burstable), Config: ourConfig(tiers[corev1.PodQOSBurstable].ResourceParameters), Kind: cgroups.KindQOS, QOS: pod.Burstable},
		{Path: path(info.BestEffort), Config: ourConfig(tiers[corev1.PodQOSBestEffort].ResourceParameters), Kind: cgroups.KindQOS, QOS: pod.BestEffort},
	}
	parents := map[corev1.PodQOSClass]cm.CgroupName{
		corev1.PodQOSGuaranteed: info.Guaranteed, corev1.PodQOSBurstable: info.Burstable, corev1.PodQOSBestEffort: info.BestEffort,
	}
	for _, p := range theirs {
		class := v1qos.GetPodQOS(p)
		podPath := path(cm.NewCgroupName(parents[class], cm.GetPodCgroupNameSuffix(p.UID)))
		rc := resourceConfigForPod(p, cfg.CPUCFSQuota, cfg.PeriodUS(), cfg.MemoryQoS, policy)
		h = append(h, cgroups.Cgroup{Path: podPath, Config: ourConfig(rc), Kind: cgroups.KindPod, QOS: pod.QOSClass(class), PodUID: string(p.UID)})
		for _, c := range runningContainers(p) {
			ctrPath := podPath + "/" + c.Name
			if cfg.CgroupDriver == cgroups.DriverSystemd {
				ctrPath = podPath + "/cri-containerd-" + c.Name + ".scope"
			}
			h = append(h, cgroups.Cgroup{Path: ctrPath, Config: containerCPU(cfg, c), Kind: cgroups.KindContainer, QOS: pod.QOSClass(class),
				PodUID: string(p.UID), Container: c.Name})
		}
	}
	return h, nil
}

// manager is the QoS container manager of kubepods under policy, started
// on first use over a cgroup manager that creates nothing.
func (u *upstreamCgroups) manager(kubepods cm.CgroupName, policy memoryReservationPolicy) (cm.QOSContainerManager, error) {
	key := kubepods.ToCgroupfs() + " " + string(policy)
	if qm, ok := u.managers[key]; ok {
		return qm, nil
	}
	qm, err := cm.NewQOSContainerManager(&cm.CgroupSubsystems{}, kubepods, qosNodeConfig(policy), &recordingCgroups{created: map[string]bool{}})
	if err != nil {
		return nil, err
	}
	active := func() []*corev1.Pod {
		u.mu.Lock()
		defer u.mu.Unlock()
		return u.active
	}
	// Start also launches upstream's minute-long update loop, which only
	// writes to the recording manager.
	if err := qm.Start(context.Background(), func() corev1.ResourceList { return nil }, active); err != nil {
		return nil, fmt.Errorf("starting the QoS container manager of %s: %w", kubepods.ToCgroupfs(), err)
	}
	u.managers[key] = qm
	return qm, nil
}

// runningContainers are the pod's containers that keep running: its
// sidecars (restartable init containers) and its app containers.
func runningContainers(p *corev1.Pod) []corev1.Container {
	var out []corev1.Container
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			out = append(out, c)
		}
	}
	return append(out, p.Spec.Containers...)
}

// containerCPU is the CPU quota and period calculateLinuxResources gives a
// container with a cpu limit of its own (see above).
func containerCPU(cfg cgroups.Config, c corev1.Container) cgroups.ResourceConfig {
	limit, ok := c.Resources.Limits[corev1.ResourceCPU]
	if !cfg.CPUCFSQuota || !ok || limit.IsZero() {
		return cgroups.ResourceConfig{}
	}
	period := int64(cm.QuotaPeriod)
	if utilfeature.DefaultFeatureGate.Enabled(kubefeatures.CPUCFSQuotaPeriod) {
		period = int64(cfg.PeriodUS())
	}
	quota := cm.MilliCPUToQuota(limit.MilliValue(), period)
	periodUS := uint64(period)
	return cgroups.ResourceConfig{CPUQuota: &quota, CPUPeriod: &periodUS}
}

// ourConfig is upstream's resource config in core's type.
func ourConfig(rc *cm.ResourceConfig) cgroups.ResourceConfig {
	return cgroups.ResourceConfig{CPUShares: rc.CPUShares, CPUQuota: rc.CPUQuota, CPUPeriod: rc.CPUPeriod, Memory: rc.Memory,
		HugePageLimit: maps.Clone(rc.HugePageLimit), PidsLimit: rc.PidsLimit, Unified: maps.Clone(rc.Unified)}
}

// TestUpstreamCgroupsBuildsAsCore: the adapter gives, of what the contract
// properties read, what core gives, on every node the contract suite
// generates: the same cgroups (path, kind, pod and container), the same
// CPU quota and period on every container with a cpu limit, and the same
// memory.min and memory.low on kubepods, the tiers and every pod. Core is
// held to upstream's functions by the comparisons; this holds the
// adapter's assembly of them (names, tiers, gates, the container's quota).
func TestUpstreamCgroupsBuildsAsCore(t *testing.T) {
	resetGates(t)
	theirs := newUpstreamCgroups()
	compared := 0
	paired := cgsuite.Kubelet{TieredReservation: theirs.TieredReservation, Build: func(cfg cgroups.Config, pods []*pod.Pod) (cgroups.Hierarchy, error) {
		want, err := cgroups.Build(cfg, pods)
		if err != nil {
			return nil, err
		}
		got, err := theirs.Build(cfg, pods)
		if err != nil {
			return nil, err
		}
		compared++
		if diff := contractDiff(cfg, want, got); diff != "" {
			return nil, fmt.Errorf("upstream and core differ: %s", diff)
		}
		return got, nil
	}}
	opts := contractBudget
	opts.Replay = func(uint64) string { return "cd conformance && go test -count=1 -run '" + runPattern(t.Name()) + "' ." }
	// On a release that changed what it writes the first difference is
	// the cell; as TestUpstreamContracts, the matrix needs it short, not
	// the shortest.
	opts.ShrinkTime = 5 * time.Second
	res := properties.Run(cgsuite.ContractSuite("cgroups", paired), opts)
	require.Nil(t, res.Failure, "the adapter and core built differently")
	t.Logf("%d nodes compared", compared)
	assert.Positive(t, compared)
}

// contractDiff says how got differs from want in what the contract
// properties read, or "" when it does not.
func contractDiff(cfg cgroups.Config, want, got cgroups.Hierarchy) string {
	type seen struct {
		kind           cgroups.Kind
		uid, container string
	}
	view := func(h cgroups.Hierarchy) map[string]seen {
		out := map[string]seen{}
		for _, cg := range h {
			out[cg.Path] = seen{cg.Kind, cg.PodUID, cg.Container}
		}
		return out
	}
	if w, g := view(want), view(got); !maps.Equal(w, g) {
		return fmt.Sprintf("cgroups %v, core's %v", g, w)
	}
	for _, w := range want {
		g, _ := got.Lookup(w.Path)
		switch {
		case w.Kind == cgroups.KindContainer:
			if !cfg.CPUCFSQuota || w.Config.CPUQuota == nil {
				continue
			}
			if g.Config.CPUQuota == nil || *g.Config.CPUQuota != *w.Config.CPUQuota || g.Config.CPUPeriod == nil || *g.Config.CPUPeriod != *w.Config.CPUPeriod {
				return fmt.Sprintf("%s: quota %s period %s, core's %d per %d", w.Path, setOrNot(g.Config.CPUQuota), setOrNot(g.Config.CPUPeriod), *w.Config.CPUQuota, *w.Config.CPUPeriod)
			}
		case !maps.Equal(protection(w.Config.Unified), protection(g.Config.Unified)):
			return fmt.Sprintf("%s: memory protection %v, core's %v", w.Path, protection(g.Config.Unified), protection(w.Config.Unified))
		}
	}
	return ""
}

// setOrNot prints what p points to, or "unset".
func setOrNot[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

// protection is memory.min and memory.low of a cgroup's unified files.
func protection(unified map[string]string) map[string]string {
	out := map[string]string{}
	for _, name := range []string{"memory.min", "memory.low"} {
		if v, ok := unified[name]; ok {
			out[name] = v
		}
	}
	return out
}
