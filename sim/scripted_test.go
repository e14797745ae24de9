package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/core/pod"
)

const scriptedResource = "nodeproof.io/dev"

func scriptedNode(t *testing.T) *Scripted {
	t.Helper()
	n, err := NewScripted(ScriptConfig{Resource: scriptedResource, Devices: []string{"d0", "d1", "d2", "d3"}})
	require.NoError(t, err)
	return n
}

// scriptedPod is a static pod whose containers ask for devices: main for
// its app container, init for a regular init container and sidecar for a
// sidecar when not negative. Guaranteed pods ask for 50m and 16Mi in each
// container.
func scriptedPod(name string, guaranteed bool, main, init, sidecar int) pod.Pod {
	ctr := func(cname string, devices int) pod.Container {
		c := pod.Container{Name: cname, Requests: pod.ResourceList{}, Limits: pod.ResourceList{}}
		if guaranteed {
			c.Requests[pod.CPU], c.Requests[pod.Memory] = 50, 16<<20
			c.Limits = c.Requests.Clone()
		}
		if devices > 0 {
			c.Requests[scriptedResource], c.Limits[scriptedResource] = int64(devices), int64(devices)
		}
		return c
	}
	p := pod.Pod{Name: name, Namespace: "default", Annotations: map[string]string{pod.ConfigSourceAnnotation: "file"},
		Containers: []pod.Container{ctr("main", main)}}
	if init >= 0 {
		p.InitContainers = append(p.InitContainers, ctr("init", init))
	}
	if sidecar >= 0 {
		c := ctr("sidecar", sidecar)
		c.RestartPolicy = pod.RestartAlways
		p.InitContainers = append(p.InitContainers, c)
	}
	return p
}

func predict(t *testing.T, n *Scripted) Prediction {
	t.Helper()
	p, err := n.Predict()
	require.NoError(t, err)
	return p
}

func TestScriptedAdmission(t *testing.T) {
	for name, tc := range map[string]struct {
		first, second pod.Pod
		admitted      bool
		message       string
	}{
		"the second fits":         {scriptedPod("a", false, 2, -1, -1), scriptedPod("b", false, 2, -1, -1), true, ""},
		"the second does not":     {scriptedPod("a", false, 3, -1, -1), scriptedPod("b", false, 2, -1, -1), false, "Requested: 2, Available: 1"},
		"a sidecar's devices add": {scriptedPod("a", false, 1, -1, 1), scriptedPod("b", false, 2, -1, 1), false, "Requested: 2, Available: 1"},
		// The init container's devices go back to the pod: its app
		// container takes them, and the next pod has the other two.
		"an init container's are reused": {scriptedPod("a", false, 2, 2, -1), scriptedPod("b", false, 2, -1, -1), true, ""},
		// Those the app container does not take stay the pod's.
		"an init container's stay its pod's": {scriptedPod("a", false, 2, 3, -1), scriptedPod("b", false, 2, -1, -1), false, "Requested: 2, Available: 1"},
	} {
		t.Run(name, func(t *testing.T) {
			n := scriptedNode(t)
			require.NoError(t, n.AddPod(tc.first))
			require.NoError(t, n.AddPod(tc.second))
			got := predict(t, n)
			require.Equal(t, pod.Running, got.Pods["a"].Phase)
			b := got.Pods["b"]
			if tc.admitted {
				require.Equal(t, pod.Running, b.Phase, "%s", b.Message)
				assert.Len(t, b.Held["main"], int(tc.second.Containers[0].Limits[scriptedResource]))
				return
			}
			assert.Equal(t, pod.Failed, b.Phase)
			assert.Equal(t, "UnexpectedAdmissionError", b.Reason)
			assert.Contains(t, b.Message, tc.message)
			assert.Empty(t, b.Held)
		})
	}
}

// An app container reuses its init container's devices: the checkpoint
// gives both the same set, and List's view (Held) leaves the init
// container out.
func TestScriptedInitReuse(t *testing.T) {
	n := scriptedNode(t)
	require.NoError(t, n.AddPod(scriptedPod("a", false, 2, 2, -1)))
	got := predict(t, n)
	a := got.Pods["a"]
	require.Equal(t, pod.Running, a.Phase)
	assert.Len(t, a.Held["main"], 2)
	assert.NotContains(t, a.Held, "init")
	byContainer := map[string][]string{}
	for _, e := range got.Checkpoint {
		for _, ids := range e.DeviceIDs {
			byContainer[e.ContainerName] = append(byContainer[e.ContainerName], ids...)
		}
	}
	assert.ElementsMatch(t, byContainer["init"], byContainer["main"])
}

