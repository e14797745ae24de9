package prober

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"pgregory.net/rapid"

	core "github.com/nodeproof/nodeproof/core/prober"
	model "github.com/nodeproof/nodeproof/models/prober"
	"github.com/nodeproof/nodeproof/properties"
)

var probeTypes = []core.ProbeType{core.Liveness, core.Readiness, core.Startup}

// --- the kubelet's calls ------------------------------------------------------

// addPodToKubelet calls AddPod on both managers and holds the answer to
// the rule restated: containers in order, probes startup, readiness,
// liveness, stopping at the first that has a worker.
func (m *machine) addPodToKubelet(p *pod, t *rapid.T) {
	fractions := map[core.WorkerKey]float64{}
	var want []core.WorkerKey
	var early *core.WorkerKey
walk:
	for _, c := range p.spec.Containers {
		for _, typ := range []core.ProbeType{core.Startup, core.Readiness, core.Liveness} {
			if c.ProbeOf(typ) == nil {
				continue
			}
			key := core.WorkerKey{PodUID: p.spec.UID, ContainerName: c.Name, Type: typ}
			if _, exists := m.tracks[key]; exists {
				k := key
				early = &k
				break walk
			}
			want = append(want, key)
		}
	}
	for _, c := range p.spec.Containers {
		for _, typ := range probeTypes {
			if c.ProbeOf(typ) != nil {
				key := core.WorkerKey{PodUID: p.spec.UID, ContainerName: c.Name, Type: typ}
				fractions[key] = rapid.SampledFrom([]float64{0, 0, 0.5, 0.999}).Draw(t, "jitter")
			}
		}
	}
	jitter := func(k core.WorkerKey) float64 { return fractions[k] }
	if m.other != nil {
		m.t.Logf("  AddPod %s", p.spec.UID)
		m.other.AddPod(m.now, p.spec, jitter)
		return
	}
	got, err := m.core.AddPod(m.now, p.spec, jitter)
	twin, twinErr := m.twin.AddPod(m.now, p.spec, jitter)
	m.tally.Check(Deterministic, true)
	if !reflect.DeepEqual(got, twin) || !reflect.DeepEqual(err, twinErr) {
		properties.Fail(m.t, Deterministic, "AddPod: %+v %v, the twin %+v %v", got, err, twin, twinErr)
	}
	if err != nil {
		properties.Fail(m.t, Workers, "AddPod of a valid defaulted pod: %v", err)
	}
	// PB-ADDPOD-EARLY-RETURN applies where an existing worker ends AddPod.
	m.tally.Check(AddPodEarly, early != nil)
	if !slices.Equal(got.Added, want) || !reflect.DeepEqual(got.EarlyReturn, early) {
		properties.Fail(m.t, AddPodEarly, "AddPod added %v (early return at %v); the rule adds %v and returns early at %v", got.Added, got.EarlyReturn, want, early)
	}
	if early != nil {
		missing := 0
		for _, c := range p.spec.Containers {
			for _, typ := range probeTypes {
				if _, ok := m.tracks[core.WorkerKey{PodUID: p.spec.UID, ContainerName: c.Name, Type: typ}]; c.ProbeOf(typ) != nil && !ok && !slices.Contains(want, core.WorkerKey{PodUID: p.spec.UID, ContainerName: c.Name, Type: typ}) {
					missing++
				}
			}
		}
		m.tally.Observe(statEarlyReturn, float64(missing))
	}
	for _, key := range got.Added {
		ws, ok := m.core.Worker(key)
		if !ok {
			properties.Fail(m.t, Workers, "AddPod reports %v added, yet no such worker exists", key)
		}
		pr := p.spec.Containers[indexOf(p, key.ContainerName)].ProbeOf(key.Type)
		first := m.now
		if pr.Period() > m.now.Sub(m.kubeletStart) {
			first = m.now.Add(time.Duration(fractions[key] * float64(pr.Period())))
		}
		if !ws.FirstProbeAt.Equal(first) {
			properties.Fail(m.t, Workers, "%v first runs at %v, want %v (jitter %v of %v)", key, ws.FirstProbeAt.Sub(m.kubeletStart), first.Sub(m.kubeletStart), fractions[key], pr.Period())
		}
		m.tracks[key] = &track{key: key, probe: *pr, kubeletStart: m.kubeletStart, firstRun: first, lastVerdict: core.Success}
	}
	m.t.Logf("  AddPod %s: added %v, early return at %v", p.spec.UID, got.Added, got.EarlyReturn)
}

