package fuzz

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
)

// allocRespText draws valid UTF-8 strings (proto3 allows no other): empty
// ones, which proto3 omits, long ones, whose length takes two bytes, and
// multi-byte runes.
var allocRespText = rapid.OneOf(
	rapid.SampledFrom([]string{"", "a", "/dev/nvidia0", "rw", "é日本", strings.Repeat("x", 130)}),
	rapid.String(),
)

func allocRespMap(t *rapid.T, label string) map[string]string {
	if rapid.Bool().Draw(t, label+" nil") {
		return nil
	}
	return rapid.MapOfN(allocRespText, allocRespText, 0, 4).Draw(t, label)
}

func genAllocResp(t *rapid.T) allocresp.ContainerAllocateResponse {
	return allocresp.ContainerAllocateResponse{
		Envs: allocRespMap(t, "envs"),
		Mounts: rapid.SliceOfN(rapid.Custom(func(t *rapid.T) allocresp.Mount {
			return allocresp.Mount{ContainerPath: allocRespText.Draw(t, "cpath"), HostPath: allocRespText.Draw(t, "hpath"), ReadOnly: rapid.Bool().Draw(t, "ro")}
		}), 0, 3).Draw(t, "mounts"),
		Devices: rapid.SliceOfN(rapid.Custom(func(t *rapid.T) allocresp.DeviceSpec {
			return allocresp.DeviceSpec{ContainerPath: allocRespText.Draw(t, "cpath"), HostPath: allocRespText.Draw(t, "hpath"), Permissions: allocRespText.Draw(t, "perm")}
		}), 0, 3).Draw(t, "devices"),
		Annotations: allocRespMap(t, "annotations"),
		CDIDevices: rapid.SliceOfN(rapid.Custom(func(t *rapid.T) allocresp.CDIDevice {
			return allocresp.CDIDevice{Name: allocRespText.Draw(t, "name")}
		}), 0, 3).Draw(t, "cdi"),
	}
}

// toReal builds the generated message with the same content as r.
func toReal(r allocresp.ContainerAllocateResponse) *v1beta1.ContainerAllocateResponse {
	m := &v1beta1.ContainerAllocateResponse{Envs: r.Envs, Annotations: r.Annotations}
	for _, x := range r.Mounts {
		m.Mounts = append(m.Mounts, &v1beta1.Mount{ContainerPath: x.ContainerPath, HostPath: x.HostPath, ReadOnly: x.ReadOnly})
	}
	for _, x := range r.Devices {
		m.Devices = append(m.Devices, &v1beta1.DeviceSpec{ContainerPath: x.ContainerPath, HostPath: x.HostPath, Permissions: x.Permissions})
	}
	for _, x := range r.CDIDevices {
		m.CdiDevices = append(m.CdiDevices, &v1beta1.CDIDevice{Name: x.Name})
	}
	return m
}

// fromReal is the inverse of toReal, with empty collections as nil, which is
// how allocresp.Unmarshal returns them.
func fromReal(m *v1beta1.ContainerAllocateResponse) allocresp.ContainerAllocateResponse {
	var r allocresp.ContainerAllocateResponse
	if len(m.Envs) > 0 {
		r.Envs = m.Envs
	}
	if len(m.Annotations) > 0 {
		r.Annotations = m.Annotations
	}
	for _, x := range m.Mounts {
		r.Mounts = append(r.Mounts, allocresp.Mount{ContainerPath: x.ContainerPath, HostPath: x.HostPath, ReadOnly: x.ReadOnly})
	}
	for _, x := range m.Devices {
		r.Devices = append(r.Devices, allocresp.DeviceSpec{ContainerPath: x.ContainerPath, HostPath: x.HostPath, Permissions: x.Permissions})
	}
	for _, x := range m.CdiDevices {
		r.CDIDevices = append(r.CDIDevices, allocresp.CDIDevice{Name: x.Name})
	}
	return r
}

// normalAllocResp maps empty collections to nil: the wire format cannot tell
// them apart.
func normalAllocResp(r allocresp.ContainerAllocateResponse) allocresp.ContainerAllocateResponse {
	return fromReal(toReal(r))
}

// TestAllocRespMatchesProtobuf checks the hand-written codec against
// google.golang.org/protobuf and the generated v1beta1 type: proto.Unmarshal
// reads our bytes, our Marshal equals the deterministic real one, and our
// Unmarshal reads the real bytes.
func TestAllocRespMatchesProtobuf(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := genAllocResp(t)
		want := normalAllocResp(r)
		ours := allocresp.Marshal(r)

		var m v1beta1.ContainerAllocateResponse
		require.NoError(t, proto.Unmarshal(ours, &m), "proto.Unmarshal of our bytes % x", ours)
		require.Equal(t, want, fromReal(&m), "proto.Unmarshal of our bytes % x", ours)

		real, err := proto.MarshalOptions{Deterministic: true}.Marshal(toReal(r))
		require.NoError(t, err, "proto.Marshal")
		// hex.Dump, not the slices themselves: a nil and an empty encoding
		// are the same bytes (require.Equal would tell them apart), and the
		// diff then points at the line of 16 bytes that differs.
		require.Equal(t, hex.Dump(real), hex.Dump(ours), "Marshal differs from protobuf")

		got, err := allocresp.Unmarshal(real)
		require.NoError(t, err, "Unmarshal of protobuf's bytes % x", real)
		require.Equal(t, want, got, "Unmarshal of protobuf's bytes % x", real)
	})
}

// FuzzAllocRespMatchesProtobuf holds Unmarshal to proto.Unmarshal on
// arbitrary bytes: both accept or both reject, and what both accept reads
// the same. The one allowed difference is Unmarshal's entry bound, which
// protobuf does not have. It is apart from FuzzAllocRespUnmarshal (package
// fuzz/allocresp, the decoder's own round trip) because protobuf's coverage
// counters make every execution here several times slower. The seed corpus
// is in testdata/fuzz/FuzzAllocRespMatchesProtobuf.
func FuzzAllocRespMatchesProtobuf(f *testing.F) {
	f.Add(allocresp.Marshal(allocresp.ContainerAllocateResponse{
		Envs:        map[string]string{"NVIDIA_VISIBLE_DEVICES": "GPU-0"},
		Mounts:      []allocresp.Mount{{ContainerPath: "/usr/lib", HostPath: "/opt/lib", ReadOnly: true}},
		Devices:     []allocresp.DeviceSpec{{ContainerPath: "/dev/nvidia0", HostPath: "/dev/nvidia0", Permissions: "rw"}},
		Annotations: map[string]string{"cdi.k8s.io/x": "vendor.com/gpu=0"},
		CDIDevices:  []allocresp.CDIDevice{{Name: "vendor.com/gpu=0"}},
	}))
	f.Add([]byte{0x33, 0x08, 0x01, 0x3b, 0x3c, 0x34, 0x31, 1, 2, 3, 4, 5, 6, 7, 8, 0x12, 0x02, 0x18, 0x02})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := allocresp.Unmarshal(b)
		var m v1beta1.ContainerAllocateResponse
		realErr := proto.Unmarshal(b, &m)
		if realErr != nil {
			require.Error(t, err, "Unmarshal(% x) accepts what proto.Unmarshal rejects: %v", b, realErr)
			return
		}
		if err != nil && strings.Contains(err.Error(), "repeated and map entries") {
			return // the entry bound
		}
		require.NoError(t, err, "Unmarshal(% x), which proto.Unmarshal accepts", b)
		require.Equal(t, fromReal(&m), got, "Unmarshal(% x)", b)
	})
}
