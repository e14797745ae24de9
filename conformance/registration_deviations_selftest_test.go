package conformance

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// The registration comparison's deviations D2 and D3 on made-up runs: each
// excuses the differences it can make and nothing else.

// compareMadeUp runs the registration comparison on one scenario whose four
// runs are given, not played over sockets: nodeproof's two pairings see
// ours, upstream's two see theirs.
func compareMadeUp(t *testing.T, sc regScenario, ours, theirs regRun) (*Result, *recorder) {
	t.Helper()
	withoutFailFile(t)
	cmp := registrationComparison()
	cmp.Name = "selftest.registration"
	t.Cleanup(func() { forget(cmp.Name) })
	cmp.Gen = rapid.Just(sc)
	cmp.Ours = func(regScenario) [2]regRun { return [2]regRun{ours, ours} }
	cmp.Theirs = func(regScenario) [2]regRun { return [2]regRun{theirs, theirs} }
	rec := &recorder{}
	return Compare(rec, cmp), rec
}

// admitOnly is a scenario that admits one pod.
func admitOnly(p regPod) regScenario {
	return regScenario{Steps: []regStep{{Kind: stepAdmit, Pod: &p}}}
}

// registered are the lines of the two registration steps of a made-up run.
var registered = []string{
	"register example.com/dev-a: example.com/dev-a capacity=2 allocatable=2 checkpointed=[d0 d1], example.com/dev-b capacity=- allocatable=- checkpointed=-",
	"register example.com/dev-b: example.com/dev-a capacity=2 allocatable=2 checkpointed=[d0 d1], example.com/dev-b capacity=1 allocatable=1 checkpointed=[d0]",
}

// madeUpRun is a run of admitOnly: the registrations, then the admission's
// line and calls, then the checkpoint's entries.
func madeUpRun(admission string, calls []string, entries ...string) regRun {
	return regRun{
		Steps:      append(append([]string(nil), registered...), "admit pod0: "+admission),
		Calls:      [][]string{nil, nil, calls},
		Checkpoint: append([]string{"registered example.com/dev-a [d0 d1]", "registered example.com/dev-b [d0]"}, entries...),
	}
}

// reusePod's app container takes one of the two devices its init container
// left for reuse: D2 applies.
var reusePod = admitOnly(regPod{
	UID:  "pod0",
	Init: []regContainer{{Name: "init0", Devices: [2]int64{2, 0}}},
	Apps: []regContainer{{Name: "app0", Devices: [2]int64{1, 0}}},
})

// reuseRun is reusePod's run where app0 got the device named.
func reuseRun(app0 string) regRun {
	return madeUpRun(
		"admitted; init0: env=[DEV_A=d0,d1]; app0: env=[DEV_A="+app0+"]",
		[]string{"example.com/dev-a Allocate [d0 d1]", "example.com/dev-a Allocate [" + app0 + "]"},
		"pod0/app0 example.com/dev-a -1:"+app0+" env=map[DEV_A:"+app0+"]",
		"pod0/init0 example.com/dev-a -1:d0,d1 env=map[DEV_A:d0,d1]")
}

// twoResourcePod's app container needs both resources: D3 applies.
var twoResourcePod = admitOnly(regPod{
	UID:  "pod0",
	Apps: []regContainer{{Name: "app0", Devices: [2]int64{1, 2}}},
})

const (
	shortOfA = "Allocate failed due to requested number of devices unavailable for example.com/dev-a. Requested: 1, Available: 0, which is unexpected"
	shortOfB = "Allocate failed due to requested number of devices unavailable for example.com/dev-b. Requested: 2, Available: 1, which is unexpected"
)

// TestD2ExcusesWhichReusedDevices: app0 takes d0 on one side and d1 on
// the other; the run options, the calls and the checkpoint entry follow.
func TestD2ExcusesWhichReusedDevices(t *testing.T) {
	res, rec := compareMadeUp(t, reusePod, reuseRun("d0"), reuseRun("d1"))
	require.False(t, rec.failed, rec.out.String())
	assert.Equal(t, map[string]int{"D2": res.Cases, "D3": 0}, res.ExcludedBy)
	assert.Equal(t, res.Cases, res.Excluded)
}