func indexOf(p *pod, name string) int {
	_, i := p.container(name)
	return i
}

// updatePod changes a pod's probes (adds one or takes one away, or
// nothing) and gives the new spec to AddPod, as the kubelet does on a pod
// update.
func (m *machine) updatePod(t *rapid.T) {
	p, i, ok := m.drawContainer(t)
	if !ok {
		m.addPod(t)
		return
	}
	spec := p.spec
	spec.Containers = slices.Clone(p.spec.Containers)
	c := &spec.Containers[i]
	typ := rapid.SampledFrom(probeTypes).Draw(t, "probeType")
	what := "nothing"
	switch rapid.IntRange(0, 2).Draw(t, "change") {
	case 0:
		c.SetProbe(typ, drawProbe(t, typ, "added"))
		what = "sets " + typ.String()
		p.markChanged(c.Name, typ)
	case 1:
		if c.ProbeOf(typ) != nil {
			p.markChanged(c.Name, typ)
		}
		c.SetProbe(typ, nil)
		what = "removes " + typ.String()
	}
	p.spec = spec
	m.begin("updatePod", "%s: %s %s", p.spec.UID, c.Name, what)
	m.addPodToKubelet(p, t)
}

func (m *machine) deletePod(t *rapid.T) {
	p, ok := m.drawPod(t)
	if !ok || p.deleted {
		m.advance(t)
		return
	}
	p.deleted = true
	at := m.now
	p.spec.DeletionTimestamp = &at
	m.begin("deletePod", "%s", p.spec.UID)
	if m.other != nil {
		m.other.SetDeletionTimestamp(p.spec.UID, at)
		return
	}
	m.core.SetDeletionTimestamp(p.spec.UID, at)
	m.twin.SetDeletionTimestamp(p.spec.UID, at)
}

// finishPod ends every container and sets the phase Succeeded or Failed.
func (m *machine) finishPod(t *rapid.T) {
	p, ok := m.drawPod(t)
	if !ok {
		m.addPod(t)
		return
	}
	p.phase = rapid.SampledFrom([]core.Phase{core.PodSucceeded, core.PodFailed}).Draw(t, "phase")
	for _, c := range p.containers {
		if c.running {
			code := int32(0)
			if p.phase == core.PodFailed {
				code = 1
			}
			c.running, c.terminated = false, &code
		}
	}
	p.hasStatus = true
	m.begin("finishPod", "%s %s", p.spec.UID, p.phase)
}

func (m *machine) stopLivenessAndStartup(t *rapid.T) {
	p, ok := m.drawPod(t)
	if !ok {
		m.addPod(t)
		return
	}
	m.begin("stopLivenessAndStartup", "%s", p.spec.UID)
	p.stopped = true
	if m.other != nil {
		m.other.StopLivenessAndStartup(m.now, p.spec)
		return
	}
	named := p.workerKeys(core.Liveness, core.Startup)
	m.checkStop("StopLivenessAndStartup", named, m.core.StopLivenessAndStartup(m.now, p.spec), m.twin.StopLivenessAndStartup(m.now, p.spec))
}

// workerKeys names the pod's workers of the given types, one per container
// and type, whether or not the container has that probe.
func (p *pod) workerKeys(types ...core.ProbeType) []core.WorkerKey {
	var keys []core.WorkerKey
	for _, c := range p.spec.Containers {
		for _, typ := range types {
			keys = append(keys, core.WorkerKey{PodUID: p.spec.UID, ContainerName: c.Name, Type: typ})
		}
	}
	return keys
}

