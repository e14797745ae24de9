package properties

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/prober"
	model "github.com/nodeproof/nodeproof/models/prober"
)

var pbTypes = []prober.ProbeType{prober.Liveness, prober.Readiness, prober.Startup}

// --- the kubelet's calls ------------------------------------------------------

// addPodToKubelet calls AddPod on both managers and holds the answer to
// the rule restated: containers in order, probes startup, readiness,
// liveness, stopping at the first that has a worker.
func (m *pbMachine) addPodToKubelet(p *pbPod, t *rapid.T) {
	fractions := map[prober.WorkerKey]float64{}
	var want []prober.WorkerKey
	var early *prober.WorkerKey
walk:
	for _, c := range p.spec.Containers {
		for _, typ := range []prober.ProbeType{prober.Startup, prober.Readiness, prober.Liveness} {
			if c.ProbeOf(typ) == nil {
				continue
			}
			key := prober.WorkerKey{PodUID: p.spec.UID, ContainerName: c.Name, Type: typ}
			if _, exists := m.tracks[key]; exists {
				k := key
				early = &k
				break walk
			}
			want = append(want, key)
		}
	}
	for _, c := range p.spec.Containers {
		for _, typ := range pbTypes {
			if c.ProbeOf(typ) != nil {
				key := prober.WorkerKey{PodUID: p.spec.UID, ContainerName: c.Name, Type: typ}
				fractions[key] = rapid.SampledFrom([]float64{0, 0, 0.5, 0.999}).Draw(t, "jitter")
			}
		}
	}
	jitter := func(k prober.WorkerKey) float64 { return fractions[k] }
	got, err := m.core.AddPod(m.now, p.spec, jitter)
	twin, twinErr := m.twin.AddPod(m.now, p.spec, jitter)
	m.tally.Check(PBDeterministic, true)
	if !reflect.DeepEqual(got, twin) || !reflect.DeepEqual(err, twinErr) {
		m.fail(PBDeterministic, "AddPod: %+v %v, the twin %+v %v", got, err, twin, twinErr)
	}
	if err != nil {
		m.fail(PBWorkers, "AddPod of a valid defaulted pod: %v", err)
	}
	// PB-ADDPOD-EARLY-RETURN applies where an existing worker ends AddPod.
	m.tally.Check(PBAddPodEarly, early != nil)
	if !slices.Equal(got.Added, want) || !reflect.DeepEqual(got.EarlyReturn, early) {
		m.fail(PBAddPodEarly, "AddPod added %v (early return at %v); the rule adds %v and returns early at %v", got.Added, got.EarlyReturn, want, early)
	}
	if early != nil {
		missing := 0
		for _, c := range p.spec.Containers {
			for _, typ := range pbTypes {
				if _, ok := m.tracks[prober.WorkerKey{PodUID: p.spec.UID, ContainerName: c.Name, Type: typ}]; c.ProbeOf(typ) != nil && !ok && !slices.Contains(want, prober.WorkerKey{PodUID: p.spec.UID, ContainerName: c.Name, Type: typ}) {
					missing++
				}
			}
		}
		m.tally.Observe(pbStatEarlyReturn, float64(missing))
	}
	for _, key := range got.Added {
		ws, ok := m.core.Worker(key)
		if !ok {
			m.fail(PBWorkers, "AddPod reports %v added, yet no such worker exists", key)
		}
		pr := p.spec.Containers[pbIndex(p, key.ContainerName)].ProbeOf(key.Type)
		first := m.now
		if pr.Period() > m.now.Sub(m.kubeletStart) {
			first = m.now.Add(time.Duration(fractions[key] * float64(pr.Period())))
		}
		if !ws.FirstProbeAt.Equal(first) {
			m.fail(PBWorkers, "%v first runs at %v, want %v (jitter %v of %v)", key, ws.FirstProbeAt.Sub(m.kubeletStart), first.Sub(m.kubeletStart), fractions[key], pr.Period())
		}
		m.tracks[key] = &pbTrack{key: key, probe: *pr, kubeletStart: m.kubeletStart, firstRun: first, lastVerdict: prober.Success}
	}
	m.t.Logf("  AddPod %s: added %v, early return at %v", p.spec.UID, got.Added, got.EarlyReturn)
}

func pbIndex(p *pbPod, name string) int {
	_, i := p.container(name)
	return i
}

