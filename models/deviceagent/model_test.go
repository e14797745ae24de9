package deviceagent

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func healthy(ids ...string) []Device {
	out := make([]Device, len(ids))
	for i, id := range ids {
		out[i] = Device{ID: id, Healthy: true}
	}
	return out
}

// TestSequence walks one sequence through every operation and checks each
// answer, and that a refused answer leaves the state as it was.
func TestSequence(t *testing.T) {
	s := Init(map[string][]Device{"r/a": healthy("a1", "a0"), "r/b": healthy("b0")})
	steps := []struct {
		in  Input
		out Output
	}{
		{Input{Op: Admit, Resources: []string{"r/a"}, Pod: "p1", Wants: []Want{{"r/a", 1}}}, granted("r/a", "a0")},
		// The reservation can only be a1: the model's one choice.
		{Input{Op: Reserve, Resources: []string{"r/a", "r/b"}, Pod: "p2", Wants: []Want{{"r/a", 1}, {"r/b", 1}}}, Output{}},
		// p2's reservation takes the last device of each resource.
		{Input{Op: Admit, Resources: []string{"r/b"}, Pod: "p3", Wants: []Want{{"r/b", 1}}}, Output{Err: ErrUnavailable}},
		{Input{Op: Release, Resources: []string{"r/a", "r/b"}, Pod: "p2"}, Output{}},
		{Input{Op: Admit, Resources: []string{"r/b"}, Pod: "p3", Wants: []Want{{"r/b", 1}}}, granted("r/b", "b0")},
		{Input{Op: Crash, Resources: []string{"r/a"}}, Output{}},
		{Input{Op: Capacity, Resources: []string{"r/a", "r/b"}}, Output{Counts: []Count{{"r/a", 2, 0}, {"r/b", 1, 1}}}},
		{Input{Op: Admit, Resources: []string{"r/a"}, Pod: "p4", Wants: []Want{{"r/a", 1}}}, Output{Err: ErrNoHealthy}},
		{Input{Op: Update, Resources: []string{"r/a"}, Devices: healthy("a0", "a1")}, Output{}},
		// p1 still holds a0.
		{Input{Op: Admit, Resources: []string{"r/a"}, Pod: "p4", Wants: []Want{{"r/a", 2}}}, Output{Err: ErrUnavailable}},
		{Input{Op: Remove, Resources: []string{"r/a"}, Pod: "p1"}, Output{}},
		{Input{Op: Admit, Resources: []string{"r/a"}, Pod: "p4", Wants: []Want{{"r/a", 2}}}, granted("r/a", "a1", "a0")},
		// r/c is no device plugin resource: nothing is granted.
		{Input{Op: Admit, Resources: []string{"r/c"}, Pod: "p5", Wants: []Want{{"r/c", 1}}}, Output{}},
	}
	for i, st := range steps {
		next := Next(s, st.in, st.out)
		require.Len(t, next, 1, "step %d %s: %d next states in state\n%s", i, Describe(st.in, st.out), len(next), s)
		s = next[0]
	}
	wrong := Output{Counts: []Count{{"r/a", 2, 1}}}
	assert.Empty(t, Next(s, Input{Op: Capacity, Resources: []string{"r/a"}}, wrong), "a wrong capacity answer was accepted")
	next := Next(s, Input{Op: Capacity, Resources: []string{"r/a"}}, Output{Unknown: true})
	require.Len(t, next, 1, "an unknown read gave %d states, want the one it was in", len(next))
	assert.True(t, Equal(next[0], s), "an unknown read gave %d states, want the one it was in", len(next))
}

func granted(resource string, ids ...string) Output {
	return Output{Granted: []Grant{{Resource: resource, DeviceIDs: ids}}}
}