// removePod is the pod leaving the node: RemovePod, and the status
// manager forgets it.
func (m *machine) removePod(t *rapid.T) {
	p, ok := m.drawPod(t)
	if !ok {
		m.addPod(t)
		return
	}
	m.begin("removePod", "%s", p.spec.UID)
	m.pods = slices.DeleteFunc(m.pods, func(q *pod) bool { return q == p })
	if m.other != nil {
		m.other.RemovePod(m.now, p.spec)
		return
	}
	named := p.workerKeys(probeTypes...)
	m.checkStop("RemovePod", named, m.core.RemovePod(m.now, p.spec), m.twin.RemovePod(m.now, p.spec))
}

// cleanupPods forgets a pod without RemovePod; CleanupPods ends its
// workers as no longer desired.
func (m *machine) cleanupPods(t *rapid.T) {
	p, ok := m.drawPod(t)
	if !ok {
		m.addPod(t)
		return
	}
	m.begin("cleanupPods", "%s is no longer desired", p.spec.UID)
	m.pods = slices.DeleteFunc(m.pods, func(q *pod) bool { return q == p })
	desired := map[string]bool{}
	for _, q := range m.pods {
		desired[q.spec.UID] = true
	}
	if m.other != nil {
		m.other.CleanupPods(m.now, desired)
		return
	}
	var named []core.WorkerKey
	for key := range m.tracks {
		if !desired[key.PodUID] {
			named = append(named, key)
		}
	}
	m.checkStop("CleanupPods", named, m.core.CleanupPods(m.now, desired), m.twin.CleanupPods(m.now, desired))
}

func sortKeys(keys []core.WorkerKey) {
	slices.SortFunc(keys, func(a, b core.WorkerKey) int { return strings.Compare(keyOrder(a), keyOrder(b)) })
}

func keyOrder(k core.WorkerKey) string {
	return fmt.Sprintf("%s\x00%s\x00%d", k.PodUID, k.ContainerName, k.Type)
}

func sameKeys(a, b []core.WorkerKey) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

// endTrack forgets an ended worker; its container's result goes with it.
func (m *machine) endTrack(tr *track) {
	if tr.containerID != "" {
		delete(m.shadow[tr.key.Type], tr.containerID)
	}
	delete(m.tracks, tr.key)
}

func (tr *track) stepped() bool { return tr.steps > 0 }

// kubeletRestart is a new kubelet: new managers, and AddPod for every pod.
func (m *machine) kubeletRestart(t *rapid.T) {
	// The kubelet is down for a while: no worker runs, the containers go on.
	down := rapid.SampledFrom([]time.Duration{0, 2 * time.Second, 11 * time.Second, 30 * time.Second}).Draw(t, "downtime")
	m.now = m.now.Add(down)
	m.begin("kubeletRestart", "after %v down", down)
	m.contractRestart()
	m.newKubelet()
	if m.other == nil {
		// PB-WORKERS applies: a new manager has no workers.
		m.tally.Check(Workers, true)
		if ws := m.core.Workers(); len(ws) != 0 {
			properties.Fail(m.t, Workers, "a new manager has workers %v", ws)
		}
	}
	for _, p := range m.pods {
		m.addPodToKubelet(p, t)
	}
	// The new kubelet syncs every pod, which is when the v1.36 rules
	// decide Started and Ready of the containers that outlived the old one.
	for _, p := range m.pods {
		if p.hasStatus {
			m.syncPod(p)
		}
	}
}

// --- sync: UpdatePodStatus -------------------------------------------------

// sync is the kubelet's pod sync: UpdatePodStatus on the status manager's
// status, whose Started and Ready are written back; the API pod's Ready
// follows. Workers triggered run at once.
func (m *machine) sync(t *rapid.T) {
	var candidates []*pod
	for _, p := range m.pods {
		if p.hasStatus {
			candidates = append(candidates, p)
		}
	}
	if len(candidates) == 0 {
		m.startContainer(t)
		return
	}
	p := rapid.SampledFrom(candidates).Draw(t, "pod")
	m.begin("sync", "%s (API pod Ready=%t)", p.spec.UID, p.spec.Ready)
	m.syncPod(p)
}

