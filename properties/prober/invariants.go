package prober

import (
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// Prober invariant IDs (PR- belongs to preemption).
const (
	Model           = "PB-MODEL"
	Threshold       = "PB-THRESHOLD"
	Error           = "PB-ERROR"
	Gating          = "PB-GATING"
	Hold            = "PB-117153-HOLD"
	NewContainer    = "PB-NEW-CONTAINER"
	Terminated      = "PB-TERMINATED"
	Deletion        = "PB-DELETION"
	InitialDelay    = "PB-INITIAL-DELAY"
	Updates         = "PB-UPDATES"
	Workers         = "PB-WORKERS"
	AddPodEarly     = "PB-ADDPOD-EARLY-RETURN"
	Status          = "PB-STATUS"
	Trigger         = "PB-TRIGGER"
	KubeletRestart  = "PB-KUBELET-RESTART"
	Deterministic   = "PB-DETERMINISTIC"
	subsystem       = "prober"
	statEarlyReturn = "probes of the pod left without a worker by AddPod's early return, per AddPod that returned early"
)

// Where the prober invariants come from: the v1.36.3 prober.
const (
	worker  = "pkg/kubelet/prober/worker.go"
	manager = "pkg/kubelet/prober/prober_manager.go"
	prober  = "pkg/kubelet/prober/prober.go"
	results = "pkg/kubelet/prober/results/results_manager.go"
)

func seed(section string) cite.Source {
	return cite.Seed("the kubelet's probers", section)
}

// invariants are the statements the suite checks, the fidelity invariants
// first and the contract properties after them.
func invariants() []verify.Property {
	doProbe := cite.Code(worker, "worker.doProbe")
	return append([]verify.Property{
		{
			ID:        Model,
			Subsystem: subsystem,
			Statement: "For every worker that no manual trigger reached, the core publishes the same results at the same " +
				"times, runs the same number of probes and exits at the same tick as the reference model fed the " +
				"container's states and the probes' answers.",
			Sources: []cite.Source{doProbe, cite.Code(worker, "worker.run")},
			Kind:    verify.Fidelity,
		},
		{
			ID:        Threshold,
			Subsystem: subsystem,
			Statement: "A probe's verdict is published exactly when the run of equal verdicts (errors skipped, the run " +
				"reset only by a hold) reaches FailureThreshold for Failure or SuccessThreshold for Success and " +
				"the cached result differs; a warning counts as Success and unknown without error as Failure.",
			Sources: []cite.Source{doProbe, cite.Code(prober, "prober.probe"), seed("Probe parameters")},
			Kind:    verify.Fidelity,
		},
		{
			ID:        Error,
			Subsystem: subsystem,
			Statement: "A probe that errs is tried three times in all; when the third try errs too, the worker publishes " +
				"nothing and its last result and run stay as they were, and one Unhealthy event says the probe " +
				"errored.",
			Sources: []cite.Source{
				doProbe,
				cite.Code(prober, "prober.runProbeWithRetries"),
				cite.Code(prober, "prober.probe"),
			},
			Kind: verify.Fidelity,
		},
		{
			ID:        Gating,
			Subsystem: subsystem,
			Statement: "A worker probes only when the status manager has the pod's status with the container's ID and " +
				"the container runs; liveness and readiness probe only once the status says Started, startup only " +
				"before; a container that is not running makes the worker publish Failure and end exactly when it " +
				"exited for good under the pod's restart policy.",
			Sources: []cite.Source{doProbe, seed("The prober worker implementation")},
			Kind:    verify.Fidelity,
		},
		{
			ID:        Hold,
			Subsystem: subsystem,
			Statement: "After publishing a liveness Failure or any startup result, a worker is on hold with its run " +
				"reset and probes no more until the container ID changes; no other result puts it on hold, and a " +
				"new container ID ends the hold.",
			Sources: []cite.Source{doProbe, cite.Issue(117153)},
			Kind:    verify.Fidelity,
		},
		{
			ID:        NewContainer,
			Subsystem: subsystem,
			Statement: "The first step that sees a new container ID removes the old ID's result and publishes the type's " +
				"initial value (readiness Failure, liveness Success, startup Unknown), except for a container " +
				"running since before the kubelet's start less 10 s, which gets no initial value (v1.36).",
			Sources: []cite.Source{doProbe, cite.Code(worker, "newWorker"), cite.Issue(100277)},
			Kind:    verify.Fidelity,
		},
		{
			ID:        Terminated,
			Subsystem: subsystem,
			Statement: "A step that finds the pod Succeeded or Failed ends the worker without publishing; " +
				"StopLivenessAndStartup, RemovePod and CleanupPods end exactly the workers they name that exist " +
				"(StopLivenessAndStartup: liveness and startup of the containers, not readiness).",
			Sources: []cite.Source{
				doProbe,
				cite.Code(manager, "manager.StopLivenessAndStartup"),
				cite.Code(manager, "manager.RemovePod"),
				cite.Code(manager, "manager.CleanupPods"),
			},
			Kind: verify.Fidelity,
		},
		{
			ID:        Deletion,
			Subsystem: subsystem,
			Statement: "Once the pod has a deletion timestamp, a liveness or startup worker that finds its container " +
				"running publishes Success (when the cache differs) and ends without probing; a readiness worker " +
				"goes on.",
			Sources: []cite.Source{doProbe},
			Kind:    verify.Fidelity,
		},
		{
			ID:        InitialDelay,
			Subsystem: subsystem,
			Statement: "No probe runs while the whole seconds (truncated) since the container's StartedAt are fewer than " +
				"InitialDelaySeconds, and a worker otherwise due to probe does once they are not, exactly at, one " +
				"ns before and after the boundary.",
			Sources: []cite.Source{doProbe, seed("Probe parameters")},
			Kind:    verify.Fidelity,
		},
		{
			ID:        Updates,
			Subsystem: subsystem,
			Statement: "Every update a worker publishes changes the results cache (a new entry or a different value), " +
				"and the cache equals the one rebuilt from the updates and the removals (a replaced container, an " +
				"exiting worker).",
			Sources: []cite.Source{cite.Code(results, "manager.Set"), cite.Code(results, "manager.setInternal")},
			Kind:    verify.Fidelity,
		},
		{
			ID:        Workers,
			Subsystem: subsystem,
			Statement: "The workers are exactly those AddPod created and nothing ended, at most one per (pod, container, " +
				"type); a kubelet restart starts with none.",
			Sources: []cite.Source{cite.Code(manager, "manager.AddPod"), cite.Code(manager, "manager.removeWorker")},
			Kind:    verify.Fidelity,
		},
		{
			ID:        AddPodEarly,
			Subsystem: subsystem,
			Statement: "Upstream v1.36's behaviour (v1.37 goes on past an existing worker, kubernetes PR #138930): " +
				"AddPod walks the containers in order, each probe in the order startup, readiness, liveness, and " +
				"stops at the first probe whose worker exists, so probes a pod update adds after it get no " +
				"worker; the report counts how many. No documented promise is broken: the API does not let an " +
				"update change a container's probes.",
			Sources: []cite.Source{
				cite.Code(manager, "manager.AddPod"),
				seed("Adding probes for a pod"),
				cite.Issue(138928),
				cite.PR(138930),
			},
			Kind: verify.Fidelity,
		},
		{
			ID:        Status,
			Subsystem: subsystem,
			Statement: "UpdatePodStatus sets Started from the startup result, else the status's own Started, else the " +
				"absence of a startup worker, and Ready from a cached readiness Success or the absence of a " +
				"readiness worker (then the kubelet-restart rule), never for a container that is not running or " +
				"not started.",
			Sources: []cite.Source{
				cite.Code(manager, "manager.UpdatePodStatus"),
				cite.Code(manager, "manager.isContainerStarted"),
			},
			Kind: verify.Fidelity,
		},
		{
			ID:        Trigger,
			Subsystem: subsystem,
			Statement: "UpdatePodStatus triggers the readiness worker of every started running container without a " +
				"cached Success; a worker waiting for its tick then runs at once, so readiness is not held back a " +
				"whole period.",
			Sources: []cite.Source{cite.Code(manager, "manager.UpdatePodStatus")},
			Kind:    verify.Fidelity,
		},
		{
			ID:        KubeletRestart,
			Subsystem: subsystem,
			Statement: "After a kubelet restart, a container running since before its start less 10 s keeps Started when " +
				"the status said so and no startup result is cached, and without a cached readiness result is " +
				"Ready exactly when it has no readiness probe or the API pod was Ready (v1.36).",
			Sources: []cite.Source{
				cite.Code(manager, "manager.setReadyStateOnKubeletRestart"),
				cite.Issue(100277),
				cite.PR(126883),
			},
			Kind: verify.Fidelity,
		},
		{
			ID:        Deterministic,
			Subsystem: subsystem,
			Statement: "A second manager fed the same calls returns the same steps, publications, events, worker states, " +
				"caches and statuses.",
			Sources: []cite.Source{cite.DeterminismContract},
			Kind:    verify.Fidelity,
		},
	}, contractInvariants()...)
}

// The prober's contract properties: what the Kubernetes documentation and
// KEP-4781 promise a user about probes, checked on the faithful core. A
// breach is a candidate bug in the kubelet (verify.Finding once upstream's
// own code is shown to break the promise too).
const (
	ContractStartupGate    = "PB-C-STARTUP-GATE"
	ContractDelayAfter     = "PB-C-DELAY-AFTER-STARTUP"
	ContractFailureRun     = "PB-C-FAILURE-THRESHOLD"
	ContractSuccessRun     = "PB-C-SUCCESS-THRESHOLD"
	ContractUnknownNoop    = "PB-C-UNKNOWN-NO-ACTION"
	ContractReadyOwnProbes = "PB-C-READY-OWN-PROBE"
)

// The documentation pages the prober's promises are read from.
const (
	probesTask  = "tasks/configure-pod-container/configure-liveness-readiness-startup-probes/"
	probesTitle = "Configure Liveness, Readiness and Startup Probes"
	lifecycle   = "concepts/workloads/pods/pod-lifecycle/"
	lifeTitle   = "Pod Lifecycle"
	kep4781     = "Fix inconsistent container ready state after kubelet restart"
)

// contractInvariants are declared beside the fidelity invariants of the
// prober suite.
func contractInvariants() []verify.Property {
	configure := cite.KubernetesDoc(probesTask, probesTitle, "Configure Probes")
	return []verify.Property{
		{ID: ContractStartupGate, Subsystem: subsystem, Kind: verify.Contract,
			Statement: "\"If such a probe is configured, liveness and readiness probes do not start until it succeeds\": " +
				"no liveness or readiness probe runs on a container instance that has a startup probe before that " +
				"instance's startup probe succeeded (pods being deleted or stopped, whose startup workers end, " +
				"and startup probes an update changed, which the API forbids, excepted).",
			Sources: []cite.Source{
				cite.KubernetesDoc(probesTask, probesTitle, ""),
				cite.KubernetesDoc(lifecycle, lifeTitle, "Types of probe"),
			}},
		{ID: ContractDelayAfter, Subsystem: subsystem, Kind: verify.Contract,
			Statement: "initialDelaySeconds: \"If a startup probe is defined, liveness and readiness probe delays do not " +
				"begin until the startup probe has succeeded\": a liveness or readiness probe whose " +
				"initialDelaySeconds is at least its periodSeconds runs on a container instance no sooner than " +
				"initialDelaySeconds after that instance's startup probe succeeded.",
			Sources: []cite.Source{configure, cite.Issue(119617)}},
		{ID: ContractFailureRun, Subsystem: subsystem, Kind: verify.Contract,
			Statement: "failureThreshold: \"After a probe fails failureThreshold times in a row, Kubernetes considers " +
				"that the overall check has failed\"; for liveness and startup \"if at least failureThreshold " +
				"probes have failed\" the container is restarted: a probe's result turns Failure for a running " +
				"container instance only once at least failureThreshold probes of that instance failed in a row " +
				"(probes that could not run, Unknown, neither count nor break the row).",
			Sources: []cite.Source{configure}},
		{ID: ContractSuccessRun, Subsystem: subsystem, Kind: verify.Contract,
			Statement: "successThreshold: \"Minimum consecutive successes for the probe to be considered successful " +
				"after having failed\": a probe's result turns Success for a container instance only once at " +
				"least successThreshold probes of that instance succeeded in a row (probes that could not run " +
				"neither count nor break the row).",
			Sources: []cite.Source{configure}},
		{ID: ContractUnknownNoop, Subsystem: subsystem, Kind: verify.Contract,
			Statement: "Unknown: \"The diagnostic failed (no action should be taken, and the kubelet will make further " +
				"checks)\": a probe that could not be run changes no result and the kubelet goes on probing the " +
				"container.",
			Sources: []cite.Source{cite.KubernetesDoc(lifecycle, lifeTitle, "Probe outcome")}},
		{ID: ContractReadyOwnProbes, Subsystem: subsystem, Kind: verify.Contract,
			Statement: "\"The default state of readiness before the initial delay is Failure\": a running container " +
				"instance with a readiness probe is reported Ready only once its own readiness probe succeeded, " +
				"or (KEP-4781) when that same instance was Ready before a kubelet restart; a container the " +
				"kubelet replaced is judged by its probes.",
			Sources: []cite.Source{
				cite.KubernetesDoc(lifecycle, lifeTitle, "Types of probe"),
				cite.KEPSection(4781, kep4781, "Changes in probe"),
			}},
	}
}
