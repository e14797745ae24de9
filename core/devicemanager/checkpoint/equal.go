package checkpoint

import "bytes"

// Equal reports whether a and b are the same checkpoint content in every
// respect the file and the checksum spell: entries and ID lists in the same
// order, the same strings and bytes, and nil where the other is nil (the
// kubelet writes null for nil and [] or {} for empty, and spew <nil> against
// [] or map[]). Map iteration order does not count: both renderings sort
// the keys.
//
// Encode is a function of exactly these things, so Equal(a, b) implies that
// Encode(a) and Encode(b) are the same bytes (or the same error), and with
// them the checksum and whatever Decode returns. A caller that has checked
// the round trip of a can skip re-checking it for b. The converse holds too
// for data Encode accepts: both renderings are injective (strings are written
// whole and escaped or delimited, integers in decimal), which
// TestEqualIsSameBytes checks in both directions.
func Equal(a, b Data) bool {
	if (a.PodDeviceEntries == nil) != (b.PodDeviceEntries == nil) || len(a.PodDeviceEntries) != len(b.PodDeviceEntries) {
		return false
	}
	for i := range a.PodDeviceEntries {
		if !equalEntry(&a.PodDeviceEntries[i], &b.PodDeviceEntries[i]) {
			return false
		}
	}
	return equalIDMap(a.RegisteredDevices, b.RegisteredDevices)
}

func equalEntry(a, b *PodDevicesEntry) bool {
	if a.PodUID != b.PodUID || a.ContainerName != b.ContainerName || a.ResourceName != b.ResourceName {
		return false
	}
	if (a.AllocResp == nil) != (b.AllocResp == nil) || !bytes.Equal(a.AllocResp, b.AllocResp) {
		return false
	}
	if (a.DeviceIDs == nil) != (b.DeviceIDs == nil) || len(a.DeviceIDs) != len(b.DeviceIDs) {
		return false
	}
	for node, ids := range a.DeviceIDs {
		other, ok := b.DeviceIDs[node]
		if !ok || !equalIDs(ids, other) {
			return false
		}
	}
	return true
}

func equalIDMap(a, b map[string][]string) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for name, ids := range a {
		other, ok := b[name]
		if !ok || !equalIDs(ids, other) {
			return false
		}
	}
	return true
}

// equalIDs compares two ID lists in order, nil apart from empty.
func equalIDs(a, b []string) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