// syncPod runs UpdatePodStatus on a pod with a status and holds the
// answer to the rules restated.
func (m *machine) syncPod(p *pod) {
	if m.other != nil {
		m.syncOther(p)
		return
	}
	in := *p.status()
	got, err := m.core.UpdatePodStatus(m.now, p.spec, in)
	twin, twinErr := m.twin.UpdatePodStatus(m.now, p.spec, in)
	m.tally.Check(Deterministic, true)
	if !reflect.DeepEqual(got, twin) || !reflect.DeepEqual(err, twinErr) {
		properties.Fail(m.t, Deterministic, "UpdatePodStatus: %+v %v, the twin %+v %v", got, err, twin, twinErr)
	}
	if err != nil {
		properties.Fail(m.t, Status, "UpdatePodStatus of a valid status: %v", err)
	}
	var wantTriggered []core.WorkerKey
	for i, cs := range in.ContainerStatuses {
		c := p.containers[i]
		spec := p.spec.Containers[i]
		out := got.Status.ContainerStatuses[i]
		survived := c.running && !c.startedAt.IsZero() && c.startedAt.Before(m.kubeletStart.Add(-10*time.Second))
		id := Status
		if survived {
			id = KubeletRestart
		}
		startupResult, hasStartup := m.shadow[core.Startup][c.id]
		_, startupWorker := m.tracks[core.WorkerKey{PodUID: p.spec.UID, ContainerName: cs.Name, Type: core.Startup}]
		var started bool
		switch {
		case !c.running:
		case hasStartup:
			started = startupResult == core.Success
		case cs.Started != nil && *cs.Started:
			started = true
		default:
			started = !startupWorker
		}
		ready := cs.Ready // untouched when not started
		if started {
			readiness, hasReadiness := m.shadow[core.Readiness][c.id]
			readinessKey := core.WorkerKey{PodUID: p.spec.UID, ContainerName: cs.Name, Type: core.Readiness}
			_, readinessWorker := m.tracks[readinessKey]
			switch {
			case hasReadiness && readiness == core.Success:
				ready = true
			default:
				ready = !readinessWorker
				if readinessWorker {
					wantTriggered = append(wantTriggered, readinessKey)
				}
				if survived {
					if !ready && !hasReadiness {
						ready = true
					}
					if spec.ReadinessProbe != nil && !p.spec.Ready {
						ready = false
					}
				}
			}
		}
		// PB-STATUS applies to every running container (whose Started the
		// startup result or worker decides); PB-KUBELET-RESTART to those
		// that outlived the kubelet's previous run.
		m.tally.Check(Status, c.running && !survived)
		m.tally.Check(KubeletRestart, survived)
		m.contractReady(p, i, out.Ready)
		if out.Started == nil || *out.Started != started || out.Ready != ready {
			properties.Fail(m.t, id, "%s/%s (%s, running=%t, status Started=%v, survived a restart=%t, API pod Ready=%t, startup %v/%t, readiness %v): Started %v Ready %t; want Started %t Ready %t",
				p.spec.UID, cs.Name, c.id, c.running, describeBool(cs.Started), survived, p.spec.Ready, startupResult, hasStartup, m.shadow[core.Readiness][c.id], describeBool(out.Started), out.Ready, started, ready)
		}
	}
	// PB-TRIGGER applies where a readiness worker must be triggered.
	m.tally.Check(Trigger, len(wantTriggered) > 0)
	reached := append(slices.Clone(got.Triggered), got.Dropped...)
	sortKeys(reached)
	sortKeys(wantTriggered)
	if !sameKeys(reached, wantTriggered) {
		properties.Fail(m.t, Trigger, "UpdatePodStatus triggered %v (dropped %v); want the readiness workers %v", got.Triggered, got.Dropped, wantTriggered)
	}
	for _, key := range got.Triggered {
		m.tracks[key].triggered = true
		ws, _ := m.core.Worker(key)
		if !ws.TriggerBuffered && ws.NextDue.After(m.now) {
			properties.Fail(m.t, Trigger, "%v was triggered at %s yet waits until %v", key, m.clock(), ws.NextDue.Sub(m.kubeletStart))
		}
	}
	allReady := len(got.Status.ContainerStatuses) > 0
	for i, out := range got.Status.ContainerStatuses {
		p.containers[i].started = *out.Started
		p.containers[i].ready = out.Ready
		allReady = allReady && out.Ready
	}
	p.spec.Ready = allReady && p.phase == core.PodRunning
	m.t.Logf("  Started/Ready %s; triggered %v", statusText(got.Status), got.Triggered)
	m.moveTo(m.now)
}

