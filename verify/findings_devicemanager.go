package verify

import "github.com/nodeproof/nodeproof/verify/cite"

// devicemanagerFindings are the known findings in the devicemanager subsystem.
var devicemanagerFindings = []Finding{
	{
		ID:        "DM-F1",
		Title:     "A replaced plugin instance's late ListAndWatch update overrides what the registered plugin reported",
		Subsystem: "devicemanager",
		Suite:     "devicemanager",
		Property:  "DM-C-ADVERTISED",
		Promise: "After a device plugin registers a resource and reports its devices, the node advertises what that plugin " +
			"reported: allocatable is the number of devices it reports healthy (\"how many devices can be used for scheduling " +
			"new pods\"), capacity the number it reports; one active plugin holds a resource name, the one that registered it " +
			"last. (v1.36.3 keeps reading a replaced instance's ListAndWatch stream and takes its late updates as the " +
			"resource's devices; plugins resend their list only when a device changes, so nothing repairs it.)",
		Sources: []cite.Source{
			cite.KubernetesDoc("concepts/extend-kubernetes/compute-storage-net/device-plugins/", "Device Plugins", "Device plugin registration"),
			cite.KubernetesDoc("concepts/extend-kubernetes/compute-storage-net/device-plugins/", "Device Plugins", "Device plugin and unhealthy devices"),
			cite.KEPSection(3573, "Device Manager Proposal", "API Specification"),
		},
		Steps: []string{
			"A device plugin registers vendor.io/nic on socket plugin-1.sock; its ListAndWatch stream opens.",
			"A second instance registers vendor.io/nic on socket plugin-2.sock: it is now the resource's plugin (the kubelet sends Allocate to it).",
			"The second instance reports one healthy device, d4: the node advertises capacity 1, allocatable 1.",
			"The first instance, replaced but with its stream still open, sends an empty device list.",
			"The node now advertises capacity 0, allocatable 0 for vendor.io/nic while its registered plugin is connected and reports one healthy device; a pod asking for it is rejected (\"no healthy devices present\").",
		},
		Seed:         1,
		Confirmation: "conformance: TestFindingDMReplacedPluginUpdate",
		RealKubelet:  "realkubelet/scenario: TestFindingDMReplacedPluginUpdateOnNode",
		// Related but not this: #121994 / PR #135437, the replaced
		// instance's late disconnect, fixed in v1.37; its late updates
		// still count.
		Tracker: nil,
		Releases: "still present in v1.37.2 (read: pkg/kubelet/cm/devicemanager/plugin/v1beta1/client.go client.Run, which hands every " +
			"response of any connected instance to ManagerImpl.PluginListAndWatchReceiver by resource name, and manager.go " +
			"ManagerImpl.genericDeviceUpdateCallback, which replaces the resource's devices; PR #135437's per-socket endpointStore " +
			"stops the late disconnect and keeps the replaced instance as a fallback promoted when the newest disconnects, " +
			"but still takes its updates while the newest is registered)",
	},
	{
		ID:        "DM-F2",
		Title:     "A pod that asks for 0 devices of a resource is rejected while the resource has no healthy device",
		Subsystem: "devicemanager",
		Suite:     "devicemanager",
		Property:  "DM-C-ADMITS",
		Promise: "A pod the scheduler places within what the node advertises as allocatable, less what its other running " +
			"pods request, is admitted: allocatable counts \"how many devices can be used for scheduling new pods\", and a pod " +
			"that asks for none of a resource needs nothing of it. (v1.36.3 runs its registration and health checks for every " +
			"resource in a container's limits before it looks at how many devices are needed, so a 0 limit is rejected while " +
			"the resource has no healthy device, with UnexpectedAdmissionError, for good.)",
		Sources: []cite.Source{
			cite.KubernetesDoc("concepts/extend-kubernetes/compute-storage-net/device-plugins/", "Device Plugins", "Device plugin and unhealthy devices"),
			cite.KubernetesDoc("concepts/extend-kubernetes/compute-storage-net/device-plugins/", "Device Plugins", "Device plugin registration"),
			cite.KEPSection(3573, "Device Manager Proposal", "End User story"),
		},
		Steps: []string{
			"A device plugin registers example.com/gpu and reports its devices (here none; with devices the case is the same).",
			"The plugin's ListAndWatch stream ends (the plugin stopped): the resource has no healthy device, allocatable 0.",
			"A pod arrives whose only container has the limit example.com/gpu: 0; it asks for no device, so it fits any node.",
			"It is rejected: \"Allocate failed due to no healthy devices present; cannot allocate unhealthy devices example.com/gpu, which is unexpected\"; the same pod without the 0 entry is admitted.",
		},
		Seed:         1,
		Confirmation: "conformance: TestFindingDMZeroRequestRejected",
		RealKubelet:  "realkubelet/scenario: TestFindingDMZeroRequestRejectedOnNode",
		Tracker:      []cite.Source{cite.Issue(128854), cite.PR(140791)},
		Releases: "still present in v1.37.2 (read: pkg/kubelet/cm/devicemanager/manager.go ManagerImpl.allocateContainerResources, " +
			"which passes a 0 limit on to devicesToAllocate, and ManagerImpl.devicesToAllocate, whose registration and health " +
			"checks come before the needed == 0 return); the open PR #140791 would skip 0 limits",
	},
}
