package allocresp_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// text draws strings that stress the encoding: empty (omitted on the wire),
// long enough for a two-byte length, and multi-byte UTF-8.
var text = rapid.OneOf(
	rapid.SampledFrom([]string{"", "a", "/dev/nvidia0", "rwm", "é日本", strings.Repeat("x", 200)}),
	rapid.String(),
)

func stringMap(t *rapid.T, label string) map[string]string {
	if rapid.Bool().Draw(t, label+" nil") {
		return nil
	}
	return rapid.MapOfN(text, text, 0, 4).Draw(t, label)
}

func response(t *rapid.T) allocresp.ContainerAllocateResponse {
	return allocresp.ContainerAllocateResponse{
		Envs: stringMap(t, "envs"),
		Mounts: rapid.SliceOfN(rapid.Custom(func(t *rapid.T) allocresp.Mount {
			return allocresp.Mount{ContainerPath: text.Draw(t, "cpath"), HostPath: text.Draw(t, "hpath"), ReadOnly: rapid.Bool().Draw(t, "ro")}
		}), 0, 3).Draw(t, "mounts"),
		Devices: rapid.SliceOfN(rapid.Custom(func(t *rapid.T) allocresp.DeviceSpec {
			return allocresp.DeviceSpec{ContainerPath: text.Draw(t, "cpath"), HostPath: text.Draw(t, "hpath"), Permissions: text.Draw(t, "perm")}
		}), 0, 3).Draw(t, "devices"),
		Annotations: stringMap(t, "annotations"),
		CDIDevices: rapid.SliceOfN(rapid.Custom(func(t *rapid.T) allocresp.CDIDevice {
			return allocresp.CDIDevice{Name: text.Draw(t, "name")}
		}), 0, 3).Draw(t, "cdi"),
	}
}

// normal maps empty collections to nil: the wire format cannot tell them
// apart, and Unmarshal returns nil.
func normal(r allocresp.ContainerAllocateResponse) allocresp.ContainerAllocateResponse {
	if len(r.Envs) == 0 {
		r.Envs = nil
	}
	if len(r.Mounts) == 0 {
		r.Mounts = nil
	}
	if len(r.Devices) == 0 {
		r.Devices = nil
	}
	if len(r.Annotations) == 0 {
		r.Annotations = nil
	}
	if len(r.CDIDevices) == 0 {
		r.CDIDevices = nil
	}
	return r
}

func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := response(t)
		b := allocresp.Marshal(r)
		got, err := allocresp.Unmarshal(b)
		require.NoError(t, err, "Unmarshal(Marshal(r))")
		require.Equal(t, normal(r), got, "round trip")
		again := allocresp.Marshal(got)
		require.Equal(t, b, again, "Marshal is not deterministic")
	})
}

func TestMarshalKnownBytes(t *testing.T) {
	r := allocresp.ContainerAllocateResponse{
		Envs:       map[string]string{"B": "", "A": "1"},
		Mounts:     []allocresp.Mount{{ContainerPath: "/c", ReadOnly: true}},
		CDIDevices: []allocresp.CDIDevice{{}},
	}
	want := []byte{
		0x0a, 0x06, 0x0a, 0x01, 'A', 0x12, 0x01, '1', // Envs A=1
		0x0a, 0x05, 0x0a, 0x01, 'B', 0x12, 0x00, // Envs B="": map values are always written
		0x12, 0x06, 0x0a, 0x02, '/', 'c', 0x18, 0x01, // Mount{/c, ReadOnly}
		0x2a, 0x00, // an empty CDIDevice is still an element
	}
	got := allocresp.Marshal(r)
	require.Equal(t, want, got, "Marshal")
	require.Empty(t, allocresp.Marshal(allocresp.ContainerAllocateResponse{}), "empty response marshals to")
}

func TestUnmarshalSkipsUnknown(t *testing.T) {
	b := []byte{
		0x08, 0x96, 0x01, // field 1 as a varint: wrong wire type, skipped
		0x31, 1, 2, 3, 4, 5, 6, 7, 8, // field 6 fixed64
		0x35, 1, 2, 3, 4, // field 6 fixed32
		0x33, 0x08, 0x01, 0x3b, 0x08, 0x01, 0x3c, 0x34, // field 6 group holding a group
		0x12, 0x07, 0x1a, 0x01, 'x', 0x18, 0x02, 0x20, 0x00, // Mount: field 3 as bytes skipped, ReadOnly=2, field 4
		0x2a, 0x03, 0x0a, 0x01, 'n', // CDIDevice n
	}
	got, err := allocresp.Unmarshal(b)
	require.NoError(t, err)
	want := allocresp.ContainerAllocateResponse{
		Mounts:     []allocresp.Mount{{ReadOnly: true}},
		CDIDevices: []allocresp.CDIDevice{{Name: "n"}},
	}
	require.Equal(t, want, got)
}

