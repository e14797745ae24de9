package simreport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/verify"
)

// TestNewSectionSums: a sweep's totals are the sums of its runs, the checks
// listed in the order of sim.Invariants and then other IDs by name, and a
// violation in any run fails the whole with that run's violation.
func TestNewSectionSums(t *testing.T) {
	first := sim.Invariants()[0].ID
	second := sim.Invariants()[1].ID
	cfg := sim.Config{Seed: 4, Duration: 2 * time.Hour, Pods: 3, Faults: sim.DefaultRates()}
	clean := Seed{Config: cfg, Seconds: 1, Summary: sim.Summary{Stats: sim.Stats{Events: 10, Simulated: 2 * time.Hour,
		Faults: map[sim.Fault]int{sim.PluginCrash: 1},
		Checks: verify.Counts{"SIM-Z": {Checked: 1, Applied: 1}, second: {Checked: 2, Applied: 1}, first: {Checked: 3, Applied: 2}}}}}
	cfg.Seed = 5
	trace := []sim.Event{{Seq: 1, At: time.Minute, Kind: "pod-arrive", Detail: "p1"}}
	failed := Seed{Config: cfg, Seconds: 2, Summary: sim.Summary{Replay: "nodeproof sim --seed 5",
		Stats:     sim.Stats{Events: 5, Simulated: time.Hour, Checks: verify.Counts{first: {Checked: 1, Applied: 1}}},
		Violation: &sim.Violation{Invariant: first, Message: first + ": broken", Event: trace[0], Trace: trace}}}

	s := NewSection([]Seed{clean, failed}, 3.5)
	assert.Equal(t, 2, s.Seeds)
	assert.Equal(t, uint64(4), s.FirstSeed)
	assert.Equal(t, uint64(5), s.LastSeed)
	assert.Equal(t, 15, s.Events)
	assert.Equal(t, 3.0, s.SimulatedHours)
	assert.Equal(t, map[string]int{string(sim.PluginCrash): 1}, s.Injected)
	assert.Equal(t, []Check{
		{ID: first, Statement: sim.Invariants()[0].Statement, Checked: 4, Applied: 3},
		{ID: second, Statement: sim.Invariants()[1].Statement, Checked: 2, Applied: 1},
		{ID: "SIM-Z", Checked: 1, Applied: 1},
	}, s.Checks)
	assert.False(t, s.Passed)
	assert.Equal(t, []Violation{{Seed: 5, Invariant: first, Message: first + ": broken", Event: trace[0].String(),
		Trace: []string{trace[0].String()}, Replay: "nodeproof sim --seed 5"}}, s.Violations)
	assert.True(t, s.Runs[0].Passed)
	assert.Equal(t, &s.Violations[0], s.Runs[1].Violation)
}