// TestGrantedDevicesAreChecked refuses admissions whose devices the model
// cannot have given: held by another pod or reservation, unhealthy,
// unknown, too few or too many, repeated, or missing a resource.
func TestGrantedDevicesAreChecked(t *testing.T) {
	s := Init(map[string][]Device{"r/a": append(healthy("a0", "a1", "a2"), Device{ID: "a3"}), "r/b": healthy("b0")})
	s = Next(s, Input{Op: Admit, Resources: []string{"r/a"}, Pod: "p1", Wants: []Want{{"r/a", 1}}}, granted("r/a", "a1"))[0]
	want2 := Input{Op: Admit, Resources: []string{"r/a"}, Pod: "p2", Wants: []Want{{"r/a", 2}}}
	for name, out := range map[string]Output{
		"held by p1":     granted("r/a", "a0", "a1"),
		"unhealthy":      granted("r/a", "a0", "a3"),
		"unknown":        granted("r/a", "a0", "a9"),
		"too few":        granted("r/a", "a0"),
		"too many":       granted("r/a", "a0", "a2", "a3"),
		"repeated":       granted("r/a", "a0", "a0"),
		"none":           {},
		"other resource": {Granted: []Grant{{Resource: "r/a", DeviceIDs: []string{"a0", "a2"}}, {Resource: "r/b", DeviceIDs: []string{"b0"}}}},
	} {
		assert.Empty(t, Next(s, want2, out), "%s: the model accepted %s", name, Describe(want2, out))
	}
	next := Next(s, want2, granted("r/a", "a2", "a0"))
	require.Len(t, next, 1, "the free healthy pair was refused")
	reserve := Input{Op: Reserve, Resources: []string{"r/a"}, Pod: "p3", Wants: []Want{{"r/a", 1}}}
	assert.Empty(t, Next(next[0], reserve, Output{}), "a reservation with no free device was accepted")
	assert.Len(t, Next(s, reserve, Output{}), 2, "a reservation of one of two free devices: one state per choice")
}

// TestPendingUpdate checks an update of unknown outcome: pending until a
// later step applies it or the crash resolves it, never applied after the
// crash.
func TestPendingUpdate(t *testing.T) {
	s := Init(map[string][]Device{"r/a": healthy("a0")})
	update := Input{Op: Update, Resources: []string{"r/a"}, Devices: healthy("a0", "a1")}
	next := Next(s, update, Output{Unknown: true})
	require.Len(t, next, 1, "an unknown update is one state: the update pending")
	pending := next[0]
	assert.False(t, Equal(pending, s), "the pending update is not part of the state")
	read := Input{Op: Capacity, Resources: []string{"r/a"}}
	assert.Len(t, Next(pending, read, Output{Counts: []Count{{"r/a", 1, 1}}}), 1, "a read before the update lands")
	applied := Next(pending, read, Output{Counts: []Count{{"r/a", 2, 2}}})
	require.Len(t, applied, 1, "a read after the update landed")
	assert.Len(t, Next(applied[0], read, Output{Counts: []Count{{"r/a", 1, 1}}}), 0, "an applied update cannot be undone")
	crashed := Next(pending, Input{Op: Crash, Resources: []string{"r/a"}}, Output{})
	require.Len(t, crashed, 2, "a crash applies or drops the pending update")
	for _, c := range crashed {
		assert.Empty(t, Next(c, read, Output{Counts: []Count{{"r/a", 2, 2}}}), "the update took effect after the crash:\n%s", c)
		assert.Empty(t, Next(c, Input{Op: Admit, Resources: []string{"r/a"}, Pod: "p", Wants: []Want{{"r/a", 1}}}, granted("r/a", "a1")),
			"an admission after the crash got a device of the update:\n%s", c)
	}
}

// TestStepDoesNotChangeItsState checks the value semantics porcupine relies
// on: a state it has stepped from is still the state it was.
func TestStepDoesNotChangeItsState(t *testing.T) {
	s := Init(map[string][]Device{"r/a": healthy("a0", "a1")})
	before := s.String()
	next := Next(s, Input{Op: Admit, Resources: []string{"r/a"}, Pod: "p", Wants: []Want{{"r/a", 1}}}, granted("r/a", "a0"))[0]
	Next(next, Input{Op: Update, Resources: []string{"r/a"}, Devices: healthy("a7")}, Output{Unknown: true})
	next = Next(next, Input{Op: Crash, Resources: []string{"r/a"}}, Output{})[0]
	Next(next, Input{Op: Remove, Resources: []string{"r/a"}, Pod: "p"}, Output{Unknown: true})
	assert.Equal(t, before, s.String(), "stepping changed the state:\nbefore %s\nafter  %s", before, s)
}

