package prober

import (
	"fmt"
	"sort"
	"time"
)

// Bounds of the collections the core keeps (DESIGN.md rule 7).
const (
	// DefaultMaxWorkers bounds the workers of a Manager when
	// Options.MaxWorkers is 0: 110 pods (the kubelet's default maxPods)
	// of far more containers than any node runs, three probes each.
	DefaultMaxWorkers = 1 << 16
	// MaxContainersPerPod bounds a pod's containers, init containers and
	// each list of statuses.
	MaxContainersPerPod = 1024
	// MaxTimeSpan bounds how far any time given to a Manager may be from
	// the kubelet's start, so every tick computation stays inside
	// time.Duration.
	MaxTimeSpan = 100 * 365 * 24 * time.Hour
)

// Options configure a Manager.
type Options struct {
	// KubeletStart is when the prober manager was created (upstream's
	// manager.start): the start-up jitter applies to workers added less
	// than one period after it, and containers started before it less
	// 10 s count as surviving a kubelet restart.
	KubeletStart time.Time
	// MaxWorkers bounds the number of workers; 0 means DefaultMaxWorkers.
	MaxWorkers int
}

// Manager is the prober manager (prober_manager.go): the workers, keyed by
// (pod UID, container, probe type), and the three results caches. A kubelet
// restart is a new Manager. It is used by one caller at a time.
type Manager struct {
	start      time.Time
	maxWorkers int
	workers    map[WorkerKey]*worker
	results    [3]*Results
}

// NewManager returns a Manager with no workers and empty caches.
func NewManager(opts Options) (*Manager, error) {
	if opts.MaxWorkers < 0 {
		return nil, inputErrorf("options.maxWorkers", "must be ≥ 0, got %d", opts.MaxWorkers)
	}
	maxWorkers := opts.MaxWorkers
	if maxWorkers == 0 {
		maxWorkers = DefaultMaxWorkers
	}
	return &Manager{
		start:      opts.KubeletStart,
		maxWorkers: maxWorkers,
		workers:    map[WorkerKey]*worker{},
		results:    [3]*Results{NewResults(Liveness), NewResults(Readiness), NewResults(Startup)},
	}, nil
}

// KubeletStart is the start time the Manager was created with.
func (m *Manager) KubeletStart() time.Time { return m.start }

// Jitter gives, for each worker AddPod creates, the fraction in [0, 1) of
// its period it sleeps before its first probe when it is added less than
// one period after the kubelet's start (upstream draws rand.Float64()).
// A nil Jitter means 0.
type Jitter func(WorkerKey) float64

// AddPodResult says what AddPod did: the workers it created, in creation
// order, and, when it returned early, the key of the existing worker that
// made it stop.
type AddPodResult struct {
	Added       []WorkerKey
	EarlyReturn *WorkerKey
}

// AddPod creates the workers of a pod, as upstream: the containers, then
// the sidecars (restartable init containers), each in the order startup,
// readiness, liveness. Upstream's observed behaviour, kept on purpose: the
// first probe whose worker already exists ends AddPod, so the probes and
// containers after it get no worker (a pod update that adds a probe starts
// nothing). The pod must be valid (Pod.Validate) and defaulted
// (Pod.WithDefaults); else an error and nothing changes.
func (m *Manager) AddPod(now time.Time, pod Pod, jitter Jitter) (AddPodResult, error) {
	if err := m.checkNow(now); err != nil {
		return AddPodResult{}, err
	}
	if err := checkPod(pod); err != nil {
		return AddPodResult{}, err
	}
	var res AddPodResult
	var created []*worker
collect:
	for _, c := range probedContainers(pod) {
		for _, t := range []ProbeType{Startup, Readiness, Liveness} {
			p := c.ProbeOf(t)
			if p == nil {
				continue
			}
			key := WorkerKey{PodUID: pod.UID, ContainerName: c.Name, Type: t}
			if _, ok := m.workers[key]; ok {
				res.EarlyReturn = &key
				break collect
			}
			w, err := m.newWorker(now, pod, c, key, *p, jitter)
			if err != nil {
				return AddPodResult{}, err
			}
			created = append(created, w)
		}
	}
	if len(m.workers)+len(created) > m.maxWorkers {
		return AddPodResult{}, inputErrorf("workers", "more than %d workers", m.maxWorkers)
	}
	for _, w := range created {
		m.workers[w.key] = w
		res.Added = append(res.Added, w.key)
	}
	return res, nil
}

