package sim

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/prober"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// Invariant IDs.
const (
	InvDevicesHeld       = "SIM-DEVICES-HELD"
	InvCgroups           = "SIM-CGROUPS"
	InvAllocatable       = "SIM-ALLOCATABLE"
	InvGCInUse           = "SIM-GC-IN-USE"
	InvLiveness          = "SIM-LIVENESS"
	InvPreemptedReleased = "SIM-PREEMPTED-RELEASED"
	InvRestartKeeps      = "SIM-RESTART-KEEPS"
	InvCoresAccept       = "SIM-CORES-ACCEPT"

	// The contract invariants: what the Kubernetes documentation promises
	// of the whole node, beside the fidelity statements above that say
	// what upstream does where it breaks the promise.
	InvCAllocatable  = "SIM-C-ALLOCATABLE"
	InvCRestartReady = "SIM-C-RESTART-READY"
	InvCRestartRuns  = "SIM-C-RESTART-RUNS"
)

// subsystem is the subsystem of the simulation's invariants: the whole
// node, every core together.
const subsystem = "sim"

// The upstream files and documentation pages the invariants cite.
const (
	dmManager      = "pkg/kubelet/cm/devicemanager/manager.go"
	cmQoS          = "pkg/kubelet/cm/qos_container_manager_linux.go"
	cmPodContainer = "pkg/kubelet/cm/pod_container_manager_linux.go"
	gcManager      = "pkg/kubelet/images/image_gc_manager.go"
	pbManager      = "pkg/kubelet/prober/prober_manager.go"
	predicateFile  = "pkg/kubelet/lifecycle/predicate.go"
	preemptionFile = "pkg/kubelet/preemption/preemption.go"

	probesPage        = "tasks/configure-pod-container/configure-liveness-readiness-startup-probes/"
	probesTitle       = "Configure Liveness, Readiness and Startup Probes"
	devicePluginsPage = "concepts/extend-kubernetes/compute-storage-net/device-plugins/"
	podLifecyclePage  = "concepts/workloads/pods/pod-lifecycle/"
	nodeRestartPage   = "reference/node/what-happens-on-restart/"
	nodeRestartTitle  = "What Happens After A Node Restart"
)

// simDoc is the simulation's own page, which every fidelity invariant
// cites for how the node is simulated.
var simDoc = cite.Doc("docs/commands/sim.md", "")

// view is the state the invariants judge after an event: the simulation,
// and what the device manager holds by pod, which several invariants read
// and Check asks the device manager for once.
type view struct {
	s    *Sim
	hold map[string]podHoldings
}

