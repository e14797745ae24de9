package deviceagent

import "testing"

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
		{Input{Op: Admit, Resources: []string{"r/c"}, Pod: "p5", Wants: []Want{{"r/c", 1}}}, Output{Err: ErrUnregistered}},
	}
	for i, st := range steps {
		ok, next := Step(s, st.in, st.out)
		if !ok {
			t.Fatalf("step %d %s refused in state\n%s", i, Describe(st.in, st.out), s)
		}
		s = next
	}
	wrong := Output{Counts: []Count{{"r/a", 2, 1}}}
	if ok, next := Step(s, Input{Op: Capacity, Resources: []string{"r/a"}}, wrong); ok || !Equal(next, s) {
		t.Errorf("a wrong capacity answer was accepted or changed the state")
	}
	if ok, _ := Step(s, Input{Op: Capacity, Resources: []string{"r/a"}}, Output{Unknown: true}); !ok {
		t.Errorf("an unknown answer was refused")
	}
}

// TestStepDoesNotChangeItsState checks the value semantics porcupine relies
// on: a state it has stepped from is still the state it was.
func TestStepDoesNotChangeItsState(t *testing.T) {
	s := Init(map[string][]Device{"r/a": healthy("a0", "a1")})
	before := s.String()
	_, next := Step(s, Input{Op: Admit, Resources: []string{"r/a"}, Pod: "p", Wants: []Want{{"r/a", 1}}}, Output{})
	_, next = Step(next, Input{Op: Crash, Resources: []string{"r/a"}}, Output{})
	Step(next, Input{Op: Remove, Resources: []string{"r/a"}, Pod: "p"}, Output{})
	if s.String() != before {
		t.Errorf("stepping changed the state:\nbefore %s\nafter  %s", before, s)
	}
}
