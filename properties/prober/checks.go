package prober

import (
	"reflect"
	"slices"
	"strings"
	"time"

	"pgregory.net/rapid"

	core "github.com/nodeproof/nodeproof/core/prober"
	model "github.com/nodeproof/nodeproof/models/prober"
	"github.com/nodeproof/nodeproof/properties"
)

// checkStop holds a stop to PB-TERMINATED: exactly the named workers that
// exist end, at once unless still in their start-up sleep.
func (m *machine) checkStop(call string, named []core.WorkerKey, got, twin core.StopResult) {
	m.tally.Check(Deterministic, true)
	if !reflect.DeepEqual(got, twin) {
		properties.Fail(m.t, Deterministic, "%s: %+v, the twin %+v", call, got, twin)
	}
	var exited, stopping []core.WorkerKey
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
	sortKeys(exited)
	sortKeys(stopping)
	// PB-TERMINATED applies where a stop reaches a worker.
	m.tally.Check(Terminated, len(exited)+len(stopping) > 0)
	if !sameKeys(got.Exited, exited) || !sameKeys(got.Stopping, stopping) {
		properties.Fail(m.t, Terminated, "%s ended %v and is stopping %v; want ended %v, stopping %v", call, got.Exited, got.Stopping, exited, stopping)
	}
	for _, key := range exited {
		m.endTrack(m.tracks[key])
	}
	for _, key := range stopping {
		m.tracks[key].stopping = true
	}
	m.t.Logf("  %s: ended %v, stopping %v", call, exited, stopping)
}

func (m *machine) checkTwinStep(call string, key core.WorkerKey, got core.Step, err error, twin core.Step, twinErr error) {
	m.tally.Check(Deterministic, true)
	if !reflect.DeepEqual(got, twin) || !reflect.DeepEqual(err, twinErr) {
		properties.Fail(m.t, Deterministic, "%s(%v): %+v %v; the twin %+v %v", call, key, got, err, twin, twinErr)
	}
}

// checkUpdates holds a step's publications before the probe: each is a
// change of the cache (PB-UPDATES), and they are the ones the rules ask
// for, in order. The shadow cache then takes them.
func (m *machine) checkUpdates(tr *track, got []core.Update, want []pending, oldID, extraBy string) {
	m.checkChanges(tr, got, oldID)
	for i := 0; i < max(len(got), len(want)); i++ {
		switch {
		case i >= len(want):
			properties.Fail(m.t, extraBy, "%v published %+v, which no rule asks for (want %v)", tr.key, got[i], want)
		case i >= len(got):
			properties.Fail(m.t, want[i].by, "%v did not publish %+v (published %v)", tr.key, want[i].update, got)
		case got[i] != want[i].update:
			properties.Fail(m.t, want[i].by, "%v published %+v; want %+v", tr.key, got[i], want[i].update)
		}
	}
}

// checkChanges is PB-UPDATES: every update changes the shadow cache,
// which then takes it. A new container's old result is removed first.
func (m *machine) checkChanges(tr *track, got []core.Update, oldID string) {
	shadow := m.shadow[tr.key.Type]
	if oldID != tr.containerID && oldID != "" {
		delete(shadow, oldID)
	}
	for _, u := range got {
		if old, ok := shadow[u.ContainerID]; ok && old == u.Result {
			properties.Fail(m.t, Updates, "%v published %s for %s, which the cache already held", tr.key, u.Result, u.ContainerID)
		}
		shadow[u.ContainerID] = u.Result
	}
}

// checkError is PB-ERROR for a probe whose three tries erred.
func (m *machine) checkError(tr *track, before, after core.WorkerState, alive bool, attempts int, step core.Step) {
	if attempts != 3 {
		properties.Fail(m.t, Error, "%v: an erring probe was tried %d times; want 3", tr.key, attempts)
	}
	if len(step.Updates) > 0 {
		properties.Fail(m.t, Error, "%v: a probe that erred three times published %v", tr.key, step.Updates)
	}
	if alive && (after.LastResult != before.LastResult || after.ResultRun != before.ResultRun) {
		properties.Fail(m.t, Error, "%v: an erring probe moved the run from %s×%d to %s×%d", tr.key, before.LastResult, before.ResultRun, after.LastResult, after.ResultRun)
	}
	if len(step.Events) != 1 || !strings.Contains(step.Events[0].Message, "probe errored") {
		properties.Fail(m.t, Error, "%v: events %+v; want one saying the probe errored", tr.key, step.Events)
	}
}