// invariants are the cross-subsystem checks, in the order Check evaluates
// them. A contract invariant cites the promise, never upstream's code.
var invariants = []verify.Check[*view]{
	{
		Property: verify.Property{ID: InvDevicesHeld, Kind: verify.Fidelity, Subsystem: subsystem,
			Statement: "The device manager holds exactly the devices the plugins granted to the admitted, non-terminated pods' containers, no device is held by two pods, a pod that is not active holds none once an allocation's garbage collection has run, and the runtime configuration the kubelet gives each running container (the device manager's run options) names exactly the devices the device manager holds for it and is that container's own Allocate answer: the last one that reached the kubelet process that made the call, or else the one its checkpoint file restored, never one that arrived after that process restarted, across kubelet restarts and plugin faults.",
			Sources: []cite.Source{cite.Code(dmManager, "ManagerImpl.Allocate"), cite.Code(dmManager, "ManagerImpl.UpdateAllocatedDevices"),
				cite.Code(dmManager, "ManagerImpl.readCheckpoint"), cite.Code(dmManager, "ManagerImpl.PluginDisconnected"),
				cite.Code(dmManager, "ManagerImpl.GetDeviceRunContainerOptions"), simDoc}},
		Applies: func(v *view) bool { return v.s.devicesApply(v.hold) },
		Holds:   func(v *view) error { return v.s.checkDevices(v.hold) },
	},
	{
		Property: verify.Property{ID: InvCgroups, Kind: verify.Fidelity, Subsystem: subsystem,
			Statement: "The cgroup filesystem equals the tree core/cgroups builds for the admitted, non-terminated pods: a preempted or finished pod's cgroups are gone and the QoS tiers count only those pods.",
			Sources: []cite.Source{cite.Code(cmQoS, "qosContainerManagerImpl.UpdateCgroups"), cite.Code(cmPodContainer, "podContainerManagerImpl.GetPodContainerName"),
				cite.Seed("pod and QoS cgroups", "How CPU requests are implemented"), simDoc}},
		Holds: func(v *view) error { return v.s.checkCgroups() },
	},
	{
		Property: verify.Property{ID: InvAllocatable, Kind: verify.Fidelity, Subsystem: subsystem,
			Statement: "Upstream's admission: the admitted, non-terminated pods' requests never exceed the node's allocatable, devices included, except the extended resources a pod requested while allocatable did not list them, which v1.36's admission drops and the pod runs without (counted under Stats.Observed); a critical pod is admitted even when a victim's kill failed (#78405), also counted.",
			Sources: []cite.Source{cite.Code(predicateFile, "predicateAdmitHandler.Admit"), cite.Code(preemptionFile, "CriticalPodAdmissionHandler.HandleAdmissionFailure"),
				cite.Issue(78405), simDoc}},
		Applies: func(v *view) bool { return v.s.allocatableApplies() },
		Holds:   func(v *view) error { return v.s.checkAllocatable() },
	},
	{
		Property: verify.Property{ID: InvCAllocatable, Kind: verify.Contract, Subsystem: subsystem,
			Statement: "Devices cannot be shared between containers and extended resources cannot be overcommitted: no device is held for two live pods at once, and the devices held for the live pods of each resource never outnumber the devices its plugin advertises.",
			Sources:   []cite.Source{cite.KubernetesDoc(devicePluginsPage, "Device Plugins", "Device plugin registration")}},
		Applies: func(v *view) bool { return v.s.liveHoldDevices(v.hold) },
		Holds:   func(v *view) error { return v.s.checkCAllocatable(v.hold) },
	},
	{
		Property: verify.Property{ID: InvGCInUse, Kind: verify.Fidelity, Subsystem: subsystem,
			Statement: "Upstream's image GC: it never removes an image a running container uses, except one whose container started after the pass's detection (#123631), which v1.36 removes anyway (counted under Stats.Observed), breaking the promise GC-C-IN-USE states (finding GC-F3).",
			Sources:   []cite.Source{cite.Code(gcManager, "realImageGCManager.freeSpace"), cite.Code(gcManager, "realImageGCManager.detectImages"), cite.Issue(123631), simDoc}},
		Applies: func(v *view) bool {
			return len(v.s.gcBad) > 0 || v.s.anyContainer(func(*simPod, int) bool { return true })
		},
		Holds: func(v *view) error { return v.s.checkGCInUse() },
	},
	{
		// SIM-LIVENESS states the probes' documented promise, which
		// upstream breaks for a replacement container (PB-F2); the
		// simulation has not reached that case, and a breach would be the
		// cross-subsystem face of PB-F2, to register as a finding of its
		// own.
		Property: verify.Property{ID: InvLiveness, Kind: verify.Contract, Subsystem: subsystem,
			Statement: "A container is restarted for liveness only after FailureThreshold consecutive liveness failures of that container instance, and never while its startup probe has not succeeded (the probes' documented promise, which upstream breaks for a replacement container: finding PB-F2).",
			Sources: []cite.Source{cite.KubernetesDoc(probesPage, probesTitle, "Configure Probes"),
				cite.KubernetesDoc(probesPage, probesTitle, ""), cite.Issue(117153), simDoc}},
		Applies: func(v *view) bool {
			return len(v.s.livenessBad) > 0 || v.s.anyContainer(func(p *simPod, i int) bool { return p.probes.Containers[i].LivenessProbe != nil })
		},
		Holds: func(v *view) error { return v.s.checkLiveness() },
	},
	{
		Property: verify.Property{ID: InvPreemptedReleased, Kind: verify.Fidelity, Subsystem: subsystem,
			Statement: "A preempted pod's containers, cgroups and probe workers are released, its images are no longer counted in use, and its devices are freed by the next allocation's garbage collection.",
			Sources: []cite.Source{cite.Code(preemptionFile, "CriticalPodAdmissionHandler.evictPodsToFreeRequests"),
				cite.Code(dmManager, "ManagerImpl.UpdateAllocatedDevices"), cite.Code(pbManager, "manager.RemovePod"), simDoc}},
		Applies: func(v *view) bool { return v.s.anyPod((*simPod).preemptedDead) },
		Holds:   func(v *view) error { return v.s.checkPreempted(v.hold) },
	},
	{
		Property: verify.Property{ID: InvRestartKeeps, Kind: verify.Fidelity, Subsystem: subsystem,
			Statement: "Upstream's restart: after a kubelet restart, the pods that kept running, every container started at least the prober's 10 s restart grace before it, keep their devices, their cgroups and (v1.36) their Ready condition until a readiness probe runs or a container restarts; v1.36 keeps the readiness of those containers only (SIM-C-RESTART-READY states the promise for all).",
			Sources: []cite.Source{cite.Code(dmManager, "ManagerImpl.readCheckpoint"), cite.Code(pbManager, "manager.setReadyStateOnKubeletRestart"),
				cite.PR(126883), simDoc}},
		Applies: func(v *view) bool { return v.s.anyPod((*simPod).survivedRunning) },
		Holds:   func(v *view) error { return v.s.checkRestartKeeps(v.hold) },
	},
	{
		Property: verify.Property{ID: InvCRestartReady, Kind: verify.Contract, Subsystem: subsystem,
			Statement: "A kubelet restart does not change container statuses: a pod that was Ready when the kubelet restarted, and whose containers all kept running, stays Ready until a readiness probe of it runs or one of its containers restarts.",
			Sources: []cite.Source{cite.KubernetesDoc(podLifecyclePage, "Pod Lifecycle", "Detection of kubelet restarts"),
				cite.KubernetesDoc(nodeRestartPage, nodeRestartTitle, "Impact of a kubelet restart"),
				cite.KEP(4781, "Fix inconsistent container ready state after kubelet restart")}},
		Applies: func(v *view) bool { return v.s.anyPod((*simPod).readyRunningAtRestart) },
		Holds:   func(v *view) error { return v.s.checkCRestartReady() },
	},
	{
		Property: verify.Property{ID: InvCRestartRuns, Kind: verify.Contract, Subsystem: subsystem,
			Statement: "If only the kubelet restarts, the containers already running continue to run: the restarted kubelet neither stops nor rejects a pod it finds running, unless the pod was already being deleted or preempted.",
			Sources: []cite.Source{cite.KubernetesDoc(nodeRestartPage, nodeRestartTitle, "Impact of a kubelet restart"),
				cite.KubernetesDoc(podLifecyclePage, "Pod Lifecycle", "")}},
		// It applies once a restart has found a running pod to admit
		// again, and to every running pod after it.
		Applies: func(v *view) bool { return len(v.s.restartStopped) > 0 || v.s.anyPod((*simPod).runningSinceRestart) },
		Holds:   func(v *view) error { return v.s.checkCRestartRuns() },
	},
	{
		Property: verify.Property{ID: InvCoresAccept, Kind: verify.Fidelity, Subsystem: subsystem,
			Statement: "The kubelet glue never hands a core input that it refuses as malformed or out of turn.",
			Sources:   []cite.Source{cite.BadInput, simDoc}},
		Holds: func(v *view) error { return v.s.checkCoresAccept() },
	},
}