func TestScriptedRestartKeepsCheckpoint(t *testing.T) {
	n := scriptedNode(t)
	require.NoError(t, n.AddPod(scriptedPod("a", true, 2, -1, 1)))
	before := predict(t, n)
	require.NoError(t, n.RestartKubelet())
	after := predict(t, n)
	assert.Equal(t, before.Pods["a"], after.Pods["a"], "the pod runs on with the devices the checkpoint gave it")
	assert.Equal(t, before.Checkpoint, after.Checkpoint)
	assert.Equal(t, int64(4), after.Allocatable)
	// The restarted kubelet allocates around them.
	require.NoError(t, n.AddPod(scriptedPod("b", false, 2, -1, -1)))
	assert.Equal(t, pod.Failed, predict(t, n).Pods["b"].Phase)
}

// SIM-F2: a running pod whose exited init container held devices is
// refused by the restarted kubelet, whose plugin has not registered again.
func TestScriptedRestartRefusesExitedInitDevices(t *testing.T) {
	n := scriptedNode(t)
	require.NoError(t, n.AddPod(scriptedPod("a", false, 0, 1, -1)))
	require.Equal(t, pod.Running, predict(t, n).Pods["a"].Phase)
	require.NoError(t, n.RestartKubelet())
	a := predict(t, n).Pods["a"]
	assert.Equal(t, pod.Failed, a.Phase)
	assert.Equal(t, "UnexpectedAdmissionError", a.Reason)
	assert.Contains(t, a.Message, "no healthy devices present; cannot allocate unhealthy devices "+scriptedResource)
	assert.Nil(t, a.Cgroup, "its cgroup went with it")
}

func TestScriptedHealthAndPluginRestart(t *testing.T) {
	n := scriptedNode(t)
	require.NoError(t, n.AddPod(scriptedPod("a", false, 1, -1, -1)))
	require.NoError(t, n.SetHealth(scriptedResource, "d2", false))
	assert.Equal(t, int64(3), predict(t, n).Allocatable)
	require.NoError(t, n.RestartPlugin(scriptedResource))
	got := predict(t, n)
	assert.Equal(t, int64(3), got.Allocatable, "the new plugin reports the same health")
	assert.Equal(t, pod.Running, got.Pods["a"].Phase)
	require.NoError(t, n.SetHealth(scriptedResource, "d2", true))
	assert.Equal(t, int64(4), predict(t, n).Allocatable)
}

func TestScriptedPodCgroups(t *testing.T) {
	n := scriptedNode(t)
	require.NoError(t, n.AddPod(scriptedPod("g", true, 0, 0, 0)))
	require.NoError(t, n.AddPod(scriptedPod("b", false, 0, -1, -1)))
	require.NoError(t, n.RemovePod("b"))
	require.NoError(t, n.AddPod(scriptedPod("e", false, 0, -1, -1)))
	got := predict(t, n)
	g := got.Pods["g"]
	assert.Equal(t, pod.Guaranteed, g.QOS)
	require.NotNil(t, g.Cgroup)
	assert.Equal(t, PodCgroup{Path: g.Cgroup.Path, MemoryLimit: 2 * 16 << 20, CPUQuota: 10000, CPUPeriod: 100000}, *g.Cgroup,
		"the app container's and the sidecar's limits, not the init container's")
	e := got.Pods["e"]
	assert.Equal(t, pod.BestEffort, e.QOS)
	require.NotNil(t, e.Cgroup)
	assert.Equal(t, int64(Unlimited), e.Cgroup.MemoryLimit)
	assert.Equal(t, int64(Unlimited), e.Cgroup.CPUQuota)
	assert.NotContains(t, got.Pods, "b", "a removed pod is gone")
}