// syncOther is syncPod with another manager: only the readiness promise
// judges its answer, which is written back as core's is.
func (m *machine) syncOther(p *pod) {
	got := m.other.UpdatePodStatus(m.now, p.spec, *p.status())
	allReady := len(got.ContainerStatuses) > 0
	for i, out := range got.ContainerStatuses {
		m.contractReady(p, i, out.Ready)
		p.containers[i].started = out.Started != nil && *out.Started
		p.containers[i].ready = out.Ready
		allReady = allReady && out.Ready
	}
	p.spec.Ready = allReady && p.phase == core.PodRunning
	m.t.Logf("  Started/Ready %s", statusText(got))
	m.moveTo(m.now)
}

func describeBool(b *bool) string {
	if b == nil {
		return "nil"
	}
	return fmt.Sprint(*b)
}

func statusText(s core.PodStatus) string {
	var parts []string
	for _, c := range s.ContainerStatuses {
		parts = append(parts, fmt.Sprintf("%s=%s/%t", c.Name, describeBool(c.Started), c.Ready))
	}
	return strings.Join(parts, " ")
}

// --- a worker's step --------------------------------------------------------

// pending is what a step is expected to publish, each with the
// invariant whose rule asks for it.
type pending struct {
	update core.Update
	by     string
}

// expect is the restated doProbe up to the probe.
type expect struct {
	pending   []pending
	probe     bool
	keepGoing bool
	// by names the invariant of the branch that ended the step.
	by string
	// reached notes the branches the step went through, for the tally.
	newContainer, survived, held, gated, delayed, deleted, terminated bool
}

func (m *machine) pendingSet(e *expect, cache map[string]core.Result, tr *track, r core.Result, by string) {
	if old, ok := cache[tr.containerID]; ok && old == r {
		return
	}
	cache[tr.containerID] = r
	e.pending = append(e.pending, pending{core.Update{Type: tr.key.Type, ContainerID: tr.containerID, Result: r, PodUID: tr.key.PodUID}, by})
}

// expectStep restates upstream's doProbe before the probe, moving the
// track (container ID, hold) and a working copy of the cache as it goes.
func (m *machine) expectStep(tr *track, p *pod, status *core.PodStatus, at time.Time, cache map[string]core.Result) expect {
	e := expect{keepGoing: true}
	if status == nil {
		e.by = Gating
		return e
	}
	if status.Phase == core.PodSucceeded || status.Phase == core.PodFailed {
		e.by, e.keepGoing, e.terminated = Terminated, false, true
		return e
	}
	c, i := p.container(tr.key.ContainerName)
	if c == nil || c.id == "" || i >= len(status.ContainerStatuses) {
		e.by = Gating
		return e
	}
	if c.id != tr.containerID {
		if tr.containerID != "" {
			delete(cache, tr.containerID)
		}
		tr.containerID = c.id
		e.newContainer = true
		e.survived = c.running && !c.startedAt.IsZero() && c.startedAt.Before(tr.kubeletStart.Add(-10*time.Second))
		if !e.survived {
			m.pendingSet(&e, cache, tr, initialValue[tr.key.Type], NewContainer)
		}
		tr.hold = false
	}
	if tr.hold {
		e.by, e.held = Hold, true
		return e
	}
	if !c.running {
		m.pendingSet(&e, cache, tr, core.Failure, Gating)
		e.by, e.gated = Gating, true
		e.keepGoing = c.terminated == nil || willRestart(p.spec.RestartPolicy, *c.terminated)
		return e
	}
	if p.deleted && tr.key.Type != core.Readiness {
		m.pendingSet(&e, cache, tr, core.Success, Deletion)
		e.by, e.keepGoing, e.deleted = Deletion, false, true
		return e
	}
	e.deleted = p.deleted
	if tr.probe.InitialDelaySeconds > 0 {
		e.delayed = true
		if int64(at.Sub(c.startedAt)/time.Second) < int64(tr.probe.InitialDelaySeconds) {
			e.by = InitialDelay
			return e
		}
	}
	e.gated = true
	if c.started == (tr.key.Type == core.Startup) {
		e.by = Gating
		return e
	}
	e.probe = true
	return e
}

