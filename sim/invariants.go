package sim

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/prober"
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

// Invariants returns the cross-subsystem invariants in the order Check
// evaluates them.
func Invariants() []Invariant {
	return []Invariant{
		{ID: InvDevicesHeld, Statement: "The device manager holds exactly the devices the plugins granted to the admitted, non-terminated pods' containers, no device is held by two pods, a pod that is not active holds none once an allocation's garbage collection has run, and the runtime configuration the kubelet gives each running container (the device manager's run options) names exactly the devices the device manager holds for it and is that container's own Allocate answer: the last one that reached the kubelet process that made the call, or else the one its checkpoint file restored, never one that arrived after that process restarted, across kubelet restarts and plugin faults.",
			Source: "seeds/devicemanager; spec/devicemanager.md §1.8, §1.9 (run options) and restart; issue #15"},
		{ID: InvCgroups, Statement: "The cgroup filesystem equals the tree core/cgroups builds for the admitted, non-terminated pods: a preempted or finished pod's cgroups are gone and the QoS tiers count only those pods.",
			Source: "spec/cgroups.md §5; issue #15"},
		{ID: InvAllocatable, Statement: "Upstream's admission: the admitted, non-terminated pods' requests never exceed the node's allocatable, devices included, except the extended resources a pod requested while allocatable had none of them, which v1.36's admission drops and the pod runs without (counted under Stats.Observed); a critical pod is admitted even when a victim's kill failed (#78405), also counted.",
			Source: "pkg/kubelet/lifecycle/predicate.go (removeMissingExtendedResources); spec/preemption.md; issue #15"},
		{ID: InvCAllocatable, Contract: true, Statement: "Devices cannot be shared between containers and extended resources cannot be overcommitted: no device is held for two live pods at once, and the devices held for the live pods of each resource never outnumber the devices its plugin advertises.",
			Source: "Kubernetes documentation, Device Plugins, section 'Device plugin registration'"},
		{ID: InvGCInUse, Statement: "Upstream's image GC: it never removes an image a running container uses, except one whose container started after the pass's detection (#123631), which v1.36 removes anyway (counted under Stats.Observed), breaking the promise GC-C-IN-USE states (finding GC-F3).",
			Source: "spec/imagegc.md §2; kubernetes/kubernetes#123631"},
		{ID: InvLiveness, Statement: "A container is restarted for liveness only after FailureThreshold consecutive liveness failures of that container instance, and never while its startup probe has not succeeded (the probes' documented promise, which upstream breaks for a replacement container: finding PB-F2).",
			Source: "kubernetes.io Configure Liveness, Readiness and Startup Probes; kubernetes/kubernetes#117153", Contract: true},
		{ID: InvPreemptedReleased, Statement: "A preempted pod's containers, cgroups and probe workers are released, its images are no longer counted in use, and its devices are freed by the next allocation's garbage collection.",
			Source: "spec/preemption.md; pkg/kubelet/preemption; issue #15"},
		{ID: InvRestartKeeps, Statement: "Upstream's restart: after a kubelet restart, the pods that kept running, every container started at least the prober's 10 s restart grace before it, keep their devices, their cgroups and (v1.36) their Ready condition until a readiness probe runs or a container restarts; v1.36 keeps the readiness of those containers only (SIM-C-RESTART-READY states the promise for all).",
			Source: "spec/devicemanager.md restart; spec/prober.md (setReadyStateOnKubeletRestart); issue #15"},
		{ID: InvCRestartReady, Contract: true, Statement: "A kubelet restart does not change container statuses: a pod that was Ready when the kubelet restarted, and whose containers all kept running, stays Ready until a readiness probe of it runs or one of its containers restarts.",
			Source: "Kubernetes documentation, Pod Lifecycle, section 'Detection of kubelet restarts'; What Happens After A Node Restart, section 'Impact of a kubelet restart'; KEP-4781"},
		{ID: InvCRestartRuns, Contract: true, Statement: "If only the kubelet restarts, the containers already running continue to run: the restarted kubelet neither stops nor rejects a pod it finds running, unless the pod was already being deleted or preempted.",
			Source: "Kubernetes documentation, What Happens After A Node Restart, section 'Impact of a kubelet restart'; Pod Lifecycle"},
		{ID: InvCoresAccept, Statement: "The kubelet glue never hands a core input that it refuses as malformed or out of turn.",
			Source: "DESIGN.md (bad input); issue #15"},
	}
}