func TestScriptedBadInput(t *testing.T) {
	for _, tc := range []struct {
		cfg  ScriptConfig
		want string
	}{
		{ScriptConfig{Resource: "cpu", Devices: []string{"d0"}}, "resource: \"cpu\" is not an extended resource name"},
		{ScriptConfig{Resource: scriptedResource}, "devices: must not be empty"},
		{ScriptConfig{Resource: scriptedResource, Devices: []string{"d0", ""}}, "devices[1]: must not be empty"},
		{ScriptConfig{Resource: scriptedResource, Devices: []string{"d0", "d0"}}, "devices[1]: \"d0\" is listed twice"},
	} {
		_, err := NewScripted(tc.cfg)
		assert.EqualError(t, err, tc.want)
	}
	n := scriptedNode(t)
	require.NoError(t, n.AddPod(scriptedPod("a", false, 0, -1, -1)))
	assert.EqualError(t, n.AddPod(scriptedPod("a", false, 0, -1, -1)), "pod.name: \"a\" is on the node already")
	assert.EqualError(t, n.AddPod(pod.Pod{}), "pod.name: must not be empty")
	assert.EqualError(t, n.RemovePod("x"), "name: no pod \"x\" on the node")
	assert.EqualError(t, n.SetHealth(scriptedResource, "d9", false), "id: the plugin of nodeproof.io/dev has no device \"d9\"")
	assert.EqualError(t, n.RestartPlugin("example.com/x"), "resource: no plugin of \"example.com/x\" on the node")
	require.NoError(t, n.RemovePod("a"))
	assert.EqualError(t, n.AddPod(scriptedPod("a", false, 0, -1, -1)), "pod.uid: \"a\" was used already")
	assert.ErrorContains(t, n.AddPod(pod.Pod{Name: "c", Containers: []pod.Container{{Name: "x"}, {Name: "x"}}}), "a core refused the glue")
}

// A restarted kubelet admits a refused static pod again, before the plugin
// has registered again: it is refused once more, for unhealthy devices.
func TestScriptedRestartAdmitsRefusedAgain(t *testing.T) {
	n := scriptedNode(t)
	require.NoError(t, n.AddPod(scriptedPod("a", false, 3, -1, 2)))
	require.Contains(t, predict(t, n).Pods["a"].Message, "Requested: 3, Available: 2")
	require.NoError(t, n.AddPod(scriptedPod("b", false, 1, -1, -1)))
	require.NoError(t, n.RemovePod("b"))
	require.NoError(t, n.AddPod(scriptedPod("c", false, 0, -1, -1)))
	require.NoError(t, n.RestartKubelet())
	got := predict(t, n)
	assert.Contains(t, got.Pods["a"].Message, "no healthy devices present")
	assert.Equal(t, pod.Running, got.Pods["c"].Phase)
	assert.NotContains(t, got.Pods, "b", "a removed pod is not admitted again")
}

// Reading the node collects a refused pod's devices in the device
// manager's memory; the checkpoint file drops them at its next write.
func TestScriptedPredictCollects(t *testing.T) {
	n := scriptedNode(t)
	require.NoError(t, n.AddPod(scriptedPod("a", false, 3, -1, 2)))
	got := predict(t, n)
	require.Equal(t, pod.Failed, got.Pods["a"].Phase)
	require.Len(t, got.Checkpoint, 1, "the sidecar's devices, allocated before the app container was refused")
	assert.Empty(t, n.sim.kubelet.devices.Holdings())
	require.NoError(t, n.RestartPlugin(scriptedResource))
	assert.Empty(t, predict(t, n).Checkpoint)
}

// A crashed container is started again at once, its devices kept; the
// pod's restarts count it, and a kubelet restart after it restarts
// nothing.
func TestScriptedCrashContainer(t *testing.T) {
	n := scriptedNode(t)
	require.NoError(t, n.AddPod(scriptedPod("a", true, 1, -1, 1)))
	before := predict(t, n).Pods["a"]
	require.Equal(t, pod.Running, before.Phase)
	require.NoError(t, n.CrashContainer("a", "main"))
	require.NoError(t, n.CrashContainer("a", "sidecar"))
	after := predict(t, n).Pods["a"]
	assert.Equal(t, pod.Running, after.Phase)
	assert.Equal(t, 2, after.Restarts)
	assert.Equal(t, before.Held, after.Held, "a restarted container holds the devices it held")
	require.NoError(t, n.RestartKubelet())
	assert.Equal(t, 2, predict(t, n).Pods["a"].Restarts)

	assert.EqualError(t, n.CrashContainer("x", "main"), "name: no pod \"x\" on the node")
	assert.EqualError(t, n.CrashContainer("a", "other"), "container: pod \"a\" has no container \"other\"")
	require.NoError(t, n.AddPod(scriptedPod("b", false, 0, 0, -1)))
	assert.EqualError(t, n.CrashContainer("b", "init"), "container: init of pod \"b\" is not running")
}