// Invariants describes the cross-subsystem invariants in the order Check
// evaluates them.
func Invariants() []verify.Property { return verify.Properties(invariants) }

// Check evaluates every invariant on the current state, in Invariants()
// order, and counts the evaluations in Stats.Checks.
func (s *Sim) Check() []CheckResult {
	v := &view{s: s, hold: s.holdings()}
	out := make([]CheckResult, len(invariants))
	for i, inv := range invariants {
		// Evaluate counts whether the invariant applied; the result says
		// it too, for the suite's tally.
		applied := s.stats.Checks[inv.ID].Applied
		err := inv.Evaluate(v, s.stats.Checks)
		out[i] = CheckResult{ID: inv.ID, Applied: s.stats.Checks[inv.ID].Applied > applied, Err: err}
	}
	// The facts of this event have been judged.
	s.livenessBad, s.gcBad, s.coreErrs, s.restartStopped = s.livenessBad[:0], s.gcBad[:0], s.coreErrs[:0], s.restartStopped[:0]
	s.forgetDead()
	return out
}

// anyPod says whether some pod of the node, in podOrder, is one of those
// that match.
func (s *Sim) anyPod(match func(*simPod) bool) bool {
	return slices.ContainsFunc(s.podOrder, func(uid string) bool { return match(s.pods[uid]) })
}

