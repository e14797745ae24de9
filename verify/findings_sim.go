package verify

import "github.com/nodeproof/nodeproof/properties/cite"

// simFindings are the known findings in the sim subsystem: promises of the
// whole node, across subsystems, that the v1.36.3 kubelet breaks.
var simFindings = []Finding{
	{
		ID:        "SIM-F1",
		Title:     "a kubelet restart takes Ready from a pod whose containers started less than 10 s before it",
		Subsystem: "sim",
		Suite:     "sim",
		Property:  "SIM-C-RESTART-READY",
		Promise: "By default the kubelet does not change container statuses after a restart: containers that were ready: true " +
			"remain ready, and the kubelet preserves the readiness of running containers across a restart. A pod that was Ready " +
			"when the kubelet restarted, and whose containers kept running, stays Ready until a readiness probe gives a new result.",
		Sources: []cite.Source{
			cite.KubernetesDoc("concepts/workloads/pods/pod-lifecycle/", "Pod Lifecycle", "Detection of kubelet restarts"),
			cite.KubernetesDoc("reference/node/what-happens-on-restart/", "What Happens After A Node Restart", "Impact of a kubelet restart"),
			cite.KEP(4781, "Fix inconsistent container ready state after kubelet restart"),
		},
		Steps: []string{
			"A pod whose two containers have readiness probes is admitted and both containers start (at 0 s).",
			"Each container's readiness probe succeeds; the status sync makes both containers ready and the pod Ready (its API Ready condition is True).",
			"The kubelet restarts less than 10 s after the containers started (in the shrunk case, at the same instant).",
			"The new kubelet's first status sync: its prober manager has no readiness result yet and keeps the previous readiness only of containers that started more than 10 s before the kubelet did, so it reports both containers not ready and the pod loses Ready.",
			"The pod stays NotReady until the new readiness workers' first probes, up to a probe period later (their start-up jitter).",
		},
		Seed:         1,
		Confirmation: "conformance: TestFindingSIMRestartReady",
		Releases: "still present in v1.37.2 (read: pkg/kubelet/prober/prober_manager.go manager.setReadyStateOnKubeletRestart and " +
			"kubeletRestartGracePeriod, 10 s before the manager's start; worker.go worker.doProbe)",
	},
}