func (m *Manager) newWorker(now time.Time, pod Pod, c Container, key WorkerKey, p Probe, jitter Jitter) (*worker, error) {
	first := now
	// Upstream sleeps rand·period first when the period is longer than
	// the time since the kubelet started; the ticker starts after it.
	if period := p.Period(); period > now.Sub(m.start) {
		frac := 0.0
		if jitter != nil {
			frac = jitter(key)
		}
		if !(frac >= 0 && frac < 1) {
			return nil, inputErrorf("jitter("+key.String()+")", "must be in [0, 1), got %v", frac)
		}
		first = now.Add(time.Duration(frac * float64(period)))
	}
	isSidecar := false
	for _, ic := range pod.InitContainers {
		if ic.Name == c.Name {
			isSidecar = c.IsSidecar()
		}
	}
	return &worker{
		key: key, pod: pod, container: c, isSidecar: isSidecar, probe: p,
		initialValue: InitialValue(key.Type),
		addedAt:      now, firstProbeAt: first, tickBase: first, due: first, lastNow: now,
	}, nil
}

func checkPod(pod Pod) error {
	if len(pod.Containers) > MaxContainersPerPod || len(pod.InitContainers) > MaxContainersPerPod {
		return inputErrorf("spec.containers", "more than %d containers or init containers", MaxContainersPerPod)
	}
	if err := pod.Validate(); err != nil {
		return err
	}
	for _, list := range []struct {
		name       string
		containers []Container
	}{{"spec.initContainers", pod.InitContainers}, {"spec.containers", pod.Containers}} {
		for i, c := range list.containers {
			for _, t := range []ProbeType{Liveness, Readiness, Startup} {
				p := c.ProbeOf(t)
				if p == nil {
					continue
				}
				path := fmt.Sprintf("%s.%sProbe", fieldIndex(list.name, i), lowerFirst(t.String()))
				for _, f := range []struct {
					name  string
					value int32
				}{{"timeoutSeconds", p.TimeoutSeconds}, {"periodSeconds", p.PeriodSeconds}, {"successThreshold", p.SuccessThreshold}, {"failureThreshold", p.FailureThreshold}} {
					if f.value < 1 {
						return inputErrorf(path+"."+f.name, "must be ≥ 1 once defaulted (Pod.WithDefaults), got %d", f.value)
					}
				}
			}
		}
	}
	return nil
}

func lowerFirst(s string) string { return string(s[0]+'a'-'A') + s[1:] }

func fieldIndex(name string, i int) string { return fmt.Sprintf("%s[%d]", name, i) }

func (m *Manager) checkNow(now time.Time) error {
	if d := now.Sub(m.start); d > MaxTimeSpan || d < -MaxTimeSpan {
		return inputErrorf("now", "must be within %v of the kubelet start %v, got %v", MaxTimeSpan, m.start, now)
	}
	return nil
}

// SetDeletionTimestamp marks a pod as being deleted, as the kubelet's
// config does on the pod object its workers hold: from their next step,
// its liveness and startup workers publish Success and exit.
func (m *Manager) SetDeletionTimestamp(podUID string, at time.Time) {
	for _, w := range m.workers {
		if w.key.PodUID == podUID {
			t := at
			w.pod.DeletionTimestamp = &t
		}
	}
}

// StopResult lists the workers a stop reached: Exited at once (they were
// waiting), Stopping (a probe is outstanding; they exit when it is
// reported, after publishing what it gives, as upstream's goroutine
// finishes its doProbe before it reads the stop).
type StopResult struct {
	Exited, Stopping []WorkerKey
}

// StopLivenessAndStartup stops the liveness and startup workers of the
// pod's containers, not of its sidecars (upstream's quirk), as the kubelet
// does when a pod starts terminating.
func (m *Manager) StopLivenessAndStartup(now time.Time, pod Pod) StopResult {
	var keys []WorkerKey
	for _, c := range pod.Containers {
		for _, t := range []ProbeType{Liveness, Startup} {
			keys = append(keys, WorkerKey{pod.UID, c.Name, t})
		}
	}
	return m.stop(now, keys)
}