func TestUnmarshalMapEntries(t *testing.T) {
	b := []byte{
		0x0a, 0x03, 0x0a, 0x01, 'k', // no value
		0x22, 0x03, 0x12, 0x01, 'v', // no key
		0x0a, 0x06, 0x0a, 0x01, 'k', 0x12, 0x01, 'w', // k again: last wins
	}
	got, err := allocresp.Unmarshal(b)
	require.NoError(t, err)
	want := allocresp.ContainerAllocateResponse{Envs: map[string]string{"k": "w"}, Annotations: map[string]string{"": "v"}}
	require.Equal(t, want, got)
}

func TestUnmarshalRejects(t *testing.T) {
	deep := append(bytes.Repeat([]byte{0x33}, 10002), bytes.Repeat([]byte{0x34}, 10002)...)
	tooMany := bytes.Repeat([]byte{0x2a, 0x00}, allocresp.MaxEntries+1)
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"truncated tag", []byte{0x80}, "ContainerAllocateResponse: tag at byte 0: truncated varint"},
		{"overlong varint", []byte{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, "field 1: varint value: varint overflows 64 bits"},
		{"field zero", []byte{0x02, 0x00}, "field number 0 is outside 1..536870911"},
		{"field too large", []byte{0x82, 0x80, 0x80, 0x80, 0x10, 0x00}, "field number 536870912 is outside"},
		{"length past end", []byte{0x12, 0x05, 0x0a}, "field 2: length 5 exceeds the 1 remaining bytes"},
		{"length one past end", []byte{0x12, 0x02, 0x0a}, "field 2: length 2 exceeds the 1 remaining bytes"},
		{"short fixed64", []byte{0x31, 1, 2}, "fixed64 value needs 8 bytes, 2 remain"},
		{"short fixed32", []byte{0x35, 1}, "fixed32 value needs 4 bytes, 1 remain"},
		{"reserved wire type", []byte{0x0e}, "field 1: wire type 6 is reserved"},
		{"stray end group", []byte{0x0c}, "field 1: end-group tag without a matching start-group"},
		{"unclosed group", []byte{0x33, 0x08, 0x01}, "tag inside group 6: truncated varint"},
		{"mismatched group", []byte{0x33, 0x3c}, "end-group tag 7 does not close group 6"},
		{"groups too deep", deep, "groups nest deeper than 10001"},
		{"bad UTF-8 in mount", []byte{0x12, 0x03, 0x12, 0x01, 0xff}, "Mounts[0].HostPath: string is not valid UTF-8"},
		{"bad UTF-8 map key", []byte{0x0a, 0x03, 0x0a, 0x01, 0xc0}, "Envs[entry 0].key: string is not valid UTF-8"},
		// Map entries are numbered as they come, per map.
		{"bad UTF-8 in the second env", []byte{0x0a, 0x03, 0x0a, 0x01, 'A', 0x22, 0x00, 0x0a, 0x03, 0x0a, 0x01, 0xc0}, "Envs[entry 1].key: string is not valid UTF-8"},
		{"bad UTF-8 in the second annotation", []byte{0x22, 0x03, 0x0a, 0x01, 'A', 0x0a, 0x00, 0x22, 0x03, 0x0a, 0x01, 0xc0}, "Annotations[entry 1].key: string is not valid UTF-8"},
		{"bad nested field", []byte{0x1a, 0x02, 0x0c, 0x00}, "Devices[0]: field 1: end-group tag"},
		{"too many entries", tooMany, "more than 10000 repeated and map entries"},
		{"too large", make([]byte, allocresp.MaxMessageBytes+1), "over the limit of 1048576"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := allocresp.Unmarshal(c.in)
			require.Error(t, err, "Unmarshal error = %v, want one containing %q", err, c.want)
			require.Contains(t, err.Error(), c.want, "Unmarshal error = %v, want one containing %q", err, c.want)
			require.True(t, strings.HasPrefix(err.Error(), "allocresp: "), "Unmarshal error = %v, want one containing %q", err, c.want)
		})
	}
}