// initialValue restates each type's initial value: not ready until a
// readiness probe succeeds, alive until liveness probes fail, startup
// unknown.
var initialValue = map[core.ProbeType]core.Result{core.Readiness: core.Failure, core.Liveness: core.Success, core.Startup: core.Unknown}

// outcome draws a probe's outcome: mostly success for a healthy
// container, mostly failure for an unhealthy one; some warnings, unknowns,
// timeouts and errors.
func outcome(t *rapid.T, h health, timeout time.Duration) (core.Outcome, model.Answer) {
	kinds := map[health][]string{
		healthy:   {"success", "success", "success", "success", "warning", "failure", "unknown", "timeout", "error"},
		unhealthy: {"failure", "failure", "failure", "failure", "timeout", "unknown", "success", "warning", "error"},
		erring:    {"error", "error", "error", "error", "error", "failure", "success"},
	}[h]
	switch kind := rapid.SampledFrom(kinds).Draw(t, "outcome"); kind {
	case "success":
		return core.Outcome{Result: core.ProbeSuccess, Output: "ok"}, "success"
	case "warning":
		return core.Outcome{Result: core.ProbeWarning, Output: "Probe terminated redirects"}, "warning"
	case "failure":
		return core.Outcome{Result: core.ProbeFailure, Output: "exit status 1"}, "failure"
	case "unknown":
		return core.Outcome{Result: core.ProbeUnknown}, "unknown"
	case "timeout":
		return core.Outcome{Result: core.ProbeFailure, Output: core.ExecTimeoutOutput([]string{"check"}, timeout)}, "failure"
	default:
		return core.Outcome{Result: core.ProbeUnknown, Err: fmt.Errorf("container not found")}, "error"
	}
}

