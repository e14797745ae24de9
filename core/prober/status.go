package prober

import "time"

// StatusResult is what UpdatePodStatus gives back: the status with Started
// and Ready set, and the readiness workers it triggered.
type StatusResult struct {
	Status PodStatus
	// Triggered: readiness workers whose manual trigger was taken (a
	// waiting worker runs at now; one that is probing runs again as soon
	// as its probe ends). Dropped: the trigger channel was full.
	Triggered, Dropped []WorkerKey
}

// UpdatePodStatus sets Started and Ready on a copy of status, as
// upstream's UpdatePodStatus (v1.36, ChangeContainerStatusOnKubeletRestart
// off): started from the startup cache, the status's own Started (a
// kubelet restart), or the absence of a startup worker; ready from the
// readiness cache, or the absence of a readiness worker, then the
// kubelet-restart rule. Where a readiness worker exists and no Success is
// cached, its manual trigger fires (at now). pod is the API pod: its specs
// and its PodReady condition (Pod.Ready).
func (m *Manager) UpdatePodStatus(now time.Time, pod Pod, status PodStatus) (StatusResult, error) {
	if err := m.checkNow(now); err != nil {
		return StatusResult{}, err
	}
	if len(pod.Containers) > MaxContainersPerPod || len(pod.InitContainers) > MaxContainersPerPod {
		return StatusResult{}, inputErrorf("spec.containers", "more than %d containers or init containers", MaxContainersPerPod)
	}
	if err := checkStatus(status); err != nil {
		return StatusResult{}, err
	}
	res := StatusResult{Status: status.Clone()}
	for i := range res.Status.ContainerStatuses {
		c := &res.Status.ContainerStatuses[i]
		started := m.isContainerStarted(pod.UID, c)
		c.Started = &started
		if !started {
			continue
		}
		var spec *Container
		for j := range pod.Containers {
			if pod.Containers[j].Name == c.Name {
				spec = &pod.Containers[j]
				break
			}
		}
		c.Ready = m.ready(now, pod, c, spec, &res)
	}
	for i := range res.Status.InitContainerStatuses {
		c := &res.Status.InitContainerStatuses[i]
		started := m.isContainerStarted(pod.UID, c)
		c.Started = &started
		// The spec is matched by index; a mismatch skips the status.
		if i >= len(pod.InitContainers) || pod.InitContainers[i].Name != c.Name {
			continue
		}
		spec := pod.InitContainers[i]
		if !spec.IsSidecar() {
			if c.State.Terminated != nil && c.State.Terminated.ExitCode == 0 {
				c.Ready = true
			}
			continue
		}
		if !started {
			continue
		}
		c.Ready = m.ready(now, pod, c, &spec, &res)
	}
	return res, nil
}

// isContainerStarted is upstream's: not running → false; a cached startup
// result decides; else the status's Started (kept across a kubelet
// restart); else started unless a startup worker exists.
func (m *Manager) isContainerStarted(podUID string, c *ContainerStatus) bool {
	if c.State.Running == nil {
		return false
	}
	if r, ok := m.results[Startup].Get(c.ContainerID); ok {
		return r == Success
	}
	if c.Started != nil && *c.Started {
		return true
	}
	_, exists := m.workers[WorkerKey{podUID, c.Name, Startup}]
	return !exists
}

// ready is the readiness of a started container: running and a cached
// Success; else ready when no readiness worker exists (one that does is
// triggered), then the kubelet-restart rule when the spec is known.
func (m *Manager) ready(now time.Time, pod Pod, c *ContainerStatus, spec *Container, res *StatusResult) bool {
	if c.State.Running == nil {
		return false
	}
	if r, ok := m.results[Readiness].Get(c.ContainerID); ok && r == Success {
		return true
	}
	key := WorkerKey{pod.UID, c.Name, Readiness}
	w, exists := m.workers[key]
	ready := !exists
	if exists {
		if m.trigger(w, now) {
			res.Triggered = append(res.Triggered, key)
		} else {
			res.Dropped = append(res.Dropped, key)
		}
	}
	if spec != nil {
		ready = m.readyOnKubeletRestart(ready, pod, c, spec)
	}
	return ready
}

// readyOnKubeletRestart is setReadyStateOnKubeletRestart: for a container
// running since before the kubelet's start less 10 s, not ready becomes
// ready when no readiness result is cached; then, when the container has a
// readiness probe, ready only if the API pod is Ready.
func (m *Manager) readyOnKubeletRestart(ready bool, pod Pod, c *ContainerStatus, spec *Container) bool {
	if c.State.Running == nil {
		return ready
	}
	startedAt := c.State.Running.StartedAt
	if startedAt.IsZero() || !startedAt.Before(m.start.Add(-restartGrace)) {
		return ready
	}
	if !ready {
		if _, ok := m.results[Readiness].Get(c.ContainerID); !ok {
			ready = true
		}
	}
	if spec.ReadinessProbe != nil && !pod.Ready {
		ready = false
	}
	return ready
}

// trigger is the non-blocking send on the worker's 1-buffered manual
// trigger channel. A waiting worker takes it at once: it is due now and
// its ticker restarts from now. A second one, or one sent while the worker
// probes or sleeps its start-up jitter, waits in the buffer; a third is
// dropped.
func (m *Manager) trigger(w *worker, now time.Time) bool {
	switch {
	case w.triggerBuffered:
		return false
	case w.probing || w.dueByTrigger || w.sleeping(now):
		w.triggerBuffered = true
	default:
		w.due, w.tickBase, w.dueByTrigger = now, now, true
	}
	return true
}
