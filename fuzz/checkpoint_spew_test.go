package fuzz

import (
	"hash/fnv"
	"math"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	mirror "github.com/nodeproof/nodeproof/fuzz/internal/checkpoint"
)

// checkpointText draws strings that stress both renderings: spew's
// separators and nil marker, JSON's escapes and HTML escapes, controls,
// U+2028/U+2029, DEL, multi-byte runes, and arbitrary bytes (often invalid
// UTF-8).
var checkpointText = rapid.OneOf(
	rapid.SampledFrom([]string{
		"", " ", "a b", `"`, `\`, "<>&", "\u2028\u2029", "\x00\x01\x1f", "\b\f\n\r\t", "\x7f",
		"é", "日本", "\ufffd", "map[a:b]", "<nil>", "[x y]", "{}", ":", "null", "10", "\xff", "a\xc0b", "\xed\xa0\x80",
	}),
	rapid.String(),
	rapid.Map(rapid.SliceOfN(rapid.Byte(), 0, 8), func(b []byte) string { return string(b) }),
)

var checkpointNUMA = rapid.OneOf(
	rapid.Int64Range(-2, 12),
	rapid.SampledFrom([]int64{math.MinInt64, math.MaxInt64, -10, 100, 1 << 40}),
	rapid.Int64(),
)

// checkpointIDs draws nil, an empty list, or a list with possible repeats.
func checkpointIDs(t *rapid.T, label string) []string {
	switch rapid.IntRange(0, 3).Draw(t, label+" shape") {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	l := make([]string, rapid.IntRange(1, 4).Draw(t, label+" len"))
	for i := range l {
		l[i] = checkpointText.Draw(t, label)
	}
	return l
}

// genCheckpointData draws checkpoint data with nil and empty collections at
// every level and AllocResp nil, empty or arbitrary.
func genCheckpointData(t *rapid.T) checkpoint.Data {
	var d checkpoint.Data
	if !rapid.Bool().Draw(t, "entries nil") {
		d.PodDeviceEntries = []checkpoint.PodDevicesEntry{}
		for range rapid.IntRange(0, 4).Draw(t, "entries") {
			e := checkpoint.PodDevicesEntry{
				PodUID:        checkpointText.Draw(t, "pod"),
				ContainerName: checkpointText.Draw(t, "container"),
				ResourceName:  checkpointText.Draw(t, "resource"),
			}
			if !rapid.Bool().Draw(t, "DeviceIDs nil") {
				e.DeviceIDs = checkpoint.DevicesPerNUMA{}
				for range rapid.IntRange(0, 4).Draw(t, "numa nodes") {
					e.DeviceIDs[checkpointNUMA.Draw(t, "numa")] = checkpointIDs(t, "device")
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
			d.RegisteredDevices[checkpointText.Draw(t, "name")] = checkpointIDs(t, "registered")
		}
	}
	return d
}

// toMirror converts d to the kubelet's types, keeping nil as nil.
func toMirror(d checkpoint.Data) ([]mirror.PodDevicesEntry, map[string][]string) {
	var entries []mirror.PodDevicesEntry
	if d.PodDeviceEntries != nil {
		entries = []mirror.PodDevicesEntry{}
	}
	for _, e := range d.PodDeviceEntries {
		entries = append(entries, mirror.PodDevicesEntry{
			PodUID:        e.PodUID,
			ContainerName: e.ContainerName,
			ResourceName:  e.ResourceName,
			DeviceIDs:     mirror.DevicesPerNUMA(e.DeviceIDs),
			AllocResp:     e.AllocResp,
		})
	}
	return entries, d.RegisteredDevices
}

// validUTF8 reports whether every string in d is valid UTF-8, which is what
// Encode requires.
func validUTF8(d checkpoint.Data) bool {
	valid := func(l ...string) bool {
		for _, s := range l {
			if !utf8.ValidString(s) {
				return false
			}
		}
		return true
	}
	for _, e := range d.PodDeviceEntries {
		if !valid(e.PodUID, e.ContainerName, e.ResourceName) {
			return false
		}
		for _, ids := range e.DeviceIDs {
			if !valid(ids...) {
				return false
			}
		}
	}
	for name, ids := range d.RegisteredDevices {
		if !valid(name) || !valid(ids...) {
			return false
		}
	}
	return true
}

// TestCheckpointMatchesSpewAndJSON checks the hand-written renderings of
// core/devicemanager/checkpoint against the libraries the kubelet uses:
// HashInput against go-spew with dump.ForHash's configuration on a mirror of
// the kubelet's types, Checksum against hash/fnv over it, and Encode against
// encoding/json. Encode refuses invalid UTF-8, where encoding/json would
// write U+FFFD and the kubelet could not verify its own file.
func TestCheckpointMatchesSpewAndJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := genCheckpointData(t)
		entries, registered := toMirror(d)

		want := mirror.HashInput(entries, registered)
		require.Equal(t, want, checkpoint.HashInput(d), "HashInput differs from go-spew")
		h := fnv.New32a()
		h.Write([]byte(want))
		sum := checkpoint.Checksum(d)
		require.Equal(t, uint64(h.Sum32()), sum, "Checksum against FNV-32a of the spew string")

		got, err := checkpoint.Encode(d)
		if !validUTF8(d) {
			require.ErrorContains(t, err, "not valid UTF-8", "Encode of invalid UTF-8 = %q", got)
			return
		}
		require.NoError(t, err, "Encode")
		file, err := mirror.File(entries, registered, sum)
		require.NoError(t, err, "mirror.File")
		require.Equal(t, string(file), string(got), "Encode differs from encoding/json")
	})
}

// TestCheckpointSpecExampleMatchesSpew pins the mirror itself to spec 1.10's
// worked example, printed by the kubelet v1.36.3.
func TestCheckpointSpecExampleMatchesSpew(t *testing.T) {
	entries := []mirror.PodDevicesEntry{{
		PodUID: "pod1", ContainerName: "con1", ResourceName: "domain1.com/resource1",
		DeviceIDs: mirror.DevicesPerNUMA{-1: {"dev3"}, 0: {"dev1", "dev2"}, 2: {"dev9"}, 10: {"dev10"}},
		AllocResp: []byte{10, 1, 255},
	}}
	registered := map[string][]string{"a.com/b": nil, "domain1.com/resource1": {"dev1", "dev2", "dev3"}}
	const want = `(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)[{PodUID:(string)pod1 ContainerName:(string)con1 ResourceName:(string)domain1.com/resource1 DeviceIDs:(checkpoint.DevicesPerNUMA)map[-1:[dev3] 0:[dev1 dev2] 2:[dev9] 10:[dev10]] AllocResp:([]uint8)[10 1 255]}] RegisteredDevices:(map[string][]string)map[a.com/b:<nil> domain1.com/resource1:[dev1 dev2 dev3]]}`
	require.Equal(t, want, mirror.HashInput(entries, registered), "mirror spew")
	const file = `{"Data":{"PodDeviceEntries":[{"PodUID":"pod1","ContainerName":"con1","ResourceName":"domain1.com/resource1","DeviceIDs":{"-1":["dev3"],"0":["dev1","dev2"],"10":["dev10"],"2":["dev9"]},"AllocResp":"CgH/"}],"RegisteredDevices":{"a.com/b":null,"domain1.com/resource1":["dev1","dev2","dev3"]}},"Checksum":103353102}`
	got, err := mirror.File(entries, registered, 103353102)
	require.NoError(t, err, "mirror JSON")
	require.Equal(t, file, string(got), "mirror JSON")
}