// stepWorker runs one doProbe of a worker at its due time on both
// managers, answers its probe, and holds what it did to the invariants.
func (m *machine) stepWorker(key core.WorkerKey, at time.Time) {
	tr, ok := m.tracks[key]
	if !ok {
		properties.Fail(m.t, Workers, "the core has a worker %v that nothing created or that should have ended", key)
	}
	tr.steps++
	before, _ := m.core.Worker(key)
	p := m.podByUID(key.PodUID)
	var status *core.PodStatus
	if p != nil {
		status = p.status()
	}
	if p != nil && status != nil {
		c, _ := p.container(key.ContainerName)
		st := model.State{At: at, ID: c.id, Running: c.running, StartedAt: c.startedAt, Started: c.started,
			Exited: c.terminated != nil, Deleted: p.deleted, PodDone: p.phase == core.PodSucceeded || p.phase == core.PodFailed}
		if c.terminated != nil {
			st.WillRestart = willRestart(p.spec.RestartPolicy, *c.terminated)
		}
		tr.states = append(tr.states, st)
	}
	cache := map[string]core.Result{}
	for id, r := range m.shadow[key.Type] {
		cache[id] = r
	}
	oldID := tr.containerID
	e := m.expectStep(tr, p, status, at, cache)
	step, err := m.core.Step(key, at, status)
	twin, twinErr := m.twin.Step(key, at, status)
	m.checkTwinStep("Step", key, step, err, twin, twinErr)
	if err != nil {
		properties.Fail(m.t, Model, "Step(%v) at its due time: %v", key, err)
	}
	updates := slices.Clone(step.Updates)
	extraBy := e.by
	if e.newContainer {
		extraBy = NewContainer
	}
	m.checkUpdates(tr, step.Updates, e.pending, oldID, extraBy)

	// Which rules the step put to the test.
	m.tally.Check(NewContainer, e.newContainer)
	m.tally.Check(Terminated, e.terminated)
	m.tally.Check(Deletion, e.deleted)
	m.tally.Check(InitialDelay, e.delayed)
	m.tally.Check(Gating, e.gated)

	if probed := step.Kind == core.StepProbe; probed != e.probe {
		by := e.by
		if e.probe {
			by = Gating
			if c, _ := p.container(key.ContainerName); e.delayed && int64(at.Sub(c.startedAt)/time.Second) <= int64(tr.probe.InitialDelaySeconds) {
				by = InitialDelay
			}
		}
		properties.Fail(m.t, by, "%v at %s: the core %s; the rules say probe=%t (the step ends at the %s rule), status %+v", key, m.clock(), step.Kind, e.probe, e.by, statusText(*orEmpty(status)))
	}
	var verdictGiven, errored bool
	if step.Kind == core.StepProbe {
		c, _ := p.container(key.ContainerName)
		if step.Run.Attempt != 1 || step.Run.ContainerID != tr.containerID || step.Run.Timeout != tr.probe.Timeout() {
			properties.Fail(m.t, Model, "%v: the probe to run is %+v", key, step.Run)
		}
		if key.Type != core.Startup {
			m.contractBeforeProbe(tr, p, at)
		}
		out, answer := outcome(m.t, c.health, tr.probe.Timeout())
		attempts := 0
		for step.Kind == core.StepProbe {
			attempts++
			if attempts > 1 && step.Run.Attempt != attempts {
				properties.Fail(m.t, Error, "%v: try %d is numbered %d", key, attempts, step.Run.Attempt)
			}
			if attempts > 3 {
				properties.Fail(m.t, Error, "%v: a fourth try of an erring probe", key)
			}
			if out.Err != nil && attempts < 3 && rapid.IntRange(0, 3).Draw(m.t, "errorClears") == 0 {
				out, answer = outcome(m.t, c.health, tr.probe.Timeout())
			}
			step, err = m.core.ProbeDone(key, at, out)
			twin, twinErr = m.twin.ProbeDone(key, at, out)
			m.checkTwinStep("ProbeDone", key, step, err, twin, twinErr)
			if err != nil {
				properties.Fail(m.t, Model, "ProbeDone(%v): %v", key, err)
			}
		}
		tr.probes++
		tr.answers = append(tr.answers, answer)
		after, alive := m.core.Worker(key)
		if answer == "error" {
			errored = true
			m.checkError(tr, before, after, alive, attempts, step)
			m.contractUnknown(tr, step.Updates, step.Kind == core.StepExit)
		} else {
			verdictGiven = true
			m.checkVerdict(tr, answer, step, after, alive)
			m.contractVerdict(tr, answer, step.Updates, at)
		}
		updates = append(updates, step.Updates...)
		m.t.Logf("  %v probed (%s after %d tries): %v", key, answer, attempts, step.Updates)
	}
	m.tally.Check(Threshold, verdictGiven)
	m.tally.Check(Error, errored)
	m.tally.Check(Updates, len(updates) > 0)
	for _, u := range updates {
		tr.published = append(tr.published, model.Publication{At: at, ContainerID: u.ContainerID, Verdict: verdict(u.Result)})
	}

	wantExit := !e.keepGoing || tr.stopping
	if (step.Kind == core.StepExit) != wantExit {
		properties.Fail(m.t, e.by, "%v at %s: the worker %s; the rules say exit=%t (at the %s rule)", key, m.clock(), step.Kind, wantExit, e.by)
	}
	m.compareModel(tr, at, step.Kind == core.StepExit)
	if step.Kind == core.StepExit {
		m.endTrack(tr)
		if _, ok := m.core.Worker(key); ok {
			properties.Fail(m.t, Workers, "%v exited yet is still listed", key)
		}
		return
	}
	ws, _ := m.core.Worker(key)
	m.tally.Check(Hold, e.held || tr.hold)
	if ws.OnHold != tr.hold {
		properties.Fail(m.t, Hold, "%v after the step at %s: on hold %t; want %t", key, m.clock(), ws.OnHold, tr.hold)
	}
	if ws.ContainerID != tr.containerID {
		properties.Fail(m.t, NewContainer, "%v follows container %q; want %q", key, ws.ContainerID, tr.containerID)
	}
}

func orEmpty(s *core.PodStatus) *core.PodStatus {
	if s == nil {
		return &core.PodStatus{}
	}
	return s
}

func verdict(r core.Result) model.Verdict {
	switch r {
	case core.Success:
		return model.Pass
	case core.Failure:
		return model.Fail
	}
	return model.Unset
}