// anyContainer says whether some running container of a pod of the node
// is one of those that match, given its pod and its index in the pod.
func (s *Sim) anyContainer(match func(p *simPod, i int) bool) bool {
	return s.anyPod(func(p *simPod) bool {
		for i, c := range p.containers {
			if c.running && match(p, i) {
				return true
			}
		}
		return false
	})
}

func (p *simPod) preemptedDead() bool   { return p.preempted && p.phase == phaseDead }
func (p *simPod) survivedRunning() bool { return p.survivedRestart && p.phase == phaseRunning }
func (p *simPod) readyRunningAtRestart() bool {
	return p.runningAtRestart && p.readyAtRestart && p.phase == phaseRunning
}
func (p *simPod) runningSinceRestart() bool { return p.runningAtRestart && p.phase == phaseRunning }

// podHoldings is what the device manager holds for one pod: container ->
// resource -> sorted IDs.
type podHoldings map[string]map[string][]string

// The formats of what a violation compares: sorted key=value lists a
// reader can scan and diff, where %v would print Go's map[k:map[k:[v]]].

// formatHoldings lists a pod's devices by container/resource:
// "c0/example.com/gpu=[gpu-0 gpu-1], c1/example.com/gpu=[gpu-2]".
func formatHoldings(h podHoldings) string {
	flat := map[string][]string{}
	for c, byRes := range h {
		for res, ids := range byRes {
			flat[c+"/"+res] = ids
		}
	}
	return formatDevices(flat)
}

// formatDevices lists devices by resource: "example.com/gpu=[gpu-0 gpu-1]".
func formatDevices(byRes map[string][]string) string {
	lists := make(map[string]string, len(byRes))
	for k, ids := range byRes {
		lists[k] = "[" + strings.Join(ids, " ") + "]"
	}
	return formatKeyValues(lists)
}

// formatKeyValues lists m as "k1=v1, k2=v2" in key order; "nothing" when
// it is empty.
func formatKeyValues(m map[string]string) string {
	if len(m) == 0 {
		return "nothing"
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ", ")
}

// formatFiles lists a cgroup's files in the order they are written:
// "cpu.weight=1, cpu.max=max 100000".
func formatFiles(files []cgroups.File) string {
	if len(files) == 0 {
		return "nothing"
	}
	parts := make([]string, 0, len(files))
	for _, f := range files {
		parts = append(parts, f.Name+"="+f.Value)
	}
	return strings.Join(parts, ", ")
}

func (s *Sim) holdings() map[string]podHoldings {
	out := map[string]podHoldings{}
	for _, h := range s.kubelet.devices.Holdings() {
		if out[h.PodUID] == nil {
			out[h.PodUID] = podHoldings{}
		}
		if out[h.PodUID][h.Container] == nil {
			out[h.PodUID][h.Container] = map[string][]string{}
		}
		out[h.PodUID][h.Container][h.Resource] = h.DeviceIDs
	}
	return out
}

// sameDevices compares a pod's holdings with what it was granted.
func sameDevices(held podHoldings, granted map[string]map[string][]string) bool {
	count := 0
	for c, byRes := range granted {
		for r, ids := range byRes {
			count++
			got := held[c][r]
			want := slices.Clone(ids)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				return false
			}
		}
	}
	n := 0
	for _, byRes := range held {
		n += len(byRes)
	}
	return n == count
}

// devicesApply: the device manager holds something, or a live pod was
// granted devices.
func (s *Sim) devicesApply(hold map[string]podHoldings) bool {
	return len(hold) > 0 || s.anyPod(func(p *simPod) bool { return p.live() && len(p.granted) > 0 })
}