// TestUnmarshalNeverPanics feeds Marshal output with random damage.
func TestUnmarshalNeverPanics(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := allocresp.Marshal(response(t))
		if len(b) == 0 {
			return
		}
		n := rapid.IntRange(1, 4).Draw(t, "edits")
		for range n {
			i := rapid.IntRange(0, len(b)-1).Draw(t, "at")
			b[i] = rapid.Byte().Draw(t, "byte")
		}
		b = b[:rapid.IntRange(0, len(b)).Draw(t, "len")]
		_, _ = allocresp.Unmarshal(b)
	})
}

// TestMarshalSizesExactly checks that Marshal works out the encoded length
// before it writes (its buffer is made once, with exactly that capacity),
// including at the lengths where a varint grows a byte: 127/128 and
// 16383/16384.
func TestMarshalSizesExactly(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 16383, 16384} {
		value := strings.Repeat("v", n)
		for name, r := range map[string]allocresp.ContainerAllocateResponse{
			"env":    {Envs: map[string]string{"K": value}},
			"mount":  {Mounts: []allocresp.Mount{{ContainerPath: value, HostPath: "/h"}}},
			"device": {Devices: []allocresp.DeviceSpec{{ContainerPath: value, Permissions: "rw"}}},
			"cdi":    {CDIDevices: []allocresp.CDIDevice{{Name: value}}},
		} {
			b := allocresp.Marshal(r)
			assert.Equal(t, len(b), cap(b), "%s of %d bytes: capacity of Marshal's buffer", name, n)
			got, err := allocresp.Unmarshal(b)
			require.NoError(t, err, "%s of %d bytes", name, n)
			assert.Equal(t, normal(r), got, "%s of %d bytes: round trip", name, n)
		}
	}
}

// TestUnmarshalAcceptsTheBounds checks the other side of the bounds
// TestUnmarshalRejects enforces: exactly MaxEntries entries, a message of
// exactly MaxMessageBytes bytes, the largest field numbers and values that
// end at the last byte decode.
func TestUnmarshalAcceptsTheBounds(t *testing.T) {
	r, err := allocresp.Unmarshal(bytes.Repeat([]byte{0x2a, 0x00}, allocresp.MaxEntries))
	require.NoError(t, err, "%d entries", allocresp.MaxEntries)
	assert.Len(t, r.CDIDevices, allocresp.MaxEntries)
	// One env entry: tag, 3-byte length, key "K" (3 bytes), value tag,
	// 3-byte length, then the value: 11 bytes around it.
	big := allocresp.Marshal(allocresp.ContainerAllocateResponse{Envs: map[string]string{"K": strings.Repeat("v", allocresp.MaxMessageBytes-11)}})
	require.Len(t, big, allocresp.MaxMessageBytes)
	_, err = allocresp.Unmarshal(big)
	require.NoError(t, err, "a message of exactly %d bytes", allocresp.MaxMessageBytes)
	// The largest field number protobuf allows, 2^29-1, is an unknown
	// field like any other: skipped.
	_, err = allocresp.Unmarshal([]byte{0xf8, 0xff, 0xff, 0xff, 0x0f, 0x00})
	require.NoError(t, err, "field number 536870911")
	// Inside an unknown group protobuf only asks a field number to fit an
	// int32: 2^31-1 is skipped too.
	_, err = allocresp.Unmarshal([]byte{0x33, 0xf8, 0xff, 0xff, 0xff, 0x3f, 0x00, 0x34})
	require.NoError(t, err, "field number 2147483647 inside a group")
	// Fixed-size values that end exactly at the end of the message.
	_, err = allocresp.Unmarshal([]byte{0x31, 1, 2, 3, 4, 5, 6, 7, 8})
	require.NoError(t, err, "a fixed64 of the last 8 bytes")
	_, err = allocresp.Unmarshal([]byte{0x35, 1, 2, 3, 4})
	require.NoError(t, err, "a fixed32 of the last 4 bytes")
	// The largest varint: ten bytes, the last one 0x01 (2^64-1).
	_, err = allocresp.Unmarshal([]byte{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	require.NoError(t, err, "a varint of 2^64-1")
}
