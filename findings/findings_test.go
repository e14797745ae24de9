package findings

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/verify"
)

var finding = verify.Finding{ID: "T-F1", Suite: "x", Property: "T-C-PROMISE", Seed: 5}

// fakeSearch finds the finding from the seeds in found (shrunk to that
// many steps, after seed/10 s), fails on another invariant from seed 99,
// and finds nothing elsewhere.
func fakeSearch(found map[uint64]int) Searcher {
	return func(f verify.Finding, seed uint64, checks, steps int, shrink time.Duration) (properties.Search, error) {
		s := properties.Search{Finding: f, Seed: seed, Seconds: 2, Cases: checks}
		if n, ok := found[seed]; ok {
			s.Found, s.FoundAfter, s.Steps = true, float64(seed)/10, n
			s.Failure = &properties.Failure{Invariant: f.Property, Steps: []string{"step 1: x", f.Property + ": y"}, Replay: "nodeproof replay --suite x --seed 7 --steps 100"}
		} else if seed == 99 {
			s.Other = "X-OTHER"
		}
		return s, nil
	}
}

func TestRunOwnSeed(t *testing.T) {
	var started, searched []uint64
	got, err := Run([]verify.Finding{finding}, fakeSearch(map[uint64]int{5: 4}), Options{
		Starting: func(_ verify.Finding, seed uint64) { started = append(started, seed) },
		Searched: func(_ verify.Finding, s Search) { searched = append(searched, s.Seed) },
	})
	require.NoError(t, err)
	assert.Equal(t, []uint64{5}, started)
	assert.Equal(t, []uint64{5}, searched)
	assert.Equal(t, Checks, got.Checks)
	require.Len(t, got.Findings, 1)
	r := got.Findings[0]
	assert.True(t, r.Reproduced)
	assert.Equal(t, []string{"step 1: x", "T-C-PROMISE: y"}, r.Searches[0].Shrunk)
	assert.Equal(t, "found from seed 5 after 0.50 s, shrunk to 4 steps", r.Summary())

	got, err = Run([]verify.Finding{finding}, fakeSearch(nil), Options{})
	require.NoError(t, err)
	assert.False(t, got.Findings[0].Reproduced, "not found from its own seed")
	assert.Equal(t, "not found from seed 5 in 300 cases", got.Findings[0].Summary())
}

func TestRunSweep(t *testing.T) {
	got, err := Run([]verify.Finding{finding}, fakeSearch(map[uint64]int{1: 3, 2: 9, 4: 5}), Options{Seeds: []uint64{1, 2, 3, 4}})
	require.NoError(t, err)
	r := got.Findings[0]
	assert.True(t, r.Reproduced, "found from some seed of a sweep")
	assert.Equal(t, 3, r.Found())
	assert.Equal(t, 0.2, r.MedianFoundAfter)
	assert.Equal(t, 5.0, r.MedianSteps)
	assert.Equal(t, "found from 3 of 4 seeds; median 0.20 s to find, median 5 shrunk steps", r.Summary())

	got, err = Run([]verify.Finding{finding}, fakeSearch(map[uint64]int{98: 3}), Options{Seeds: []uint64{98, 99}})
	require.NoError(t, err)
	assert.False(t, got.Findings[0].Reproduced, "another invariant failed first from seed 99")
}

func TestMedianOfEvenCount(t *testing.T) {
	assert.Equal(t, 2.5, median([]Search{{Steps: 4}, {Steps: 1}, {Steps: 2}, {Steps: 3}}, func(s Search) float64 { return float64(s.Steps) }))
	assert.Zero(t, median(nil, func(s Search) float64 { return 1 }))
}

// TestLoadRefusesWhatNoSearchWrote: a findings file must be a search's
// result: known findings, each searched from a seed.
func TestLoadRefusesWhatNoSearchWrote(t *testing.T) {
	known := []verify.Finding{finding}
	dir := t.TempDir()
	for name, tc := range map[string]struct{ body, want string }{
		"null":            {`null`, "findings: required"},
		"empty object":    {`{}`, "findings: required"},
		"no findings":     {`{"findings": []}`, "findings: empty, while 1 findings are known"},
		"unknown finding": {`{"findings": [{"id": "X-F9", "searches": [{"seed": 1}]}]}`, `findings[0].id: no known finding "X-F9"`},
		"no searches":     {`{"findings": [{"id": "T-F1", "searches": []}]}`, "findings[0].searches: empty"},
		"unknown field":   {`{"findings": [], "extra": 1}`, `unknown field "extra"`},
		"not json":        {`[`, "not a findings file"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".json")
			require.NoError(t, os.WriteFile(path, []byte(tc.body), 0o644))
			_, err := Load(path, known)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// TestWriteThenLoad: the File written as JSON (as nodeproof findings
// --json writes it), Load reads back the same.
func TestWriteThenLoad(t *testing.T) {
	out, err := Run([]verify.Finding{finding}, fakeSearch(map[uint64]int{5: 4}), Options{})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "findings.json")
	data, err := json.MarshalIndent(out, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	got, err := Load(path, []verify.Finding{finding})
	require.NoError(t, err)
	assert.Equal(t, out, *got)
}