// TestRegisterRefusesEndpointsOutsideTheDirectory: the model refuses a
// registration whose endpoint is not a socket name directly in the
// directory, and nothing changes; an answer of success there is not one the
// model gives.
func TestRegisterRefusesEndpointsOutsideTheDirectory(t *testing.T) {
	s := Init(map[string][]Device{"r/a": healthy("a0")})
	for _, endpoint := range []string{"../rogue.sock", "/tmp/rogue.sock", "sub/rogue.sock", "kubelet.sock", ""} {
		in := Input{Op: Register, Resources: []string{"r/x"}, Endpoint: endpoint}
		next := Next(s, in, Output{Err: ErrRefused})
		require.Len(t, next, 1, "%q refused", endpoint)
		assert.True(t, Equal(s, next[0]), "a refused registration of %q changed the node", endpoint)
		assert.Empty(t, Next(s, in, Output{}), "a registration at %q accepted: the model has no such answer", endpoint)
	}
	assert.Len(t, Next(s, Input{Op: Register, Resources: []string{"r/x"}, Endpoint: "x.sock"}, Output{}), 1, "a socket name in the directory")
}

// TestFilterChangesNoState holds Filter to its word: from states reached by
// random operations with no pending update, every operation it calls a
// filter answers the state itself or nothing, whatever the output. And it
// shows why a pending update is excluded: a read that sees the update makes
// a new state.
func TestFilterChangesNoState(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	resources := []string{"r/a", "r/b"}
	ids := []string{"d0", "d1", "d2"}
	randomDevices := func() []Device {
		var devs []Device
		for _, id := range ids {
			if rng.IntN(3) != 0 {
				devs = append(devs, Device{ID: id, Healthy: rng.IntN(3) != 0})
			}
		}
		return devs
	}
	randomWants := func() ([]string, []Want) {
		var rs []string
		var wants []Want
		for _, r := range resources {
			if rng.IntN(2) == 0 || len(wants) == 0 && r == resources[len(resources)-1] {
				rs = append(rs, r)
				wants = append(wants, Want{Resource: r, Count: 1 + rng.IntN(2)})
			}
		}
		return rs, wants
	}
	filters := 0
	for walk := range 200 {
		s := Init(map[string][]Device{"r/a": randomDevices(), "r/b": randomDevices()})
		for i := range 20 {
			var in Input
			switch rng.IntN(4) {
			case 0:
				in = Input{Op: Update, Resources: []string{resources[rng.IntN(2)]}, Devices: randomDevices()}
			case 1:
				in = Input{Op: Crash, Resources: []string{resources[rng.IntN(2)]}}
			default:
				rs, wants := randomWants()
				in = Input{Op: Admit, Resources: rs, Pod: fmt.Sprintf("p%d-%d", walk, i), Wants: wants}
			}
			s, _ = Apply(s, in)
			rs, wants := randomWants()
			for _, op := range []struct {
				in  Input
				out Output
			}{
				{Input{Op: Capacity, Resources: resources}, Output{Counts: []Count{{"r/a", int64(rng.IntN(4)), int64(rng.IntN(4))}, {"r/b", int64(rng.IntN(4)), int64(rng.IntN(4))}}}},
				{Input{Op: Capacity, Resources: resources}, func() Output { _, out := Apply(s, Input{Op: Capacity, Resources: resources}); return out }()},
				{Input{Op: Admit, Resources: rs, Pod: "q", Wants: wants}, Output{Err: []string{ErrNoHealthy, ErrUnavailable}[rng.IntN(2)]}},
				{Input{Op: Reregister, Resources: []string{"r/a"}}, Output{}},
				{Input{Op: Register, Resources: []string{"r/x"}, Endpoint: "../x.sock"}, Output{Err: ErrRefused}},
			} {
				require.True(t, Filter(op.in, op.out), "%s is a filter", Describe(op.in, op.out))
				filters++
				for _, n := range Next(s, op.in, op.out) {
					require.True(t, Equal(n, s), "%s changed\n%s\ninto\n%s", Describe(op.in, op.out), s, n)
				}
			}
		}
	}
	assert.Equal(t, 200*20*5, filters)

	for _, op := range []struct {
		in  Input
		out Output
	}{
		{Input{Op: Admit, Resources: []string{"r/a"}, Pod: "p", Wants: []Want{{"r/a", 1}}}, granted("r/a", "a0")},
		{Input{Op: Capacity, Resources: []string{"r/a"}}, Output{Unknown: true}},
		{Input{Op: Remove, Resources: []string{"r/a"}, Pod: "p"}, Output{}},
		{Input{Op: Crash, Resources: []string{"r/a"}}, Output{}},
	} {
		assert.False(t, Filter(op.in, op.out), "%s is no filter", Describe(op.in, op.out))
	}
	pending := Next(Init(map[string][]Device{"r/a": healthy("a0")}), Input{Op: Update, Resources: []string{"r/a"}, Devices: healthy("a0", "a1")}, Output{Unknown: true})[0]
	read := Input{Op: Capacity, Resources: []string{"r/a"}}
	next := Next(pending, read, Output{Counts: []Count{{"r/a", 2, 2}}})
	require.Len(t, next, 1)
	assert.False(t, Equal(next[0], pending), "a read that sees a pending update applies it: no filter then")
}