// checkVerdict is PB-THRESHOLD (and the hold of PB-117153-HOLD) for a probe
// that gave a verdict.
func (m *machine) checkVerdict(tr *track, answer model.Answer, step core.Step, after core.WorkerState, alive bool) {
	v := core.Failure
	if answer == "success" || answer == "warning" {
		v = core.Success
	}
	if v == tr.lastVerdict {
		tr.run++
	} else {
		tr.lastVerdict, tr.run = v, 1
	}
	need := int(tr.probe.SuccessThreshold)
	if v == core.Failure {
		need = int(tr.probe.FailureThreshold)
	}
	cache := map[string]core.Result{}
	for id, r := range m.shadow[tr.key.Type] {
		cache[id] = r
	}
	var e expect
	if tr.run >= need {
		m.pendingSet(&e, cache, tr, v, Threshold)
		if tr.key.Type == core.Startup || (tr.key.Type == core.Liveness && v == core.Failure) {
			tr.hold, tr.run = true, 0
		}
	}
	m.checkUpdates(tr, step.Updates, e.pending, tr.containerID, Threshold)
	if alive && after.OnHold != tr.hold {
		properties.Fail(m.t, Hold, "%v after a %s verdict (run %d of %d): on hold %t; want %t", tr.key, v, tr.run, need, after.OnHold, tr.hold)
	}
	if alive && (after.LastResult != tr.lastVerdict || after.ResultRun != tr.run) {
		properties.Fail(m.t, Threshold, "%v after a %s verdict: run %s×%d; want %s×%d", tr.key, v, after.LastResult, after.ResultRun, tr.lastVerdict, tr.run)
	}
}

// compareModel is PB-MODEL: the track replayed by the reference model.
func (m *machine) compareModel(tr *track, at time.Time, exited bool) {
	if tr.triggered || tr.stopping {
		m.tally.Check(Model, false)
		return
	}
	kind := map[core.ProbeType]model.Kind{core.Liveness: model.Liveness, core.Readiness: model.Readiness, core.Startup: model.Startup}[tr.key.Type]
	out := model.Run(model.Script{
		Spec: model.Spec{Kind: kind, InitialDelaySeconds: int(tr.probe.InitialDelaySeconds), PeriodSeconds: int(tr.probe.PeriodSeconds),
			SuccessThreshold: int(tr.probe.SuccessThreshold), FailureThreshold: int(tr.probe.FailureThreshold)},
		KubeletStart: tr.kubeletStart, FirstRun: tr.firstRun, Until: at, States: tr.states, Answers: tr.answers,
	})
	// PB-MODEL applies once the worker has published something.
	m.tally.Check(Model, len(tr.published) > 0)
	if !slices.Equal(out.Published, tr.published) {
		properties.Fail(m.t, Model, "%v published %v; the model %v", tr.key, tr.published, out.Published)
	}
	if out.Probes != tr.probes {
		properties.Fail(m.t, Model, "%v ran %d probes; the model %d", tr.key, tr.probes, out.Probes)
	}
	if exited != !out.ExitedAt.IsZero() || (exited && !out.ExitedAt.Equal(at)) {
		properties.Fail(m.t, Model, "%v exited=%t at %s; the model exits at %v", tr.key, exited, m.clock(), out.ExitedAt)
	}
}

// checkAll runs after every action: the workers and the caches.
func (m *machine) checkAll(*rapid.T) {
	if m.other != nil {
		// Another manager's workers and caches are not listed; its
		// contract checks ran as it probed.
		return
	}
	ws := m.core.Workers()
	// PB-WORKERS applies when the node has workers.
	m.tally.Check(Workers, len(ws) > 0)
	var got, want []core.WorkerKey
	for _, w := range ws {
		got = append(got, w.Key)
	}
	for key := range m.tracks {
		want = append(want, key)
	}
	sortKeys(got)
	sortKeys(want)
	if !sameKeys(got, want) {
		properties.Fail(m.t, Workers, "workers %v; want %v", got, want)
	}
	for _, typ := range probeTypes {
		entries := m.core.Results(typ)
		shadow := m.shadow[typ]
		ok := len(entries) == len(shadow)
		for _, e := range entries {
			if r, has := shadow[e.ContainerID]; !has || r != e.Result {
				ok = false
			}
		}
		if !ok {
			properties.Fail(m.t, Updates, "the %s cache holds %v; rebuilt from the updates it is %v", typ, entries, shadow)
		}
		if !reflect.DeepEqual(entries, m.twin.Results(typ)) {
			properties.Fail(m.t, Deterministic, "the %s cache %v; the twin's %v", typ, entries, m.twin.Results(typ))
		}
	}
	if !reflect.DeepEqual(ws, m.twin.Workers()) {
		properties.Fail(m.t, Deterministic, "workers %+v; the twin's %+v", ws, m.twin.Workers())
	}
}
