package checkpoint

import (
	"errors"
	"fmt"
)

// Bounds shared by Encode and Read, so that whatever Encode writes Read
// reads back, and a hostile file cannot make Read allocate without limit.
// The kubelet has none; no node comes near them.
const (
	// MaxFileBytes is the largest checkpoint file, in bytes.
	MaxFileBytes = 64 << 20
	// MaxItems bounds the pod device entries, NUMA nodes, registered
	// resources and device IDs of one checkpoint, all counted together.
	MaxItems = 1 << 20
	// MaxSeparators bounds the brackets, braces and commas of a file,
	// counted before it is parsed: in memory, encoding/json's values cost
	// many times the bytes they come from ("{}," is 3 bytes of file and an
	// 80-byte PodDevicesEntry), so the file size alone would let a 64 MiB
	// file take gigabytes. A file Encode writes has at most 7·MaxItems+6.
	MaxSeparators = 8 * MaxItems
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
	e := newEncoder(false, jsonWriter{stop: true})
	e.data(d)
	return uint64(e.hash.sum)
}

// HashInput is the string the kubelet hashes for d's checksum: go-spew's
// "%#v" rendering of its checkpointData with k8s.io/utils/dump.ForHash's
// configuration. Strings appear raw, so it is not reversible; it exists for
// tests and diagnostics, while Checksum hashes the same bytes without building
// them.
func HashInput(d Data) string {
	e := newEncoder(true, jsonWriter{stop: true})
	e.data(d)
	return string(e.hash.out)
}

// Encode returns the checkpoint file for d, byte for byte what the kubelet's
// encoding/json marshalling writes, checksum included.
//
// It refuses, with an error naming the field and the rule, data that the
// kubelet would write but could not read back intact: strings that are not
// valid UTF-8 (encoding/json replaces the bad bytes, so the stored checksum
// no longer matches), more than MaxItems items, or a file over MaxFileBytes,
// which it stops building at that size.
func Encode(d Data) ([]byte, error) {
	e := newEncoder(false, jsonWriter{buf: make([]byte, 0, sizeHint(d))})
	e.data(d)
	switch {
	case e.err != nil:
		return nil, e.err
	case e.items > MaxItems:
		return nil, fmt.Errorf("checkpoint: Data: %d items (entries, NUMA nodes, resources and device IDs), over the limit of %d", e.items, MaxItems)
	}
	e.json.uint(uint64(e.hash.sum))
	e.json.byte('}')
	if e.json.stop {
		return nil, fmt.Errorf("checkpoint: encoded file would be over the limit of %d bytes", MaxFileBytes)
	}
	return e.json.buf, nil
}

func newEncoder(keep bool, w jsonWriter) encoder {
	return encoder{hash: hashWriter{sum: fnvOffset, keep: keep}, json: w}
}

// sizeHint guesses the file's size, so Encode rarely grows its buffer: field
// names, a UUID and two device IDs make about 200 bytes an entry, plus the
// base64 of AllocResp.
func sizeHint(d Data) int {
	n := 128 + 64*len(d.RegisteredDevices)
	for _, e := range d.PodDeviceEntries {
		n += 200 + len(e.AllocResp)*4/3
	}
	return min(n, MaxFileBytes)
}
