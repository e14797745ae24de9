package campaign

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShardUnitsCoverEachUnitOnce: for any number of shards, every unit of
// the plan is in exactly one shard's share.
func TestShardUnitsCoverEachUnitOnce(t *testing.T) {
	plan := Resolved{
		Sim:    &ResolvedSim{FirstSeed: 3, LastSeed: 12},
		Suites: &ResolvedSuites{Names: []string{"a", "b"}, FirstSeed: 1, LastSeed: 4},
		Fuzz:   &ResolvedFuzz{Targets: []FuzzTarget{{"fuzz/x", "FuzzX"}, {"fuzz/y", "FuzzY"}}},
	}
	all := plan.Units()
	require.Len(t, all, 10+8+2)
	for shards := 1; shards <= 25; shards++ {
		plan.Shards = shards
		seen := map[string]int{}
		for i := range shards {
			for _, u := range plan.ShardUnits(i) {
				seen[u.String()]++
			}
		}
		require.Len(t, seen, len(all), "shards=%d", shards)
		for u, n := range seen {
			require.Equal(t, 1, n, "shards=%d: %s", shards, u)
		}
	}
}