// Check evaluates every invariant on the current state, in Invariants()
// order, and counts the evaluations in Stats.Checks.
func (s *Sim) Check() []CheckResult {
	hold := s.holdings()
	out := []CheckResult{
		s.checkDevices(hold),
		s.checkCgroups(),
		s.checkAllocatable(),
		s.checkCAllocatable(hold),
		s.checkGCInUse(),
		s.checkLiveness(),
		s.checkPreempted(hold),
		s.checkRestartKeeps(hold),
		s.checkCRestartReady(),
		s.checkCRestartRuns(),
		s.checkCoresAccept(),
	}
	for _, r := range out {
		c := s.stats.Checks[r.ID]
		c.Checked++
		if r.Applied {
			c.Applied++
		}
		s.stats.Checks[r.ID] = c
	}
	// The facts of this event have been judged.
	s.livenessBad, s.gcBad, s.coreErrs, s.restartStopped = s.livenessBad[:0], s.gcBad[:0], s.coreErrs[:0], s.restartStopped[:0]
	s.forgetDead()
	return out
}

func violation(id, format string, args ...any) error {
	return fmt.Errorf("%s: %s", id, fmt.Sprintf(format, args...))
}

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

func (s *Sim) checkDevices(hold map[string]podHoldings) CheckResult {
	r := CheckResult{ID: InvDevicesHeld, Applied: len(hold) > 0}
	owner := map[string]string{}
	for _, uid := range slices.Sorted(maps.Keys(hold)) {
		for _, c := range slices.Sorted(maps.Keys(hold[uid])) {
			for _, res := range slices.Sorted(maps.Keys(hold[uid][c])) {
				for _, id := range hold[uid][c][res] {
					key := res + "/" + id
					if o, ok := owner[key]; ok && o != uid {
						r.Err = violation(r.ID, "device %s is held by both %s and %s", key, o, uid)
						return r
					}
					owner[key] = uid
				}
			}
		}
		p := s.pods[uid]
		switch {
		case p == nil && s.forgotten[uid]:
			if s.kubelet.collected {
				r.Err = violation(r.ID, "%s, long gone, still holds %s after an allocation's garbage collection", uid, formatHoldings(hold[uid]))
				return r
			}
		case p == nil:
			r.Err = violation(r.ID, "the device manager holds %s for %s, a pod the node does not know", formatHoldings(hold[uid]), uid)
			return r
		case p.live():
			// Compared below.
		case p.phase == phaseAdmitting:
			// Its containers are being allocated.
		case p.mustRelease:
			r.Err = violation(r.ID, "%s is %s but still holds %s after an allocation's garbage collection", uid, p.phase, formatHoldings(hold[uid]))
			return r
		}
	}
	for _, uid := range s.podOrder {
		p := s.pods[uid]
		if !p.live() {
			continue
		}
		if len(p.granted) > 0 {
			r.Applied = true
		}
		if !sameDevices(hold[uid], p.granted) {
			r.Err = violation(r.ID, "%s (%s) holds %s in the device manager but was granted %s", uid, p.phase, formatHoldings(hold[uid]), formatHoldings(p.granted))
			return r
		}
		if err := s.checkRunOptions(p, hold[uid]); err != nil {
			r.Err = violation(r.ID, "%v", err)
			return r
		}
	}
	return r
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

func (s *Sim) checkCgroups() CheckResult {
	r := CheckResult{ID: InvCgroups, Applied: true}
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
		r.Err = violation(r.ID, "core/cgroups cannot build the tree of the live pods: %v", t.err)
		return r
	}
	if t.ok && t.okWrites == s.fs.writes {
		return r
	}
	for _, path := range slices.Sorted(maps.Keys(t.files)) {
		got, ok := s.fs.dirs[path]
		if !ok {
			r.Err = violation(r.ID, "cgroup %s is missing", path)
			return r
		}
		if !sameFiles(got, t.files[path]) {
			r.Err = violation(r.ID, "cgroup %s has %s, want %s", path, formatFiles(got), formatFiles(t.files[path]))
			return r
		}
	}
	if len(s.fs.dirs) != len(t.files) {
		for _, path := range slices.Sorted(maps.Keys(s.fs.dirs)) {
			if _, ok := t.files[path]; !ok {
				r.Err = violation(r.ID, "cgroup %s exists but belongs to no live pod", path)
				return r
			}
		}
	}
	t.ok, t.okWrites = true, s.fs.writes
	return r
}

