package plugincheck

import (
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// The check IDs: a Finding's Check is one of them.
const (
	RegVersion        = "PC-REG-VERSION"
	RegResourceName   = "PC-REG-RESOURCE-NAME"
	RegEndpoint       = "PC-REG-ENDPOINT"
	RegOptions        = "PC-REG-OPTIONS"
	LawFirstSnapshot  = "PC-LAW-FIRST-SNAPSHOT"
	LawIDs            = "PC-LAW-IDS"
	LawHealth         = "PC-LAW-HEALTH"
	LawTopology       = "PC-LAW-TOPOLOGY"
	LawStableIDs      = "PC-LAW-STABLE-IDS"
	LawStreamOpen     = "PC-LAW-STREAM-OPEN"
	PrefAnswer        = "PC-PREF-ANSWER"
	PrefSize          = "PC-PREF-SIZE"
	PrefAvailable     = "PC-PREF-AVAILABLE"
	PrefMustInclude   = "PC-PREF-MUST-INCLUDE"
	AllocAnswer       = "PC-ALLOC-ANSWER"
	AllocSpecs        = "PC-ALLOC-SPECS"
	AllocOrder        = "PC-ALLOC-ORDER"
	AllocUnknown      = "PC-ALLOC-UNKNOWN"
	AllocConcurrent   = "PC-ALLOC-CONCURRENT"
	PreStart          = "PC-PRESTART"
	PluginAlive       = "PC-PLUGIN-ALIVE"
	RestartStreamDrop = "PC-RESTART-STREAM-DROP"
	RestartReregister = "PC-RESTART-REREGISTER"
)

// The API definition, documentation page and kubelet files the checks
// cite.
const (
	deviceAPI         = "staging/src/k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/api.proto"
	devicePluginsPage = "concepts/extend-kubernetes/compute-storage-net/device-plugins/"
	dmManager         = "pkg/kubelet/cm/devicemanager/manager.go"
	dmServer          = "pkg/kubelet/cm/devicemanager/plugin/v1beta1/server.go"
	dmHandler         = "pkg/kubelet/cm/devicemanager/plugin/v1beta1/handler.go"
	dmEndpoint        = "pkg/kubelet/cm/devicemanager/endpoint.go"
	dmPodDevices      = "pkg/kubelet/cm/devicemanager/pod_devices.go"
)

// api cites element of the device plugin API's api.proto.
func api(element string) cite.Source { return cite.API(deviceAPI, element) }

// registrationDoc is the documentation's list of what a plugin sends when it
// registers: its socket's name, its API version and its resource name.
var registrationDoc = cite.KubernetesDoc(devicePluginsPage, "Device Plugins", "Device plugin registration")

// catalogue is the fixed order of Checks and of a Result's findings. A
// contract check cites the API (api.proto's comments, the documentation),
// never the kubelet's code; a kubelet check or advice cites the kubelet
// code that makes the rule matter.
var catalogue = []CheckSpec{
	rule(RegVersion, Contract, "Register names API version v1beta1.",
		api("RegisterRequest.version"), registrationDoc),
	rule(RegResourceName, Contract, "Register names an extended resource: one '/', a DNS subdomain before it, a qualified name after it, outside kubernetes.io.",
		api("RegisterRequest.resource_name"), registrationDoc),
	rule(RegEndpoint, Contract, "Register's endpoint is the name of a socket directly in the device plugin directory, and the plugin accepts connections on it.",
		api("RegisterRequest.endpoint").Noting("PATH = path.Join(DevicePluginPath, endpoint)"), registrationDoc),
	rule(RegOptions, Kubelet, "GetDevicePluginOptions answers within the call bound with the options the plugin sent in Register.",
		api("RegisterRequest.options"), api("DevicePlugin.GetDevicePluginOptions"), cite.Code(dmManager, "ManagerImpl.PluginConnected")),
	rule(LawFirstSnapshot, Kubelet, "ListAndWatch sends its first device list within the call bound.",
		api("DevicePlugin.ListAndWatch"), cite.Code(dmManager, "ManagerImpl.genericDeviceUpdateCallback")),
	rule(LawIDs, Contract, "Every listed device ID is non-empty, at most 63 characters long and unique in its list.",
		api("Device.ID").Noting(`"A unique ID ... Max length of this field is 63 characters"`)),
	rule(LawHealth, Kubelet, "Every listed device's health is Healthy or Unhealthy.",
		api("Device.health").Noting(`"see constants.go"`), cite.Code(dmManager, "ManagerImpl.genericDeviceUpdateCallback")),
	rule(LawTopology, Kubelet, "Every NUMA node of a device's topology has a non-negative ID, listed once.",
		api("TopologyInfo"), api("NUMANode"), cite.Code(dmManager, "ManagerImpl.genericDeviceUpdateCallback")),
	rule(LawStableIDs, Advice, "A device keeps its ID: with nothing changing on the node, later lists (and the lists after a re-registration) carry the same IDs.",
		api("Device.ID").Noting(`"used to identify devices during the communication"`),
		cite.Code(dmManager, "ManagerImpl.writeCheckpoint").Noting("the checkpoint keys allocations by ID")),
	rule(LawStreamOpen, Kubelet, "The ListAndWatch stream stays open until the kubelet ends it.",
		api("DevicePlugin.ListAndWatch"), cite.Code(dmHandler, "server.runClient").Noting("a stream's end is the plugin's disconnect"),
		cite.Code(dmManager, "ManagerImpl.PluginDisconnected")),
	rule(PrefAnswer, Contract, "When advertised, GetPreferredAllocation answers within the call bound, one container response per container request.",
		api("DevicePlugin.GetPreferredAllocation"), api("PreferredAllocationResponse")),
	rule(PrefSize, Contract, "A preferred allocation holds exactly allocation_size IDs.",
		api("PreferredAllocationRequest").Noting(`"calculate a preferred allocation of size 'allocation_size'"`)),
	rule(PrefAvailable, Contract, "A preferred allocation holds only IDs from available_deviceIDs, each once.",
		api("PreferredAllocationRequest").Noting(`"from them"`)),
	rule(PrefMustInclude, Contract, "A preferred allocation holds every ID of must_include_deviceIDs.",
		api("PreferredAllocationRequest").Noting(`"making sure to include the set of devices listed in 'must_include_deviceIDs'"`)),
	rule(AllocAnswer, Contract, "Allocate of healthy devices answers within the call bound, one container response per container request.",
		api("DevicePlugin.Allocate"), api("AllocateResponse")),
	rule(AllocSpecs, Kubelet, "An Allocate answer is well formed: absolute device and mount paths, device permissions from r, w and m, environment names non-empty without '=', no container path twice with different host paths (a repeat with the same host path the kubelet skips).",
		api("ContainerAllocateResponse"), api("Mount"), api("DeviceSpec"), cite.Code(dmPodDevices, "podDevices.deviceRunContainerOptions")),
	rule(AllocOrder, Advice, "An Allocate answer to several container requests answers them in order: a container response that names devices (in an environment value, a device spec's or a mount's path) names some of its own request's.",
		api("AllocateRequest"), api("AllocateResponse"),
		cite.Code(dmEndpoint, "endpointImpl.allocate").Noting("the kubelet sends one container request per call and reads the first response, so a wrong order is advice")),
	rule(AllocUnknown, Advice, "Allocate of an unknown or unhealthy device answers with an error.",
		api("AllocateResponse").Noting(`"Failure Handling"`)),
	rule(AllocConcurrent, Advice, "Identical Allocates in flight together get identical answers.",
		cite.Code(dmManager, "ManagerImpl.Allocate").Noting("the kubelet may admit pods concurrently")),
	rule(PreStart, Contract, "When required, PreStartContainer of allocated devices answers without error within the call bound.",
		api("DevicePlugin.PreStartContainer"), api("DevicePluginOptions.pre_start_required")),
	rule(PluginAlive, Kubelet, "The plugin keeps answering after every kubelet call, failed or not.",
		api("DevicePlugin"), cite.Code(dmManager, "ManagerImpl.PluginDisconnected").Noting("a plugin gone is a resource lost")),
	rule(RestartStreamDrop, Kubelet, "When the kubelet drops the ListAndWatch stream, the plugin keeps answering and a new stream sends a first list.",
		cite.Code(dmHandler, "server.runClient"), cite.Code(dmServer, "server.Start")),
	rule(RestartReregister, Kubelet, "After kubelet.sock (and the plugin's socket) is removed and kubelet.sock served anew, the plugin registers the same resource again within the registration bound, as the kubelet accepts it (its endpoint and options may change), and answers on the endpoint it names.",
		api("Registration"), cite.Code(dmServer, "server.Start").Noting("it removes every socket in the plugin directory"),
		cite.Code(dmServer, "server.Register"), cite.Code(dmManager, "ManagerImpl.PluginConnected")),
}

// rule is one entry of the catalogue; its kind follows from its severity
// (CheckSpec).
func rule(id string, severity Severity, statement string, sources ...cite.Source) CheckSpec {
	kind := verify.Fidelity
	if severity == Contract {
		kind = verify.Contract
	}
	return CheckSpec{
		Property: verify.Property{ID: id, Kind: kind, Subsystem: subsystem, Statement: statement, Sources: sources},
		Severity: severity,
	}
}

// Checks returns the catalogue in a fixed order.
func Checks() []CheckSpec {
	return append([]CheckSpec(nil), catalogue...)
}

func severityOf(id string) Severity {
	for _, c := range catalogue {
		if c.ID == id {
			return c.Severity
		}
	}
	panic("plugincheck: unknown check " + id)
}
