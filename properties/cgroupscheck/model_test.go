package cgroupscheck

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	model "github.com/nodeproof/nodeproof/models/cgroups"
)

const gi = int64(1) << 30

// node is a 2-CPU, 4 GiB node under the systemd driver with one Burstable
// pod, so that names, shares and limits all show in the files.
func node() (cgroups.Config, []*pod.Pod) {
	c := cgroups.DefaultConfig()
	c.CgroupDriver = cgroups.DriverSystemd
	c.Capacity = pod.ResourceList{pod.CPU: 2000, pod.Memory: 4 * gi}
	p := &pod.Pod{UID: "a-1", Containers: []pod.Container{{Name: "app",
		Requests: pod.ResourceList{pod.CPU: 500, pod.Memory: gi}, Limits: pod.ResourceList{pod.CPU: 1000, pod.Memory: gi}}}}
	return c, []*pod.Pod{p}
}

func render(t *testing.T, h cgroups.Hierarchy) map[cgroups.Version][]cgroups.CgroupFiles {
	t.Helper()
	files := map[cgroups.Version][]cgroups.CgroupFiles{}
	for _, v := range []cgroups.Version{cgroups.V1, cgroups.V2} {
		var err error
		files[v], err = h.Files(v)
		require.NoError(t, err)
	}
	return files
}

// TestCompareWithModelAgreesAndNamesTheFirstDifference: core and the model
// agree on a plain node, and a changed value or a missing cgroup is
// reported with the cgroup's position, path and both sides.
func TestCompareWithModelAgreesAndNamesTheFirstDifference(t *testing.T) {
	c, pods := node()
	h, err := cgroups.Build(c, pods)
	require.NoError(t, err)
	want, err := model.Expected(ModelInput(c, pods))
	require.NoError(t, err)
	files := render(t, h)
	require.NoError(t, CompareWithModel(files, want))

	last := len(files[cgroups.V2]) - 1
	changed := render(t, h)
	changed[cgroups.V2][last].Files[0].Value = "7"
	err = CompareWithModel(changed, want)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "v2 cgroup 4:")
	assert.Contains(t, err.Error(), "{cpu.weight 7}")
	assert.Contains(t, err.Error(), "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-poda_1.slice/cri-containerd-app.scope")

	short := render(t, h)
	short[cgroups.V1] = short[cgroups.V1][:last]
	assert.ErrorContains(t, CompareWithModel(short, want), "v1 cgroup 4:\n  core:   []")
}

// TestModelInputTakesTheLastThresholdOfEachSignal: the model's node has one
// memory.available quantity and one nodefs.available percentage; as in
// core, a later threshold on a signal replaces an earlier one, and other
// signals are left out.
func TestModelInputTakesTheLastThresholdOfEachSignal(t *testing.T) {
	c, _ := node()
	c.HardEviction = []cgroups.EvictionThreshold{
		{Signal: cgroups.SignalMemoryAvailable, Quantity: 1},
		{Signal: cgroups.SignalNodeFsAvailable, Percentage: 0.5},
		{Signal: "imagefs.available", Quantity: 7},
		{Signal: cgroups.SignalMemoryAvailable, Quantity: 2},
	}
	n, _ := ModelInput(c, nil)
	assert.Equal(t, int64(2), n.EvictionMemory)
	assert.Equal(t, float32(0.5), n.EvictionNodefsPercent)
}

// TestFitsIsAdmissionAgainstReportedAllocatable: requests are held against
// what the node reports, hard eviction and hugepages taken off memory.
func TestFitsIsAdmissionAgainstReportedAllocatable(t *testing.T) {
	c, pods := node()
	assert.True(t, Fits(c, pods))
	// 4 GiB less the default 100 MiB memory.available threshold is less
	// than four 1 GiB requests.
	four := []*pod.Pod{pods[0], pods[0], pods[0], pods[0]}
	assert.False(t, Fits(c, four))
	c.HardEviction = nil
	assert.True(t, Fits(c, four))
}
