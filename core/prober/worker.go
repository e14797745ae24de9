package prober

import (
	"strings"
	"time"
)

// maxProbeRetries is upstream's: prober.probe runs a handler up to three
// times while it returns an error.
const maxProbeRetries = 3

// restartGrace is how long before the kubelet's start a running container
// must have started to count as one that survived a kubelet restart.
const restartGrace = 10 * time.Second

// worker is one probe worker's state (pkg/kubelet/prober/worker.go) plus
// the timing of its goroutine, kept as values.
type worker struct {
	key          WorkerKey
	pod          Pod
	container    Container
	isSidecar    bool
	probe        Probe
	initialValue Result

	containerID string
	lastResult  Result // zero value Success, as upstream's
	resultRun   int
	onHold      bool

	addedAt      time.Time
	firstProbeAt time.Time
	tickBase     time.Time // the ticker's creation or last Reset
	due          time.Time // when the goroutine next runs doProbe
	dueByTrigger bool      // due is a manual trigger the goroutine received
	fired        time.Time // when the running doProbe was due
	lastNow      time.Time

	stepped         bool // the first doProbe has run
	probing         bool
	run             ProbeRun
	triggerBuffered bool
	stopping        bool
}

// StepKind says what a worker does after a step.
type StepKind int

const (
	// StepWait: doProbe returned true; the worker waits for NextDue.
	StepWait StepKind = iota
	// StepProbe: run Step.Run and report it with Manager.ProbeDone.
	StepProbe
	// StepExit: the worker exited (doProbe returned false, or it was
	// stopped); it is gone and its container's result removed.
	StepExit
)

func (k StepKind) String() string {
	switch k {
	case StepWait:
		return "wait"
	case StepProbe:
		return "probe"
	case StepExit:
		return "exit"
	}
	return "unknown"
}

// ProbeRun is a probe the caller runs for a worker: the defaulted probe,
// the container (for named ports and the static environment), the
// container ID (for exec), the pod IP (the default host), the handler
// timeout, and which of upstream's three tries this is.
type ProbeRun struct {
	Key         WorkerKey
	Probe       Probe
	Container   Container
	ContainerID string
	PodIP       string
	Timeout     time.Duration
	Attempt     int
}

// Step is what a step of a worker did: the results it published (only
// changes, in order), the events it recorded, and what comes next.
type Step struct {
	Kind    StepKind
	Updates []Update
	Events  []Event
	Run     ProbeRun  // StepProbe
	NextDue time.Time // StepWait
}

// WorkerState is a worker's state as a value, for callers and tests.
type WorkerState struct {
	Key          WorkerKey
	Probe        Probe
	InitialValue Result
	ContainerID  string
	LastResult   Result
	ResultRun    int
	OnHold       bool
	// AddedAt is when AddPod created the worker; FirstProbeAt when its
	// goroutine first runs doProbe (AddedAt plus the start-up jitter).
	AddedAt, FirstProbeAt time.Time
	// NextDue is when the worker next runs doProbe (meaningless while
	// Probing).
	NextDue         time.Time
	Probing         bool
	Attempt         int
	TriggerBuffered bool
	Stopping        bool
}

func (w *worker) state() WorkerState {
	s := WorkerState{
		Key: w.key, Probe: w.probe, InitialValue: w.initialValue, ContainerID: w.containerID,
		LastResult: w.lastResult, ResultRun: w.resultRun, OnHold: w.onHold,
		AddedAt: w.addedAt, FirstProbeAt: w.firstProbeAt, NextDue: w.due,
		Probing: w.probing, TriggerBuffered: w.triggerBuffered, Stopping: w.stopping,
	}
	if w.probing {
		s.Attempt = w.run.Attempt
	}
	return s
}

// sleeping reports whether the worker's goroutine is still in its
// start-up jitter sleep at now, where it reads neither stop nor trigger.
func (w *worker) sleeping(now time.Time) bool {
	return !w.stepped && now.Before(w.firstProbeAt)
}

