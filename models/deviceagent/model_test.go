package deviceagent

import (
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
		{Input{Op: Admit, Resources: []string{"r/a"}, Pod: "p1", Wants: []Want{{"r/a", 1}}}, Output{}},
		{Input{Op: Reserve, Resources: []string{"r/a", "r/b"}, Pod: "p2", Wants: []Want{{"r/a", 1}, {"r/b", 1}}}, Output{}},
		// p2's reservation takes the last device of each resource.
		{Input{Op: Admit, Resources: []string{"r/b"}, Pod: "p3", Wants: []Want{{"r/b", 1}}}, Output{Err: ErrUnavailable}},
		{Input{Op: Release, Resources: []string{"r/a", "r/b"}, Pod: "p2"}, Output{}},
		{Input{Op: Admit, Resources: []string{"r/b"}, Pod: "p3", Wants: []Want{{"r/b", 1}}}, Output{}},
		{Input{Op: Crash, Resources: []string{"r/a"}}, Output{}},
		{Input{Op: Capacity, Resources: []string{"r/a", "r/b"}}, Output{Counts: []Count{{"r/a", 2, 0}, {"r/b", 1, 1}}}},
		{Input{Op: Admit, Resources: []string{"r/a"}, Pod: "p4", Wants: []Want{{"r/a", 1}}}, Output{Err: ErrNoHealthy}},
		{Input{Op: Update, Resources: []string{"r/a"}, Devices: healthy("a0", "a1")}, Output{}},
		// p1 still holds a0.
		{Input{Op: Admit, Resources: []string{"r/a"}, Pod: "p4", Wants: []Want{{"r/a", 2}}}, Output{Err: ErrUnavailable}},
		{Input{Op: Remove, Resources: []string{"r/a"}, Pod: "p1"}, Output{}},
		{Input{Op: Admit, Resources: []string{"r/a"}, Pod: "p4", Wants: []Want{{"r/a", 2}}}, Output{}},
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
	update := Input{Op: Update, Resources: []string{"r/a"}, Devices: healthy("a9")}
	next = Next(s, update, Output{Unknown: true})
	require.Len(t, next, 2, "an unknown update gave %d states, want the updated one and the one it was in", len(next))
	require.False(t, Equal(next[0], next[1]), "an unknown update gave %d states, want the updated one and the one it was in", len(next))
	assert.True(t, Equal(next[1], s), "an unknown update gave %d states, want the updated one and the one it was in", len(next))
}

// TestStepDoesNotChangeItsState checks the value semantics porcupine relies
// on: a state it has stepped from is still the state it was.
func TestStepDoesNotChangeItsState(t *testing.T) {
	s := Init(map[string][]Device{"r/a": healthy("a0", "a1")})
	before := s.String()
	next := Next(s, Input{Op: Admit, Resources: []string{"r/a"}, Pod: "p", Wants: []Want{{"r/a", 1}}}, Output{})[0]
	next = Next(next, Input{Op: Crash, Resources: []string{"r/a"}}, Output{})[0]
	Next(next, Input{Op: Remove, Resources: []string{"r/a"}, Pod: "p"}, Output{Unknown: true})
	assert.Equal(t, before, s.String(), "stepping changed the state:\nbefore %s\nafter  %s", before, s)
}
