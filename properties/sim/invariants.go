package sim

import (
	"github.com/nodeproof/nodeproof/properties"
	simulation "github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// sources are where each of the simulation's invariants comes from, by
// ID. An invariant of sim.Invariants missing here has no sources, which
// TestInvariantSources reports.
var sources = map[string][]cite.Source{
	simulation.InvDevicesHeld: {
		cite.Code(deviceManager, "ManagerImpl.Allocate"),
		cite.Code(deviceManager, "ManagerImpl.UpdateAllocatedDevices"),
		cite.Code(deviceManager, "ManagerImpl.readCheckpoint"),
		cite.Code(deviceManager, "ManagerImpl.PluginDisconnected"),
		cite.Code(deviceManager, "ManagerImpl.GetDeviceRunContainerOptions"),
		simulationDoc,
	},
	simulation.InvCgroups: {
		cite.Code(qosManager, "qosContainerManagerImpl.UpdateCgroups"),
		cite.Code(podContainerManager, "podContainerManagerImpl.GetPodContainerName"),
		cite.Seed("pod and QoS cgroups", "How CPU requests are implemented"),
		simulationDoc,
	},
	simulation.InvAllocatable: {
		cite.Code(predicate, "predicateAdmitHandler.Admit"),
		cite.Code(preemption, "CriticalPodAdmissionHandler.HandleAdmissionFailure"),
		cite.Issue(78405),
		simulationDoc,
	},
	simulation.InvGCInUse: {
		cite.Code(imageGCManager, "realImageGCManager.freeSpace"),
		cite.Code(imageGCManager, "realImageGCManager.detectImages"),
		cite.Issue(123631),
		simulationDoc,
	},
	// SIM-LIVENESS states the probes' documented promise, which upstream
	// breaks for a replacement container (PB-F2); the simulation has not
	// reached that case, and a breach would be the cross-subsystem face of
	// PB-F2, to register as a finding of its own.
	simulation.InvLiveness: {
		cite.KubernetesDoc(probesTask, probesTitle, "Configure Probes"),
		cite.KubernetesDoc(probesTask, probesTitle, ""),
		cite.Issue(117153),
		simulationDoc,
	},
	simulation.InvPreemptedReleased: {
		cite.Code(preemption, "CriticalPodAdmissionHandler.evictPodsToFreeRequests"),
		cite.Code(deviceManager, "ManagerImpl.UpdateAllocatedDevices"),
		cite.Code(proberManager, "manager.RemovePod"),
		simulationDoc,
	},
	simulation.InvRestartKeeps: {
		cite.Code(deviceManager, "ManagerImpl.readCheckpoint"),
		cite.Code(proberManager, "manager.setReadyStateOnKubeletRestart"),
		cite.PR(126883),
		simulationDoc,
	},
	simulation.InvCoresAccept: {
		cite.BadInput,
		simulationDoc,
	},

	// The contract invariants cite the promise, never upstream's code.
	simulation.InvCAllocatable: {
		cite.KubernetesDoc(devicePluginsPage, "Device Plugins", "Device plugin registration"),
	},
	simulation.InvCRestartReady: {
		cite.KubernetesDoc(
			"concepts/workloads/pods/pod-lifecycle/",
			"Pod Lifecycle",
			"Detection of kubelet restarts",
		),
		cite.KubernetesDoc(
			"reference/node/what-happens-on-restart/",
			"What Happens After A Node Restart",
			"Impact of a kubelet restart",
		),
		cite.KEP(4781, "Fix inconsistent container ready state after kubelet restart"),
	},
	simulation.InvCRestartRuns: {
		cite.KubernetesDoc(
			"reference/node/what-happens-on-restart/",
			"What Happens After A Node Restart",
			"Impact of a kubelet restart",
		),
		cite.KubernetesDoc("concepts/workloads/pods/pod-lifecycle/", "Pod Lifecycle", ""),
	},
}

// devicePluginsPage is the Kubernetes documentation's page on device
// plugins.
const devicePluginsPage = "concepts/extend-kubernetes/compute-storage-net/device-plugins/"

// simulationDoc is the simulation's own page.
var simulationDoc = cite.Doc("docs/commands/sim.md", "")

// The upstream files and the documentation page the simulation's
// invariants cite.
const (
	predicate           = "pkg/kubelet/lifecycle/predicate.go"
	preemption          = "pkg/kubelet/preemption/preemption.go"
	deviceManager       = "pkg/kubelet/cm/devicemanager/manager.go"
	qosManager          = "pkg/kubelet/cm/qos_container_manager_linux.go"
	podContainerManager = "pkg/kubelet/cm/pod_container_manager_linux.go"
	proberManager       = "pkg/kubelet/prober/prober_manager.go"
	imageGCManager      = "pkg/kubelet/images/image_gc_manager.go"
	probesTask          = "tasks/configure-pod-container/configure-liveness-readiness-startup-probes/"
	probesTitle         = "Configure Liveness, Readiness and Startup Probes"
)

// contracts are the simulation's contract invariants, by ID: their
// violations go through Tally.Breach.
var contracts = map[string]bool{}

func init() {
	var invariants []verify.Property
	for _, inv := range simulation.Invariants() {
		kind := verify.Fidelity
		if inv.Contract {
			kind = verify.Contract
			contracts[inv.ID] = true
		}
		invariants = append(invariants, verify.Property{
			ID:        inv.ID,
			Kind:      kind,
			Subsystem: subsystem,
			Statement: inv.Statement,
			Sources:   sources[inv.ID],
		})
	}
	properties.Register(properties.Suite{
		Name:       "sim",
		Subsystem:  subsystem,
		Invariants: invariants,
		Property:   property,
	})
}
