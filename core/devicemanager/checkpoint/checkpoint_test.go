package checkpoint_test

import (
	"bytes"
	"encoding/json"
	"fmt"
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
			require.NoError(t, err, "Encode")
			assert.Equal(t, c.file, string(got), "Encode")
			d, err := checkpoint.Decode([]byte(c.file))
			require.NoError(t, err, "Decode(%s)", c.file)
			assert.Equal(t, c.data, d, "Decode(%s)", c.file)
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
		require.Equal(t, uint64(h.Sum32()), sum, "Checksum against FNV-32a of HashInput")
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
		require.Equal(t, string(want), string(got), "Encode differs from encoding/json")
	})
}

// TestSingleByteChangeKeepsContentOrIsRejected replaces each byte of valid
// files in turn. The checksum covers the decoded content, so a changed file
// may load only when its content is the same (a field name in another letter
// case, say, or a key the kubelet ignores), and then it is not canonical. The
// one excuse is a genuine FNV-32a collision, which the kubelet's format
// cannot detect.
func TestSingleByteChangeKeepsContentOrIsRejected(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := genData(t)
		b, err := checkpoint.Encode(d)
		require.NoError(t, err, "Encode")
		delta := rapid.ByteRange(1, 255).Draw(t, "delta")
		m := make([]byte, len(b))
		for i := range b {
			copy(m, b)
			m[i] += delta
			f, err := checkpoint.Read(m)
			if err != nil || f.Verify() != nil {
				continue
			}
			require.False(t, f.Canonical(), "Read calls %s canonical (byte %d of %s changed)", m, i, b)
			// Equal content has equal checksums, so only content that differs
			// reaches Equal, which then fails with the diff; other content
			// with the same checksum is an FNV-32a collision and excused.
			if checkpoint.Checksum(f.Data) != checkpoint.Checksum(d) {
				require.Equal(t, d, f.Data, "Decode accepted %s (byte %d of %s changed) as other content", m, i, b)
			}
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
		require.NoError(t, err, "Decode(%s)", f)
		require.Equal(t, d, got, "Decode(%s)", f)
	}
}

// TestDecodeAcceptsWhatTheKubeletAccepts spells the spec example in ways
// the kubelet's encoding/json reads as the same content, so its checksum
// verifies and the kubelet loads the file; Decode must too. (Before Decode
// followed the kubelet, it refused all of these as not canonical.)
func TestDecodeAcceptsWhatTheKubeletAccepts(t *testing.T) {
	var indented strings.Builder
	{
		var b bytes.Buffer
		require.NoError(t, json.Indent(&b, []byte(specFile), "", "    "))
		indented.Write(b.Bytes())
	}
	for _, c := range []struct{ name, in string }{
		{"reindented as python3 -m json.tool writes it", indented.String() + "\n"},
		{"trailing newline", specFile + "\n"},
		{"whitespace around every token", strings.NewReplacer(":", " : ", ",", " ,\t", "{", "{\r\n").Replace(specFile)},
		{"keys reordered", `{"Checksum":103353102,"Data":{"RegisteredDevices":{"domain1.com/resource1":["dev1","dev2","dev3"],"a.com/b":null},"PodDeviceEntries":[{"AllocResp":"CgH/","DeviceIDs":{"2":["dev9"],"10":["dev10"],"0":["dev1","dev2"],"-1":["dev3"]},"ResourceName":"domain1.com/resource1","ContainerName":"con1","PodUID":"pod1"}]}}`},
		{"field names in another letter case", strings.NewReplacer(`"Data"`, `"data"`, `"PodUID"`, `"poduid"`, `"Checksum"`, `"CHECKSUM"`).Replace(specFile)},
		{"unknown fields", strings.NewReplacer(`"PodUID"`, `"Extra":[1,{"x":null}],"PodUID"`, `,"Checksum"`, `,"Version":"v2","Checksum"`).Replace(specFile)},
		{"unicode and slash escapes", strings.NewReplacer(`"pod1"`, `"\u0070od1"`, `"domain1.com/resource1"`, `"domain1.com\/resource1"`).Replace(specFile)},
		{"NUMA keys with a sign or leading zeros", strings.NewReplacer(`"2":`, `"+2":`, `"0":`, `"00":`, `"-1":`, `"-01":`).Replace(specFile)},
		{"base64 broken by a line feed", strings.Replace(specFile, `"CgH/"`, `"Cg\nH/"`, 1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := checkpoint.Decode([]byte(c.in))
			require.NoError(t, err, "Decode(%s)", c.in)
			assert.Equal(t, specData, d, "Decode(%s)", c.in)
		})
	}
}

