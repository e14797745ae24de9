package checkpoint

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"
)

// Bounds shared by Encode and Decode, so that whatever Encode writes Decode
// reads back, and a hostile file cannot make Decode allocate without limit.
const (
	// MaxFileBytes is the largest checkpoint file, in bytes.
	MaxFileBytes = 64 << 20
	// MaxItems bounds the pod device entries, NUMA nodes, registered
	// resources and device IDs of one checkpoint, all counted together.
	MaxItems = 1 << 20
)

// DevicesPerNUMA maps a NUMA node (-1 for devices without topology) to the
// IDs of a container's devices on it. The name matters: the checksum input
// spells it.
type DevicesPerNUMA map[int64][]string

// PodDevicesEntry records the devices of one resource allocated to one
// container, with the plugin's protobuf-encoded ContainerAllocateResponse.
type PodDevicesEntry struct {
	PodUID        string
	ContainerName string
	ResourceName  string
	DeviceIDs     DevicesPerNUMA
	AllocResp     []byte
}

// Data is the content of a checkpoint. The kubelet calls this struct
// checkpointData; the checksum input uses that name whatever this one is.
//
// Nil and empty collections are distinct, as they are in the kubelet's file
// and checksum (null against [] or {}), and the order of PodDeviceEntries and
// of every ID list is kept as given: the kubelet writes them in Go map order,
// and the checksum covers that order.
type Data struct {
	PodDeviceEntries  []PodDevicesEntry
	RegisteredDevices map[string][]string
}

// ErrNotFound is what the agent returns when there is no checkpoint file; the
// text is the kubelet's.
var ErrNotFound = errors.New("checkpoint is not found")

// CorruptError reports a checkpoint whose stored checksum does not match its
// data. Its text is the kubelet's, which logs it and starts empty.
type CorruptError struct {
	Actual   uint64 // the checksum of the data as read
	Expected uint64 // the checksum stored in the file
}

func (e *CorruptError) Error() string { return "checkpoint is corrupted" }

// Checksum is the checksum the kubelet stores with d: FNV-32a of HashInput(d),
// widened to uint64.
func Checksum(d Data) uint64 {
	h := newHashWriter(false)
	h.data(d, sortedNames(d.RegisteredDevices))
	return uint64(h.sum)
}

// HashInput is the string the kubelet hashes for d's checksum: go-spew's
// "%#v" rendering of its checkpointData with k8s.io/utils/dump.ForHash's
// configuration. Strings appear raw, so it is not reversible; it exists for
// tests and diagnostics, while Checksum hashes the same bytes without building
// them.
func HashInput(d Data) string {
	h := newHashWriter(true)
	h.data(d, sortedNames(d.RegisteredDevices))
	return string(h.out)
}

// Encode returns the checkpoint file for d, byte for byte what the kubelet's
// encoding/json marshalling writes, checksum included.
//
// It refuses, with an error naming the field and the rule, data that the
// kubelet would write but could not read back intact: strings that are not
// valid UTF-8 (encoding/json replaces the bad bytes, so the stored checksum
// no longer matches), more than MaxItems items, or a file over MaxFileBytes.
func Encode(d Data) ([]byte, error) {
	size, err := check(d)
	if err != nil {
		return nil, err
	}
	names := sortedNames(d.RegisteredDevices)
	h := newHashWriter(false)
	h.data(d, names)
	w := jsonWriter{buf: make([]byte, 0, size)}
	w.data(d, names, uint64(h.sum))
	if w.stop {
		return nil, fmt.Errorf("checkpoint: encoded file would be over the limit of %d bytes", MaxFileBytes)
	}
	return w.buf, nil
}

// check validates d against Encode's rules and returns a capacity for the
// encoded file. It refuses early a file whose content alone (strings and
// base64, without any JSON punctuation) is over MaxFileBytes.
func check(d Data) (int, error) {
	items := len(d.PodDeviceEntries) + len(d.RegisteredDevices)
	content := 0
	for i, e := range d.PodDeviceEntries {
		for _, f := range [...]struct{ name, s string }{
			{"PodUID", e.PodUID}, {"ContainerName", e.ContainerName}, {"ResourceName", e.ResourceName},
		} {
			if !utf8.ValidString(f.s) {
				return 0, fmt.Errorf("checkpoint: Data.PodDeviceEntries[%d].%s: string is not valid UTF-8", i, f.name)
			}
			content += len(f.s)
		}
		content += (len(e.AllocResp) + 2) / 3 * 4
		items += len(e.DeviceIDs)
		for numa, ids := range e.DeviceIDs {
			items += len(ids)
			for j, id := range ids {
				if !utf8.ValidString(id) {
					return 0, fmt.Errorf("checkpoint: Data.PodDeviceEntries[%d].DeviceIDs[\"%d\"][%d]: string is not valid UTF-8", i, numa, j)
				}
				content += len(id)
			}
		}
	}
	for name, ids := range d.RegisteredDevices {
		if !utf8.ValidString(name) {
			return 0, fmt.Errorf("checkpoint: Data.RegisteredDevices[%q]: resource name is not valid UTF-8", name)
		}
		content += len(name)
		items += len(ids)
		for j, id := range ids {
			if !utf8.ValidString(id) {
				return 0, fmt.Errorf("checkpoint: Data.RegisteredDevices[%q][%d]: string is not valid UTF-8", name, j)
			}
			content += len(id)
		}
	}
	if items > MaxItems {
		return 0, fmt.Errorf("checkpoint: Data: %d items (entries, NUMA nodes, resources and device IDs), over the limit of %d", items, MaxItems)
	}
	if content > MaxFileBytes {
		return 0, fmt.Errorf("checkpoint: Data: %d bytes of strings and base64, over the file limit of %d", content, MaxFileBytes)
	}
	// Punctuation and field names: about 90 bytes per entry, 8 per item.
	return 80 + content + 90*len(d.PodDeviceEntries) + 8*items, nil
}

// sortedNames returns the keys of RegisteredDevices in byte order, the order
// of both go-spew's SortKeys and encoding/json.
func sortedNames(m map[string][]string) []string {
	if len(m) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(m))
}