// RemovePod stops every worker of the pod's containers and sidecars.
func (m *Manager) RemovePod(now time.Time, pod Pod) StopResult {
	var keys []WorkerKey
	for _, c := range probedContainers(pod) {
		for _, t := range []ProbeType{Readiness, Liveness, Startup} {
			keys = append(keys, WorkerKey{pod.UID, c.Name, t})
		}
	}
	return m.stop(now, keys)
}

// probedContainers are the containers that may have workers, in upstream's
// order: the containers, then the sidecars.
func probedContainers(pod Pod) []Container {
	out := append([]Container(nil), pod.Containers...)
	for _, c := range pod.InitContainers {
		if c.IsSidecar() {
			out = append(out, c)
		}
	}
	return out
}

// CleanupPods stops every worker whose pod UID is not desired.
func (m *Manager) CleanupPods(now time.Time, desired map[string]bool) StopResult {
	var keys []WorkerKey
	for k := range m.workers {
		if !desired[k.PodUID] {
			keys = append(keys, k)
		}
	}
	return m.stop(now, keys)
}

// stop is upstream's non-blocking stop on each existing worker, taken at
// once by a waiting worker (the core lets the stop win over a tick due at
// the same moment, where upstream's select picks at random). A worker
// still in its start-up sleep, or probing, reads it after its doProbe.
func (m *Manager) stop(now time.Time, keys []WorkerKey) StopResult {
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	var res StopResult
	for _, k := range keys {
		w, ok := m.workers[k]
		if !ok {
			continue
		}
		if w.probing || w.sleeping(now) {
			if !w.stopping {
				w.stopping = true
				res.Stopping = append(res.Stopping, k)
			}
			continue
		}
		m.exit(w)
		res.Exited = append(res.Exited, k)
	}
	return res
}

// exit is the end of upstream's run: the container's result removed (no
// update), the worker removed from the manager.
func (m *Manager) exit(w *worker) {
	if w.containerID != "" {
		m.results[w.key.Type].Remove(w.containerID)
	}
	delete(m.workers, w.key)
}

// Step runs one doProbe of a worker at now with the status manager's pod
// status (nil: the status manager has none). now must not be before the
// worker's NextDue. When the probe must run, the step stops there
// (StepProbe, with what it published so far); the caller runs Step.Run and
// reports it with ProbeDone.
func (m *Manager) Step(key WorkerKey, now time.Time, status *PodStatus) (Step, error) {
	w, err := m.waitingWorker(key, now)
	if err != nil {
		return Step{}, err
	}
	if now.Before(w.due) {
		return Step{}, inputErrorf("step("+key.String()+")", "not due before %v, stepped at %v", w.due, now)
	}
	if status != nil {
		if err := checkStatus(*status); err != nil {
			return Step{}, err
		}
	}
	w.lastNow = now
	w.fired = w.due
	w.dueByTrigger = false
	w.stepped = true
	var r stepResult
	run, keepGoing := m.doProbeBeforeRun(w, status, now, &r)
	if run {
		podIP := ""
		if status != nil {
			podIP = status.PodIP
		}
		w.probing = true
		w.run = ProbeRun{Key: key, Probe: w.probe, Container: w.container, ContainerID: w.containerID,
			PodIP: podIP, Timeout: w.probe.Timeout(), Attempt: 1}
		return Step{Kind: StepProbe, Updates: r.updates, Events: r.events, Run: w.run}, nil
	}
	return m.finish(w, now, keepGoing, r), nil
}