// TestReadNotesNonCanonicalBytes: a respelled file reads as the same
// content with the same checksums, and Read says where its bytes first
// differ from what the kubelet writes.
func TestReadNotesNonCanonicalBytes(t *testing.T) {
	for _, c := range []struct {
		name, in string
		at       int
	}{
		{"canonical", specFile, -1},
		{"trailing newline", specFile + "\n", len(specFile)},
		{"space after the first colon", strings.Replace(specFile, ":", ": ", 1), 8},
	} {
		f, err := checkpoint.Read([]byte(c.in))
		require.NoError(t, err, "%s: Read", c.name)
		want := checkpoint.File{Data: specData, StoredChecksum: 103353102, ComputedChecksum: 103353102, NonCanonicalAt: c.at}
		assert.Equal(t, want, f, "%s: Read", c.name)
		assert.Equal(t, c.at < 0, f.Canonical(), "%s: Canonical", c.name)
		assert.NoError(t, f.Verify(), "%s: Verify", c.name)
	}
}

// TestReadTakesContentAsTheKubeletDecodesIt covers what encoding/json makes
// of odd input: invalid UTF-8 becomes U+FFFD, a repeated key is decoded over
// the earlier value (maps merge), and a file of null is empty content with
// checksum 0. The checksum is over that content, as in the kubelet.
func TestReadTakesContentAsTheKubeletDecodesIt(t *testing.T) {
	replaced := checkpoint.Data{RegisteredDevices: map[string][]string{"r\ufffd": {"\ufffd\ufffd"}}}
	merged := checkpoint.Data{RegisteredDevices: map[string][]string{"a": {"x"}, "b": nil}}
	for _, c := range []struct {
		name, in string
		want     checkpoint.Data
		stored   uint64
	}{
		{"invalid UTF-8", fmt.Sprintf("{\"Data\":{\"RegisteredDevices\":{\"r\xff\":[\"\xc0\\ud800\"]}},\"Checksum\":%d}", checkpoint.Checksum(replaced)),
			replaced, checkpoint.Checksum(replaced)},
		{"repeated key", fmt.Sprintf(`{"Data":{"RegisteredDevices":{"a":["x"]},"RegisteredDevices":{"b":null}},"Checksum":%d}`, checkpoint.Checksum(merged)),
			merged, checkpoint.Checksum(merged)},
		{"null", "null", checkpoint.Data{}, 0},
	} {
		f, err := checkpoint.Read([]byte(c.in))
		require.NoError(t, err, "%s: Read(%q)", c.name, c.in)
		assert.Equal(t, c.want, f.Data, "%s: Read(%q) content", c.name, c.in)
		assert.Equal(t, c.stored, f.StoredChecksum, "%s: Read(%q) stored checksum", c.name, c.in)
		assert.Equal(t, checkpoint.Checksum(c.want), f.ComputedChecksum, "%s: Read(%q) computed checksum", c.name, c.in)
		assert.False(t, f.Canonical(), "%s: Read(%q) is canonical", c.name, c.in)
	}
	// The file of null stores no checksum, so it does not verify.
	_, err := checkpoint.Decode([]byte("null"))
	assert.ErrorAs(t, err, new(*checkpoint.CorruptError), "Decode(null)")
}

