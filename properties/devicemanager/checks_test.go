package devicemanager

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	model "github.com/nodeproof/nodeproof/models/devicemanager"
	"github.com/nodeproof/nodeproof/properties"
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

// TestSameAsCountsNeedsEveryLine: the core's capacity and allocatable maps
// match the model's counts only with the same resources in each map and
// the same numbers. A resource without a healthy entry has a capacity and
// no allocatable, so an allocatable line for it, even of 0, is a
// difference.
func TestSameAsCountsNeedsEveryLine(t *testing.T) {
	counts := []model.Count{
		{Resource: "gpu", Capacity: 3, HasAllocatable: true, Allocatable: 2},
		{Resource: "nic", Capacity: 1},
	}
	capacity := func(c, a map[string]int64) dm.Capacity { return dm.Capacity{Capacity: c, Allocatable: a} }
	cases := []struct {
		name string
		core dm.Capacity
		want bool
	}{
		{"the same lines", capacity(map[string]int64{"gpu": 3, "nic": 1}, map[string]int64{"gpu": 2}), true},
		{"an allocatable the model does not list", capacity(map[string]int64{"gpu": 3, "nic": 1}, map[string]int64{"gpu": 2, "nic": 0}), false},
		{"an allocatable missing", capacity(map[string]int64{"gpu": 3, "nic": 1}, map[string]int64{}), false},
		{"another allocatable", capacity(map[string]int64{"gpu": 3, "nic": 1}, map[string]int64{"gpu": 3}), false},
		{"another capacity", capacity(map[string]int64{"gpu": 3, "nic": 2}, map[string]int64{"gpu": 2}), false},
		{"a capacity missing", capacity(map[string]int64{"gpu": 3}, map[string]int64{"gpu": 2}), false},
		{"a capacity the model does not list", capacity(map[string]int64{"gpu": 3, "nic": 1, "fpga": 0}, map[string]int64{"gpu": 2}), false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, sameAsCounts(c.core, counts), c.name)
	}
}

// TestTrippedAsKeepsTheLastTrips: a content equal to one of the last
// tripHistory contents that made the round trip is answered with that
// trip's decoded data, and only then; a trip found again counts as the
// latest, and the least recently used one is dropped.
func TestTrippedAsKeepsTheLastTrips(t *testing.T) {
	content := func(i int) checkpoint.Data {
		return checkpoint.Data{RegisteredDevices: map[string][]string{"example.com/gpu": {fmt.Sprintf("d%d", i)}}}
	}
	m := &machine{}
	for i := range tripHistory {
		decoded := m.roundTrip(content(i))
		require.True(t, checkpoint.Equal(content(i), decoded), "trip %d", i)
	}
	for i := range tripHistory {
		decoded, ok := m.trippedAs(content(i))
		require.True(t, ok, "content %d made the trip", i)
		assert.True(t, checkpoint.Equal(content(i), decoded), "content %d's decoded data", i)
	}
	// Found in order, content 0 is now the least recently used; found
	// again, it is the latest and content 1 the least recently used.
	_, ok := m.trippedAs(content(0))
	require.True(t, ok)
	m.roundTrip(content(tripHistory))
	_, ok = m.trippedAs(content(1))
	assert.False(t, ok, "the least recently used trip is dropped")
	for _, i := range []int{0, 2, tripHistory} {
		_, ok = m.trippedAs(content(i))
		assert.True(t, ok, "content %d is kept", i)
	}
	_, ok = m.trippedAs(content(tripHistory + 1))
	assert.False(t, ok, "a content that never made the trip")
	assert.Len(t, m.trips, tripHistory)
}

// TestSlotsNameTheSuitesInvariants: the machine counts its checks in one
// slot per invariant, so every invariant of the suite needs a slot, in the
// suite's order, and no slot may be left without an invariant (its counts
// would go to the ID "").
func TestSlotsNameTheSuitesInvariants(t *testing.T) {
	suite, ok := properties.Lookup("devicemanager")
	require.True(t, ok, "devicemanager suite not registered")
	var ids []string
	for _, inv := range suite.Invariants {
		ids = append(ids, inv.ID)
	}
	assert.Equal(t, ids, slotIDs[:])
}

// TestCheckCountsIsRepeatedCheck: handing over counts leaves the tally as
// the same number of Check calls would, an invariant that never applied
// included (it has a checked count and no applied entry).
func TestCheckCountsIsRepeatedCheck(t *testing.T) {
	one, all := properties.NewTally(), properties.NewTally()
	for i := range 5 {
		one.Check("A", i%2 == 0)
		one.Check("B", false)
	}
	all.CheckCounts("A", 5, 3)
	all.CheckCounts("B", 5, 0)
	all.CheckCounts("C", 0, 0)
	assert.Equal(t, one, all)
}

// TestSameErrorIsPrintedText: both compared errors by their printed text
// (fmt.Sprint), and sameError must agree with that: nil only with nil, and
// two errors exactly when their texts are equal.
func TestSameErrorIsPrintedText(t *testing.T) {
	errs := []error{nil, errors.New("busy"), errors.New("busy"), errors.New("gone"), errors.New("<nil>")}
	for _, a := range errs {
		for _, b := range errs {
			assert.Equal(t, a == nil && b == nil || a != nil && b != nil && fmt.Sprint(a) == fmt.Sprint(b), sameError(a, b), "%v and %v", a, b)
		}
	}
}