// TestHashAgreesWithEqual holds Hash to its contract on states reached by
// random walks, each walk run twice so that equal states are also built
// apart: Equal states hash alike, and no two different states collide
// (a field Hash forgot would make some collide).
func TestHashAgreesWithEqual(t *testing.T) {
	walk := func(seed uint64) []State {
		rng := rand.New(rand.NewPCG(seed, 7))
		devices := func() []Device {
			var devs []Device
			for _, id := range []string{"d0", "d1", "d2"} {
				if rng.IntN(3) != 0 {
					devs = append(devs, Device{ID: id, Healthy: rng.IntN(3) != 0})
				}
			}
			return devs
		}
		s := Init(map[string][]Device{"r/a": devices(), "r/b": devices()})
		states := []State{s}
		for i := range 12 {
			r := []string{"r/a", "r/b"}[rng.IntN(2)]
			var in Input
			var out Output
			switch rng.IntN(6) {
			case 0:
				in = Input{Op: Update, Resources: []string{r}, Devices: devices()}
				out.Unknown = rng.IntN(2) == 0
			case 1:
				in = Input{Op: Crash, Resources: []string{r}}
			case 2:
				in = Input{Op: Reserve, Resources: []string{r}, Pod: fmt.Sprintf("p%d", i), Wants: []Want{{r, 1}}}
			case 3:
				in = Input{Op: Remove, Resources: []string{r}, Pod: fmt.Sprintf("p%d", rng.IntN(i+1))}
			default:
				in = Input{Op: Admit, Resources: []string{r}, Pod: fmt.Sprintf("p%d", i), Wants: []Want{{r, 1 + rng.IntN(2)}}}
				_, out = Apply(s, in)
			}
			next := Next(s, in, out)
			if len(next) == 0 {
				continue
			}
			states = append(states, next...)
			s = next[rng.IntN(len(next))]
		}
		return states
	}
	var states []State
	for seed := range uint64(40) {
		states = append(states, walk(seed)...)
		states = append(states, walk(seed)...)
	}
	equalPairs := 0
	for i, a := range states {
		for _, b := range states[:i] {
			if Equal(a, b) {
				equalPairs++
				require.Equal(t, Hash(a), Hash(b), "equal states hash apart:\n%s\n%s", a, b)
			} else {
				require.NotEqual(t, Hash(a), Hash(b), "different states collide:\n%s\n%s", a, b)
			}
		}
	}
	assert.Greater(t, equalPairs, len(states)/2, "equal states built apart")

	one := Init(map[string][]Device{"r/a": healthy("a0")})
	reserved := Next(one, Input{Op: Reserve, Resources: []string{"r/a"}, Pod: "p", Wants: []Want{{"r/a", 1}}}, Output{})
	held := Next(one, Input{Op: Admit, Resources: []string{"r/a"}, Pod: "p", Wants: []Want{{"r/a", 1}}}, granted("r/a", "a0"))
	require.Len(t, reserved, 1)
	require.Len(t, held, 1)
	assert.NotEqual(t, Hash(reserved[0]), Hash(held[0]), "a reservation and a holding of the same device")

	withEmptyPending := Init(map[string][]Device{"r/a": healthy("a0")})
	withEmptyPending.resources[0].pending = []Device{}
	plain := Init(map[string][]Device{"r/a": healthy("a0")})
	require.True(t, Equal(withEmptyPending, plain))
	assert.Equal(t, Hash(plain), Hash(withEmptyPending), "an empty pending list and none")
}
