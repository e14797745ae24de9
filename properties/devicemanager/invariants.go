package devicemanager

import (
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// Device manager invariant IDs.
const (
	Model           = "DM-MODEL"
	Exclusive       = "DM-EXCLUSIVE"
	AllocatedCache  = "DM-ALLOCATED-CACHE"
	AllocLECapacity = "DM-ALLOCATABLE-LE-CAPACITY"
	AllocHealthy    = "DM-ALLOCATABLE-HEALTHY"
	GraceDelete     = "DM-GRACE-DELETE"
	CheckpointTrip  = "DM-CHECKPOINT-ROUNDTRIP"
	RestoreKeeps    = "DM-RESTORE-KEEPS"
	Deterministic   = "DM-DETERMINISTIC"
	ErrorKinds      = "DM-ERROR-KINDS"
	RunOptions      = "DM-RUN-OPTIONS"

	// Contract properties: what the Kubernetes documentation and KEPs
	// promise users of device plugins, checked against the same generated
	// cases (see contract.go).
	ContractAdvertised = "DM-C-ADVERTISED"
	ContractNotShared  = "DM-C-NOT-SHARED"
	ContractEffective  = "DM-C-EFFECTIVE"
	ContractAdmits     = "DM-C-ADMITS"
)

// Where the device manager invariants come from: the v1.36.3 device manager
// files (pkg/kubelet/cm/devicemanager) and the seed article that walks
// through it.
const (
	manager        = "pkg/kubelet/cm/devicemanager/manager.go"
	podDevices     = "pkg/kubelet/cm/devicemanager/pod_devices.go"
	endpoint       = "pkg/kubelet/cm/devicemanager/endpoint.go"
	typesFile      = "pkg/kubelet/cm/devicemanager/types.go"
	checkpointFile = "pkg/kubelet/cm/devicemanager/checkpoint/checkpoint.go"
	server         = "pkg/kubelet/cm/devicemanager/plugin/v1beta1/server.go"
	api            = "pkg/kubelet/cm/devicemanager/plugin/v1beta1/api.go"

	seedAllocate = "Calling the device plugin's Allocate interface"
	seedCapacity = "Maintaining the capacity of device plugin resources in the node status"
	seedPreStart = "Calling the device plugin's PreStartContainer interface"
)

func seed(section string) cite.Source {
	return cite.Seed("the kubelet's device manager (its creation, plugin registration, Allocate and capacity)", section)
}

// invariants are the statements the suite checks after every step, the
// contract properties (contract.go) last.
var invariants = []verify.Property{
	{
		ID:        Model,
		Subsystem: "devicemanager",
		Statement: "The core and the reference model agree on every allocation, every error kind and message, " +
			"capacity, allocatable and the deleted resources.",
		Sources: []cite.Source{
			cite.Code(server, "server.Register"),
			cite.Code(manager, "ManagerImpl.genericDeviceUpdateCallback"),
			cite.Code(manager, "ManagerImpl.GetCapacity"),
			cite.Code(manager, "ManagerImpl.Allocate"),
			cite.Code(manager, "ManagerImpl.devicesToAllocate"),
			cite.Code(manager, "ManagerImpl.UpdateAllocatedDevices"),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        Exclusive,
		Subsystem: "devicemanager",
		Statement: "No device is held by two containers, except that a later container of the same pod may reuse a " +
			"regular init container's device (never a sidecar's or an app container's).",
		Sources: []cite.Source{
			seed(seedAllocate),
			cite.Code(manager, "ManagerImpl.Allocate"),
			cite.Issue(56022),
			cite.PR(120461),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        AllocatedCache,
		Subsystem: "devicemanager",
		Statement: "Between admissions the allocated-device cache is exactly the union of the devices containers hold.",
		Sources: []cite.Source{
			cite.Code(manager, "ManagerImpl.UpdateAllocatedDevices"),
			cite.Code(podDevices, "podDevices.devices"),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        AllocLECapacity,
		Subsystem: "devicemanager",
		Statement: "For every resource, allocatable is at most capacity, and every allocatable resource has a " +
			"capacity.",
		Sources: []cite.Source{seed(seedCapacity), cite.Code(manager, "ManagerImpl.GetCapacity")},
		Kind:    verify.Fidelity,
	},
	{
		ID:        AllocHealthy,
		Subsystem: "devicemanager",
		Statement: "Allocatable equals the healthy devices of the resource's last snapshot while its plugin is " +
			"connected, and 0 once it disconnected or the kubelet restarted; the last snapshot is upstream's, " +
			"whichever plugin instance sent it, a superseded one's included (what that breaks: " +
			"DM-C-ADVERTISED).",
		Sources: []cite.Source{
			seed(seedCapacity),
			cite.Code(manager, "ManagerImpl.PluginDisconnected"),
			cite.Code(manager, "ManagerImpl.readCheckpoint"),
			cite.Issue(62773),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        GraceDelete,
		Subsystem: "devicemanager",
		Statement: "A resource is deleted exactly when its plugin has been gone for strictly more than 5 minutes, or " +
			"its state has no endpoint.",
		Sources: []cite.Source{
			cite.Code(manager, "ManagerImpl.GetCapacity"),
			cite.Code(endpoint, "endpointImpl.stopGracePeriodExpired"),
			cite.Issue(133702),
			cite.PR(133724),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        CheckpointTrip,
		Subsystem: "devicemanager",
		Statement: "Every checkpoint the manager writes decodes, with a valid checksum, to the same registered " +
			"resources and every allocation.",
		Sources: []cite.Source{
			cite.Code(checkpointFile, "Data.MarshalCheckpoint"),
			cite.Code(checkpointFile, "Data.VerifyChecksum"),
			cite.Code(manager, "ManagerImpl.writeCheckpoint"),
			cite.Issue(102880),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        RestoreKeeps,
		Subsystem: "devicemanager",
		Statement: "After a kubelet restart every restored allocation stays with its container until the pod is " +
			"garbage-collected (in the model), so no restored device is handed out twice.",
		Sources: []cite.Source{
			cite.Code(manager, "ManagerImpl.readCheckpoint"),
			cite.Code(manager, "ManagerImpl.devicesToAllocate"),
			cite.Issue(109595),
			cite.Issue(118559),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        Deterministic,
		Subsystem: "devicemanager",
		Statement: "A second manager fed the same inputs gives the same outputs and the same checkpoint bytes at " +
			"every step.",
		Sources: []cite.Source{cite.DeterminismContract},
		Kind:    verify.Fidelity,
	},
	{
		ID:        ErrorKinds,
		Subsystem: "devicemanager",
		Statement: "Every error the core returns is a documented kind, with upstream's message where the model states " +
			"it.",
		Sources: []cite.Source{
			cite.Code(api, "errUnsupportedVersion, errInvalidResourceName"),
			cite.Code(typesFile, "errEndpointStopped"),
			cite.Code(manager, "ManagerImpl.devicesToAllocate"),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        RunOptions,
		Subsystem: "devicemanager",
		Statement: "Every container holding devices gets run options merged from its plugins' Allocate answers, first " +
			"resource in name order winning, also after a restart.",
		Sources: []cite.Source{
			cite.Code(manager, "ManagerImpl.GetDeviceRunContainerOptions"),
			cite.Code(podDevices, "podDevices.deviceRunContainerOptions"),
			seed(seedPreStart),
		},
		Kind: verify.Fidelity,
	},
	contractAdvertised,
	contractNotShared,
	contractEffective,
	contractAdmits,
}
