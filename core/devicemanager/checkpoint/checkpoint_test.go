package checkpoint_test

import (
	"encoding/json"
	"errors"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// The worked examples of spec 1.10, printed by the kubelet v1.36.3 itself.
var (
	specData = checkpoint.Data{
		PodDeviceEntries: []checkpoint.PodDevicesEntry{{
			PodUID: "pod1", ContainerName: "con1", ResourceName: "domain1.com/resource1",
			DeviceIDs: checkpoint.DevicesPerNUMA{-1: {"dev3"}, 0: {"dev1", "dev2"}, 2: {"dev9"}, 10: {"dev10"}},
			AllocResp: []byte{10, 1, 255},
		}},
		RegisteredDevices: map[string][]string{"a.com/b": nil, "domain1.com/resource1": {"dev1", "dev2", "dev3"}},
	}
	specHashInput = `(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)[{PodUID:(string)pod1 ContainerName:(string)con1 ResourceName:(string)domain1.com/resource1 DeviceIDs:(checkpoint.DevicesPerNUMA)map[-1:[dev3] 0:[dev1 dev2] 2:[dev9] 10:[dev10]] AllocResp:([]uint8)[10 1 255]}] RegisteredDevices:(map[string][]string)map[a.com/b:<nil> domain1.com/resource1:[dev1 dev2 dev3]]}`
	specFile      = `{"Data":{"PodDeviceEntries":[{"PodUID":"pod1","ContainerName":"con1","ResourceName":"domain1.com/resource1","DeviceIDs":{"-1":["dev3"],"0":["dev1","dev2"],"10":["dev10"],"2":["dev9"]},"AllocResp":"CgH/"}],"RegisteredDevices":{"a.com/b":null,"domain1.com/resource1":["dev1","dev2","dev3"]}},"Checksum":103353102}`

	emptyData      = checkpoint.Data{RegisteredDevices: map[string][]string{}}
	emptyHashInput = `(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)<nil> RegisteredDevices:(map[string][]string)map[]}`
	emptyFile      = `{"Data":{"PodDeviceEntries":null,"RegisteredDevices":{}},"Checksum":3467439661}`
)

func TestSpecExamples(t *testing.T) {
	for _, c := range []struct {
		name      string
		data      checkpoint.Data
		hashInput string
		file      string
		checksum  uint64
	}{
		{"spec example", specData, specHashInput, specFile, 103353102},
		{"empty", emptyData, emptyHashInput, emptyFile, 3467439661},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.hashInput, checkpoint.HashInput(c.data), "HashInput")
			assert.Equal(t, c.checksum, checkpoint.Checksum(c.data), "Checksum")
			got, err := checkpoint.Encode(c.data)
			require.NoError(t, err, "Encode:\n got %s, %v\nwant %s", got, err, c.file)
			assert.Equal(t, c.file, string(got), "Encode:\n got %s, %v\nwant %s", got, err, c.file)
			d, err := checkpoint.Decode([]byte(c.file))
			require.NoError(t, err, "Decode = %#v, %v\nwant %#v", d, err, c.data)
			assert.Equal(t, c.data, d, "Decode = %#v, %v\nwant %#v", d, err, c.data)
		})
	}
}