func (s *Sim) checkDevices(hold map[string]podHoldings) error {
	owner := map[string]string{}
	for _, uid := range slices.Sorted(maps.Keys(hold)) {
		for _, c := range slices.Sorted(maps.Keys(hold[uid])) {
			for _, res := range slices.Sorted(maps.Keys(hold[uid][c])) {
				for _, id := range hold[uid][c][res] {
					key := res + "/" + id
					if o, ok := owner[key]; ok && o != uid {
						return fmt.Errorf("device %s is held by both %s and %s", key, o, uid)
					}
					owner[key] = uid
				}
			}
		}
		p := s.pods[uid]
		switch {
		case p == nil && s.forgotten[uid]:
			if s.kubelet.collected {
				return fmt.Errorf("%s, long gone, still holds %s after an allocation's garbage collection", uid, formatHoldings(hold[uid]))
			}
		case p == nil:
			return fmt.Errorf("the device manager holds %s for %s, a pod the node does not know", formatHoldings(hold[uid]), uid)
		case p.live():
			// Compared below.
		case p.phase == phaseAdmitting:
			// Its containers are being allocated.
		case p.mustRelease:
			return fmt.Errorf("%s is %s but still holds %s after an allocation's garbage collection", uid, p.phase, formatHoldings(hold[uid]))
		}
	}
	for _, uid := range s.podOrder {
		p := s.pods[uid]
		if !p.live() {
			continue
		}
		if !sameDevices(hold[uid], p.granted) {
			return fmt.Errorf("%s (%s) holds %s in the device manager but was granted %s", uid, p.phase, formatHoldings(hold[uid]), formatHoldings(p.granted))
		}
		if err := s.checkRunOptions(p, hold[uid]); err != nil {
			return err
		}
	}
	return nil
}

