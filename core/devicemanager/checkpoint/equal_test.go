package checkpoint_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// copyData copies d deeply, so that no slice or map is shared and the maps
// are built in another insertion order.
func copyData(d checkpoint.Data) checkpoint.Data {
	var c checkpoint.Data
	if d.PodDeviceEntries != nil {
		c.PodDeviceEntries = make([]checkpoint.PodDevicesEntry, len(d.PodDeviceEntries))
		for i, e := range d.PodDeviceEntries {
			e.AllocResp = slices.Clone(e.AllocResp)
			if e.DeviceIDs != nil {
				ids := checkpoint.DevicesPerNUMA{}
				for _, node := range slices.Backward(slices.Sorted(maps.Keys(e.DeviceIDs))) {
					ids[node] = slices.Clone(e.DeviceIDs[node])
				}
				e.DeviceIDs = ids
			}
			c.PodDeviceEntries[i] = e
		}
	}
	if d.RegisteredDevices != nil {
		c.RegisteredDevices = map[string][]string{}
		for _, name := range slices.Backward(slices.Sorted(maps.Keys(d.RegisteredDevices))) {
			c.RegisteredDevices[name] = slices.Clone(d.RegisteredDevices[name])
		}
	}
	return c
}

// changeOne changes one thing of a copy of d, of the kinds the encodings
// must tell apart: nil against empty, a string, a byte, an order, a key.
// The change may happen to leave d as it was (a string drawn equal to the
// old one); the caller compares the encodings whatever it did.
func changeOne(t *rapid.T, d checkpoint.Data) checkpoint.Data {
	c := copyData(d)
	entries := len(c.PodDeviceEntries)
	switch rapid.IntRange(0, 8).Draw(t, "change") {
	case 0:
		if c.PodDeviceEntries == nil {
			c.PodDeviceEntries = []checkpoint.PodDevicesEntry{}
		} else if entries == 0 {
			c.PodDeviceEntries = nil
		} else {
			c.PodDeviceEntries = c.PodDeviceEntries[:entries-1]
		}
	case 1:
		if c.RegisteredDevices == nil {
			c.RegisteredDevices = map[string][]string{}
		} else {
			c.RegisteredDevices[text.Draw(t, "name")] = ids(t, "registered")
		}
	case 2:
		if entries > 1 {
			c.PodDeviceEntries[0], c.PodDeviceEntries[entries-1] = c.PodDeviceEntries[entries-1], c.PodDeviceEntries[0]
		}
	case 3, 4, 5, 6, 7:
		if entries == 0 {
			break
		}
		e := &c.PodDeviceEntries[rapid.IntRange(0, entries-1).Draw(t, "entry")]
		switch rapid.IntRange(3, 7).Draw(t, "field") {
		case 3:
			e.PodUID = text.Draw(t, "pod")
		case 4:
			e.ResourceName = text.Draw(t, "resource")
		case 5:
			switch {
			case e.AllocResp == nil:
				e.AllocResp = []byte{}
			case len(e.AllocResp) == 0:
				e.AllocResp = nil
			default:
				e.AllocResp[rapid.IntRange(0, len(e.AllocResp)-1).Draw(t, "byte")] ^= rapid.ByteRange(1, 255).Draw(t, "flip")
			}
		case 6:
			if e.DeviceIDs == nil {
				e.DeviceIDs = checkpoint.DevicesPerNUMA{}
			} else {
				e.DeviceIDs[numaKey.Draw(t, "numa")] = ids(t, "device")
			}
		case 7:
			for node, list := range e.DeviceIDs {
				switch {
				case list == nil:
					e.DeviceIDs[node] = []string{}
				case len(list) == 0:
					e.DeviceIDs[node] = nil
				default:
					slices.Reverse(list)
				}
				break
			}
		}
	case 8:
		for name, list := range c.RegisteredDevices {
			if list == nil {
				c.RegisteredDevices[name] = []string{}
			} else {
				c.RegisteredDevices[name] = nil
			}
			break
		}
	}
	return c
}

// TestEqualIsSameBytes is the argument behind callers that check a
// checkpoint's round trip only when its content changed: Equal holds
// exactly when Encode writes the same bytes, so equal content cannot hide
// a different file, and a different file is never taken for equal content.
func TestEqualIsSameBytes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := genData(t)
		want, err := checkpoint.Encode(d)
		require.NoError(t, err, "Encode")
		require.True(t, checkpoint.Equal(d, copyData(d)), "Equal(d, a deep copy of d)")

		other := changeOne(t, d)
		got, err := checkpoint.Encode(other)
		require.NoError(t, err, "Encode")
		require.Equal(t, string(want) == string(got), checkpoint.Equal(d, other),
			"Equal disagrees with the bytes:\n  %s\n  %s", want, got)
		require.Equal(t, checkpoint.Equal(d, other), checkpoint.Equal(other, d), "Equal is not symmetric")
	})
}

// TestEqualTellsNilFromEmpty: the file spells nil as null and empty as []
// or {}, so content that differs only there is not Equal.
func TestEqualTellsNilFromEmpty(t *testing.T) {
	entry := checkpoint.PodDevicesEntry{PodUID: "p", DeviceIDs: checkpoint.DevicesPerNUMA{0: {"d"}}, AllocResp: []byte{}}
	base := checkpoint.Data{PodDeviceEntries: []checkpoint.PodDevicesEntry{entry}, RegisteredDevices: map[string][]string{"r": {}}}
	nilResp, nilIDs, nilList, nilRegistered := entry, entry, entry, base
	nilResp.AllocResp = nil
	nilIDs.DeviceIDs = nil
	nilList.DeviceIDs = checkpoint.DevicesPerNUMA{0: nil}
	nilRegistered.RegisteredDevices = map[string][]string{"r": nil}
	for name, d := range map[string]checkpoint.Data{
		"AllocResp nil":          {PodDeviceEntries: []checkpoint.PodDevicesEntry{nilResp}, RegisteredDevices: base.RegisteredDevices},
		"DeviceIDs nil":          {PodDeviceEntries: []checkpoint.PodDevicesEntry{nilIDs}, RegisteredDevices: base.RegisteredDevices},
		"a NUMA node's list nil": {PodDeviceEntries: []checkpoint.PodDevicesEntry{nilList}, RegisteredDevices: base.RegisteredDevices},
		"PodDeviceEntries empty": {PodDeviceEntries: []checkpoint.PodDevicesEntry{}, RegisteredDevices: base.RegisteredDevices},
		"RegisteredDevices nil":  {PodDeviceEntries: base.PodDeviceEntries},
		"a resource's list nil":  nilRegistered,
	} {
		assert.False(t, checkpoint.Equal(base, d), name)
		a, err := checkpoint.Encode(base)
		require.NoError(t, err)
		b, err := checkpoint.Encode(d)
		require.NoError(t, err)
		assert.NotEqual(t, string(a), string(b), "%s: the files are the same, so the case proves nothing", name)
	}
}
