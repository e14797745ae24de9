package verify

import "github.com/nodeproof/nodeproof/verify/cite"

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
		RealKubelet:  readinessFromAPIServer,
		Releases: "still present in v1.37.2 (read: pkg/kubelet/prober/prober_manager.go manager.setReadyStateOnKubeletRestart and " +
			"kubeletRestartGracePeriod, 10 s before the manager's start; worker.go worker.doProbe)",
	},
	{
		ID:        "SIM-F2",
		Title:     "a kubelet restart rejects a running pod whose device container has not started yet, and kills its running containers",
		Subsystem: "sim",
		Suite:     "sim",
		Property:  "SIM-C-RESTART-RUNS",
		Promise: "If only the kubelet restarts, the containers that are already running continue to run; Pods and their " +
			"containers continue to run during a kubelet restart. The restarted kubelet neither stops nor rejects a pod it " +
			"finds running (the documentation names node labels and taints changed while the kubelet was down as the one " +
			"reason a running pod may fail the admission the restart runs again).",
		Sources: []cite.Source{
			cite.KubernetesDoc("reference/node/what-happens-on-restart/", "What Happens After A Node Restart", "Impact of a kubelet restart"),
			cite.KubernetesDoc("concepts/workloads/pods/pod-lifecycle/", "Pod Lifecycle", ""),
		},
		Steps: []string{
			"The device plugin of example.com/fpga registers; a pod arrives whose container c0 requests an FPGA and whose container c1 requests none.",
			"The pod is admitted: c0 is allocated the FPGA (the checkpoint records it); c1's image is on the node and c1 starts; c0's image is being pulled.",
			"The kubelet restarts while c0's image is still being pulled: c1 runs, c0 has no container yet.",
			"The restarted kubelet restores the device manager from the checkpoint (the FPGA resource registered, with no healthy device until its plugin registers again) and admits the API server's pods again before its pod sources are ready.",
			"c1 runs, so it passes; c0 is not running, so the kubelet-restart rule for running containers does not apply, and the health checks that come before 'nothing more is needed' fail: 'no healthy devices present; cannot allocate unhealthy devices example.com/fpga'.",
			"The pod is rejected with UnexpectedAdmissionError ('Allocate failed due to no healthy devices present; cannot allocate unhealthy devices example.com/fpga, which is unexpected') and its running container c1 is killed, before the plugin registers again.",
		},
		Seed:         1,
		Confirmation: "conformance: TestFindingSIMRestartRejectsRunning",
		RealKubelet:  "realkubelet/scenario: TestFindingSIMRestartRejectsRunning",
		Tracker:      []cite.Source{cite.Issue(133382), cite.Issue(138446)},
		Releases: "still present in v1.37.2 (read: pkg/kubelet/cm/devicemanager/manager.go ManagerImpl.devicesToAllocate, " +
			"the health checks before needed == 0 and the running-container exception only while the sources are not ready; " +
			"pkg/kubelet/kubelet.go Kubelet.HandlePodAdditions, which admits every non-terminal pod again)",
	},
}
