package properties

import (
	"testing"

	"github.com/stretchr/testify/assert"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	model "github.com/nodeproof/nodeproof/models/devicemanager"
)

// TestMayShareIsUpstreamsReuseRule: the earlier of two holders of a device
// must be a regular init container of the same pod. The rule once let any
// pair share as long as either was a regular init container, so a sidecar
// followed by a regular init container holding its device passed.
func TestMayShareIsUpstreamsReuseRule(t *testing.T) {
	init0 := containerPlace{"p", 0, true}
	sidecar1 := containerPlace{"p", 1, false}
	init2 := containerPlace{"p", 2, true}
	app3 := containerPlace{"p", 3, false}
	app4 := containerPlace{"p", 4, false}
	cases := []struct {
		name string
		a, b containerPlace
		want bool
	}{
		{"regular init, then an app container", init0, app3, true},
		{"regular init, then a later regular init", init0, init2, true},
		{"regular init, then a sidecar", init0, sidecar1, true},
		{"either order of the arguments", app3, init0, true},
		{"a sidecar, then a later regular init", sidecar1, init2, false},
		{"a sidecar, then an app container", sidecar1, app3, false},
		{"two app containers", app3, app4, false},
		{"a regular init of another pod", containerPlace{"q", 0, true}, app3, false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, mayShare(c.a, c.b), c.name)
	}
}

// TestLostRestoredAsksTheModel: a restored allocation the core dropped is
// lost while the model still holds devices for its pod, whatever the core
// holds. The check once decided "garbage-collected" from the core's own
// holdings, so a core that dropped a whole active pod passed.
func TestLostRestoredAsksTheModel(t *testing.T) {
	restored := []dm.Holding{
		{PodUID: "a", Container: "c", Resource: "gpu", DeviceIDs: []string{"d0"}},
		{PodUID: "b", Container: "c", Resource: "gpu", DeviceIDs: []string{"d1"}},
	}
	modelHolds := []model.Holding{{Pod: "a", Container: "c", Resource: "gpu", Devices: []string{"d0"}}}

	assert.Equal(t, restored[:1], lostRestored(restored, nil, modelHolds), "pod a dropped whole by the core, kept by the model")
	assert.Empty(t, lostRestored(restored, restored[:1], modelHolds), "pod b was garbage-collected in the model")
	changed := []dm.Holding{{PodUID: "a", Container: "c", Resource: "gpu", DeviceIDs: []string{"d2"}}}
	assert.Equal(t, restored[:1], lostRestored(restored, changed, modelHolds), "pod a's device changed")
}