// TestD2DoesNotExcuseCapacity: a capacity that differs where D2 applies is
// a mismatch. The unconfined D2 (any difference where a container takes
// fewer devices than its pool holds) excused it.
func TestD2DoesNotExcuseCapacity(t *testing.T) {
	theirs := reuseRun("d1")
	theirs.Steps[0] = "register example.com/dev-a: example.com/dev-a capacity=3 allocatable=2 checkpointed=[d0 d1], example.com/dev-b capacity=- allocatable=- checkpointed=-"
	res, rec := compareMadeUp(t, reusePod, reuseRun("d0"), theirs)
	assert.True(t, rec.failed, "a capacity difference was excused:\n%s", rec.out.String())
	assert.Positive(t, res.Mismatches)
	assert.Zero(t, res.Excluded)
	assert.Contains(t, rec.out.String(), "step 0:")
}

// TestD2KeepsThePodsDevices: D2 changes which container holds which of the
// pod's devices, not which devices the pod holds.
func TestD2KeepsThePodsDevices(t *testing.T) {
	theirs := reuseRun("d1")
	theirs.Checkpoint[3] = "pod0/init0 example.com/dev-a -1:d1,d5 env=map[DEV_A:d1,d5]"
	res, rec := compareMadeUp(t, reusePod, reuseRun("d0"), theirs)
	assert.True(t, rec.failed, "other devices were excused:\n%s", rec.out.String())
	assert.Positive(t, res.Mismatches)
	assert.Contains(t, rec.out.String(), "pod pod0 holds other devices of example.com/dev-a: [d0 d1] against [d1 d5]")
}

// TestD2DoesNotExcuseAnotherCount: one device more is not a choice among
// reusable devices.
func TestD2DoesNotExcuseAnotherCount(t *testing.T) {
	theirs := reuseRun("d0,d1")
	theirs.Calls[2][1] = "example.com/dev-a Allocate [d0 d1]"
	_, rec := compareMadeUp(t, reusePod, reuseRun("d0"), theirs)
	assert.True(t, rec.failed, "a second device was excused:\n%s", rec.out.String())
}

// TestD3DoesNotExcuseCalls: for an admitted pod each plugin is asked the
// same whatever the order of the container's resources, so an Allocate
// call one side makes and the other does not is a mismatch. The old D3
// confinement did not compare the calls at all.
func TestD3DoesNotExcuseCalls(t *testing.T) {
	admitted := "admitted; app0: env=[DEV_A=d0 DEV_B=d0,d1]"
	calls := []string{"example.com/dev-a Allocate [d0]", "example.com/dev-b Allocate [d0 d1]"}
	ours := madeUpRun(admitted, calls)
	theirs := madeUpRun(admitted, append(calls, "example.com/dev-b Allocate [d1]"))
	res, rec := compareMadeUp(t, twoResourcePod, ours, theirs)
	assert.True(t, rec.failed, "an extra Allocate call was excused:\n%s", rec.out.String())
	assert.Positive(t, res.Mismatches)
	assert.Zero(t, res.Excluded)
	assert.Contains(t, rec.out.String(), `example.com/dev-b was asked ["Allocate [d0 d1]"] against ["Allocate [d0 d1]" "Allocate [d1]"]`)
}

// TestD3ExcusesTheOtherResource: both resources fall short; nodeproof
// checks dev-a first and names it, upstream went to dev-b first, asked its
// plugin for a preference and an allocation, then failed on dev-a and
// named it... or the other way round. Each side may have asked the plugin
// of the resource it does not name, and upstream keeps that container's
// entry until the next garbage collection.
func TestD3ExcusesTheOtherResource(t *testing.T) {
	ours := madeUpRun("rejected: "+shortOfA, nil)
	theirs := madeUpRun("rejected: "+shortOfB,
		[]string{"example.com/dev-a GetPreferredAllocation available=[d0 d1] mustInclude=[] size=1", "example.com/dev-a Allocate [d1]"},
		"pod0/app0 example.com/dev-a -1:d1 env=map[DEV_A:d1]")
	res, rec := compareMadeUp(t, twoResourcePod, ours, theirs)
	require.False(t, rec.failed, rec.out.String())
	assert.Equal(t, map[string]int{"D2": 0, "D3": res.Cases}, res.ExcludedBy)
}

