package prober

import (
	"time"

	core "github.com/nodeproof/nodeproof/core/prober"
	model "github.com/nodeproof/nodeproof/models/prober"
)

// contract is what the contract checks remember about container
// instances, by container ID; unlike the managers it outlives a kubelet
// restart, as the containers do.
type contract struct {
	// startupOK is when a startup probe's Success was published for the
	// instance.
	startupOK map[string]time.Time
	// readinessOK: a readiness Success was published for the instance.
	readinessOK map[string]bool
	// readyAtRestart: the instance was reported Ready when a kubelet
	// restart came.
	readyAtRestart map[string]bool
	// runs are each instance's current runs of failed and successful
	// probes, by type.
	runs map[instanceProbe]streak
}

type instanceProbe struct {
	containerID string
	typ         core.ProbeType
}

type streak struct{ failures, successes int }

func newContract() contract {
	return contract{startupOK: map[string]time.Time{}, readinessOK: map[string]bool{}, readyAtRestart: map[string]bool{}, runs: map[instanceProbe]streak{}}
}

// startupPromised says whether the startup promises cover a container of
// the pod: not while the pod is deleted or its startup workers were
// stopped (the kubelet ends them to shut the pod down quietly), nor once
// an update changed the container's startup probe, which the API does not
// allow ("This cannot be updated").
func (p *pod) startupPromised(name string) bool {
	return !p.deleted && !p.stopped && !p.changed[name+"/"+core.Startup.String()]
}

// markChanged notes that an update set or removed a probe.
func (p *pod) markChanged(name string, typ core.ProbeType) {
	if p.changed == nil {
		p.changed = map[string]bool{}
	}
	p.changed[name+"/"+typ.String()] = true
}

// contractBeforeProbe holds a liveness or readiness probe about to run to
// the startup promises.
func (m *machine) contractBeforeProbe(tr *track, p *pod, at time.Time) {
	i := indexOf(p, tr.key.ContainerName)
	hasStartup := tr.key.Type != core.Startup && p.spec.Containers[i].StartupProbe != nil && p.startupPromised(tr.key.ContainerName)
	okAt, ok := m.contract.startupOK[tr.containerID]
	// PB-C-STARTUP-GATE applies to every liveness or readiness probe of a
	// container with a startup probe.
	m.tally.Check(ContractStartupGate, hasStartup)
	if hasStartup && !ok {
		m.tally.Breach(m.t, ContractStartupGate, "%v probes %s at %s, whose startup probe has not succeeded", tr.key, tr.containerID, m.clock())
	}
	delay := time.Duration(tr.probe.InitialDelaySeconds) * time.Second
	// PB-C-DELAY-AFTER-STARTUP applies where such a probe has a delay of
	// at least its period and the startup success is known.
	delayed := hasStartup && ok && tr.probe.InitialDelaySeconds > 0 && tr.probe.InitialDelaySeconds >= tr.probe.PeriodSeconds
	m.tally.Check(ContractDelayAfter, delayed)
	if delayed && at.Sub(okAt) < delay {
		m.tally.Breach(m.t, ContractDelayAfter, "%v probes %s at %s, %v after its startup probe succeeded (at %s); initialDelaySeconds is %d",
			tr.key, tr.containerID, m.clock(), at.Sub(okAt), okAt.Sub(m.kubeletStart), tr.probe.InitialDelaySeconds)
	}
}

// contractVerdict holds the result a probe's verdict published to the
// thresholds, counted on the container instance alone, and notes the
// successes the other promises wait for.
func (m *machine) contractVerdict(tr *track, answer model.Answer, updates []core.Update, at time.Time) {
	k := instanceProbe{tr.containerID, tr.key.Type}
	run := m.contract.runs[k]
	failed := answer != "success" && answer != "warning"
	if failed {
		run.failures, run.successes = run.failures+1, 0
	} else {
		run.failures, run.successes = 0, run.successes+1
	}
	m.contract.runs[k] = run
	// PB-C-FAILURE-THRESHOLD applies to every failed probe, PB-C-SUCCESS-
	// THRESHOLD to every successful one: each may publish a result.
	m.tally.Check(ContractFailureRun, failed)
	m.tally.Check(ContractSuccessRun, !failed)
	for _, u := range updates {
		if u.ContainerID != tr.containerID {
			continue
		}
		switch u.Result {
		case core.Failure:
			if run.failures < int(tr.probe.FailureThreshold) {
				m.tally.Breach(m.t, ContractFailureRun, "%v published Failure for %s at %s after %d failed probes of that container in a row; failureThreshold is %d",
					tr.key, tr.containerID, m.clock(), run.failures, tr.probe.FailureThreshold)
			}
		case core.Success:
			if run.successes < int(tr.probe.SuccessThreshold) {
				m.tally.Breach(m.t, ContractSuccessRun, "%v published Success for %s at %s after %d successful probes of that container in a row; successThreshold is %d",
					tr.key, tr.containerID, m.clock(), run.successes, tr.probe.SuccessThreshold)
			}
			switch tr.key.Type {
			case core.Startup:
				if _, seen := m.contract.startupOK[tr.containerID]; !seen {
					m.contract.startupOK[tr.containerID] = at
				}
			case core.Readiness:
				m.contract.readinessOK[tr.containerID] = true
			}
		}
	}
}

// contractUnknown holds a probe whose three tries erred to the Unknown
// promise: nothing published (updates), and the worker goes on (exited
// is false) unless a stop was already waiting for it.
func (m *machine) contractUnknown(tr *track, updates []core.Update, exited bool) {
	// PB-C-UNKNOWN-NO-ACTION applies to every probe that could not be run.
	m.tally.Check(ContractUnknownNoop, true)
	if len(updates) > 0 {
		m.tally.Breach(m.t, ContractUnknownNoop, "%v: a probe of %s that could not be run published %v", tr.key, tr.containerID, updates)
	}
	if exited && !tr.stopping {
		m.tally.Breach(m.t, ContractUnknownNoop, "%v: the kubelet stopped probing %s after a probe that could not be run", tr.key, tr.containerID)
	}
}

// contractReady holds the Ready an UpdatePodStatus reported for a running
// container with a readiness probe to the readiness promise.
func (m *machine) contractReady(p *pod, i int, ready bool) {
	c := p.containers[i]
	name := p.spec.Containers[i].Name
	applies := c.running && p.spec.Containers[i].ReadinessProbe != nil && !p.changed[name+"/"+core.Readiness.String()]
	// PB-C-READY-OWN-PROBE applies to every running container with a
	// readiness probe that a sync reports on.
	m.tally.Check(ContractReadyOwnProbes, applies)
	if applies && ready && !m.contract.readinessOK[c.id] && !m.contract.readyAtRestart[c.id] {
		m.tally.Breach(m.t, ContractReadyOwnProbes, "%s/%s (%s, started at %s) is reported Ready at %s, yet its readiness probe never succeeded and it was not Ready before a kubelet restart",
			p.spec.UID, p.spec.Containers[i].Name, c.id, c.startedAt.Sub(m.kubeletStart), m.clock())
	}
}

// contractRestart notes, as a kubelet restart comes, the instances then
// reported Ready: KEP-4781 lets them keep it.
func (m *machine) contractRestart() {
	for _, p := range m.pods {
		for _, c := range p.containers {
			if c.running && c.ready {
				m.contract.readyAtRestart[c.id] = true
			}
		}
	}
}
