package checkpoint

import (
	"encoding/json"

	"github.com/davecgh/go-spew/spew"
)

// DevicesPerNUMA mirrors the kubelet's type of the same name.
type DevicesPerNUMA map[int64][]string

// PodDevicesEntry mirrors the kubelet's type of the same name.
type PodDevicesEntry struct {
	PodUID        string
	ContainerName string
	ResourceName  string
	DeviceIDs     DevicesPerNUMA
	AllocResp     []byte
}

// checkpointData mirrors the kubelet's unexported type; its name is part of
// the checksum input.
type checkpointData struct {
	PodDeviceEntries  []PodDevicesEntry
	RegisteredDevices map[string][]string
}

// data mirrors the kubelet's checkpoint file struct: an exported field of
// the unexported type, which encoding/json marshals like any other.
type data struct {
	Data     checkpointData
	Checksum uint64
}

// forHash is k8s.io/utils/dump.ForHash's configuration, which the kubelet's
// checksum uses.
var forHash = spew.ConfigState{
	Indent:                  " ",
	SortKeys:                true,
	DisableMethods:          true,
	SpewKeys:                true,
	DisablePointerAddresses: true,
	DisableCapacities:       true,
}

// HashInput is the string the kubelet hashes for the checksum of a
// checkpoint with these entries and registered devices.
func HashInput(entries []PodDevicesEntry, registered map[string][]string) string {
	return forHash.Sprintf("%#v", checkpointData{PodDeviceEntries: entries, RegisteredDevices: registered})
}

// File is what the kubelet writes for a checkpoint with these entries,
// registered devices and checksum.
func File(entries []PodDevicesEntry, registered map[string][]string, checksum uint64) ([]byte, error) {
	return json.Marshal(data{Data: checkpointData{PodDeviceEntries: entries, RegisteredDevices: registered}, Checksum: checksum})
}