// TestD3DoesNotExcuseTheNamedResource: a side that names dev-a failed on
// dev-a, so a call to dev-a's plugin the other side did not make is not
// the failing container's other resource.
func TestD3DoesNotExcuseTheNamedResource(t *testing.T) {
	ours := madeUpRun("rejected: "+shortOfA, nil)
	theirs := madeUpRun("rejected: "+shortOfA, []string{"example.com/dev-a Allocate [d1]"})
	_, rec := compareMadeUp(t, twoResourcePod, ours, theirs)
	assert.True(t, rec.failed, "a call to the failing resource's plugin was excused:\n%s", rec.out.String())
	// Nor does it let nodeproof keep an entry upstream does not have.
	ours = madeUpRun("rejected: "+shortOfA, nil, "pod0/app0 example.com/dev-b -1:d0 env=map[DEV_B:d0]")
	theirs = madeUpRun("rejected: "+shortOfA, nil)
	_, rec = compareMadeUp(t, twoResourcePod, ours, theirs)
	assert.True(t, rec.failed, "an entry nodeproof alone kept was excused:\n%s", rec.out.String())
}

// TestD2AndD3Together: a pod whose init1 takes one of init0's two devices
// (D2) and whose app0 needs both resources and is rejected for dev-b (D3):
// a case both explain counts under both.
func TestD2AndD3Together(t *testing.T) {
	sc := admitOnly(regPod{
		UID:  "pod0",
		Init: []regContainer{{Name: "init0", Devices: [2]int64{2, 0}}, {Name: "init1", Devices: [2]int64{1, 0}}},
		Apps: []regContainer{{Name: "app0", Devices: [2]int64{1, 2}}},
	})
	ours := madeUpRun("rejected: "+shortOfB,
		[]string{"example.com/dev-a Allocate [d0 d1]", "example.com/dev-a Allocate [d0]"},
		"pod0/init0 example.com/dev-a -1:d0,d1 env=map[DEV_A:d0,d1]",
		"pod0/init1 example.com/dev-a -1:d0 env=map[DEV_A:d0]")
	theirs := madeUpRun("rejected: "+shortOfB,
		[]string{"example.com/dev-a Allocate [d0 d1]", "example.com/dev-a Allocate [d1]", "example.com/dev-a Allocate [d0]"},
		"pod0/app0 example.com/dev-a -1:d0 env=map[DEV_A:d0]",
		"pod0/init0 example.com/dev-a -1:d0,d1 env=map[DEV_A:d0,d1]",
		"pod0/init1 example.com/dev-a -1:d1 env=map[DEV_A:d1]")
	res, rec := compareMadeUp(t, sc, ours, theirs)
	require.False(t, rec.failed, rec.out.String())
	assert.Equal(t, res.Cases, res.Excluded)
	assert.Equal(t, map[string]int{"D2": res.Cases, "D3": res.Cases}, res.ExcludedBy)
}

// TestMapOrderFreeScenarios: in the map-order free mode neither D2 nor D3
// applies, and pods still reuse init containers' devices.
func TestMapOrderFreeScenarios(t *testing.T) {
	reusing := 0
	rapid.Check(t, func(t *rapid.T) {
		sc := drawScenario(t, true)
		require.Empty(t, reuseChoicePods(sc), "D2 applies to %s", show(sc))
		require.Empty(t, twoResourceContainers(sc), "D3 applies to %s", show(sc))
		for _, st := range sc.Steps {
			if st.Pod != nil {
				walkReuse(st.Pod, func(_ *regContainer, _ int, pool int64) {
					if pool > 0 {
						reusing++
					}
				})
			}
		}
	})
	assert.Positive(t, reusing, "no container was allocated from a reuse pool")
}

// TestMapOrderFreePart: the map-order free scenarios are counted apart,
// under their part, and no deviation excuses a difference there.
func TestMapOrderFreePart(t *testing.T) {
	sc := reusePod
	sc.MapOrderFree = true // D2 would apply to the pod: the mark decides
	res, rec := compareMadeUp(t, sc, reuseRun("d0"), reuseRun("d0"))
	require.False(t, rec.failed, rec.out.String())
	assert.Zero(t, res.Cases)
	part := res.Parts[mapOrderFreePart]
	require.NotNil(t, part)
	assert.Equal(t, "selftest.registration, "+mapOrderFreePart, part.Function)
	assert.Positive(t, part.Cases)

	res, rec = compareMadeUp(t, sc, reuseRun("d0"), reuseRun("d1"))
	assert.True(t, rec.failed, "a difference in a map-order free scenario was excused:\n%s", rec.out.String())
	require.NotNil(t, res.Parts[mapOrderFreePart])
	assert.Positive(t, res.Parts[mapOrderFreePart].Mismatches)
	assert.Zero(t, res.Parts[mapOrderFreePart].Excluded)
}
