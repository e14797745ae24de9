package integration

import (
	"os"
	"strconv"
	"testing"

	"github.com/nodeproof/nodeproof/agent/kube"
	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seedManifest holds seed 004's three pods as real manifests; the CLI's
// example uses the same file.
const seedManifest = "../docs/examples/seed004-pods.yaml"

// seedCgroup is what seed 004 says one cgroup holds, in the kubelet's v1
// units; 0 means the seed gives no number for that file.
type seedCgroup struct {
	shares      uint64
	quota       int64 // over the default 100ms period
	memoryBytes int64
	container   bool // written by the runtime: the quadratic weight on v2
}

// TestCgroupSeedWorkedExample applies seed 004's node on the real
// cgroupfs, with both drivers: its three pods read from the manifest
// through agent/kube, the hierarchy built by core on a node of 3 CPUs and
// 8 GiB with --qos-reserved=memory=100%. The files read back hold the
// seed's numbers: kubepods 3072 shares, the burstable tier 2048 and a
// 7 GiB limit (8 − 1 reserved for the Guaranteed pod), besteffort 2 and
// 5 GiB (7 − 2 for the Burstable pod), and each pod's and container's share.
func TestCgroupSeedWorkedExample(t *testing.T) {
	m := newCgroupManager(t, cpuCtrl, memoryCtrl, pidsCtrl)
	data, err := os.ReadFile(seedManifest)
	require.NoError(t, err)
	manifests, err := kube.Decode(data, kube.Options{})
	require.NoError(t, err, "decoding %s", seedManifest)
	pods := make([]*pod.Pod, len(manifests.Pods))
	for i := range manifests.Pods {
		pods[i] = &manifests.Pods[i]
	}
	const gi = int64(1) << 30
	want := map[cgroups.Driver]map[string]seedCgroup{
		cgroups.DriverCgroupfs: {
			"kubepods":            {shares: 3072, memoryBytes: 8 * gi},
			"kubepods/burstable":  {shares: 2048, memoryBytes: 7 * gi},
			"kubepods/besteffort": {shares: 2, memoryBytes: 5 * gi},
			"kubepods/pod5f0c1d2e-0000-4000-8000-000000000002":                       {shares: 1024, quota: 100000, memoryBytes: gi},
			"kubepods/pod5f0c1d2e-0000-4000-8000-000000000002/container3":            {shares: 1024, quota: 100000, memoryBytes: gi, container: true},
			"kubepods/burstable/pod5f0c1d2e-0000-4000-8000-000000000001":             {shares: 2048, quota: 300000, memoryBytes: 3 * gi},
			"kubepods/burstable/pod5f0c1d2e-0000-4000-8000-000000000001/container1":  {shares: 1024, quota: 100000, memoryBytes: gi, container: true},
			"kubepods/burstable/pod5f0c1d2e-0000-4000-8000-000000000001/container2":  {shares: 1024, quota: 200000, memoryBytes: 2 * gi, container: true},
			"kubepods/besteffort/pod5f0c1d2e-0000-4000-8000-000000000003":            {shares: 2},
			"kubepods/besteffort/pod5f0c1d2e-0000-4000-8000-000000000003/container4": {shares: 2, container: true},
		},
		cgroups.DriverSystemd: {
			"kubepods.slice": {shares: 3072, memoryBytes: 8 * gi},
			"kubepods.slice/kubepods-burstable.slice":                                                                                                    {shares: 2048, memoryBytes: 7 * gi},
			"kubepods.slice/kubepods-besteffort.slice":                                                                                                   {shares: 2, memoryBytes: 5 * gi},
			"kubepods.slice/kubepods-pod5f0c1d2e_0000_4000_8000_000000000002.slice":                                                                      {shares: 1024, quota: 100000, memoryBytes: gi},
			"kubepods.slice/kubepods-pod5f0c1d2e_0000_4000_8000_000000000002.slice/cri-containerd-container3.scope":                                      {shares: 1024, quota: 100000, memoryBytes: gi, container: true},
			"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod5f0c1d2e_0000_4000_8000_000000000001.slice":                                   {shares: 2048, quota: 300000, memoryBytes: 3 * gi},
			"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod5f0c1d2e_0000_4000_8000_000000000001.slice/cri-containerd-container1.scope":   {shares: 1024, quota: 100000, memoryBytes: gi, container: true},
			"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod5f0c1d2e_0000_4000_8000_000000000001.slice/cri-containerd-container2.scope":   {shares: 1024, quota: 200000, memoryBytes: 2 * gi, container: true},
			"kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod5f0c1d2e_0000_4000_8000_000000000003.slice":                                 {shares: 2},
			"kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod5f0c1d2e_0000_4000_8000_000000000003.slice/cri-containerd-container4.scope": {shares: 2, container: true},
		},
	}
	for _, driver := range []cgroups.Driver{cgroups.DriverCgroupfs, cgroups.DriverSystemd} {
		t.Run(string(driver), func(t *testing.T) {
			cfg := cgroups.DefaultConfig()
			cfg.CgroupDriver = driver
			cfg.Capacity = pod.ResourceList{pod.CPU: 3000, pod.Memory: 8 * gi}
			reserved := int64(100)
			cfg.QOSReservedMemoryPercent = &reserved
			h, err := cgroups.Build(cfg, pods)
			require.NoError(t, err, "Build")
			assert.Len(t, h, len(want[driver]), "core built %d cgroups, the seed has %d", len(h), len(want[driver]))
			require.NoError(t, m.Apply(h), "Apply")
			checkApplied(t, m, h, coreFiles(t, m.Version(), h))
			for _, cg := range h {
				seed, ok := want[driver][cg.Path]
				if !ok {
					t.Errorf("core built %s, which the seed does not have", cg.Path)
					continue
				}
				files := seedFiles(m.Version(), seed)
				names := make([]string, 0, len(files))
				for name := range files {
					names = append(names, name)
				}
				got, err := m.Read(cg.Path, names)
				require.NoError(t, err, "%s", cg.Path)
				for name, value := range files {
					assert.Equal(t, value, got[name], "%s: %s", cg.Path, name)
				}
			}
			require.NoError(t, m.Delete(), "Delete")
		})
	}
}

// seedFiles spells a seed cgroup's numbers as the interface files of
// version v hold them. The 1 GiB multiples are whole pages, so the kernel
// keeps them exactly; on v2 the shares become the weight of whoever writes
// the cgroup (the kubelet's linear formula, the runtime's quadratic one for
// containers), as core converts them.
func seedFiles(v cgroups.Version, c seedCgroup) map[string]string {
	out := map[string]string{}
	if v == cgroups.V1 {
		out["cpu.shares"] = strconv.FormatUint(c.shares, 10)
		if c.quota != 0 {
			out["cpu.cfs_quota_us"] = strconv.FormatInt(c.quota, 10)
			out["cpu.cfs_period_us"] = "100000"
		}
		if c.memoryBytes != 0 {
			out["memory.limit_in_bytes"] = strconv.FormatInt(c.memoryBytes, 10)
		}
		return out
	}
	weight := cgroups.CPUWeightLinear(c.shares)
	if c.container {
		weight = cgroups.CPUWeightQuadratic(c.shares)
	}
	out["cpu.weight"] = strconv.FormatUint(weight, 10)
	if c.quota != 0 {
		out["cpu.max"] = strconv.FormatInt(c.quota, 10) + " 100000"
	}
	if c.memoryBytes != 0 {
		out["memory.max"] = strconv.FormatInt(c.memoryBytes, 10)
	}
	return out
}
