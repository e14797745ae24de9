package devicemanager

import (
	"fmt"
	"strings"
	"time"
)

// Constants of the device plugin API v1beta1 and of the manager.
const (
	Healthy   = "Healthy"
	Unhealthy = "Unhealthy"
	Version   = "v1beta1"
	// KubeletSocket is the registration socket's name inside the plugin directory.
	KubeletSocket = "kubelet.sock"
	// CheckpointName is the checkpoint file's name inside the plugin directory.
	CheckpointName = "kubelet_internal_checkpoint"
	// EndpointStopGracePeriod is how long a disconnected plugin's resource is
	// kept (capacity reported, allocatable 0) before it is deleted.
	EndpointStopGracePeriod = 5 * time.Minute
	// PreStartContainerTimeout bounds the PreStartContainer RPC.
	PreStartContainerTimeout = 30 * time.Second
	// NodeWithoutTopology is the NUMA key of devices that report no topology.
	NodeWithoutTopology int64 = -1
)

// SupportedVersions is an array, not a slice, because upstream formats the
// array itself into its error text (["v1beta1"]).
var SupportedVersions = [...]string{Version}

// PluginOptions are what a plugin answers to GetDevicePluginOptions.
type PluginOptions struct {
	PreStartRequired                bool
	GetPreferredAllocationAvailable bool
}

// RegisterRequest is a plugin's Register call.
type RegisterRequest struct {
	Version      string
	Endpoint     string
	ResourceName string
	Options      *PluginOptions
}

// ValidateRegistration checks a registration the way upstream's Register
// does before dialing the plugin: the version first, then the name.
func ValidateRegistration(r RegisterRequest) error {
	supported := false
	for _, v := range SupportedVersions {
		if r.Version == v {
			supported = true
		}
	}
	if !supported {
		return newError(KindUnsupportedVersion, "requested API version %q is not supported by kubelet. Supported version is %q", r.Version, SupportedVersions)
	}
	if !IsExtendedResourceName(r.ResourceName) {
		return newError(KindInvalidResourceName, "the ResourceName %q is invalid", r.ResourceName)
	}
	return nil
}

// IsExtendedResourceName mirrors upstream's helper: a name with exactly one
// "/", outside the kubernetes.io namespace, not starting with "requests.",
// such that "requests."+name is a qualified name.
func IsExtendedResourceName(name string) bool {
	if !strings.Contains(name, "/") || strings.Contains(name, "kubernetes.io/") {
		return false // a native resource
	}
	if strings.HasPrefix(name, "requests.") {
		return false
	}
	return isQualifiedName("requests." + name)
}

// isQualifiedName is apimachinery's IsQualifiedName: an optional DNS-1123
// subdomain prefix and "/", then a name of at most 63 characters of
// alphanumerics, '-', '_' and '.', starting and ending alphanumeric.
func isQualifiedName(value string) bool {
	parts := strings.Split(value, "/")
	var name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		if parts[0] == "" || !isDNS1123Subdomain(parts[0]) {
			return false
		}
		name = parts[1]
	default:
		return false
	}
	if name == "" || len(name) > 63 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		edge := i == 0 || i == len(name)-1
		switch {
		case isAlnum(c):
		case !edge && (c == '-' || c == '_' || c == '.'):
		default:
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// isDNS1123Subdomain: at most 253 characters, dot-separated labels of
// lowercase alphanumerics and '-', each starting and ending alphanumeric.
func isDNS1123Subdomain(value string) bool {
	if len(value) == 0 || len(value) > 253 {
		return false
	}
	for _, label := range strings.Split(value, ".") {
		if label == "" || !isLowerAlnum(label[0]) || !isLowerAlnum(label[len(label)-1]) {
			return false
		}
		for i := 0; i < len(label); i++ {
			if !isLowerAlnum(label[i]) && label[i] != '-' {
				return false
			}
		}
	}
	return true
}

// Device is one entry of a plugin's ListAndWatch snapshot.
type Device struct {
	ID     string
	Health string
	// NUMANodes are the device's topology; empty when it reports none.
	NUMANodes []int64
}

// validateDevices rejects snapshots that upstream would silently mangle:
// an empty ID, the same ID twice (upstream would count it in both the
// healthy and the unhealthy set), a negative NUMA node, or more devices
// than the bound.
func validateDevices(resource string, devices []Device, limits Limits) error {
	if len(devices) > limits.DevicesPerResource {
		return newError(KindBoundExceeded, "ListAndWatch of %s: %d devices exceed the bound of %d per resource", resource, len(devices), limits.DevicesPerResource)
	}
	seen := make(map[string]struct{}, len(devices))
	for i, d := range devices {
		if d.ID == "" {
			return newError(KindInvalidDeviceList, "ListAndWatch of %s: devices[%d].ID: must not be empty", resource, i)
		}
		if len(d.ID) > limits.NameLength {
			return newError(KindInvalidDeviceList, "ListAndWatch of %s: devices[%d].ID: longer than %d bytes", resource, i, limits.NameLength)
		}
		if _, dup := seen[d.ID]; dup {
			return newError(KindInvalidDeviceList, "ListAndWatch of %s: devices[%d].ID: %q appears more than once", resource, i, d.ID)
		}
		seen[d.ID] = struct{}{}
		for j, n := range d.NUMANodes {
			if n < 0 {
				return newError(KindInvalidDeviceList, "ListAndWatch of %s: devices[%d].Topology.Nodes[%d].ID: %d is negative", resource, i, j, n)
			}
		}
	}
	return nil
}

// String describes an endpoint for messages. Upstream formats the endpoint
// struct itself (with pointer values); the core prints what identifies it.
func (e *endpoint) String() string {
	return fmt.Sprintf("&{resourceName:%s socket:%s}", e.resource, e.socket)
}