// checkRunOptions compares what each running container of p was told to
// expose, its run options (the Allocate answers the device manager recorded
// with its devices), with the devices held for it and with the answer the
// container was granted (plugin.granted): the device nodes must be those
// of the devices held, and each resource's allocation directory that of
// the granted answer. The answers and the devices are recorded together,
// so they differ only when an answer was committed to a plan it does not
// answer, or a restart restored what the checkpoint file does not hold.
func (s *Sim) checkRunOptions(p *simPod, held podHoldings) error {
	for _, c := range p.containers {
		byRes := held[c.name]
		if !c.running || len(byRes) == 0 {
			continue
		}
		var want []string
		wantDirs := map[string]string{}
		for res, ids := range byRes {
			for _, id := range ids {
				want = append(want, devicePath(id))
			}
			if pl := s.plugin(res); pl != nil {
				g, _ := pl.granted(p.spec.UID, c.name)
				wantDirs[allocationMount(res)] = g.dir
			}
		}
		var got []string
		gotDirs := map[string]string{}
		if opts := s.kubelet.devices.RunContainerOptions(p.spec.UID, c.name); opts != nil {
			for _, d := range opts.Devices {
				got = append(got, d.PathOnHost)
			}
			for _, m := range opts.Mounts {
				gotDirs[m.ContainerPath] = m.HostPath
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("%s/%s (%s) runs with the device nodes %v but the device manager holds %s for it", p.spec.UID, c.name, c.id, got, formatDevices(byRes))
		}
		if !maps.Equal(gotDirs, wantDirs) {
			return fmt.Errorf("%s/%s (%s) runs with the allocation directories %s but was granted %s (the last answer this kubelet received for it, else its checkpoint's): an answer to another call was committed to its plan", p.spec.UID, c.name, c.id, formatKeyValues(gotDirs), formatKeyValues(wantDirs))
		}
	}
	return nil
}

// cachedTree is the expected cgroup files for one generation of the sim's
// record of live pods, and whether the filesystem matched them at a given
// write count.
type cachedTree struct {
	gen      int
	built    bool
	files    map[string][]cgroups.File
	err      error
	okWrites int
	ok       bool
}

func (s *Sim) checkCgroups() error {
	t := &s.expected
	if !t.built || t.gen != s.liveGen {
		*t = cachedTree{gen: s.liveGen, built: true, files: map[string][]cgroups.File{}}
		var specs []*pod.Pod
		for _, p := range s.livePods() {
			specs = append(specs, p.spec)
		}
		h, err := cgroups.Build(s.cgCfg, specs)
		if err == nil {
			var all []cgroups.CgroupFiles
			all, err = h.Files(cgroups.V2)
			for _, cf := range all {
				t.files[cf.Path] = cf.Files
			}
		}
		t.err = err
	}
	if t.err != nil {
		return fmt.Errorf("core/cgroups cannot build the tree of the live pods: %v", t.err)
	}
	if t.ok && t.okWrites == s.fs.writes {
		return nil
	}
	for _, path := range slices.Sorted(maps.Keys(t.files)) {
		got, ok := s.fs.dirs[path]
		if !ok {
			return fmt.Errorf("cgroup %s is missing", path)
		}
		if !sameFiles(got, t.files[path]) {
			return fmt.Errorf("cgroup %s has %s, want %s", path, formatFiles(got), formatFiles(t.files[path]))
		}
	}
	if len(s.fs.dirs) != len(t.files) {
		for _, path := range slices.Sorted(maps.Keys(s.fs.dirs)) {
			if _, ok := t.files[path]; !ok {
				return fmt.Errorf("cgroup %s exists but belongs to no live pod", path)
			}
		}
	}
	t.ok, t.okWrites = true, s.fs.writes
	return nil
}

// allocatableApplies: a live pod counts against allocatable (one whose
// admission went ahead despite a failed kill does not).
func (s *Sim) allocatableApplies() bool {
	return s.anyPod(func(p *simPod) bool { return p.live() && !p.killFailed })
}

func (s *Sim) checkAllocatable() error {
	used := pod.ResourceList{}
	n := int64(0)
	for _, p := range s.livePods() {
		if p.killFailed {
			continue
		}
		n++
		for name, q := range p.spec.EffectiveRequests(pod.Options{}) {
			if !p.unreported[name] {
				used[name] += q
			}
		}
	}
	limit := s.nodeCapacity()
	for _, pl := range s.plugins {
		limit[pod.ResourceName(pl.resource)] = int64(len(pl.devices))
	}
	used[pod.Pods] = n
	for _, name := range used.Names() {
		if used[name] > limit[name] {
			return fmt.Errorf("the live pods request %d of %s, allocatable is %d", used[name], name, limit[name])
		}
	}
	return nil
}

func (s *Sim) checkGCInUse() error {
	if len(s.gcBad) > 0 {
		return fmt.Errorf("%s", s.gcBad[0])
	}
	for _, uid := range s.podOrder {
		for _, c := range s.pods[uid].containers {
			if !c.running {
				continue
			}
			if _, ok := s.runtime.images[c.image]; !ok && !c.imageRemovedInWindow {
				return fmt.Errorf("%s/%s (%s) runs %s, which is gone from the node", uid, c.name, c.id, c.image)
			}
		}
	}
	return nil
}

// checkLiveness reports the first liveness restart of the event that broke
// the promise; the prober's glue judges each restart as it makes it.
func (s *Sim) checkLiveness() error {
	if len(s.livenessBad) > 0 {
		return fmt.Errorf("%s", s.livenessBad[0])
	}
	return nil
}

func (s *Sim) checkPreempted(hold map[string]podHoldings) error {
	k := s.kubelet
	for _, uid := range s.podOrder {
		p := s.pods[uid]
		if !p.preemptedDead() {
			continue
		}
		for _, c := range p.containers {
			if c.running {
				return fmt.Errorf("preempted %s still runs %s", uid, c.name)
			}
		}
		if path, err := cgroups.PodPath(s.cgCfg, s.cgCfg.PodQOS(p.spec), uid); err == nil {
			if _, ok := s.fs.dirs[path]; ok {
				return fmt.Errorf("preempted %s still has its cgroup %s", uid, path)
			}
		}
		for _, c := range p.probes.Containers {
			for _, t := range []prober.ProbeType{prober.Startup, prober.Readiness, prober.Liveness} {
				// A worker still in its start-up sleep takes the stop when
				// it wakes, as upstream's goroutine does; it is released.
				if w, ok := k.prober.Worker(prober.WorkerKey{PodUID: uid, ContainerName: c.Name, Type: t}); ok && !w.Stopping {
					return fmt.Errorf("preempted %s still has a %s worker for %s", uid, t, c.Name)
				}
			}
		}
		if _, ok := k.status[uid]; ok {
			return fmt.Errorf("preempted %s is still in the status manager, so its images count as in use", uid)
		}
		if p.mustRelease && len(hold[uid]) > 0 {
			return fmt.Errorf("preempted %s still holds %s after an allocation's garbage collection", uid, formatHoldings(hold[uid]))
		}
	}
	return nil
}

func (s *Sim) checkRestartKeeps(hold map[string]podHoldings) error {
	for _, uid := range s.podOrder {
		p := s.pods[uid]
		if !p.survivedRunning() {
			continue
		}
		if !sameDevices(hold[uid], p.granted) {
			return fmt.Errorf("%s ran across the restart but holds %s, granted %s", uid, formatHoldings(hold[uid]), formatHoldings(p.granted))
		}
		if path, err := cgroups.PodPath(s.cgCfg, s.cgCfg.PodQOS(p.spec), uid); err == nil {
			if _, ok := s.fs.dirs[path]; !ok {
				return fmt.Errorf("%s ran across the restart but its cgroup %s is gone", uid, path)
			}
		}
		if p.readyAtRestart && !p.readinessProbed && !p.apiReady {
			return fmt.Errorf("%s was Ready at the restart and lost it before any readiness probe ran", uid)
		}
	}
	return nil
}

func (s *Sim) checkCoresAccept() error {
	if len(s.coreErrs) > 0 {
		return fmt.Errorf("%s", strings.Join(s.coreErrs, "; "))
	}
	return nil
}

// checkCAllocatable judges the device plugins page's promise from the
// device manager's holdings alone: what it assigned, not what the pods
// request (a pod admitted before its plugin registered requests devices it
// never got, which SIM-ALLOCATABLE counts as upstream's behaviour).
// liveHoldDevices: the device manager holds a device for a live pod.
func (s *Sim) liveHoldDevices(hold map[string]podHoldings) bool {
	return s.anyPod(func(p *simPod) bool {
		if !p.live() {
			return false
		}
		for _, byRes := range hold[p.spec.UID] {
			for _, ids := range byRes {
				if len(ids) > 0 {
					return true
				}
			}
		}
		return false
	})
}

func (s *Sim) checkCAllocatable(hold map[string]podHoldings) error {
	owner := map[string]string{}
	held := map[string]int{}
	for _, uid := range s.podOrder {
		p := s.pods[uid]
		if !p.live() {
			continue
		}
		for _, c := range slices.Sorted(maps.Keys(hold[uid])) {
			for _, res := range slices.Sorted(maps.Keys(hold[uid][c])) {
				for _, id := range hold[uid][c][res] {
					key := res + "/" + id
					if o, ok := owner[key]; ok && o != uid {
						return fmt.Errorf("device %s is held for both %s and %s, two live pods", key, o, uid)
					}
					if _, ok := owner[key]; !ok {
						held[res]++
					}
					owner[key] = uid
				}
			}
		}
	}
	for _, pl := range s.plugins {
		if held[pl.resource] > len(pl.devices) {
			return fmt.Errorf("the live pods hold %d devices of %s, its plugin advertises %d", held[pl.resource], pl.resource, len(pl.devices))
		}
	}
	return nil
}

// checkCRestartReady judges every pod that was Ready at the latest
// kubelet restart with all its containers running, however recently they
// started (SIM-RESTART-KEEPS judges only those that started at least the
// prober's restart grace before it, as upstream keeps only theirs).
func (s *Sim) checkCRestartReady() error {
	for _, uid := range s.podOrder {
		p := s.pods[uid]
		if !p.readyRunningAtRestart() {
			continue
		}
		if !p.readinessProbed && !p.apiReady {
			var since []string
			for _, c := range p.containers {
				since = append(since, fmt.Sprintf("%s started %v before", c.name, s.kubelet.started.Sub(c.startedAt)))
			}
			return fmt.Errorf("%s was Ready when the kubelet restarted at %v, its containers kept running (%s), and it lost Ready before any readiness probe of it ran",
				uid, s.kubelet.started.Sub(simStart), strings.Join(since, ", "))
		}
	}
	return nil
}

// checkCRestartRuns judges the restart's admission of the pods it found
// running.
func (s *Sim) checkCRestartRuns() error {
	if len(s.restartStopped) > 0 {
		return fmt.Errorf("%s", s.restartStopped[0])
	}
	return nil
}
