package sim

import (
	"fmt"
	"maps"
	"slices"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/prober"
)

// pullOrStart starts the pod's containers whose images are present and
// pulls the missing images; pullDone starts the rest.
func (s *Sim) pullOrStart(p *simPod) {
	started := false
	for _, c := range p.containers {
		if c.running {
			continue
		}
		if _, ok := s.runtime.images[c.image]; ok {
			s.startContainer(p, c)
			s.kubelet.containerStarted(s, p, c)
			started = true
			continue
		}
		if !s.runtime.pulling[c.image] {
			s.runtime.pulling[c.image] = true
			s.schedule(&queued{at: s.now.Add(s.pullTime(s.imageSize(c.image))), kind: evPullDone, name: c.image})
		}
	}
	if started {
		s.kubelet.syncPod(s, p)
	}
}

func (s *Sim) imageSize(id string) int64 {
	for _, img := range s.images {
		if img.id == id {
			return img.sizeBytes
		}
	}
	return 0
}

// pullDone puts a pulled image on the filesystem and starts the containers
// that waited for it.
func (s *Sim) pullDone(image string) string {
	delete(s.runtime.pulling, image)
	s.runtime.images[image] = s.imageSize(image)
	n := 0
	for _, uid := range s.podOrder {
		p := s.pods[uid]
		if p.phase != phaseRunning {
			continue
		}
		for _, c := range p.containers {
			if !c.running && c.image == image {
				n++
			}
		}
		if n > 0 {
			s.pullOrStart(p)
		}
	}
	return fmt.Sprintf("%s pulled, %d containers waited", image, n)
}

// containerStarted is the kubelet seeing a new container instance: the
// status manager gets its ID and start time.
func (k *kubelet) containerStarted(s *Sim, p *simPod, c *simContainer) {
	st := k.status[p.spec.UID]
	if st == nil {
		return
	}
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		if cs.Name == c.name {
			cs.ContainerID = containerIDPrefix + c.id
			cs.State = prober.ContainerState{Running: &prober.Running{StartedAt: c.startedAt}}
			cs.Started, cs.Ready = nil, false
		}
	}
	k.updateStatus(s, p)
}