func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
	}{
		{"truncated", specFile[:100], `checkpoint: invalid JSON at byte 100: unexpected end of JSON input`},
		{"empty", "", `checkpoint: invalid JSON at byte 0: unexpected end of JSON input`},
		{"trailing data", emptyFile + "x", `checkpoint: invalid JSON at byte 80: invalid character 'x' after top-level value`},
		{"legacy V1", `{"Data":{"PodDeviceEntries":[{"PodUID":"p","ContainerName":"c","ResourceName":"r","DeviceIDs":["dev1"],"AllocResp":""}],"RegisteredDevices":{}},"Checksum":1}`,
			`checkpoint: Data.PodDeviceEntries.DeviceIDs: found an array at byte 95, want an object keyed by NUMA node: this is the legacy V1 checkpoint format, which the kubelet has not read since v1.30`},
		{"NUMA key", `{"Data":{"PodDeviceEntries":[{},{},{},{"DeviceIDs":{"x":[]}}]}}`, `checkpoint: Data.PodDeviceEntries.DeviceIDs: NUMA key "x" at byte 53 is not a decimal int64`},
		{"NUMA range", `{"Data":{"PodDeviceEntries":[{"DeviceIDs":{"9223372036854775808":[]}}]}}`, `checkpoint: Data.PodDeviceEntries.DeviceIDs: NUMA key "9223372036854775808" at byte 44 is not a decimal int64`},
		{"device ID type", `{"Data":{"RegisteredDevices":{"r":["a",1]}}}`, `checkpoint: Data.RegisteredDevices: found a number at byte 40, want a string`},
		{"string type", `{"Data":{"PodDeviceEntries":[{"PodUID":1}]}}`, `checkpoint: Data.PodDeviceEntries.PodUID: found a number at byte 40, want a string`},
		{"entries type", `{"Data":{"PodDeviceEntries":{}}}`, `checkpoint: Data.PodDeviceEntries: found an object at byte 29, want an array of entries or null`},
		{"entry type", `{"Data":{"PodDeviceEntries":[[]]}}`, `checkpoint: Data.PodDeviceEntries: found an array at byte 30, want an object`},
		{"registered type", `{"Data":{"RegisteredDevices":{"a":{}}}}`, `checkpoint: Data.RegisteredDevices: found an object at byte 35, want an array of device ID strings or null`},
		{"file type", `[]`, `checkpoint: the file: found an array at byte 1, want an object`},
		{"base64", `{"Data":{"PodDeviceEntries":[{"AllocResp":"C"}]}}`, `checkpoint: Data.PodDeviceEntries.AllocResp: not valid base64: illegal base64 data at input byte 0`},
		{"checksum sign", `{"Checksum":-1}`, `checkpoint: Checksum: found the number -1 at byte 14, want an unsigned 64-bit integer in digits only`},
		{"checksum exponent", `{"Checksum":1e0}`, `checkpoint: Checksum: found the number 1e0 at byte 15, want an unsigned 64-bit integer in digits only`},
		{"checksum range", `{"Checksum":18446744073709551616}`, `checkpoint: Checksum: found the number 18446744073709551616 at byte 32, want an unsigned 64-bit integer in digits only`},
		{"checksum string", `{"Checksum":"5"}`, `checkpoint: Checksum: found a string at byte 15, want an unsigned 64-bit integer in digits only`},
		{"leading zero", strings.Replace(emptyFile, "3467439661", "03467439661", 1), `checkpoint: invalid JSON at byte 70: invalid character '3' after object key:value pair`},
		{"bad escape", `{"Data":{"RegisteredDevices":{"\x":[]}}}`, `checkpoint: invalid JSON at byte 33: invalid character 'x' in string escape code`},
		{"raw control character", "{\"Data\":{\"RegisteredDevices\":{\"a\nb\":[]}}}", `checkpoint: invalid JSON at byte 33: invalid character '\n' in string literal`},
		{"separator", `{"Data":{"RegisteredDevices":{"a":[] "b":[]}}}`, `checkpoint: invalid JSON at byte 38: invalid character '"' after object key:value pair`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := checkpoint.Decode([]byte(c.in))
			require.EqualError(t, err, c.want, "Decode(%q)", c.in)
		})
	}
}