func (s *Sim) checkAllocatable() CheckResult {
	r := CheckResult{ID: InvAllocatable}
	used := pod.ResourceList{}
	n := int64(0)
	for _, p := range s.livePods() {
		if p.killFailed {
			continue
		}
		r.Applied = true
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
			r.Err = violation(r.ID, "the live pods request %d of %s, allocatable is %d", used[name], name, limit[name])
			return r
		}
	}
	return r
}

func (s *Sim) checkGCInUse() CheckResult {
	r := CheckResult{ID: InvGCInUse}
	if len(s.gcBad) > 0 {
		r.Applied = true
		r.Err = violation(r.ID, "%s", s.gcBad[0])
		return r
	}
	for _, uid := range s.podOrder {
		for _, c := range s.pods[uid].containers {
			if !c.running {
				continue
			}
			r.Applied = true
			if _, ok := s.runtime.images[c.image]; !ok && !c.imageRemovedInWindow {
				r.Err = violation(r.ID, "%s/%s (%s) runs %s, which is gone from the node", uid, c.name, c.id, c.image)
				return r
			}
		}
	}
	return r
}

func (s *Sim) checkLiveness() CheckResult {
	r := CheckResult{ID: InvLiveness}
	if len(s.livenessBad) > 0 {
		r.Applied = true
		r.Err = violation(r.ID, "%s", s.livenessBad[0])
		return r
	}
	for _, uid := range s.podOrder {
		p := s.pods[uid]
		for i, c := range p.containers {
			if c.running && p.probes.Containers[i].LivenessProbe != nil {
				r.Applied = true
				return r
			}
		}
	}
	return r
}

func (s *Sim) checkPreempted(hold map[string]podHoldings) CheckResult {
	r := CheckResult{ID: InvPreemptedReleased}
	k := s.kubelet
	for _, uid := range s.podOrder {
		p := s.pods[uid]
		if !p.preempted || p.phase != phaseDead {
			continue
		}
		r.Applied = true
		for _, c := range p.containers {
			if c.running {
				r.Err = violation(r.ID, "preempted %s still runs %s", uid, c.name)
				return r
			}
		}
		if path, err := cgroups.PodPath(s.cgCfg, s.cgCfg.PodQOS(p.spec), uid); err == nil {
			if _, ok := s.fs.dirs[path]; ok {
				r.Err = violation(r.ID, "preempted %s still has its cgroup %s", uid, path)
				return r
			}
		}
		for _, c := range p.probes.Containers {
			for _, t := range []prober.ProbeType{prober.Startup, prober.Readiness, prober.Liveness} {
				// A worker still in its start-up sleep takes the stop when
				// it wakes, as upstream's goroutine does; it is released.
				if w, ok := k.prober.Worker(prober.WorkerKey{PodUID: uid, ContainerName: c.Name, Type: t}); ok && !w.Stopping {
					r.Err = violation(r.ID, "preempted %s still has a %s worker for %s", uid, t, c.Name)
					return r
				}
			}
		}
		if _, ok := k.status[uid]; ok {
			r.Err = violation(r.ID, "preempted %s is still in the status manager, so its images count as in use", uid)
			return r
		}
		if p.mustRelease && len(hold[uid]) > 0 {
			r.Err = violation(r.ID, "preempted %s still holds %s after an allocation's garbage collection", uid, formatHoldings(hold[uid]))
			return r
		}
	}
	return r
}

