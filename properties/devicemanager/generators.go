package devicemanager

import (
	"fmt"
	"time"

	"pgregory.net/rapid"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/pod"
)

// The generated world is small on purpose: few resources and devices make
// collisions, reuse and exhaustion common.
var (
	resources = []string{"example.com/gpu", "vendor.io/nic"}
	deviceIDs = []string{"d0", "d1", "d2", "d3", "d4"}
	epoch     = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

// The machine's generators and draw labels, built once: rapid generators
// are immutable values, and building one per draw (with its label
// concatenated) cost a tenth of a step. The draws, and so the cases of a
// seed, are the same as with generators built in place.
var (
	boolGen         = rapid.Bool()
	resourceGen     = rapid.SampledFrom(resources)
	badVersions     = rapid.SampledFrom([]string{"", "v1alpha", "v1beta2", "V1BETA1"})
	badNames        = rapid.SampledFrom([]string{"gpu", "kubernetes.io/gpu", "foo.kubernetes.io/x", "Domain.com/x", "a/b/c", "a.com/", "requests.a.com/x", "/x", "a.com/-x", "a..com/x"})
	presence        = rapid.IntRange(0, 3)
	healths         = rapid.SampledFrom([]string{dm.Healthy, dm.Healthy, dm.Healthy, dm.Healthy, dm.Unhealthy, "healthy", ""})
	numaShape       = rapid.IntRange(0, 2)
	fault           = rapid.IntRange(0, 2)
	shortSeconds    = rapid.IntRange(1, 240)
	extraSeconds    = rapid.IntRange(0, 2)
	wants           = rapid.IntRange(0, 2)
	count           = rapid.IntRange(0, 3)
	initContainers  = rapid.IntRange(0, 3)
	appContainers   = rapid.IntRange(1, 2)
	preferredOrder  = rapid.Permutation(append([]string{"zz"}, deviceIDs...))
	preferredFails  = rapid.IntRange(0, 9)
	allocateOutcome = rapid.SampledFrom([]string{"ok", "ok", "ok", "rpcError", "emptyResponse"})

	// The containers' names, as many as initContainers and
	// appContainers draw.
	initNames = []string{"init0", "init1", "init2"}
	appNames  = []string{"app0", "app1"}

	deviceLabels    = labels(deviceIDs, "present ", "health ", "numa ")
	resourceLabels  = labels(resources, "wants ", "count ", "preferred ", "preferredFails ")
	preferredLabels = labels(append([]string{"zz"}, deviceIDs...), "prefer ")
)

// labels returns, for each name, the draw labels prefix+name, one per prefix.
func labels(names []string, prefixes ...string) map[string][]string {
	out := make(map[string][]string, len(names))
	for _, name := range names {
		for _, prefix := range prefixes {
			out[name] = append(out[name], prefix+name)
		}
	}
	return out
}

// drawDevices draws a plugin's device list. Devices are mostly present
// and healthy: with fewer, most admissions fail for want of devices and two
// containers rarely hold devices of one resource, which DM-EXCLUSIVE and
// the reuse rules need; the misspelt and empty health values stay in the mix.
func (m *machine) drawDevices(t *rapid.T) []dm.Device {
	var devices []dm.Device
	for _, id := range deviceIDs {
		label := deviceLabels[id]
		if presence.Draw(t, label[0]) == 0 {
			continue
		}
		health := healths.Draw(t, label[1])
		var numa []int64
		switch numaShape.Draw(t, label[2]) {
		case 1:
			numa = []int64{0}
		case 2:
			numa = []int64{0, 1}
		}
		devices = append(devices, dm.Device{ID: id, Health: health, NUMANodes: numa})
	}
	return devices
}

// deviceList and podSpec print lazily: rapid formats a log line only when
// it shows it (a failure's replay), and most steps are never shown.
type deviceList []dm.Device

func (m *machine) drawPod(t *rapid.T) *pod.Pod {
	m.nextPod++
	p := &pod.Pod{UID: fmt.Sprintf("pod-%d", m.nextPod), Name: fmt.Sprintf("p%d", m.nextPod), Namespace: "default", Phase: pod.Pending}
	drawContainer := func(name string) pod.Container {
		c := pod.Container{Name: name, Limits: pod.ResourceList{}}
		for _, r := range resources {
			label := resourceLabels[r]
			if wants.Draw(t, label[0]) > 0 {
				c.Limits[pod.ResourceName(r)] = int64(count.Draw(t, label[1]))
			}
		}
		if boolGen.Draw(t, "cpu") {
			c.Limits[pod.CPU] = 100
		}
		c.Requests = c.Limits.Clone()
		return c
	}
	for i := range initContainers.Draw(t, "initContainers") {
		c := drawContainer(initNames[i])
		if boolGen.Draw(t, "sidecar") {
			c.RestartPolicy = pod.RestartAlways
		}
		p.InitContainers = append(p.InitContainers, c)
	}
	for i := range appContainers.Draw(t, "appContainers") {
		p.Containers = append(p.Containers, drawContainer(appNames[i]))
	}
	return p
}

type podSpec struct{ p *pod.Pod }