// stepResult collects what one doProbe publishes.
type stepResult struct {
	updates []Update
	events  []Event
}

func (m *Manager) set(r *stepResult, w *worker, result Result) {
	if u, ok := m.results[w.key.Type].Set(w.containerID, result, w.key.PodUID); ok {
		r.updates = append(r.updates, u)
	}
}

// doProbeBeforeRun is upstream's doProbe up to the call of prober.probe,
// branch by branch in upstream's order. It returns run=true when the
// probe must run, else keepGoing.
func (m *Manager) doProbeBeforeRun(w *worker, status *PodStatus, now time.Time, r *stepResult) (run, keepGoing bool) {
	// 1. No status in the status manager yet (or any more).
	if status == nil {
		return false, true
	}
	// 2. A terminated pod stops the worker, writing nothing.
	if status.Phase == PodFailed || status.Phase == PodSucceeded {
		return false, false
	}
	// 3. The container's status, among the containers then the init
	// containers; none, or no ID yet: wait.
	c, ok := findStatus(status.ContainerStatuses, w.key.ContainerName)
	if !ok || c.ContainerID == "" {
		c, ok = findStatus(status.InitContainerStatuses, w.key.ContainerName)
		if !ok || c.ContainerID == "" {
			return false, true
		}
	}
	// 4. A new container (or the first one seen).
	if w.containerID != c.ContainerID {
		if w.containerID != "" {
			m.results[w.key.Type].Remove(w.containerID)
		}
		w.containerID = c.ContainerID
		// v1.36, ChangeContainerStatusOnKubeletRestart off: a container
		// running since before the kubelet's start (less 10 s) keeps what
		// the status said; no initial value is written.
		isRestart := c.State.Running != nil && !c.State.Running.StartedAt.IsZero() &&
			c.State.Running.StartedAt.Before(m.start.Add(-restartGrace))
		// #136910: a sidecar's startup worker seeds Success for a container
		// the status says has started, so pod initialisation goes on.
		if w.isSidecar && w.key.Type == Startup && c.Started != nil && *c.Started {
			m.set(r, w, Success)
		}
		if !isRestart {
			m.set(r, w, w.initialValue)
		}
		w.onHold = false
	}
	// 5. On hold until the container ID changes.
	if w.onHold {
		return false, true
	}
	// 6. Not running: Failure, and go on only if the container will run again.
	if c.State.Running == nil {
		m.set(r, w, Failure)
		if c.State.Terminated == nil {
			return false, true
		}
		exit := c.State.Terminated.ExitCode
		return false, containerShouldRestart(w.container, w.pod.RestartPolicy, exit) ||
			allContainersRestarting(w.pod, status)
	}
	// 7. Graceful deletion: liveness and startup publish Success and stop.
	if w.pod.DeletionTimestamp != nil && (w.key.Type == Liveness || w.key.Type == Startup) {
		m.set(r, w, Success)
		return false, false
	}
	// 8. The initial delay, in whole seconds truncated (time.Since's
	// saturation and the float-to-int32 conversion included).
	if int32(now.Sub(c.State.Running.StartedAt).Seconds()) < w.probe.InitialDelaySeconds {
		return false, true
	}
	// 9. Startup probes only until started; the others only after.
	started := c.Started != nil && *c.Started
	if started == (w.key.Type == Startup) {
		return false, true
	}
	return true, true
}

// afterRun is upstream's doProbe from the probe's result on: the run of
// equal results, the thresholds, the publication and the hold.
func (m *Manager) afterRun(w *worker, result Result, r *stepResult) {
	if w.lastResult == result {
		w.resultRun++
	} else {
		w.lastResult = result
		w.resultRun = 1
	}
	if (result == Failure && w.resultRun < int(w.probe.FailureThreshold)) ||
		(result == Success && w.resultRun < int(w.probe.SuccessThreshold)) {
		return
	}
	m.set(r, w, result)
	// #117153: a startup worker holds after any published result, a
	// liveness worker after a Failure, until a new container ID.
	if (w.key.Type == Liveness && result == Failure) || w.key.Type == Startup {
		w.onHold = true
		w.resultRun = 0
	}
}

