package checkpoint_test

import (
	"fmt"
	"hash/fnv"
	"testing"

	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	"github.com/stretchr/testify/require"
)

// benchData builds a checkpoint shaped like a busy GPU node's: n container
// entries over two resources, each with two devices on one or two NUMA
// nodes and a typical plugin response, and eight registered devices per
// resource.
func benchData(n int) checkpoint.Data {
	resources := []string{"nvidia.com/gpu", "example.com/fpga"}
	d := checkpoint.Data{RegisteredDevices: map[string][]string{}}
	for _, r := range resources {
		var ids []string
		for i := range 8 {
			ids = append(ids, fmt.Sprintf("GPU-%08x-%d", i*7919, i))
		}
		d.RegisteredDevices[r] = ids
	}
	for i := range n {
		r := resources[i%len(resources)]
		dev := []string{fmt.Sprintf("GPU-%08x-%d", i*7919%8, i%8), fmt.Sprintf("GPU-%08x-%d", (i+1)*7919%8, (i+1)%8)}
		ids := checkpoint.DevicesPerNUMA{0: dev}
		if i%3 == 0 {
			ids = checkpoint.DevicesPerNUMA{0: dev[:1], 1: dev[1:]}
		}
		resp := allocresp.Marshal(allocresp.ContainerAllocateResponse{
			Envs:        map[string]string{"NVIDIA_VISIBLE_DEVICES": dev[0] + "," + dev[1]},
			Devices:     []allocresp.DeviceSpec{{ContainerPath: "/dev/nvidia0", HostPath: "/dev/nvidia0", Permissions: "rw"}},
			Annotations: map[string]string{"cdi.k8s.io/devices": "nvidia.com/gpu=" + dev[0]},
		})
		d.PodDeviceEntries = append(d.PodDeviceEntries, checkpoint.PodDevicesEntry{
			PodUID:        fmt.Sprintf("5f0c6f3e-9b1a-4c2d-8e7f-%012x", i),
			ContainerName: fmt.Sprintf("worker-%d", i),
			ResourceName:  r,
			DeviceIDs:     ids,
			AllocResp:     resp,
		})
	}
	return d
}

func BenchmarkEncode(b *testing.B) {
	for _, n := range []int{10, 100} {
		d := benchData(n)
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, err := checkpoint.Encode(d)
				require.NoError(b, err)
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, n := range []int{10, 100} {
		f, err := checkpoint.Encode(benchData(n))
		require.NoError(b, err)
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(f)))
			for b.Loop() {
				_, err := checkpoint.Decode(f)
				require.NoError(b, err)
			}
		})
	}
}

// BenchmarkChecksum sets Checksum against its floor: FNV-32a is a serial
// chain of multiplications, and hash/fnv over the already rendered input is
// as fast as that chain goes. Encode and Decode each pay it once.
func BenchmarkChecksum(b *testing.B) {
	d := benchData(10)
	b.Run("entries=10", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			checkpoint.Checksum(d)
		}
	})
	in := []byte(checkpoint.HashInput(d))
	b.Run(fmt.Sprintf("floor=hash-fnv-over-%d-bytes", len(in)), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h := fnv.New32a()
			h.Write(in)
			h.Sum32()
		}
	})
}
