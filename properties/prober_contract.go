package properties

import (
	"time"

	"github.com/nodeproof/nodeproof/core/prober"
	model "github.com/nodeproof/nodeproof/models/prober"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// The prober's contract properties: what the Kubernetes documentation and
// KEP-4781 promise a user about probes, checked on the faithful core. A
// breach is a candidate bug in the kubelet (verify.Finding once upstream's
// own code is shown to break the promise too).
const (
	PBCStartupGate    = "PB-C-STARTUP-GATE"
	PBCDelayAfter     = "PB-C-DELAY-AFTER-STARTUP"
	PBCFailureRun     = "PB-C-FAILURE-THRESHOLD"
	PBCSuccessRun     = "PB-C-SUCCESS-THRESHOLD"
	PBCUnknownNoop    = "PB-C-UNKNOWN-NO-ACTION"
	PBCReadyOwnProbes = "PB-C-READY-OWN-PROBE"
)

// The documentation pages the prober's promises are read from.
const (
	pbProbesTask  = "tasks/configure-pod-container/configure-liveness-readiness-startup-probes/"
	pbProbesTitle = "Configure Liveness, Readiness and Startup Probes"
	pbLifecycle   = "concepts/workloads/pods/pod-lifecycle/"
	pbLifeTitle   = "Pod Lifecycle"
	pbKEP4781     = "Fix inconsistent container ready state after kubelet restart"
)

// pbContractInvariants are declared beside the fidelity invariants of the
// prober suite.
func pbContractInvariants() []verify.Property {
	configure := cite.KubernetesDoc(pbProbesTask, pbProbesTitle, "Configure Probes")
	return []verify.Property{
		{ID: PBCStartupGate, Subsystem: pbSubsystem, Kind: verify.Contract,
			Statement: "\"If such a probe is configured, liveness and readiness probes do not start until it succeeds\": no liveness or readiness probe runs on a container instance that has a startup probe before that instance's startup probe succeeded (pods being deleted or stopped, whose startup workers end, and startup probes an update changed, which the API forbids, excepted).",
			Sources:   []cite.Source{cite.KubernetesDoc(pbProbesTask, pbProbesTitle, ""), cite.KubernetesDoc(pbLifecycle, pbLifeTitle, "Types of probe")}},
		{ID: PBCDelayAfter, Subsystem: pbSubsystem, Kind: verify.Contract,
			Statement: "initialDelaySeconds: \"If a startup probe is defined, liveness and readiness probe delays do not begin until the startup probe has succeeded\": a liveness or readiness probe whose initialDelaySeconds is at least its periodSeconds runs on a container instance no sooner than initialDelaySeconds after that instance's startup probe succeeded.",
			Sources:   []cite.Source{configure, cite.Issue(119617)}},
		{ID: PBCFailureRun, Subsystem: pbSubsystem, Kind: verify.Contract,
			Statement: "failureThreshold: \"After a probe fails failureThreshold times in a row, Kubernetes considers that the overall check has failed\"; for liveness and startup \"if at least failureThreshold probes have failed\" the container is restarted: a probe's result turns Failure for a running container instance only once at least failureThreshold probes of that instance failed in a row (probes that could not run, Unknown, neither count nor break the row).",
			Sources:   []cite.Source{configure}},
		{ID: PBCSuccessRun, Subsystem: pbSubsystem, Kind: verify.Contract,
			Statement: "successThreshold: \"Minimum consecutive successes for the probe to be considered successful after having failed\": a probe's result turns Success for a container instance only once at least successThreshold probes of that instance succeeded in a row (probes that could not run neither count nor break the row).",
			Sources:   []cite.Source{configure}},
		{ID: PBCUnknownNoop, Subsystem: pbSubsystem, Kind: verify.Contract,
			Statement: "Unknown: \"The diagnostic failed (no action should be taken, and the kubelet will make further checks)\": a probe that could not be run changes no result and the kubelet goes on probing the container.",
			Sources:   []cite.Source{cite.KubernetesDoc(pbLifecycle, pbLifeTitle, "Probe outcome")}},
		{ID: PBCReadyOwnProbes, Subsystem: pbSubsystem, Kind: verify.Contract,
			Statement: "\"The default state of readiness before the initial delay is Failure\": a running container instance with a readiness probe is reported Ready only once its own readiness probe succeeded, or (KEP-4781) when that same instance was Ready before a kubelet restart; a container the kubelet replaced is judged by its probes.",
			Sources:   []cite.Source{cite.KubernetesDoc(pbLifecycle, pbLifeTitle, "Types of probe"), cite.KEPSection(4781, pbKEP4781, "Changes in probe")}},
	}
}

// pbContract is what the contract checks remember about container
// instances, by container ID; unlike the managers it outlives a kubelet
// restart, as the containers do.
type pbContract struct {
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
	runs map[pbInstanceProbe]pbRun
}

type pbInstanceProbe struct {
	containerID string
	typ         prober.ProbeType
}

type pbRun struct{ failures, successes int }

func newPBContract() pbContract {
	return pbContract{startupOK: map[string]time.Time{}, readinessOK: map[string]bool{}, readyAtRestart: map[string]bool{}, runs: map[pbInstanceProbe]pbRun{}}
}

// startupPromised says whether the startup promises cover a container of
// the pod: not while the pod is deleted or its startup workers were
// stopped (the kubelet ends them to shut the pod down quietly), nor once
// an update changed the container's startup probe, which the API does not
// allow ("This cannot be updated").
func (p *pbPod) startupPromised(name string) bool {
	return !p.deleted && !p.stopped && !p.changed[name+"/"+prober.Startup.String()]
}

// markChanged notes that an update set or removed a probe.
func (p *pbPod) markChanged(name string, typ prober.ProbeType) {
	if p.changed == nil {
		p.changed = map[string]bool{}
	}
	p.changed[name+"/"+typ.String()] = true
}

// contractBeforeProbe holds a liveness or readiness probe about to run to
// the startup promises.
func (m *pbMachine) contractBeforeProbe(tr *pbTrack, p *pbPod, at time.Time) {
	i := pbIndex(p, tr.key.ContainerName)
	hasStartup := tr.key.Type != prober.Startup && p.spec.Containers[i].StartupProbe != nil && p.startupPromised(tr.key.ContainerName)
	okAt, ok := m.contract.startupOK[tr.containerID]
	// PB-C-STARTUP-GATE applies to every liveness or readiness probe of a
	// container with a startup probe.
	m.tally.Check(PBCStartupGate, hasStartup)
	if hasStartup && !ok {
		m.tally.Breach(m.t, PBCStartupGate, "%v probes %s at %s, whose startup probe has not succeeded", tr.key, tr.containerID, m.clock())
	}
	delay := time.Duration(tr.probe.InitialDelaySeconds) * time.Second
	// PB-C-DELAY-AFTER-STARTUP applies where such a probe has a delay of
	// at least its period and the startup success is known.
	delayed := hasStartup && ok && tr.probe.InitialDelaySeconds > 0 && tr.probe.InitialDelaySeconds >= tr.probe.PeriodSeconds
	m.tally.Check(PBCDelayAfter, delayed)
	if delayed && at.Sub(okAt) < delay {
		m.tally.Breach(m.t, PBCDelayAfter, "%v probes %s at %s, %v after its startup probe succeeded (at %s); initialDelaySeconds is %d",
			tr.key, tr.containerID, m.clock(), at.Sub(okAt), okAt.Sub(m.kubeletStart), tr.probe.InitialDelaySeconds)
	}
}

// contractVerdict holds the result a probe's verdict published to the
// thresholds, counted on the container instance alone, and notes the
// successes the other promises wait for.
func (m *pbMachine) contractVerdict(tr *pbTrack, answer model.Answer, updates []prober.Update, at time.Time) {
	k := pbInstanceProbe{tr.containerID, tr.key.Type}
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
	m.tally.Check(PBCFailureRun, failed)
	m.tally.Check(PBCSuccessRun, !failed)
	for _, u := range updates {
		if u.ContainerID != tr.containerID {
			continue
		}
		switch u.Result {
		case prober.Failure:
			if run.failures < int(tr.probe.FailureThreshold) {
				m.tally.Breach(m.t, PBCFailureRun, "%v published Failure for %s at %s after %d failed probes of that container in a row; failureThreshold is %d",
					tr.key, tr.containerID, m.clock(), run.failures, tr.probe.FailureThreshold)
			}
		case prober.Success:
			if run.successes < int(tr.probe.SuccessThreshold) {
				m.tally.Breach(m.t, PBCSuccessRun, "%v published Success for %s at %s after %d successful probes of that container in a row; successThreshold is %d",
					tr.key, tr.containerID, m.clock(), run.successes, tr.probe.SuccessThreshold)
			}
			switch tr.key.Type {
			case prober.Startup:
				if _, seen := m.contract.startupOK[tr.containerID]; !seen {
					m.contract.startupOK[tr.containerID] = at
				}
			case prober.Readiness:
				m.contract.readinessOK[tr.containerID] = true
			}
		}
	}
}

// contractUnknown holds a probe whose three tries erred to the Unknown
// promise: nothing published, and the worker goes on unless a stop was
// already waiting for it.
func (m *pbMachine) contractUnknown(tr *pbTrack, step prober.Step) {
	// PB-C-UNKNOWN-NO-ACTION applies to every probe that could not be run.
	m.tally.Check(PBCUnknownNoop, true)
	if len(step.Updates) > 0 {
		m.tally.Breach(m.t, PBCUnknownNoop, "%v: a probe of %s that could not be run published %v", tr.key, tr.containerID, step.Updates)
	}
	if step.Kind == prober.StepExit && !tr.stopping {
		m.tally.Breach(m.t, PBCUnknownNoop, "%v: the kubelet stopped probing %s after a probe that could not be run", tr.key, tr.containerID)
	}
}

// contractReady holds the Ready an UpdatePodStatus reported for a running
// container with a readiness probe to the readiness promise.
func (m *pbMachine) contractReady(p *pbPod, i int, ready bool) {
	c := p.containers[i]
	name := p.spec.Containers[i].Name
	applies := c.running && p.spec.Containers[i].ReadinessProbe != nil && !p.changed[name+"/"+prober.Readiness.String()]
	// PB-C-READY-OWN-PROBE applies to every running container with a
	// readiness probe that a sync reports on.
	m.tally.Check(PBCReadyOwnProbes, applies)
	if applies && ready && !m.contract.readinessOK[c.id] && !m.contract.readyAtRestart[c.id] {
		m.tally.Breach(m.t, PBCReadyOwnProbes, "%s/%s (%s, started at %s) is reported Ready at %s, yet its readiness probe never succeeded and it was not Ready before a kubelet restart",
			p.spec.UID, p.spec.Containers[i].Name, c.id, c.startedAt.Sub(m.kubeletStart), m.clock())
	}
}

// contractRestart notes, as a kubelet restart comes, the instances then
// reported Ready: KEP-4781 lets them keep it.
func (m *pbMachine) contractRestart() {
	for _, p := range m.pods {
		for _, c := range p.containers {
			if c.running && c.ready {
				m.contract.readyAtRestart[c.id] = true
			}
		}
	}
}
