package reportview

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/nodeproof/nodeproof/simreport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoadSimRefusesInconsistentSweeps: a sweep file whose runs disagree
// with its totals, or whose hours are not a duration, is bad input.
func TestLoadSimRefusesInconsistentSweeps(t *testing.T) {
	good := func() *simreport.Section {
		s := syntheticSim()
		s.Seeds, s.Events, s.SimulatedHours = 2, 30, 4
		s.Runs = []simreport.Run{
			{Seed: 42, Events: 10, SimulatedHours: 2, Passed: true},
			{Seed: 43, Events: 20, SimulatedHours: 2, Passed: true},
		}
		return s
	}
	dir := t.TempDir()
	write := func(t *testing.T, s *simreport.Section) string {
		data, err := json.Marshal(s)
		require.NoError(t, err)
		path := filepath.Join(dir, t.Name()[len("TestLoadSimRefusesInconsistentSweeps/"):]+".json")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		return path
	}
	t.Run("good", func(t *testing.T) {
		_, err := LoadSim(write(t, good()))
		require.NoError(t, err)
	})
	for name, tc := range map[string]struct {
		change func(*simreport.Section)
		want   string
	}{
		"failed run under a passing total": {func(s *simreport.Section) { s.Runs[1].Passed = false }, "runs[1]: passed is false under a total that passed"},
		"negative hours":                   {func(s *simreport.Section) { s.Hours = -2 }, "hours: -2 is not a simulated duration (more than 0, at most"},
		"zero hours":                       {func(s *simreport.Section) { s.Hours = 0 }, "hours: 0 is not a simulated duration"},
		"negative run hours":               {func(s *simreport.Section) { s.Runs[0].SimulatedHours = -1 }, "runs[0].simulated_hours: -1 is negative"},
		"run beyond its hours":             {func(s *simreport.Section) { s.Runs[0].SimulatedHours = 3 }, "runs[0].simulated_hours: 3 exceeds the 2 hours a seed runs"},
	} {
		t.Run(name, func(t *testing.T) {
			s := good()
			tc.change(s)
			_, err := LoadSim(write(t, s))
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
