package verify

import "github.com/nodeproof/nodeproof/verify/cite"

// The documentation the prober's findings cite.
var (
	pbConfigureProbes = cite.KubernetesDoc("tasks/configure-pod-container/configure-liveness-readiness-startup-probes/",
		"Configure Liveness, Readiness and Startup Probes", "Configure Probes")
	pbTypesOfProbe = cite.KubernetesDoc("concepts/workloads/pods/pod-lifecycle/", "Pod Lifecycle", "Types of probe")
)

// pbRunNotReset is where PB-F2 and PB-F3 come from: the worker's run of
// equal results is reset when it holds, not when the container changes.
const pbRunNotReset = "The kubelet's probe worker keeps its count of equal results in a row when the container it probes is replaced; only a published liveness Failure or startup result (a hold) resets it."

// proberFindings are the known findings in the prober subsystem.
var proberFindings = []Finding{
	{
		ID:        "PB-F1",
		Title:     "liveness and readiness delays start at the container's start, not when the startup probe succeeds",
		Subsystem: "prober", Suite: "prober", Property: "PB-C-DELAY-AFTER-STARTUP",
		Promise: "initialDelaySeconds: \"If a startup probe is defined, liveness and readiness probe delays do not begin until the startup probe has succeeded.\" The kubelet counts a liveness or readiness probe's initialDelaySeconds from the container's start, so a container whose startup probe took longer than that delay is probed at once after it.",
		Sources: []cite.Source{pbConfigureProbes},
		Steps: []string{
			"A pod's container has a startup probe (periodSeconds 1, failureThreshold 10) and a liveness probe with initialDelaySeconds 5 (periodSeconds 1); the container starts at 1 s.",
			"The startup probe fails at 2, 3 and 4 s and succeeds at 5 s; the kubelet's sync marks the container Started.",
			"The liveness probe runs at 6 s, 1 s after the startup probe succeeded: initialDelaySeconds was counted from the container's start (1 s), not from the startup success (5 s), which would put the first liveness probe at 10 s.",
		},
		Seed:         5,
		Confirmation: "conformance: TestFindingPBDelayAfterStartup",
		RealKubelet:  "realkubelet/scenario: TestFindingPBDelayAfterStartupOnNode",
		Tracker: []cite.Source{
			cite.Issue(119617).Noting("the documentation's promise is not in the code; closed as stale without a fix"),
			cite.PR(119666).Noting("a fix, closed without merging"),
		},
		Releases: "still present in v1.37.2 (read: pkg/kubelet/prober/worker.go worker.doProbe, whose initial-delay check measures time since the container's StartedAt)",
	},
	{
		ID:        "PB-F2",
		Title:     "a replacement container is killed after fewer than failureThreshold failed liveness probes",
		Subsystem: "prober", Suite: "prober", Property: "PB-C-FAILURE-THRESHOLD",
		Promise: "failureThreshold: \"After a probe fails failureThreshold times in a row, Kubernetes considers that the overall check has failed [...] For the case of a startup or liveness probe, if at least failureThreshold probes have failed, Kubernetes treats the container as unhealthy and triggers a restart for that specific container.\" " + pbRunNotReset + " A container that failed some liveness probes and then crashed passes the rest of the count to its replacement, which is killed after fewer failures of its own; with a startup probe, a container that crashed while starting leaves its replacement less than failureThreshold × periodSeconds to start.",
		Sources: []cite.Source{pbConfigureProbes},
		Steps: []string{
			"A pod's container c0 has a liveness probe with failureThreshold 3 (periodSeconds 1) and no startup probe; the first container c0.1 starts at 1 s.",
			"Its liveness probe fails at 2 s and 3 s (two of three).",
			"At 3.5 s c0.1 crashes and the kubelet starts the replacement c0.2.",
			"The liveness probe of c0.2 fails once at 4 s, and its liveness result turns Failure: the kubelet kills c0.2 after one failed probe of its own.",
		},
		Seed:         10,
		Confirmation: "conformance: TestFindingPBFailureRunCarriedOver",
		RealKubelet:  "realkubelet/scenario: TestFindingPBFailureRunCarriedOverOnNode",
		Tracker: []cite.Source{
			cite.Issue(53530).Noting("the count carried over after a restart the threshold caused; PR #46371 resets it then, not when a container is replaced below the threshold"),
			cite.PR(48120).Noting("a reset on a new container, closed without merging in 2017"),
		},
		Releases: "still present in v1.37.2 (read: pkg/kubelet/prober/worker.go worker.doProbe, which resets resultRun only when it puts the worker on hold)",
	},
	{
		ID:        "PB-F3",
		Title:     "a replacement container is Ready after fewer than successThreshold successful readiness probes",
		Subsystem: "prober", Suite: "prober", Property: "PB-C-SUCCESS-THRESHOLD",
		Promise: "successThreshold: \"Minimum consecutive successes for the probe to be considered successful after having failed.\" " + pbRunNotReset + " A container that passed some readiness probes and then crashed passes the count to its replacement, whose readiness starts as Failure and turns Success after fewer successes of its own (the same root cause as PB-F2).",
		Sources: []cite.Source{pbConfigureProbes, pbTypesOfProbe},
		Steps: []string{
			"A pod's container c0 has a readiness probe with successThreshold 3 (periodSeconds 1); the first container c0.1 starts at 1 s.",
			"Its readiness probe succeeds at 1 s (the sync's trigger) and 2 s (two of three: not Ready).",
			"At 2.5 s c0.1 crashes and the kubelet starts the replacement c0.2; the sync triggers c0.2's readiness probe.",
			"That probe succeeds once at 2.5 s and c0.2's readiness turns Success: the next sync reports it Ready after one successful probe of its own.",
		},
		Seed:         8,
		Confirmation: "conformance: TestFindingPBSuccessRunCarriedOver",
		RealKubelet:  "realkubelet/scenario: TestFindingPBSuccessRunCarriedOverOnNode",
		Tracker: []cite.Source{
			cite.PR(48120).Noting("a reset on a new container, closed without merging in 2017"),
		},
		Releases: "still present in v1.37.2 (read: pkg/kubelet/prober/worker.go worker.doProbe, which resets resultRun only when it puts the worker on hold)",
	},
	{
		ID:        "PB-F4",
		Title:     "after a kubelet restart a replaced container is Ready before its readiness probe ran",
		Subsystem: "prober", Suite: "prober", Property: "PB-C-READY-OWN-PROBE",
		Promise: "\"The default state of readiness before the initial delay is Failure\", and KEP-4781 keeps a container's Ready state across a kubelet restart while one that crashed is \"determined based on the probe\". The kubelet treats every container running since more than 10 s before its own start as one that outlived it and, lacking a readiness result, takes the API pod's Ready condition: when the kubelet went down right after replacing a container, that condition is the old container's, and the replacement is reported Ready without a readiness probe of its own, and stays so while its probes fail below failureThreshold.",
		Sources: []cite.Source{pbTypesOfProbe, cite.KEPSection(4781, "Fix inconsistent container ready state after kubelet restart", "Changes in probe")},
		Steps: []string{
			"A pod's container c0 has a readiness probe (periodSeconds 1, failureThreshold 3); c0.1 is Ready and so is the pod in the API.",
			"At 3.5 s c0.1 crashes, the kubelet starts the replacement c0.2 and goes down before its next status update.",
			"The kubelet comes back 30 s later; its first sync reports c0.2 Ready before any readiness probe of c0.2 ran, and a sync after its first two probes, which failed, still does.",
		},
		Seed:         6,
		Confirmation: "conformance: TestFindingPBReplacedContainerReady",
		RealKubelet:  readinessFromAPIServer,
		Tracker: []cite.Source{
			cite.Issue(141473),
			cite.PR(141487).Noting("merged on the development branch"),
		},
		Releases: "still present in v1.37.2 (read: pkg/kubelet/prober/worker.go worker.doProbe and prober_manager.go manager.setReadyStateOnKubeletRestart, which decide a restart from the start time alone); fixed on the development branch by kubernetes PR #141487",
	},
}
