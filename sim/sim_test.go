package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// runEvents steps a seeded run and collects its events and final stats.
func runEvents(t *testing.T, cfg Config) ([]Event, Stats) {
	t.Helper()
	s, err := New(cfg, NewSeeded(cfg.Seed))
	require.NoError(t, err)
	var events []Event
	for {
		ev, ok := s.Step()
		if !ok {
			break
		}
		for _, r := range s.Check() {
			require.NoError(t, r.Err)
		}
		events = append(events, ev)
	}
	return events, s.Stats()
}

func TestSameSeedSameRun(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Duration = 2 * time.Hour
	events1, stats1 := runEvents(t, cfg)
	events2, stats2 := runEvents(t, cfg)
	require.Equal(t, events1, events2)
	require.Equal(t, stats1, stats2)

	cfg.Seed = 2
	events3, _ := runEvents(t, cfg)
	require.NotEqual(t, events1, events3)
}

func TestDefaultDayPasses(t *testing.T) {
	sum := Run(DefaultConfig(), nil)
	require.Nil(t, sum.Violation)
	require.Equal(t, 24*time.Hour, sum.Stats.Simulated)
	for _, f := range AllFaults() {
		require.Positive(t, sum.Stats.Faults[f], "fault %s never fired", f)
	}
	for _, inv := range Invariants() {
		c := sum.Stats.Checks[inv.ID]
		require.Equal(t, sum.Stats.Events, c.Checked, inv.ID)
		require.Positive(t, c.Applied, "%s never applied", inv.ID)
	}
}