// ProbeDone reports the outcome of the worker's outstanding probe at now.
// An error is retried (StepProbe again) until the third try; a third error
// records the "errored" event and is thrown away: no result, no change to
// the run. Otherwise the result (a warning counts as success, unknown
// without error as failure) goes through the thresholds.
func (m *Manager) ProbeDone(key WorkerKey, now time.Time, out Outcome) (Step, error) {
	w, ok := m.workers[key]
	if !ok {
		return Step{}, inputErrorf("probeDone("+key.String()+")", "no such worker")
	}
	if !w.probing {
		return Step{}, inputErrorf("probeDone("+key.String()+")", "no probe is outstanding")
	}
	if now.Before(w.lastNow) {
		return Step{}, inputErrorf("probeDone("+key.String()+")", "time went back from %v to %v", w.lastNow, now)
	}
	if err := m.checkNow(now); err != nil {
		return Step{}, err
	}
	switch out.Result {
	case ProbeSuccess, ProbeWarning, ProbeFailure, ProbeUnknown:
	default:
		return Step{}, inputErrorf("outcome.result", "must be success, warning, failure or unknown, got %q", out.Result)
	}
	w.lastNow = now
	if out.Err != nil && w.run.Attempt < maxProbeRetries {
		w.run.Attempt++
		return Step{Kind: StepProbe, Run: w.run}, nil
	}
	w.probing = false
	result, events := probeEvents(key, out)
	r := stepResult{events: events}
	if out.Err == nil {
		m.afterRun(w, result, &r)
	}
	return m.finish(w, now, true, r), nil
}

// finish ends a doProbe at end: the worker exits, or waits for its next
// tick or a buffered manual trigger.
func (m *Manager) finish(w *worker, end time.Time, keepGoing bool, r stepResult) Step {
	if !keepGoing || w.stopping {
		m.exit(w)
		return Step{Kind: StepExit, Updates: r.updates, Events: r.events}
	}
	switch {
	case w.triggerBuffered:
		// The buffered trigger is read at once and resets the ticker.
		w.triggerBuffered = false
		w.due, w.tickBase, w.dueByTrigger = end, end, true
	default:
		// Ticks fall on tickBase + k·period; one that passed during the
		// doProbe is delivered at once, later ones are dropped.
		next := nextTick(w.tickBase, w.probe.Period(), w.fired)
		if next.After(end) {
			w.due = next
		} else {
			w.due = end
		}
	}
	return Step{Kind: StepWait, Updates: r.updates, Events: r.events, NextDue: w.due}
}

// nextTick is the first tick strictly after t of a ticker created at base.
func nextTick(base time.Time, period time.Duration, t time.Time) time.Time {
	if t.Before(base) {
		return base.Add(period)
	}
	k := t.Sub(base) / period
	return base.Add((k + 1) * period)
}

func (m *Manager) waitingWorker(key WorkerKey, now time.Time) (*worker, error) {
	w, ok := m.workers[key]
	if !ok {
		return nil, inputErrorf("step("+key.String()+")", "no such worker")
	}
	if w.probing {
		return nil, inputErrorf("step("+key.String()+")", "a probe is outstanding: report it with ProbeDone")
	}
	if err := m.checkNow(now); err != nil {
		return nil, err
	}
	if now.Before(w.lastNow) {
		return nil, inputErrorf("step("+key.String()+")", "time went back from %v to %v", w.lastNow, now)
	}
	return w, nil
}

// NextDue returns the waiting worker due first (ties in key order).
func (m *Manager) NextDue() (WorkerKey, time.Time, bool) {
	var best *worker
	for _, w := range m.workers {
		if w.probing {
			continue
		}
		if best == nil || w.due.Before(best.due) || (w.due.Equal(best.due) && w.key.less(best.key)) {
			best = w
		}
	}
	if best == nil {
		return WorkerKey{}, time.Time{}, false
	}
	return best.key, best.due, true
}

// Worker returns one worker's state.
func (m *Manager) Worker(key WorkerKey) (WorkerState, bool) {
	w, ok := m.workers[key]
	if !ok {
		return WorkerState{}, false
	}
	return w.state(), true
}

// Workers returns every worker's state in key order.
func (m *Manager) Workers() []WorkerState {
	out := make([]WorkerState, 0, len(m.workers))
	for _, w := range m.workers {
		out = append(out, w.state())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key.less(out[j].Key) })
	return out
}

// Result returns the cached result of a container for probe type t.
func (m *Manager) Result(t ProbeType, containerID string) (Result, bool) {
	if t < Liveness || t > Startup {
		return Unknown, false
	}
	return m.results[t].Get(containerID)
}

// Results returns probe type t's cache in container ID order.
func (m *Manager) Results(t ProbeType) []Entry {
	if t < Liveness || t > Startup {
		return nil
	}
	return m.results[t].Entries()
}
