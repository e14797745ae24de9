package verify

import "github.com/nodeproof/nodeproof/properties/cite"

// devicemanagerFindings are the known findings in the devicemanager subsystem.
var devicemanagerFindings = []Finding{
	{
		ID:        "DM-F1",
		Title:     "A replaced plugin instance's late ListAndWatch update overrides what the registered plugin reported",
		Subsystem: "devicemanager",
		Suite:     "devicemanager",
		Property:  "DM-C-ADVERTISED",
		Promise: "After a device plugin registers a resource and reports its devices, the node advertises what that plugin " +
			"reported: allocatable is the number of devices it reports healthy, capacity the number it reports. When a second " +
			"instance registers the same resource (a plugin upgrade, a restarted plugin whose old process is still shutting " +
			"down), the kubelet makes the new instance the resource's plugin, but keeps taking the old instance's ListAndWatch " +
			"stream: an update the old instance still sends replaces the resource's devices, and the node advertises the old " +
			"instance's view (allocatable 0 when it reports its devices gone or unhealthy) while the registered plugin is " +
			"connected and reports healthy devices. Plugins send a new list only when a device changes, so nothing repairs it.",
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
}