func (s *Sim) checkRestartKeeps(hold map[string]podHoldings) CheckResult {
	r := CheckResult{ID: InvRestartKeeps}
	for _, uid := range s.podOrder {
		p := s.pods[uid]
		if !p.survivedRestart || p.phase != phaseRunning {
			continue
		}
		r.Applied = true
		if !sameDevices(hold[uid], p.granted) {
			r.Err = violation(r.ID, "%s ran across the restart but holds %s, granted %s", uid, formatHoldings(hold[uid]), formatHoldings(p.granted))
			return r
		}
		if path, err := cgroups.PodPath(s.cgCfg, s.cgCfg.PodQOS(p.spec), uid); err == nil {
			if _, ok := s.fs.dirs[path]; !ok {
				r.Err = violation(r.ID, "%s ran across the restart but its cgroup %s is gone", uid, path)
				return r
			}
		}
		if p.readyAtRestart && !p.readinessProbed && !p.apiReady {
			r.Err = violation(r.ID, "%s was Ready at the restart and lost it before any readiness probe ran", uid)
			return r
		}
	}
	return r
}

func (s *Sim) checkCoresAccept() CheckResult {
	r := CheckResult{ID: InvCoresAccept, Applied: true}
	if len(s.coreErrs) > 0 {
		r.Err = violation(r.ID, "%s", strings.Join(s.coreErrs, "; "))
	}
	return r
}

// checkCAllocatable judges the device plugins page's promise from the
// device manager's holdings alone: what it assigned, not what the pods
// request (a pod admitted before its plugin registered requests devices it
// never got, which SIM-ALLOCATABLE counts as upstream's behaviour).
func (s *Sim) checkCAllocatable(hold map[string]podHoldings) CheckResult {
	r := CheckResult{ID: InvCAllocatable}
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
					r.Applied = true
					key := res + "/" + id
					if o, ok := owner[key]; ok && o != uid {
						r.Err = violation(r.ID, "device %s is held for both %s and %s, two live pods", key, o, uid)
						return r
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
			r.Err = violation(r.ID, "the live pods hold %d devices of %s, its plugin advertises %d", held[pl.resource], pl.resource, len(pl.devices))
			return r
		}
	}
	return r
}

// checkCRestartReady judges every pod that was Ready at the latest
// kubelet restart with all its containers running, however recently they
// started (SIM-RESTART-KEEPS judges only those that started at least the
// prober's restart grace before it, as upstream keeps only theirs).
func (s *Sim) checkCRestartReady() CheckResult {
	r := CheckResult{ID: InvCRestartReady}
	for _, uid := range s.podOrder {
		p := s.pods[uid]
		if !p.runningAtRestart || !p.readyAtRestart || p.phase != phaseRunning {
			continue
		}
		r.Applied = true
		if !p.readinessProbed && !p.apiReady {
			var since []string
			for _, c := range p.containers {
				since = append(since, fmt.Sprintf("%s started %v before", c.name, s.kubelet.started.Sub(c.startedAt)))
			}
			r.Err = violation(r.ID, "%s was Ready when the kubelet restarted at %v, its containers kept running (%s), and it lost Ready before any readiness probe of it ran",
				uid, s.kubelet.started.Sub(simStart), strings.Join(since, ", "))
			return r
		}
	}
	return r
}

// checkCRestartRuns judges the restart's admission of the pods it found
// running; it applies once a restart has found a running pod to admit
// again, and to every running pod after it.
func (s *Sim) checkCRestartRuns() CheckResult {
	r := CheckResult{ID: InvCRestartRuns}
	if len(s.restartStopped) > 0 {
		r.Applied = true
		r.Err = violation(r.ID, "%s", s.restartStopped[0])
		return r
	}
	for _, uid := range s.podOrder {
		if p := s.pods[uid]; p.runningAtRestart && p.phase == phaseRunning {
			r.Applied = true
			return r
		}
	}
	return r
}