func TestDecodeCorrupt(t *testing.T) {
	in := strings.Replace(specFile, "103353102", "103353103", 1)
	_, err := checkpoint.Decode([]byte(in))
	var ce *checkpoint.CorruptError
	require.ErrorAs(t, err, &ce, "Decode")
	require.EqualError(t, err, "checkpoint is corrupted")
	require.Equal(t, checkpoint.CorruptError{Actual: 103353102, Expected: 103353103}, *ce, "Decode error")
	// Read keeps the content of the file the kubelet refuses, for a tool to
	// show.
	f, err := checkpoint.Read([]byte(in))
	want := checkpoint.File{Data: specData, StoredChecksum: 103353103, ComputedChecksum: 103353102, NonCanonicalAt: -1}
	require.NoError(t, err, "Read")
	require.Equal(t, want, f, "Read")
	require.ErrorAs(t, f.Verify(), &ce, "Verify of the file Read kept")
	// A changed device ID keeps the stored checksum, which no longer matches.
	in = strings.Replace(specFile, `"dev9"`, `"dev8"`, 1)
	_, err = checkpoint.Decode([]byte(in))
	require.ErrorAs(t, err, &ce, "Decode of a changed device ID")
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
	require.EqualError(t, err, `checkpoint: Data: 1048578 items (entries, NUMA nodes, resources and device IDs), over the limit of 1048576`, "Decode of too many items")
	// Separators are counted before parsing; those inside strings do not
	// count, and the limit leaves room for every file Encode writes.
	in = `{"Data":{"RegisteredDevices":{"r":["` + strings.Repeat(`,[{`, checkpoint.MaxSeparators) + `"]}}}`
	_, err = checkpoint.Read([]byte(in))
	require.NoError(t, err, "Read of separators inside a string")
	in = `{"Data":{"PodDeviceEntries":[` + strings.Repeat(`{},`, checkpoint.MaxSeparators/2) + `{}]}}`
	_, err = checkpoint.Read([]byte(in))
	require.EqualError(t, err, `checkpoint: file has 8388612 brackets, braces and commas outside strings, over the limit of 8388608`, "Read of too many separators")

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
		// The first bad ID is named, even when it is the first of several.
		{checkpoint.Data{RegisteredDevices: map[string][]string{"r": {"\xff", "ok", "\xfe"}}},
			`checkpoint: Data.RegisteredDevices["r"][0]: string is not valid UTF-8`},
		// A lone continuation byte is 0x80, the first byte above ASCII.
		{checkpoint.Data{RegisteredDevices: map[string][]string{"r": {"ok", "\x80"}}},
			`checkpoint: Data.RegisteredDevices["r"][1]: string is not valid UTF-8`},
		{checkpoint.Data{PodDeviceEntries: []checkpoint.PodDevicesEntry{{DeviceIDs: checkpoint.DevicesPerNUMA{0: {"\xc0"}}}}},
			`checkpoint: Data.PodDeviceEntries[0].DeviceIDs["0"][0]: string is not valid UTF-8`},
	} {
		_, err := checkpoint.Encode(c.data)
		assert.EqualError(t, err, c.want, "Encode(%#v)", c.data)
	}
}

func TestErrNotFound(t *testing.T) {
	require.EqualError(t, checkpoint.ErrNotFound, "checkpoint is not found")
}

// TestBoundsAreInclusive checks the other side of each bound TestBounds
// enforces: a file of exactly MaxFileBytes bytes, exactly MaxSeparators
// separators and exactly MaxItems items is read.
func TestBoundsAreInclusive(t *testing.T) {
	small, err := checkpoint.Encode(checkpoint.Data{})
	require.NoError(t, err)
	padded := append(small, bytes.Repeat([]byte{' '}, checkpoint.MaxFileBytes-len(small))...)
	_, err = checkpoint.Read(padded)
	require.NoError(t, err, "Read of a file of exactly %d bytes", checkpoint.MaxFileBytes)

	// `{`, the comma after "Y":0 and `[` make 3; each further array is an
	// opening bracket and the comma before it: 2n+2 for n arrays.
	arrays := func(n int) []byte {
		return []byte(`{"Y":0,"X":[` + strings.Repeat(`[],`, n-1) + `[]]}`)
	}
	_, err = checkpoint.Read(arrays(checkpoint.MaxSeparators/2 - 1))
	require.NoError(t, err, "Read of exactly %d separators", checkpoint.MaxSeparators)
	_, err = checkpoint.Read(arrays(checkpoint.MaxSeparators / 2))
	require.EqualError(t, err, `checkpoint: file has 8388610 brackets, braces and commas outside strings, over the limit of 8388608`)

	// One resource and MaxItems-1 device IDs.
	in := `{"Data":{"RegisteredDevices":{"r":[` + strings.Repeat(`"",`, checkpoint.MaxItems-2) + `""]}}}`
	_, err = checkpoint.Read([]byte(in))
	require.NoError(t, err, "Read of exactly %d items", checkpoint.MaxItems)
}
