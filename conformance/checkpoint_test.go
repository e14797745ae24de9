package conformance

import (
	"fmt"
	"reflect"
	"testing"

	upstream "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/checkpoint"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
)

// genCheckpoint draws checkpoint content as the device manager holds it:
// nil and empty collections both occur (they encode differently: null
// against [] or {}), strings include characters encoding/json escapes, and
// AllocResp is arbitrary bytes (only its base64 matters here).
func genCheckpoint() *rapid.Generator[checkpoint.Data] {
	str := rapid.OneOf(
		rapid.SampledFrom([]string{"", "pod-a", "gpu0", "example.com/gpu", "<&>", "\u2028", "é\"\\\n"}),
		rapid.StringN(0, 12, -1),
	)
	ids := func(t *rapid.T, label string) []string {
		if rapid.IntRange(0, 5).Draw(t, label+".nil") == 0 {
			return nil
		}
		return rapid.SliceOfN(str, 0, 4).Draw(t, label)
	}
	return rapid.Custom(func(t *rapid.T) checkpoint.Data {
		var d checkpoint.Data
		n := rapid.IntRange(-1, 4).Draw(t, "entries")
		if n >= 0 {
			d.PodDeviceEntries = []checkpoint.PodDevicesEntry{}
		}
		for i := 0; i < n; i++ {
			at := fmt.Sprintf("entries[%d]", i)
			e := checkpoint.PodDevicesEntry{
				PodUID:        str.Draw(t, at+".podUID"),
				ContainerName: str.Draw(t, at+".container"),
				ResourceName:  str.Draw(t, at+".resource"),
			}
			if k := rapid.IntRange(-1, 3).Draw(t, at+".numaNodes"); k >= 0 {
				e.DeviceIDs = checkpoint.DevicesPerNUMA{}
				for j := 0; j < k; j++ {
					e.DeviceIDs[rapid.Int64Range(-1, 3).Draw(t, at+".numa")] = ids(t, at+".ids")
				}
			}
			if rapid.Bool().Draw(t, at+".hasAllocResp") {
				e.AllocResp = rapid.SliceOfN(rapid.Byte(), 0, 40).Draw(t, at+".allocResp")
			}
			d.PodDeviceEntries = append(d.PodDeviceEntries, e)
		}
		if k := rapid.IntRange(-1, 3).Draw(t, "resources"); k >= 0 {
			d.RegisteredDevices = map[string][]string{}
			for j := 0; j < k; j++ {
				d.RegisteredDevices[str.Draw(t, "resource")] = ids(t, "registered")
			}
		}
		return d
	})
}

func toUpstream(d checkpoint.Data) upstream.DeviceManagerCheckpoint {
	var entries []upstream.PodDevicesEntry
	if d.PodDeviceEntries != nil {
		entries = []upstream.PodDevicesEntry{}
	}
	for _, e := range d.PodDeviceEntries {
		var ids upstream.DevicesPerNUMA
		if e.DeviceIDs != nil {
			ids = upstream.DevicesPerNUMA{}
			for k, v := range e.DeviceIDs {
				ids[k] = v
			}
		}
		entries = append(entries, upstream.PodDevicesEntry{PodUID: e.PodUID, ContainerName: e.ContainerName,
			ResourceName: e.ResourceName, DeviceIDs: ids, AllocResp: e.AllocResp})
	}
	return upstream.New(entries, d.RegisteredDevices)
}

// TestCheckpointEncode compares the bytes of the file, checksum included,
// that each side writes for the same content.
func TestCheckpointEncode(t *testing.T) {
	Compare(t, Comparison[checkpoint.Data, string]{
		Name: "checkpoint.Encode",
		Gen:  genCheckpoint(),
		Ours: func(d checkpoint.Data) string {
			b, err := checkpoint.Encode(d)
			if err != nil {
				return "error: " + err.Error()
			}
			return string(b)
		},
		Theirs: func(d checkpoint.Data) string {
			b, err := toUpstream(d).MarshalCheckpoint()
			if err != nil {
				return "error: " + err.Error()
			}
			return string(b)
		},
	})
}

// decoded is what a reader gets from a file: the content, or the error.
type decoded struct {
	Data checkpoint.Data
	Err  string
}

// TestCheckpointDecode reads the file upstream writes with both readers:
// the same content back, and the checksum verifies on both sides.
func TestCheckpointDecode(t *testing.T) {
	write := func(d checkpoint.Data) []byte {
		b, err := toUpstream(d).MarshalCheckpoint()
		if err != nil {
			panic(err)
		}
		return b
	}
	Compare(t, Comparison[checkpoint.Data, decoded]{
		Name: "checkpoint.Decode",
		Gen:  genCheckpoint(),
		Ours: func(d checkpoint.Data) decoded {
			got, err := checkpoint.Decode(write(d))
			if err != nil {
				return decoded{Err: err.Error()}
			}
			return decoded{Data: got}
		},
		Theirs: func(d checkpoint.Data) decoded {
			cp := upstream.New(nil, nil)
			if err := cp.UnmarshalCheckpoint(write(d)); err != nil {
				return decoded{Err: err.Error()}
			}
			if err := cp.VerifyChecksum(); err != nil {
				return decoded{Err: err.Error()}
			}
			return decoded{Data: fromUpstream(cp.GetData())}
		},
		Equal: func(a, b decoded) bool { return reflect.DeepEqual(a, b) },
	})
}
