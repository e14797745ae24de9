package campaign

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeShards writes an empty file for each record (Merge lists the
// directory; the records stand for what the report would decode) and
// returns the directory and a reader that hands the records back.
func writeShards(t *testing.T, records ...Record) (string, func(string) (Record, error)) {
	t.Helper()
	dir := t.TempDir()
	byPath := map[string]Record{}
	for _, r := range records {
		path := filepath.Join(dir, ShardFileName(r.Info.Shard))
		require.NoError(t, os.WriteFile(path, []byte("{}"), 0o644))
		byPath[path] = r
	}
	return dir, func(path string) (Record, error) { return byPath[path], nil }
}

// twoShards is a plan of sim seeds 1..3 and FuzzX over two shards: shard 0
// holds seeds 1 and 3, shard 1 seed 2 and FuzzX, which failed on an input.
func twoShards() (Record, Record) {
	plan := Resolved{Shards: 2, Sim: &ResolvedSim{FirstSeed: 1, LastSeed: 3, Hours: 1, Pods: 20},
		Fuzz: &ResolvedFuzz{Binaries: "/b", Seconds: 1, Targets: []FuzzTarget{{Package: "fuzz/x", Name: "FuzzX"}}}}
	sim := func(seed uint64, failed bool) Held {
		h := Held{Unit: Unit{Kind: "sim", Seed: seed}, Field: "sim.runs"}
		if failed {
			h.Failure = &Failure{Invariant: "SIM-X", Replay: "nodeproof sim --seed 3"}
		}
		return h
	}
	zero := Record{Version: "v", Started: "2026-01-02T03:04:05Z", Seconds: 10, Passed: false,
		Info: Info{Shard: 0, Shards: 2, Plan: plan}, Held: []Held{sim(1, false), sim(3, true)}, Fuzz: []FuzzResult{}}
	one := Record{Version: "v", Started: "2026-01-02T03:04:00Z", Seconds: 5, Passed: false,
		Info: Info{Shard: 1, Shards: 2, Plan: plan}, Held: []Held{sim(2, false)},
		Fuzz: []FuzzResult{{Package: "fuzz/x", Target: "FuzzX", Shard: 1, Failure: &FuzzFailure{Input: "fuzz-inputs/shard-1/FuzzX/abc", Replay: "old"}}}}
	return zero, one
}

// TestMergeSection: the section has a row per shard, every failure in plan
// order with its shard, a fuzz input's replay line rewritten for the
// directory merged, and the span from the first start to the last end.
func TestMergeSection(t *testing.T) {
	zero, one := twoShards()
	dir, read := writeShards(t, zero, one)
	m, err := Merge(dir, read)
	require.NoError(t, err)
	c := m.Section
	assert.Equal(t, 4, c.Units)
	assert.Equal(t, []ShardRow{
		{Shard: 0, File: "shard-0.json", Units: 2, Seconds: 10},
		{Shard: 1, File: "shard-1.json", Units: 2, Seconds: 5},
	}, c.ShardResults)
	replay := FuzzReplay(FuzzTarget{Package: "fuzz/x", Name: "FuzzX"}, filepath.Join(dir, "fuzz-inputs", "shard-1", "FuzzX", "abc"))
	assert.Equal(t, []Failure{
		{Shard: 0, Unit: "sim seed 3", Invariant: "SIM-X", Replay: "nodeproof sim --seed 3"},
		{Shard: 1, Unit: "fuzz FuzzX in ./fuzz/x", Invariant: "fuzz", Replay: replay},
	}, c.Failures)
	assert.Equal(t, []string{
		"shard 0: sim seed 3: SIM-X violated; replay: nodeproof sim --seed 3",
		"shard 1: fuzz FuzzX in ./fuzz/x failed; replay: " + replay,
	}, c.Problems())
	assert.Equal(t, "2026-01-02T03:04:00Z", m.Started)
	assert.Equal(t, 15.0, m.Seconds, "from shard 1's start to shard 0's end")
	data, err := json.Marshal(c)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"shard_results":[{"shard":0,"file":"shard-0.json"`)
}

// TestMergeRefuses: shards that are not one whole campaign are refused,
// naming the file and the field.
func TestMergeRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(zero, one *Record)
		want   string
	}{
		"verdict contradicts": {func(zero, _ *Record) { zero.Passed = true }, "shard-0.json: passed is true, but the file holds 1 failures"},
		"another build":       {func(_, one *Record) { one.Version = "w" }, "shard-1.json: version w differs from"},
		"unit twice":          {func(_, one *Record) { one.Held = append(one.Held, one.Held[0]) }, "shard-1.json: sim.runs holds sim seed 2 twice"},
		"unit of another":     {func(_, one *Record) { one.Held[0].Unit.Seed = 1 }, "shard-1.json: sim.runs holds sim seed 1, which is not in shard 1's share of campaign.plan"},
		"unit left out":       {func(zero, _ *Record) { zero.Held = zero.Held[1:] }, "shard-0.json: sim seed 1 of shard 0's share is not in the file"},
	} {
		t.Run(name, func(t *testing.T) {
			zero, one := twoShards()
			tc.change(&zero, &one)
			dir, read := writeShards(t, zero, one)
			_, err := Merge(dir, read)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	zero, _ := twoShards()
	dir, read := writeShards(t, zero)
	_, err := Merge(dir, read)
	assert.ErrorContains(t, err, "campaign.shards is 2, but no file holds campaign.shard 1 (want "+filepath.Join(dir, "shard-1.json")+")")
}