// addPod starts the pod's workers: a status in the status manager and its
// probe workers.
func (k *kubelet) addPod(s *Sim, p *simPod) {
	st := &prober.PodStatus{Phase: prober.PodRunning, PodIP: "10.0.0.1"}
	for _, c := range p.containers {
		cs := prober.ContainerStatus{Name: c.name}
		if c.running {
			cs.ContainerID = containerIDPrefix + c.id
			cs.State.Running = &prober.Running{StartedAt: c.startedAt}
			started := c.apiStarted
			cs.Started = &started
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	k.status[p.spec.UID] = st
	_, err := k.prober.AddPod(s.now, p.probes, func(prober.WorkerKey) float64 { return float64(s.src.Intn(1000)) / 1000 })
	s.coreErr("prober.AddPod", err)
}

// stopProbes is the start of a pod's graceful termination.
func (k *kubelet) stopProbes(s *Sim, p *simPod) {
	k.prober.SetDeletionTimestamp(p.spec.UID, s.now)
	k.prober.StopLivenessAndStartup(s.now, p.probes)
}

// runPod starts the pod worker of an admitted pod, or of a running one a
// restarted kubelet found, and puts it in the pod manager.
func (k *kubelet) runPod(uid string) {
	k.pods = append(k.pods, uid)
	k.podManager = append(k.podManager, uid)
	k.phases[uid] = prober.PodRunning
}

// terminate is the end of a pod on the node: its containers stop, its
// probe workers go, the status manager gives it its terminal phase
// (Failed for a preemption victim, Succeeded for a deleted pod), its
// cgroups are removed and it leaves the kubelet's pods. Leaving the
// admission node is the caller's business, since a preemption victim has
// already left it.
func (k *kubelet) terminate(s *Sim, p *simPod, phase prober.Phase) {
	uid := p.spec.UID
	k.phases[uid] = phase
	for _, c := range p.containers {
		c.running = false
	}
	k.prober.RemovePod(s.now, p.probes)
	delete(k.status, uid)
	k.removePod(uid)
	if phase == prober.PodSucceeded {
		// A deleted pod's final status lets the API server remove it, and
		// the pod manager forgets it. A preemption victim is not deleted: it
		// stays there, Failed, and only its phase makes it inactive.
		k.podManager = slices.DeleteFunc(k.podManager, func(u string) bool { return u == uid })
		delete(k.phases, uid)
	}
	if p.phase == phaseTerminating && !p.killFailed {
		s.coreErr("admission.Remove", k.node.Remove(uid))
	}
	s.syncCgroups()
}

func (k *kubelet) removePod(uid string) {
	for i, u := range k.pods {
		if u == uid {
			k.pods = append(k.pods[:i], k.pods[i+1:]...)
			return
		}
	}
}

// syncCgroups writes the cgroups of the kubelet's pods: the hierarchy
// core/cgroups builds for them, then the QoS tiers from the active pods,
// and removes the cgroups of pods it no longer runs.
func (s *Sim) syncCgroups() {
	k := s.kubelet
	var specs []*pod.Pod
	for _, uid := range k.pods {
		specs = append(specs, s.pods[uid].spec)
	}
	h, err := cgroups.Build(s.cgCfg, specs)
	if err != nil {
		s.coreErr("cgroups.Build", err)
		return
	}
	want := map[string]bool{}
	for _, cg := range h {
		want[cg.Path] = true
		if cg.Kind == cgroups.KindQOS || cg.Kind == cgroups.KindNodeAllocatable {
			continue
		}
		files, err := cg.Config.Values(cgroups.V2)
		s.coreErr("cgroups.Values", err)
		s.fs.write(cg.Path, files)
	}
	// The QoS manager's update, from its own view of the active pods.
	qos, err := cgroups.QOSTierConfigs(s.cgCfg, k.activePods(s))
	s.coreErr("cgroups.QOSTierConfigs", err)
	for _, cg := range h {
		var rc cgroups.ResourceConfig
		switch {
		case cg.Kind == cgroups.KindNodeAllocatable:
			rc, err = cgroups.NodeAllocatableConfig(s.cgCfg)
			s.coreErr("cgroups.NodeAllocatableConfig", err)
			rc.HugePageLimit, rc.Unified = qos.Guaranteed.HugePageLimit, qos.Guaranteed.Unified
		case cg.Kind == cgroups.KindQOS && cg.QOS == pod.Burstable:
			rc = qos.Burstable
		case cg.Kind == cgroups.KindQOS:
			rc = qos.BestEffort
		default:
			continue
		}
		files, err := rc.Values(cgroups.V2)
		s.coreErr("cgroups.Values", err)
		if !sameFiles(s.fs.dirs[cg.Path], files) {
			s.fs.write(cg.Path, files)
		}
	}
	// Orphaned pod and container cgroups go.
	for _, path := range slices.Sorted(maps.Keys(s.fs.dirs)) {
		if !want[path] {
			s.fs.remove(path)
		}
	}
}

// activePods are the kubelet's active pods (upstream GetActivePods), which
// the QoS container manager counts in the tier sums and the device manager
// keeps the devices of: the pod manager's pods whose phase is not terminal.
// Pods the API server has deleted leave the pod manager here, which keeps
// it bounded.
func (k *kubelet) activePods(s *Sim) []*pod.Pod {
	var active []*pod.Pod
	kept := k.podManager[:0]
	for _, uid := range k.podManager {
		p := s.pods[uid]
		if p == nil {
			delete(k.phases, uid)
			continue
		}
		kept = append(kept, uid)
		if ph := k.phases[uid]; ph == prober.PodSucceeded || ph == prober.PodFailed {
			continue
		}
		active = append(active, p.spec)
	}
	k.podManager = kept
	return active
}

func sameFiles(a, b []cgroups.File) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// probe runs one due prober worker: doProbe, the probe against the
// simulated target (with its retries), and the results' consequences.
func (s *Sim) probe(key prober.WorkerKey) string {
	k := s.kubelet
	_, due, _ := k.prober.NextDue()
	step, err := k.prober.Step(key, due, k.status[key.PodUID])
	if err != nil {
		s.coreErr("prober.Step", err)
		return key.String() + " refused"
	}
	detail := key.String() + " " + step.Kind.String()
	var updates []prober.Update
	updates = append(updates, step.Updates...)
	failed := false
	for step.Kind == prober.StepProbe {
		run := step.Run
		out := s.answerProbe(run)
		step, err = k.prober.ProbeDone(key, s.now, out)
		if err != nil {
			s.coreErr("prober.ProbeDone", err)
			return detail
		}
		if step.Kind != prober.StepProbe {
			failed = out.Result != prober.ProbeSuccess
			s.recordProbe(run, key, out)
			detail += " " + string(out.Result)
			if out.Err != nil {
				detail += " (errored)"
			}
		}
		updates = append(updates, step.Updates...)
	}
	if len(updates) > 0 {
		k.applyUpdates(s, key.PodUID, updates)
	} else if !failed {
		// A success that confirms the published result, or a worker
		// that waited.
		s.nothingHappened("")
	}
	if !failed && key.Type == prober.Liveness {
		// A liveness success changes nothing even when it is the
		// worker's first result: Success is the liveness cache's
		// initial value.
		s.nothingHappened("")
	}
	return detail
}

// answerProbe is the probe target answering one try.
func (s *Sim) answerProbe(run prober.ProbeRun) prober.Outcome {
	if s.fault(ProbeError) {
		return prober.Outcome{Result: prober.ProbeUnknown, Err: fmt.Errorf("exec: container process not found")}
	}
	if s.fault(ProbeTimeout) {
		return prober.Outcome{Result: prober.ProbeFailure, Output: prober.ExecTimeoutOutput(run.Probe.Handler.Exec.Command, run.Timeout)}
	}
	_, c := s.containerByID(run.ContainerID)
	if c == nil {
		return prober.Outcome{Result: prober.ProbeFailure, Output: "container not found"}
	}
	switch run.Key.Type {
	case prober.Startup:
		if c.startupProbes >= c.startupFailFirst {
			return prober.Outcome{Result: prober.ProbeSuccess}
		}
	case prober.Liveness:
		if c.livenessSickAfter == 0 || c.livenessProbes < c.livenessSickAfter {
			return prober.Outcome{Result: prober.ProbeSuccess}
		}
	case prober.Readiness:
		// One try in 20 fails; the failing draw is the last, not 1,
		// since rapid's draws favour small values and would make the
		// pod's readiness flap in most generated cases.
		if s.src.Intn(20) != 19 {
			return prober.Outcome{Result: prober.ProbeSuccess}
		}
	}
	return prober.Outcome{Result: prober.ProbeFailure, Output: "check failed"}
}

// recordProbe is the world's record of what the target answered the
// instance, after the prober's retries: the liveness run of failures and
// whether the startup probe has succeeded.
func (s *Sim) recordProbe(run prober.ProbeRun, key prober.WorkerKey, out prober.Outcome) {
	p, c := s.containerByID(run.ContainerID)
	if c == nil {
		return
	}
	if key.Type == prober.Readiness {
		p.readinessProbed = true
	}
	if out.Err != nil {
		// An error after the third try is thrown away, by the prober too.
		return
	}
	ok := out.Result == prober.ProbeSuccess || out.Result == prober.ProbeWarning
	switch key.Type {
	case prober.Startup:
		c.startupProbes++
		if ok {
			c.startupOK = true
		}
	case prober.Liveness:
		c.livenessProbes++
		if ok {
			c.livenessFails = 0
		} else {
			c.livenessFails++
		}
	}
}

// containerByID finds the instance a runtime ID names.
func (s *Sim) containerByID(id string) (*simPod, *simContainer) {
	if len(id) <= len(containerIDPrefix) {
		return nil, nil
	}
	id = id[len(containerIDPrefix):]
	for _, uid := range s.podOrder {
		p := s.pods[uid]
		for _, c := range p.containers {
			if c.id == id {
				return p, c
			}
		}
	}
	return nil, nil
}

// applyUpdates is the kubelet reacting to published probe results:
// readiness and startup go into the pod status, a liveness Failure of a
// running container kills and restarts it.
func (k *kubelet) applyUpdates(s *Sim, uid string, updates []prober.Update) {
	p := s.pods[uid]
	if p == nil {
		return
	}
	k.updateStatus(s, p)
	k.syncPod(s, p)
}

// updateStatus completes the pod's status through the prober
// (UpdatePodStatus, with the API pod's Ready condition) and publishes it.
func (k *kubelet) updateStatus(s *Sim, p *simPod) {
	st := k.status[p.spec.UID]
	if st == nil {
		return
	}
	// The kubelet generates each container's Ready afresh as false
	// (convertToAPIContainerStatuses) and only the prober sets it, for a
	// started container: one whose Started the prober has just turned
	// false must not keep the Ready of its last status.
	for i := range st.ContainerStatuses {
		st.ContainerStatuses[i].Ready = false
	}
	api := p.probes
	api.Ready = p.apiReady
	res, err := k.prober.UpdatePodStatus(s.now, api, *st)
	if err != nil {
		s.coreErr("prober.UpdatePodStatus", err)
		return
	}
	*st = res.Status
	ready := true
	for i, cs := range st.ContainerStatuses {
		if !cs.Ready {
			ready = false
		}
		if cs.Started != nil && i < len(p.containers) {
			p.containers[i].apiStarted = *cs.Started
		}
	}
	p.apiReady = ready
}

// syncPod is the pod worker's sync: a running container whose cached
// liveness result is Failure is killed and started again, as
// computePodActions decides from the liveness results cache.
func (k *kubelet) syncPod(s *Sim, p *simPod) {
	if p.phase != phaseRunning {
		return
	}
	st := k.status[p.spec.UID]
	if st == nil {
		return
	}
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		if cs.State.Running == nil {
			continue
		}
		if r, ok := k.prober.Result(prober.Liveness, cs.ContainerID); !ok || r != prober.Failure {
			continue
		}
		c := p.containers[i]
		s.checkLivenessRestart(p, c)
		c.restarts++
		p.readinessProbed = true
		c.running = false
		if _, ok := s.runtime.images[c.image]; ok {
			s.startContainer(p, c)
			cs.ContainerID = containerIDPrefix + c.id
			cs.State = prober.ContainerState{Running: &prober.Running{StartedAt: c.startedAt}}
		} else {
			cs.State = prober.ContainerState{Terminated: &prober.Terminated{ExitCode: 137}}
			s.pullOrStart(p)
		}
		cs.Started, cs.Ready = nil, false
	}
	k.updateStatus(s, p)
}

// checkLivenessRestart judges a liveness restart against the world's
// record of the instance: FailureThreshold consecutive failures, and a
// startup probe that has succeeded.
func (s *Sim) checkLivenessRestart(p *simPod, c *simContainer) {
	var spec prober.Container
	for _, pc := range p.probes.Containers {
		if pc.Name == c.name {
			spec = pc
		}
	}
	if spec.LivenessProbe == nil {
		s.livenessBad = append(s.livenessBad, fmt.Sprintf("%s/%s (%s) restarted for liveness but has no liveness probe", p.spec.UID, c.name, c.id))
		return
	}
	if th := int(spec.LivenessProbe.FailureThreshold); c.livenessFails < th {
		s.livenessBad = append(s.livenessBad, fmt.Sprintf("%s/%s (%s) restarted for liveness after %d consecutive failures of the instance, threshold %d", p.spec.UID, c.name, c.id, c.livenessFails, th))
	}
	if spec.StartupProbe != nil && !c.startupOK {
		s.livenessBad = append(s.livenessBad, fmt.Sprintf("%s/%s (%s) restarted for liveness before its startup probe succeeded", p.spec.UID, c.name, c.id))
	}
}