// tricky holds strings that test escaping in JSON and rawness in the hash
// input: separators spew uses, JSON's escapes, HTML characters, controls,
// U+2028/U+2029, DEL and multi-byte runes.
var tricky = []string{
	"", " ", "a b", `"`, `\`, "<>&", "\u2028\u2029", "\x00\x01\x1f", "\b\f\n\r\t", "\x7f",
	"é", "日本", "\ufffd", "map[a:b]", "<nil>", "[x y]", "{}", ":", "null", "10",
}

var text = rapid.OneOf(rapid.SampledFrom(tricky), rapid.String(), rapid.StringN(0, 6, -1))

// ids draws nil, an empty list, or a list with possible repeats.
func ids(t *rapid.T, label string) []string {
	switch rapid.IntRange(0, 3).Draw(t, label+" shape") {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	n := rapid.IntRange(1, 4).Draw(t, label+" len")
	l := make([]string, n)
	for i := range l {
		l[i] = text.Draw(t, label)
	}
	return l
}

var numaKey = rapid.OneOf(rapid.Int64Range(-2, 12), rapid.Int64())

func genData(t *rapid.T) checkpoint.Data {
	var d checkpoint.Data
	if !rapid.Bool().Draw(t, "entries nil") {
		d.PodDeviceEntries = []checkpoint.PodDevicesEntry{}
		for range rapid.IntRange(0, 5).Draw(t, "entries") {
			e := checkpoint.PodDevicesEntry{
				PodUID:        text.Draw(t, "pod"),
				ContainerName: text.Draw(t, "container"),
				ResourceName:  text.Draw(t, "resource"),
			}
			if !rapid.Bool().Draw(t, "DeviceIDs nil") {
				e.DeviceIDs = checkpoint.DevicesPerNUMA{}
				for range rapid.IntRange(0, 4).Draw(t, "numa nodes") {
					e.DeviceIDs[numaKey.Draw(t, "numa")] = ids(t, "device")
				}
			}
			switch rapid.IntRange(0, 2).Draw(t, "AllocResp shape") {
			case 1:
				e.AllocResp = []byte{}
			case 2:
				e.AllocResp = rapid.SliceOfN(rapid.Byte(), 1, 40).Draw(t, "AllocResp")
			}
			d.PodDeviceEntries = append(d.PodDeviceEntries, e)
		}
	}
	if !rapid.Bool().Draw(t, "registered nil") {
		d.RegisteredDevices = map[string][]string{}
		for range rapid.IntRange(0, 4).Draw(t, "resources") {
			d.RegisteredDevices[text.Draw(t, "name")] = ids(t, "registered")
		}
	}
	return d
}

func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := genData(t)
		b, err := checkpoint.Encode(d)
		require.NoError(t, err, "Encode")
		got, err := checkpoint.Decode(b)
		require.NoError(t, err, "Decode(%s)", b)
		require.Equal(t, d, got, "round trip")
		h := fnv.New32a()
		h.Write([]byte(checkpoint.HashInput(d)))
		sum := checkpoint.Checksum(d)
		require.Equal(t, uint64(h.Sum32()), sum, "Checksum = %d, FNV-32a of HashInput = %d", sum, h.Sum32())
	})
}

// kubeletFile has the shape the kubelet hands to encoding/json. Data's field
// names match the kubelet's checkpointData, and JSON does not spell type
// names, so checkpoint.Data stands in for it.
type kubeletFile struct {
	Data     checkpoint.Data
	Checksum uint64
}

func TestEncodeMatchesEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := genData(t)
		got, err := checkpoint.Encode(d)
		require.NoError(t, err, "Encode")
		want, err := json.Marshal(kubeletFile{Data: d, Checksum: checkpoint.Checksum(d)})
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "Encode differs from encoding/json:\n got %s\nwant %s", got, want)
	})
}

// TestEverySingleByteChangeIsRejected replaces each byte of valid files in
// turn: every such file has another meaning, another checksum or another
// spelling, and Decode must refuse it.
func TestEverySingleByteChangeIsRejected(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b, err := checkpoint.Encode(genData(t))
		require.NoError(t, err)
		delta := rapid.ByteRange(1, 255).Draw(t, "delta")
		m := make([]byte, len(b))
		for i := range b {
			copy(m, b)
			m[i] += delta
			d, err := checkpoint.Decode(m)
			require.Error(t, err, "Decode accepted %s (byte %d of %s changed) as %#v", m, i, b, d)
		}
	})
}

func TestOrderIsKept(t *testing.T) {
	a := checkpoint.PodDevicesEntry{PodUID: "a", DeviceIDs: checkpoint.DevicesPerNUMA{0: {"d2", "d1"}}, AllocResp: []byte{}}
	b := checkpoint.PodDevicesEntry{PodUID: "b", AllocResp: []byte{}}
	ab := checkpoint.Data{PodDeviceEntries: []checkpoint.PodDevicesEntry{a, b}}
	ba := checkpoint.Data{PodDeviceEntries: []checkpoint.PodDevicesEntry{b, a}}
	require.NotEqual(t, checkpoint.Checksum(ba), checkpoint.Checksum(ab), "entry order does not change the checksum")
	for _, d := range []checkpoint.Data{ab, ba} {
		f, err := checkpoint.Encode(d)
		require.NoError(t, err)
		got, err := checkpoint.Decode(f)
		require.NoError(t, err, "Decode(%s) = %#v, %v", f, got, err)
		require.Equal(t, d, got, "Decode(%s) = %#v, %v", f, got, err)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
	}{
		{"truncated", specFile[:100], `checkpoint: Data.PodDeviceEntries[0].ResourceName: invalid JSON: string at byte 84 is not terminated`},
		{"empty", "", `checkpoint: invalid JSON: input ends at byte 0, want '{'`},
		{"whitespace", strings.Replace(emptyFile, `,"Checksum"`, `, "Checksum"`, 1), `checkpoint: not in canonical form (re-encoding differs at byte 57)`},
		{"trailing newline", emptyFile + "\n", `checkpoint: not in canonical form (re-encoding differs at byte 79)`},
		{"key order", `{"Checksum":3467439661,"Data":{"PodDeviceEntries":null,"RegisteredDevices":{}}}`, `checkpoint: not in canonical form (re-encoding differs at byte 2)`},
		{"leading zero", strings.Replace(emptyFile, "3467439661", "03467439661", 1), `checkpoint: not in canonical form (re-encoding differs at byte 68)`},
		{"missing field", `{"Data":{"RegisteredDevices":{}},"Checksum":3467439661}`, `checkpoint: not in canonical form (re-encoding differs at byte 10)`},
		{"trailing data", emptyFile + "x", `checkpoint: invalid JSON at byte 79: data after the checkpoint object`},
		{"legacy V1", `{"Data":{"PodDeviceEntries":[{"PodUID":"p","ContainerName":"c","ResourceName":"r","DeviceIDs":["dev1"],"AllocResp":""}],"RegisteredDevices":{}},"Checksum":1}`,
			`checkpoint: Data.PodDeviceEntries[0].DeviceIDs: found an array, want an object keyed by NUMA node: this is the legacy V1 checkpoint format, which the kubelet has not read since v1.30`},
		{"NUMA key", `{"Data":{"PodDeviceEntries":[{},{},{},{"DeviceIDs":{"x":[]}}]}}`, `checkpoint: Data.PodDeviceEntries[3].DeviceIDs: NUMA key "x" is not an integer`},
		{"NUMA range", `{"Data":{"PodDeviceEntries":[{"DeviceIDs":{"9223372036854775808":[]}}]}}`, `checkpoint: Data.PodDeviceEntries[0].DeviceIDs: NUMA key "9223372036854775808" is out of the int64 range`},
		{"device ID type", `{"Data":{"RegisteredDevices":{"r":["a",1]}}}`, `checkpoint: Data.RegisteredDevices["r"][1]: found a number, want a device ID string`},
		{"string type", `{"Data":{"PodDeviceEntries":[{"PodUID":null}]}}`, `checkpoint: Data.PodDeviceEntries[0].PodUID: found null, want a string`},
		{"unknown field", `{"Data":{"PodDeviceEntries":[{"podUID":"x"}]}}`, `checkpoint: Data.PodDeviceEntries[0]: unknown field "podUID" in an entry`},
		{"base64", `{"Data":{"PodDeviceEntries":[{"AllocResp":"C"}]}}`, `checkpoint: Data.PodDeviceEntries[0].AllocResp: not valid base64: illegal base64 data at input byte 0`},
		{"checksum type", `{"Checksum":-1}`, `checkpoint: Checksum: found a number, want an unsigned integer`},
		{"checksum range", `{"Checksum":18446744073709551616}`, `checkpoint: Checksum: 18446744073709551616 is out of the uint64 range`},
		{"invalid UTF-8", "{\"Data\":{\"RegisteredDevices\":{\"\xff\":[]}}}", `checkpoint: Data.RegisteredDevices: string at byte 30 is not valid UTF-8`},
		{"bad escape", `{"Data":{"RegisteredDevices":{"\x":[]}}}`, `checkpoint: Data.RegisteredDevices: invalid JSON at byte 31: bad escape "\\x"`},
		{"separator", `{"Data":{"RegisteredDevices":{"a":[] "b":[]}}}`, `checkpoint: Data.RegisteredDevices: invalid JSON at byte 37: found '"', want ',' or '}'`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := checkpoint.Decode([]byte(c.in))
			require.EqualError(t, err, c.want, "Decode error\n got %v\nwant %s", err, c.want)
		})
	}
}

// TestDecodeRawControlCharacter: JSON forbids a raw control character in a
// string; Encode escapes it, so even with a checksum that verifies the file
// is refused.
func TestDecodeRawControlCharacter(t *testing.T) {
	f, err := checkpoint.Encode(checkpoint.Data{RegisteredDevices: map[string][]string{"a\nb": {}}})
	require.NoError(t, err)
	raw := strings.Replace(string(f), `\n`, "\n", 1)
	want := "checkpoint: not in canonical form (re-encoding differs at byte 56)"
	_, err = checkpoint.Decode([]byte(raw))
	require.EqualError(t, err, want, "Decode(%q) error = %v, want %s", raw, err, want)
}

func TestDecodeCorrupt(t *testing.T) {
	in := strings.Replace(specFile, "103353102", "103353103", 1)
	_, err := checkpoint.Decode([]byte(in))
	var ce *checkpoint.CorruptError
	require.True(t, errors.As(err, &ce), "Decode error = %#v, want CorruptError{Actual: 103353102, Expected: 103353103}", err)
	require.Equal(t, "checkpoint is corrupted", err.Error(), "Decode error = %#v, want CorruptError{Actual: 103353102, Expected: 103353103}", err)
	require.Equal(t, uint64(103353102), ce.Actual, "Decode error = %#v, want CorruptError{Actual: 103353102, Expected: 103353103}", err)
	require.Equal(t, uint64(103353103), ce.Expected, "Decode error = %#v, want CorruptError{Actual: 103353102, Expected: 103353103}", err)
	// A changed device ID keeps the stored checksum, which no longer matches.
	in = strings.Replace(specFile, `"dev9"`, `"dev8"`, 1)
	_, err = checkpoint.Decode([]byte(in))
	require.True(t, errors.As(err, &ce), "Decode error = %v, want a CorruptError", err)
}

func TestBounds(t *testing.T) {
	big := make([]byte, checkpoint.MaxFileBytes+1)
	_, err := checkpoint.Decode(big)
	require.EqualError(t, err, "checkpoint: file is 67108865 bytes, over the limit of 67108864", "Decode of an oversized file")

	many := make([]string, checkpoint.MaxItems)
	d := checkpoint.Data{RegisteredDevices: map[string][]string{"r": many}}
	_, err = checkpoint.Encode(d)
	require.ErrorContains(t, err, "1048577 items", "Encode of too many items")
	in := `{"Data":{"RegisteredDevices":{"r":[` + strings.Repeat(`"",`, checkpoint.MaxItems) + `""]}}}`
	_, err = checkpoint.Decode([]byte(in))
	require.EqualError(t, err, `checkpoint: Data.RegisteredDevices["r"][1048575]: more than 1048576 items (entries, NUMA nodes, resources and device IDs)`, "Decode of too many items")

	huge := checkpoint.Data{PodDeviceEntries: []checkpoint.PodDevicesEntry{{AllocResp: make([]byte, checkpoint.MaxFileBytes)}}}
	_, err = checkpoint.Encode(huge)
	require.EqualError(t, err, "checkpoint: encoded file would be over the limit of 67108864 bytes", "Encode of an oversized checkpoint")
	// Escaping can take a file over the limit that its content alone is not.
	escaped := checkpoint.Data{RegisteredDevices: map[string][]string{"r": {strings.Repeat("<", checkpoint.MaxFileBytes/2)}}}
	_, err = checkpoint.Encode(escaped)
	require.ErrorContains(t, err, "encoded file would be over the limit of 67108864 bytes", "Encode of an oversized file")
}

func TestEncodeRefusesInvalidUTF8(t *testing.T) {
	for _, c := range []struct {
		data checkpoint.Data
		want string
	}{
		{checkpoint.Data{PodDeviceEntries: []checkpoint.PodDevicesEntry{{}, {ContainerName: "a\xffb"}}},
			`checkpoint: Data.PodDeviceEntries[1].ContainerName: string is not valid UTF-8`},
		{checkpoint.Data{PodDeviceEntries: []checkpoint.PodDevicesEntry{{DeviceIDs: checkpoint.DevicesPerNUMA{-1: {"ok", "\xc0"}}}}},
			`checkpoint: Data.PodDeviceEntries[0].DeviceIDs["-1"][1]: string is not valid UTF-8`},
		{checkpoint.Data{RegisteredDevices: map[string][]string{"\xfe": nil}},
			`checkpoint: Data.RegisteredDevices["\xfe"]: string is not valid UTF-8`},
		{checkpoint.Data{RegisteredDevices: map[string][]string{"r": {"\xed\xa0\x80"}}},
			`checkpoint: Data.RegisteredDevices["r"][0]: string is not valid UTF-8`},
	} {
		_, err := checkpoint.Encode(c.data)
		assert.EqualError(t, err, c.want, "Encode error\n got %v\nwant %s", err, c.want)
	}
}

func TestErrNotFound(t *testing.T) {
	require.Equal(t, "checkpoint is not found", checkpoint.ErrNotFound.Error(), "ErrNotFound = %q", checkpoint.ErrNotFound)
}
