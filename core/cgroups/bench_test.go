package cgroups_test

import (
	"fmt"
	"testing"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/require"
)

// BenchmarkBuild110Pods builds the hierarchy of a full node at the
// kubelet's default maxPods: 110 pods of every QoS class with sidecars,
// init containers and overhead, rendered for cgroup v2. configs/s is the
// figure BENCHMARKS.md records.
func BenchmarkBuild110Pods(b *testing.B) {
	c := cgroups.DefaultConfig()
	c.Capacity = pod.ResourceList{pod.CPU: 64000, pod.Memory: 256 * gi, cgroups.PIDs: 1 << 22, "hugepages-2Mi": 4 * gi}
	c.HugePageSizes = []int64{2 << 20, 1 << 30}
	c.CgroupDriver = cgroups.DriverSystemd
	p := int64(50)
	c.QOSReservedMemoryPercent = &p
	c.PodPidsLimit = 4096
	var pods []*pod.Pod
	for i := range 110 {
		p := &pod.Pod{UID: fmt.Sprintf("6f1c2b9e-%04d-4a7e-9b1d-3c2a1e0f%04d", i, i)}
		switch i % 3 {
		case 0: // Guaranteed with a sidecar
			p.InitContainers = []pod.Container{sidecar("proxy", rl("cpu", int64(100), "memory", 64*mi), rl("cpu", int64(100), "memory", 64*mi))}
			p.Containers = []pod.Container{ctr("app", rl("cpu", int64(250), "memory", 256*mi), rl("cpu", int64(250), "memory", 256*mi))}
		case 1: // Burstable with an init container and overhead
			p.InitContainers = []pod.Container{ctr("init", rl("cpu", int64(500)), nil)}
			p.Containers = []pod.Container{
				ctr("app", rl("cpu", int64(100), "memory", 128*mi), rl("memory", 512*mi)),
				ctr("log", rl("cpu", int64(10)), nil),
			}
			p.Overhead = rl("cpu", int64(50), "memory", 32*mi)
		default:
			p.Containers = []pod.Container{ctr("app", nil, nil)}
		}
		pods = append(pods, p)
	}
	configs := 0
	for b.Loop() {
		h, err := cgroups.Build(c, pods)
		require.NoError(b, err)
		_, err = h.Files(cgroups.V2)
		require.NoError(b, err)
		configs++
	}
	b.ReportMetric(float64(configs)/b.Elapsed().Seconds(), "configs/s")
}