func findStatus(statuses []ContainerStatus, name string) (ContainerStatus, bool) {
	for _, s := range statuses {
		if s.Name == name {
			return s, true
		}
	}
	return ContainerStatus{}, false
}

// containerShouldRestart is podutil.ContainerShouldRestart with the v1.36
// gates (ContainerRestartRules and RestartAllContainersOnContainerExits
// on): the container's first matching rule, else its own policy, else the
// pod's (unknown counts as Always).
func containerShouldRestart(c Container, podPolicy ContainerRestartPolicy, exitCode int32) bool {
	if c.RestartPolicy != "" {
		if rule, ok := matchRule(c, exitCode); ok && (rule.Action == ActionRestart || rule.Action == ActionRestartAllContainers) {
			return true
		}
		switch c.RestartPolicy {
		case RestartAlways:
			return true
		case RestartOnFailure:
			return exitCode != 0
		case RestartNever:
			return false
		}
	}
	switch podPolicy {
	case RestartOnFailure:
		return exitCode != 0
	case RestartNever:
		return false
	default:
		return true
	}
}

func matchRule(c Container, exitCode int32) (RestartRule, bool) {
	for _, rule := range c.RestartRules {
		if rule.ExitCodes == nil {
			continue
		}
		in := false
		for _, v := range rule.ExitCodes.Values {
			if v == exitCode {
				in = true
			}
		}
		switch rule.ExitCodes.Operator {
		case OperatorIn:
			if in {
				return rule, true
			}
		case OperatorNotIn:
			if !in {
				return rule, true
			}
		}
	}
	return RestartRule{}, false
}

// allContainersRestarting is kubecontainer.ShouldAllContainersRestart on
// the status manager's status: the AllContainersRestarting condition, or a
// container of the pod terminated with an exit code whose rule restarts
// all containers (statuses found by name, an app container's over an init
// container's).
func allContainersRestarting(pod Pod, status *PodStatus) bool {
	if status.AllContainersRestarting {
		return true
	}
	byName := map[string]ContainerStatus{}
	for _, s := range status.InitContainerStatuses {
		byName[s.Name] = s
	}
	for _, s := range status.ContainerStatuses {
		byName[s.Name] = s
	}
	for _, list := range [][]Container{pod.InitContainers, pod.Containers} {
		for _, c := range list {
			s, ok := byName[c.Name]
			if !ok || s.State.Terminated == nil {
				continue
			}
			if rule, ok := matchRule(c, s.State.Terminated.ExitCode); ok && rule.Action == ActionRestartAllContainers {
				return true
			}
		}
	}
	return false
}

// checkContainerID enforces the form upstream's ParseContainerID accepts
// and String prints back unchanged, so comparing IDs as strings is
// comparing them as upstream does.
func checkContainerID(field, id string) error {
	if id == "" {
		return nil
	}
	parts := strings.Split(id, "://")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" || strings.Trim(id, `"`) != id {
		return inputErrorf(field, "%q must be <runtime>://<id>", id)
	}
	return nil
}

func checkStatus(s PodStatus) error {
	for _, list := range []struct {
		name     string
		statuses []ContainerStatus
	}{{"containerStatuses", s.ContainerStatuses}, {"initContainerStatuses", s.InitContainerStatuses}} {
		if len(list.statuses) > MaxContainersPerPod {
			return inputErrorf("status."+list.name, "more than %d statuses", MaxContainersPerPod)
		}
		for i, c := range list.statuses {
			if err := checkContainerID(fieldIndex("status."+list.name, i)+".containerID", c.ContainerID); err != nil {
				return err
			}
		}
	}
	return nil
}