// updatePod changes a pod's probes (adds one or takes one away, or
// nothing) and gives the new spec to AddPod, as the kubelet does on a pod
// update.
func (m *pbMachine) updatePod(t *rapid.T) {
	p, i, ok := m.drawContainer(t)
	if !ok {
		m.addPod(t)
		return
	}
	spec := p.spec
	spec.Containers = slices.Clone(p.spec.Containers)
	c := &spec.Containers[i]
	typ := rapid.SampledFrom(pbTypes).Draw(t, "probeType")
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

func (m *pbMachine) deletePod(t *rapid.T) {
	p, ok := m.drawPod(t)
	if !ok || p.deleted {
		m.advance(t)
		return
	}
	p.deleted = true
	at := m.now
	p.spec.DeletionTimestamp = &at
	m.core.SetDeletionTimestamp(p.spec.UID, at)
	m.twin.SetDeletionTimestamp(p.spec.UID, at)
	m.begin("deletePod", "%s", p.spec.UID)
}

// finishPod ends every container and sets the phase Succeeded or Failed.
func (m *pbMachine) finishPod(t *rapid.T) {
	p, ok := m.drawPod(t)
	if !ok {
		m.addPod(t)
		return
	}
	p.phase = rapid.SampledFrom([]prober.Phase{prober.PodSucceeded, prober.PodFailed}).Draw(t, "phase")
	for _, c := range p.containers {
		if c.running {
			code := int32(0)
			if p.phase == prober.PodFailed {
				code = 1
			}
			c.running, c.terminated = false, &code
		}
	}
	p.hasStatus = true
	m.begin("finishPod", "%s %s", p.spec.UID, p.phase)
}

func (m *pbMachine) stopLivenessAndStartup(t *rapid.T) {
	p, ok := m.drawPod(t)
	if !ok {
		m.addPod(t)
		return
	}
	m.begin("stopLivenessAndStartup", "%s", p.spec.UID)
	p.stopped = true
	named := p.workerKeys(prober.Liveness, prober.Startup)
	m.checkStop("StopLivenessAndStartup", named, m.core.StopLivenessAndStartup(m.now, p.spec), m.twin.StopLivenessAndStartup(m.now, p.spec))
}

// workerKeys names the pod's workers of the given types, one per container
// and type, whether or not the container has that probe.
func (p *pbPod) workerKeys(types ...prober.ProbeType) []prober.WorkerKey {
	var keys []prober.WorkerKey
	for _, c := range p.spec.Containers {
		for _, typ := range types {
			keys = append(keys, prober.WorkerKey{PodUID: p.spec.UID, ContainerName: c.Name, Type: typ})
		}
	}
	return keys
}

// removePod is the pod leaving the node: RemovePod, and the status
// manager forgets it.
func (m *pbMachine) removePod(t *rapid.T) {
	p, ok := m.drawPod(t)
	if !ok {
		m.addPod(t)
		return
	}
	m.begin("removePod", "%s", p.spec.UID)
	m.pods = slices.DeleteFunc(m.pods, func(q *pbPod) bool { return q == p })
	named := p.workerKeys(pbTypes...)
	m.checkStop("RemovePod", named, m.core.RemovePod(m.now, p.spec), m.twin.RemovePod(m.now, p.spec))
}

// cleanupPods forgets a pod without RemovePod; CleanupPods ends its
// workers as no longer desired.
func (m *pbMachine) cleanupPods(t *rapid.T) {
	p, ok := m.drawPod(t)
	if !ok {
		m.addPod(t)
		return
	}
	m.begin("cleanupPods", "%s is no longer desired", p.spec.UID)
	m.pods = slices.DeleteFunc(m.pods, func(q *pbPod) bool { return q == p })
	desired := map[string]bool{}
	for _, q := range m.pods {
		desired[q.spec.UID] = true
	}
	var named []prober.WorkerKey
	for key := range m.tracks {
		if !desired[key.PodUID] {
			named = append(named, key)
		}
	}
	m.checkStop("CleanupPods", named, m.core.CleanupPods(m.now, desired), m.twin.CleanupPods(m.now, desired))
}

// checkStop holds a stop to PB-TERMINATED: exactly the named workers that
// exist end, at once unless still in their start-up sleep.
func (m *pbMachine) checkStop(call string, named []prober.WorkerKey, got, twin prober.StopResult) {
	m.tally.Check(PBDeterministic, true)
	if !reflect.DeepEqual(got, twin) {
		m.fail(PBDeterministic, "%s: %+v, the twin %+v", call, got, twin)
	}
	var exited, stopping []prober.WorkerKey
	for _, key := range named {
		tr, ok := m.tracks[key]
		if !ok || slices.Contains(exited, key) || slices.Contains(stopping, key) {
			continue
		}
		if tr.stepped() || !m.now.Before(tr.firstRun) {
			exited = append(exited, key)
		} else if !tr.stopping {
			stopping = append(stopping, key)
		}
	}
	pbSortKeys(exited)
	pbSortKeys(stopping)
	// PB-TERMINATED applies where a stop reaches a worker.
	m.tally.Check(PBTerminated, len(exited)+len(stopping) > 0)
	if !pbSameKeys(got.Exited, exited) || !pbSameKeys(got.Stopping, stopping) {
		m.fail(PBTerminated, "%s ended %v and is stopping %v; want ended %v, stopping %v", call, got.Exited, got.Stopping, exited, stopping)
	}
	for _, key := range exited {
		m.endTrack(m.tracks[key])
	}
	for _, key := range stopping {
		m.tracks[key].stopping = true
	}
	m.t.Logf("  %s: ended %v, stopping %v", call, exited, stopping)
}

func pbSortKeys(keys []prober.WorkerKey) {
	slices.SortFunc(keys, func(a, b prober.WorkerKey) int { return strings.Compare(pbKeyOrder(a), pbKeyOrder(b)) })
}

func pbKeyOrder(k prober.WorkerKey) string {
	return fmt.Sprintf("%s\x00%s\x00%d", k.PodUID, k.ContainerName, k.Type)
}

func pbSameKeys(a, b []prober.WorkerKey) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

// endTrack forgets an ended worker; its container's result goes with it.
func (m *pbMachine) endTrack(tr *pbTrack) {
	if tr.containerID != "" {
		delete(m.shadow[tr.key.Type], tr.containerID)
	}
	delete(m.tracks, tr.key)
}

func (tr *pbTrack) stepped() bool { return tr.steps > 0 }

// kubeletRestart is a new kubelet: new managers, and AddPod for every pod.
func (m *pbMachine) kubeletRestart(t *rapid.T) {
	// The kubelet is down for a while: no worker runs, the containers go on.
	down := rapid.SampledFrom([]time.Duration{0, 2 * time.Second, 11 * time.Second, 30 * time.Second}).Draw(t, "downtime")
	m.now = m.now.Add(down)
	m.begin("kubeletRestart", "after %v down", down)
	m.contractRestart()
	m.newKubelet()
	// PB-WORKERS applies: a new manager has no workers.
	m.tally.Check(PBWorkers, true)
	if ws := m.core.Workers(); len(ws) != 0 {
		m.fail(PBWorkers, "a new manager has workers %v", ws)
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
func (m *pbMachine) sync(t *rapid.T) {
	var candidates []*pbPod
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
func (m *pbMachine) syncPod(p *pbPod) {
	in := *p.status()
	got, err := m.core.UpdatePodStatus(m.now, p.spec, in)
	twin, twinErr := m.twin.UpdatePodStatus(m.now, p.spec, in)
	m.tally.Check(PBDeterministic, true)
	if !reflect.DeepEqual(got, twin) || !reflect.DeepEqual(err, twinErr) {
		m.fail(PBDeterministic, "UpdatePodStatus: %+v %v, the twin %+v %v", got, err, twin, twinErr)
	}
	if err != nil {
		m.fail(PBStatus, "UpdatePodStatus of a valid status: %v", err)
	}
	var wantTriggered []prober.WorkerKey
	for i, cs := range in.ContainerStatuses {
		c := p.containers[i]
		spec := p.spec.Containers[i]
		out := got.Status.ContainerStatuses[i]
		survived := c.running && !c.startedAt.IsZero() && c.startedAt.Before(m.kubeletStart.Add(-10*time.Second))
		id := PBStatus
		if survived {
			id = PBKubeletRestart
		}
		startupResult, hasStartup := m.shadow[prober.Startup][c.id]
		_, startupWorker := m.tracks[prober.WorkerKey{PodUID: p.spec.UID, ContainerName: cs.Name, Type: prober.Startup}]
		var started bool
		switch {
		case !c.running:
		case hasStartup:
			started = startupResult == prober.Success
		case cs.Started != nil && *cs.Started:
			started = true
		default:
			started = !startupWorker
		}
		ready := cs.Ready // untouched when not started
		if started {
			readiness, hasReadiness := m.shadow[prober.Readiness][c.id]
			readinessKey := prober.WorkerKey{PodUID: p.spec.UID, ContainerName: cs.Name, Type: prober.Readiness}
			_, readinessWorker := m.tracks[readinessKey]
			switch {
			case hasReadiness && readiness == prober.Success:
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
		m.tally.Check(PBStatus, c.running && !survived)
		m.tally.Check(PBKubeletRestart, survived)
		m.contractReady(p, i, out.Ready)
		if out.Started == nil || *out.Started != started || out.Ready != ready {
			m.fail(id, "%s/%s (%s, running=%t, status Started=%v, survived a restart=%t, API pod Ready=%t, startup %v/%t, readiness %v): Started %v Ready %t; want Started %t Ready %t",
				p.spec.UID, cs.Name, c.id, c.running, pbBool(cs.Started), survived, p.spec.Ready, startupResult, hasStartup, m.shadow[prober.Readiness][c.id], pbBool(out.Started), out.Ready, started, ready)
		}
	}
	// PB-TRIGGER applies where a readiness worker must be triggered.
	m.tally.Check(PBTrigger, len(wantTriggered) > 0)
	reached := append(slices.Clone(got.Triggered), got.Dropped...)
	pbSortKeys(reached)
	pbSortKeys(wantTriggered)
	if !pbSameKeys(reached, wantTriggered) {
		m.fail(PBTrigger, "UpdatePodStatus triggered %v (dropped %v); want the readiness workers %v", got.Triggered, got.Dropped, wantTriggered)
	}
	for _, key := range got.Triggered {
		m.tracks[key].triggered = true
		ws, _ := m.core.Worker(key)
		if !ws.TriggerBuffered && ws.NextDue.After(m.now) {
			m.fail(PBTrigger, "%v was triggered at %s yet waits until %v", key, m.clock(), ws.NextDue.Sub(m.kubeletStart))
		}
	}
	allReady := len(got.Status.ContainerStatuses) > 0
	for i, out := range got.Status.ContainerStatuses {
		p.containers[i].started = *out.Started
		p.containers[i].ready = out.Ready
		allReady = allReady && out.Ready
	}
	p.spec.Ready = allReady && p.phase == prober.PodRunning
	m.t.Logf("  Started/Ready %s; triggered %v", pbStatusText(got.Status), got.Triggered)
	m.moveTo(m.now)
}

func pbBool(b *bool) string {
	if b == nil {
		return "nil"
	}
	return fmt.Sprint(*b)
}

func pbStatusText(s prober.PodStatus) string {
	var parts []string
	for _, c := range s.ContainerStatuses {
		parts = append(parts, fmt.Sprintf("%s=%s/%t", c.Name, pbBool(c.Started), c.Ready))
	}
	return strings.Join(parts, " ")
}

// --- a worker's step --------------------------------------------------------

// pbPending is what a step is expected to publish, each with the
// invariant whose rule asks for it.
type pbPending struct {
	update prober.Update
	by     string
}

// pbExpect is the restated doProbe up to the probe.
type pbExpect struct {
	pending   []pbPending
	probe     bool
	keepGoing bool
	// by names the invariant of the branch that ended the step.
	by string
	// reached notes the branches the step went through, for the tally.
	newContainer, survived, held, gated, delayed, deleted, terminated bool
}

func (m *pbMachine) pendingSet(e *pbExpect, cache map[string]prober.Result, tr *pbTrack, r prober.Result, by string) {
	if old, ok := cache[tr.containerID]; ok && old == r {
		return
	}
	cache[tr.containerID] = r
	e.pending = append(e.pending, pbPending{prober.Update{Type: tr.key.Type, ContainerID: tr.containerID, Result: r, PodUID: tr.key.PodUID}, by})
}

// expectStep restates upstream's doProbe before the probe, moving the
// track (container ID, hold) and a working copy of the cache as it goes.
func (m *pbMachine) expectStep(tr *pbTrack, p *pbPod, status *prober.PodStatus, at time.Time, cache map[string]prober.Result) pbExpect {
	e := pbExpect{keepGoing: true}
	if status == nil {
		e.by = PBGating
		return e
	}
	if status.Phase == prober.PodSucceeded || status.Phase == prober.PodFailed {
		e.by, e.keepGoing, e.terminated = PBTerminated, false, true
		return e
	}
	c, i := p.container(tr.key.ContainerName)
	if c == nil || c.id == "" || i >= len(status.ContainerStatuses) {
		e.by = PBGating
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
			m.pendingSet(&e, cache, tr, pbInitialValue[tr.key.Type], PBNewContainer)
		}
		tr.hold = false
	}
	if tr.hold {
		e.by, e.held = PBHold, true
		return e
	}
	if !c.running {
		m.pendingSet(&e, cache, tr, prober.Failure, PBGating)
		e.by, e.gated = PBGating, true
		e.keepGoing = c.terminated == nil || willRestart(p.spec.RestartPolicy, *c.terminated)
		return e
	}
	if p.deleted && tr.key.Type != prober.Readiness {
		m.pendingSet(&e, cache, tr, prober.Success, PBDeletion)
		e.by, e.keepGoing, e.deleted = PBDeletion, false, true
		return e
	}
	e.deleted = p.deleted
	if tr.probe.InitialDelaySeconds > 0 {
		e.delayed = true
		if int64(at.Sub(c.startedAt)/time.Second) < int64(tr.probe.InitialDelaySeconds) {
			e.by = PBInitialDelay
			return e
		}
	}
	e.gated = true
	if c.started == (tr.key.Type == prober.Startup) {
		e.by = PBGating
		return e
	}
	e.probe = true
	return e
}

// pbInitialValue restates each type's initial value: not ready until a
// readiness probe succeeds, alive until liveness probes fail, startup
// unknown.
var pbInitialValue = map[prober.ProbeType]prober.Result{prober.Readiness: prober.Failure, prober.Liveness: prober.Success, prober.Startup: prober.Unknown}

// pbOutcome draws a probe's outcome: mostly success for a healthy
// container, mostly failure for an unhealthy one; some warnings, unknowns,
// timeouts and errors.
func pbOutcome(t *rapid.T, health pbHealth, timeout time.Duration) (prober.Outcome, model.Answer) {
	kinds := map[pbHealth][]string{
		pbHealthy:   {"success", "success", "success", "success", "warning", "failure", "unknown", "timeout", "error"},
		pbUnhealthy: {"failure", "failure", "failure", "failure", "timeout", "unknown", "success", "warning", "error"},
		pbErring:    {"error", "error", "error", "error", "error", "failure", "success"},
	}[health]
	switch kind := rapid.SampledFrom(kinds).Draw(t, "outcome"); kind {
	case "success":
		return prober.Outcome{Result: prober.ProbeSuccess, Output: "ok"}, "success"
	case "warning":
		return prober.Outcome{Result: prober.ProbeWarning, Output: "Probe terminated redirects"}, "warning"
	case "failure":
		return prober.Outcome{Result: prober.ProbeFailure, Output: "exit status 1"}, "failure"
	case "unknown":
		return prober.Outcome{Result: prober.ProbeUnknown}, "unknown"
	case "timeout":
		return prober.Outcome{Result: prober.ProbeFailure, Output: prober.ExecTimeoutOutput([]string{"check"}, timeout)}, "failure"
	default:
		return prober.Outcome{Result: prober.ProbeUnknown, Err: fmt.Errorf("container not found")}, "error"
	}
}

// stepWorker runs one doProbe of a worker at its due time on both
// managers, answers its probe, and holds what it did to the invariants.
func (m *pbMachine) stepWorker(key prober.WorkerKey, at time.Time) {
	tr, ok := m.tracks[key]
	if !ok {
		m.fail(PBWorkers, "the core has a worker %v that nothing created or that should have ended", key)
	}
	tr.steps++
	before, _ := m.core.Worker(key)
	p := m.podByUID(key.PodUID)
	var status *prober.PodStatus
	if p != nil {
		status = p.status()
	}
	if p != nil && status != nil {
		c, _ := p.container(key.ContainerName)
		st := model.State{At: at, ID: c.id, Running: c.running, StartedAt: c.startedAt, Started: c.started,
			Exited: c.terminated != nil, Deleted: p.deleted, PodDone: p.phase == prober.PodSucceeded || p.phase == prober.PodFailed}
		if c.terminated != nil {
			st.WillRestart = willRestart(p.spec.RestartPolicy, *c.terminated)
		}
		tr.states = append(tr.states, st)
	}
	cache := map[string]prober.Result{}
	for id, r := range m.shadow[key.Type] {
		cache[id] = r
	}
	oldID := tr.containerID
	e := m.expectStep(tr, p, status, at, cache)
	step, err := m.core.Step(key, at, status)
	twin, twinErr := m.twin.Step(key, at, status)
	m.checkTwinStep("Step", key, step, err, twin, twinErr)
	if err != nil {
		m.fail(PBModel, "Step(%v) at its due time: %v", key, err)
	}
	updates := slices.Clone(step.Updates)
	extraBy := e.by
	if e.newContainer {
		extraBy = PBNewContainer
	}
	m.checkUpdates(tr, step.Updates, e.pending, oldID, extraBy)

	// Which rules the step put to the test.
	m.tally.Check(PBNewContainer, e.newContainer)
	m.tally.Check(PBTerminated, e.terminated)
	m.tally.Check(PBDeletion, e.deleted)
	m.tally.Check(PBInitialDelay, e.delayed)
	m.tally.Check(PBGating, e.gated)

	if probed := step.Kind == prober.StepProbe; probed != e.probe {
		by := e.by
		if e.probe {
			by = PBGating
			if c, _ := p.container(key.ContainerName); e.delayed && int64(at.Sub(c.startedAt)/time.Second) <= int64(tr.probe.InitialDelaySeconds) {
				by = PBInitialDelay
			}
		}
		m.fail(by, "%v at %s: the core %s; the rules say probe=%t (the step ends at the %s rule), status %+v", key, m.clock(), step.Kind, e.probe, e.by, pbStatusText(*pbOrEmpty(status)))
	}
	var verdictGiven, errored bool
	if step.Kind == prober.StepProbe {
		c, _ := p.container(key.ContainerName)
		if step.Run.Attempt != 1 || step.Run.ContainerID != tr.containerID || step.Run.Timeout != tr.probe.Timeout() {
			m.fail(PBModel, "%v: the probe to run is %+v", key, step.Run)
		}
		if key.Type != prober.Startup {
			m.contractBeforeProbe(tr, p, at)
		}
		out, answer := pbOutcome(m.t, c.health, tr.probe.Timeout())
		attempts := 0
		for step.Kind == prober.StepProbe {
			attempts++
			if attempts > 1 && step.Run.Attempt != attempts {
				m.fail(PBError, "%v: try %d is numbered %d", key, attempts, step.Run.Attempt)
			}
			if attempts > 3 {
				m.fail(PBError, "%v: a fourth try of an erring probe", key)
			}
			if out.Err != nil && attempts < 3 && rapid.IntRange(0, 3).Draw(m.t, "errorClears") == 0 {
				out, answer = pbOutcome(m.t, c.health, tr.probe.Timeout())
			}
			step, err = m.core.ProbeDone(key, at, out)
			twin, twinErr = m.twin.ProbeDone(key, at, out)
			m.checkTwinStep("ProbeDone", key, step, err, twin, twinErr)
			if err != nil {
				m.fail(PBModel, "ProbeDone(%v): %v", key, err)
			}
		}
		tr.probes++
		tr.answers = append(tr.answers, answer)
		after, alive := m.core.Worker(key)
		if answer == "error" {
			errored = true
			m.checkError(tr, before, after, alive, attempts, step)
			m.contractUnknown(tr, step)
		} else {
			verdictGiven = true
			m.checkVerdict(tr, answer, step, after, alive)
			m.contractVerdict(tr, answer, step.Updates, at)
		}
		updates = append(updates, step.Updates...)
		m.t.Logf("  %v probed (%s after %d tries): %v", key, answer, attempts, step.Updates)
	}
	m.tally.Check(PBThreshold, verdictGiven)
	m.tally.Check(PBError, errored)
	m.tally.Check(PBUpdates, len(updates) > 0)
	for _, u := range updates {
		tr.published = append(tr.published, model.Publication{At: at, ContainerID: u.ContainerID, Verdict: pbVerdict(u.Result)})
	}

	wantExit := !e.keepGoing || tr.stopping
	if (step.Kind == prober.StepExit) != wantExit {
		m.fail(e.by, "%v at %s: the worker %s; the rules say exit=%t (at the %s rule)", key, m.clock(), step.Kind, wantExit, e.by)
	}
	m.compareModel(tr, at, step.Kind == prober.StepExit)
	if step.Kind == prober.StepExit {
		m.endTrack(tr)
		if _, ok := m.core.Worker(key); ok {
			m.fail(PBWorkers, "%v exited yet is still listed", key)
		}
		return
	}
	ws, _ := m.core.Worker(key)
	m.tally.Check(PBHold, e.held || tr.hold)
	if ws.OnHold != tr.hold {
		m.fail(PBHold, "%v after the step at %s: on hold %t; want %t", key, m.clock(), ws.OnHold, tr.hold)
	}
	if ws.ContainerID != tr.containerID {
		m.fail(PBNewContainer, "%v follows container %q; want %q", key, ws.ContainerID, tr.containerID)
	}
}

func pbOrEmpty(s *prober.PodStatus) *prober.PodStatus {
	if s == nil {
		return &prober.PodStatus{}
	}
	return s
}

func pbVerdict(r prober.Result) model.Verdict {
	switch r {
	case prober.Success:
		return model.Pass
	case prober.Failure:
		return model.Fail
	}
	return model.Unset
}

func (m *pbMachine) checkTwinStep(call string, key prober.WorkerKey, got prober.Step, err error, twin prober.Step, twinErr error) {
	m.tally.Check(PBDeterministic, true)
	if !reflect.DeepEqual(got, twin) || !reflect.DeepEqual(err, twinErr) {
		m.fail(PBDeterministic, "%s(%v): %+v %v; the twin %+v %v", call, key, got, err, twin, twinErr)
	}
}

// checkUpdates holds a step's publications before the probe: each is a
// change of the cache (PB-UPDATES), and they are the ones the rules ask
// for, in order. The shadow cache then takes them.
func (m *pbMachine) checkUpdates(tr *pbTrack, got []prober.Update, want []pbPending, oldID, extraBy string) {
	m.checkChanges(tr, got, oldID)
	for i := 0; i < max(len(got), len(want)); i++ {
		switch {
		case i >= len(want):
			m.fail(extraBy, "%v published %+v, which no rule asks for (want %v)", tr.key, got[i], want)
		case i >= len(got):
			m.fail(want[i].by, "%v did not publish %+v (published %v)", tr.key, want[i].update, got)
		case got[i] != want[i].update:
			m.fail(want[i].by, "%v published %+v; want %+v", tr.key, got[i], want[i].update)
		}
	}
}

// checkChanges is PB-UPDATES: every update changes the shadow cache,
// which then takes it. A new container's old result is removed first.
func (m *pbMachine) checkChanges(tr *pbTrack, got []prober.Update, oldID string) {
	shadow := m.shadow[tr.key.Type]
	if oldID != tr.containerID && oldID != "" {
		delete(shadow, oldID)
	}
	for _, u := range got {
		if old, ok := shadow[u.ContainerID]; ok && old == u.Result {
			m.fail(PBUpdates, "%v published %s for %s, which the cache already held", tr.key, u.Result, u.ContainerID)
		}
		shadow[u.ContainerID] = u.Result
	}
}

// checkError is PB-ERROR for a probe whose three tries erred.
func (m *pbMachine) checkError(tr *pbTrack, before, after prober.WorkerState, alive bool, attempts int, step prober.Step) {
	if attempts != 3 {
		m.fail(PBError, "%v: an erring probe was tried %d times; want 3", tr.key, attempts)
	}
	if len(step.Updates) > 0 {
		m.fail(PBError, "%v: a probe that erred three times published %v", tr.key, step.Updates)
	}
	if alive && (after.LastResult != before.LastResult || after.ResultRun != before.ResultRun) {
		m.fail(PBError, "%v: an erring probe moved the run from %s×%d to %s×%d", tr.key, before.LastResult, before.ResultRun, after.LastResult, after.ResultRun)
	}
	if len(step.Events) != 1 || !strings.Contains(step.Events[0].Message, "probe errored") {
		m.fail(PBError, "%v: events %+v; want one saying the probe errored", tr.key, step.Events)
	}
}

// checkVerdict is PB-THRESHOLD (and the hold of PB-117153-HOLD) for a probe
// that gave a verdict.
func (m *pbMachine) checkVerdict(tr *pbTrack, answer model.Answer, step prober.Step, after prober.WorkerState, alive bool) {
	v := prober.Failure
	if answer == "success" || answer == "warning" {
		v = prober.Success
	}
	if v == tr.lastVerdict {
		tr.run++
	} else {
		tr.lastVerdict, tr.run = v, 1
	}
	need := int(tr.probe.SuccessThreshold)
	if v == prober.Failure {
		need = int(tr.probe.FailureThreshold)
	}
	cache := map[string]prober.Result{}
	for id, r := range m.shadow[tr.key.Type] {
		cache[id] = r
	}
	var e pbExpect
	if tr.run >= need {
		m.pendingSet(&e, cache, tr, v, PBThreshold)
		if tr.key.Type == prober.Startup || (tr.key.Type == prober.Liveness && v == prober.Failure) {
			tr.hold, tr.run = true, 0
		}
	}
	m.checkUpdates(tr, step.Updates, e.pending, tr.containerID, PBThreshold)
	if alive && after.OnHold != tr.hold {
		m.fail(PBHold, "%v after a %s verdict (run %d of %d): on hold %t; want %t", tr.key, v, tr.run, need, after.OnHold, tr.hold)
	}
	if alive && (after.LastResult != tr.lastVerdict || after.ResultRun != tr.run) {
		m.fail(PBThreshold, "%v after a %s verdict: run %s×%d; want %s×%d", tr.key, v, after.LastResult, after.ResultRun, tr.lastVerdict, tr.run)
	}
}

// compareModel is PB-MODEL: the track replayed by the reference model.
func (m *pbMachine) compareModel(tr *pbTrack, at time.Time, exited bool) {
	if tr.triggered || tr.stopping {
		m.tally.Check(PBModel, false)
		return
	}
	kind := map[prober.ProbeType]model.Kind{prober.Liveness: model.Liveness, prober.Readiness: model.Readiness, prober.Startup: model.Startup}[tr.key.Type]
	out := model.Run(model.Script{
		Spec: model.Spec{Kind: kind, InitialDelaySeconds: int(tr.probe.InitialDelaySeconds), PeriodSeconds: int(tr.probe.PeriodSeconds),
			SuccessThreshold: int(tr.probe.SuccessThreshold), FailureThreshold: int(tr.probe.FailureThreshold)},
		KubeletStart: tr.kubeletStart, FirstRun: tr.firstRun, Until: at, States: tr.states, Answers: tr.answers,
	})
	// PB-MODEL applies once the worker has published something.
	m.tally.Check(PBModel, len(tr.published) > 0)
	if !slices.Equal(out.Published, tr.published) {
		m.fail(PBModel, "%v published %v; the model %v", tr.key, tr.published, out.Published)
	}
	if out.Probes != tr.probes {
		m.fail(PBModel, "%v ran %d probes; the model %d", tr.key, tr.probes, out.Probes)
	}
	if exited != !out.ExitedAt.IsZero() || (exited && !out.ExitedAt.Equal(at)) {
		m.fail(PBModel, "%v exited=%t at %s; the model exits at %v", tr.key, exited, m.clock(), out.ExitedAt)
	}
}

// checkAll runs after every action: the workers and the caches.
func (m *pbMachine) checkAll(*rapid.T) {
	ws := m.core.Workers()
	// PB-WORKERS applies when the node has workers.
	m.tally.Check(PBWorkers, len(ws) > 0)
	var got, want []prober.WorkerKey
	for _, w := range ws {
		got = append(got, w.Key)
	}
	for key := range m.tracks {
		want = append(want, key)
	}
	pbSortKeys(got)
	pbSortKeys(want)
	if !pbSameKeys(got, want) {
		m.fail(PBWorkers, "workers %v; want %v", got, want)
	}
	for _, typ := range pbTypes {
		entries := m.core.Results(typ)
		shadow := m.shadow[typ]
		ok := len(entries) == len(shadow)
		for _, e := range entries {
			if r, has := shadow[e.ContainerID]; !has || r != e.Result {
				ok = false
			}
		}
		if !ok {
			m.fail(PBUpdates, "the %s cache holds %v; rebuilt from the updates it is %v", typ, entries, shadow)
		}
		if !reflect.DeepEqual(entries, m.twin.Results(typ)) {
			m.fail(PBDeterministic, "the %s cache %v; the twin's %v", typ, entries, m.twin.Results(typ))
		}
	}
	if !reflect.DeepEqual(ws, m.twin.Workers()) {
		m.fail(PBDeterministic, "workers %+v; the twin's %+v", ws, m.twin.Workers())
	}
}
