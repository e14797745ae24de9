package plugincheck

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

// catalogue is the fixed order of Checks and of a Result's findings.
var catalogue = []CheckSpec{
	{RegVersion, "Register names API version v1beta1.",
		"api.proto RegisterRequest.version; spec/devicemanager.md §1.3", Contract},
	{RegResourceName, "Register names an extended resource: one '/', a DNS subdomain before it, a qualified name after it, outside kubernetes.io.",
		"api.proto RegisterRequest.resource_name; spec/devicemanager.md §1.3", Contract},
	{RegEndpoint, "Register's endpoint is the name of a socket directly in the device plugin directory, and the plugin accepts connections on it.",
		"api.proto RegisterRequest.endpoint (PATH = path.Join(DevicePluginPath, endpoint)); spec/devicemanager.md §1.3", Contract},
	{RegOptions, "GetDevicePluginOptions answers within the call bound with the options the plugin sent in Register.",
		"api.proto RegisterRequest.options, DevicePlugin.GetDevicePluginOptions; spec/devicemanager.md §1.3", Kubelet},
	{LawFirstSnapshot, "ListAndWatch sends its first device list within the call bound.",
		"api.proto DevicePlugin.ListAndWatch; spec/devicemanager.md §1.4", Kubelet},
	{LawIDs, "Every listed device ID is non-empty, at most 63 characters long and unique in its list.",
		"api.proto Device.ID (\"A unique ID ... Max length of this field is 63 characters\")", Contract},
	{LawHealth, "Every listed device's health is Healthy or Unhealthy.",
		"api.proto Device.health (\"see constants.go\"); spec/devicemanager.md §1.4", Kubelet},
	{LawTopology, "Every NUMA node of a device's topology has a non-negative ID, listed once.",
		"api.proto TopologyInfo, NUMANode; spec/devicemanager.md §1.4", Kubelet},
	{LawStableIDs, "A device keeps its ID: with nothing changing on the node, later lists (and the lists after a re-registration) carry the same IDs.",
		"api.proto Device.ID (\"used to identify devices during the communication\"); spec/devicemanager.md §1.10 (the checkpoint keys allocations by ID)", Advice},
	{LawStreamOpen, "The ListAndWatch stream stays open until the kubelet ends it.",
		"api.proto DevicePlugin.ListAndWatch; spec/devicemanager.md §1.5 (a stream's end is the plugin's disconnect)", Kubelet},
	{PrefAnswer, "When advertised, GetPreferredAllocation answers within the call bound, one container response per container request.",
		"api.proto DevicePlugin.GetPreferredAllocation, PreferredAllocationResponse", Contract},
	{PrefSize, "A preferred allocation holds exactly allocation_size IDs.",
		"api.proto PreferredAllocationRequest (\"calculate a preferred allocation of size 'allocation_size'\")", Contract},
	{PrefAvailable, "A preferred allocation holds only IDs from available_deviceIDs, each once.",
		"api.proto PreferredAllocationRequest (\"from them\")", Contract},
	{PrefMustInclude, "A preferred allocation holds every ID of must_include_deviceIDs.",
		"api.proto PreferredAllocationRequest (\"making sure to include the set of devices listed in 'must_include_deviceIDs'\")", Contract},
	{AllocAnswer, "Allocate of healthy devices answers within the call bound, one container response per container request.",
		"api.proto DevicePlugin.Allocate, AllocateResponse; spec/devicemanager.md §1.6", Contract},
	{AllocSpecs, "An Allocate answer is well formed: absolute device and mount paths, device permissions from r, w and m, environment names non-empty without '=', no container path twice with different host paths (a repeat with the same host path the kubelet skips).",
		"api.proto ContainerAllocateResponse, Mount, DeviceSpec; spec/devicemanager.md §1.9; upstream pkg/kubelet/cm/devicemanager/pod_devices.go (*podDevices).deviceRunContainerOptions", Kubelet},
	{AllocOrder, "An Allocate answer to several container requests answers them in order: a container response that names devices (in an environment value, a device spec's or a mount's path) names some of its own request's.",
		"api.proto AllocateRequest, AllocateResponse; the kubelet sends one container request per call (upstream pkg/kubelet/cm/devicemanager/endpoint.go (*endpointImpl).allocate) and reads the first response, so a wrong order is advice", Advice},
	{AllocUnknown, "Allocate of an unknown or unhealthy device answers with an error.",
		"api.proto AllocateResponse (\"Failure Handling\")", Advice},
	{AllocConcurrent, "Identical Allocates in flight together get identical answers.",
		"spec/devicemanager.md §1.6 (the kubelet may admit pods concurrently)", Advice},
	{PreStart, "When required, PreStartContainer of allocated devices answers without error within the call bound.",
		"api.proto DevicePlugin.PreStartContainer, DevicePluginOptions.pre_start_required; spec/devicemanager.md §1.9", Contract},
	{PluginAlive, "The plugin keeps answering after every kubelet call, failed or not.",
		"api.proto DevicePlugin; spec/devicemanager.md §1.5 (a plugin gone is a resource lost)", Kubelet},
	{RestartStreamDrop, "When the kubelet drops the ListAndWatch stream, the plugin keeps answering and a new stream sends a first list.",
		"spec/devicemanager.md §1.5, §1.11", Kubelet},
	{RestartReregister, "After kubelet.sock (and the plugin's socket) is removed and kubelet.sock served anew, the plugin registers the same resource again within the registration bound, as the kubelet accepts it (its endpoint and options may change), and answers on the endpoint it names.",
		"api.proto Registration; spec/devicemanager.md §1.3, §1.11; upstream pkg/kubelet/cm/devicemanager/plugin/v1beta1/server.go (server).Register, manager.go (*ManagerImpl).PluginConnected", Kubelet},
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
