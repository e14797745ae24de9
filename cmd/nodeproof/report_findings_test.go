package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/verify"
)

// withKnownFindings makes the report know exactly these findings.
func withKnownFindings(t *testing.T, findings ...verify.Finding) {
	saved := knownFindings
	t.Cleanup(func() { knownFindings = saved })
	knownFindings = func() []verify.Finding { return findings }
}

// TestReportFindingNoLongerReproduces: a known finding makes nothing red,
// but one whose search no longer reproduces it does, and so does a
// findings file that never searched for it.
func TestReportFindingNoLongerReproduces(t *testing.T) {
	withKnownFindings(t, syntheticFinding)
	data := syntheticReport(t)
	data.Suites = data.Suites[:1] // the passing suite alone
	data.searches = syntheticSearches()
	data.finish(testInventory, 3)
	assert.True(t, data.Passed, "%v", verdict(data).Problems)

	data.searches.Findings[0].Reproduced = false
	data.finish(testInventory, 3)
	assert.False(t, data.Passed)
	assert.Contains(t, verdict(data).Problems, "finding IGC-F1 no longer reproduces (IGC-C-PROMISE in suite imagegc): run nodeproof findings IGC-F1")

	data.searches.Findings = nil
	data.finish(testInventory, 3)
	assert.False(t, data.Passed)
	assert.Contains(t, verdict(data).Problems, "finding IGC-F1 was not searched for in the findings file: run make findings again")

	data.searches = nil
	data.finish(testInventory, 3)
	assert.True(t, data.Passed)
	assert.Contains(t, data.NotRun, notRun{Section: "findings search", Command: "make findings", Writes: defaultFindingsFile})
}

// TestLoadFindingsRefusesWhatNoSearchWrote: a findings file must be a
// search's result: known findings, each searched from a seed.
func TestLoadFindingsRefusesWhatNoSearchWrote(t *testing.T) {
	withKnownFindings(t, syntheticFinding)
	dir := t.TempDir()
	for name, tc := range map[string]struct{ body, want string }{
		"null":            {`null`, "findings: required"},
		"empty object":    {`{}`, "findings: required"},
		"no findings":     {`{"findings": []}`, "findings: empty, while 1 findings are known"},
		"unknown finding": {`{"findings": [{"id": "X-F9", "searches": [{"seed": 1}]}]}`, `findings[0].id: no known finding "X-F9"`},
		"no searches":     {`{"findings": [{"id": "IGC-F1", "searches": []}]}`, "findings[0].searches: empty"},
		"unknown field":   {`{"findings": [], "extra": 1}`, `unknown field "extra"`},
		"not json":        {`[`, "not a findings file"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".json")
			require.NoError(t, os.WriteFile(path, []byte(tc.body), 0o644))
			_, err := loadFindings(path)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	path := filepath.Join(dir, "good.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"checks": 300, "steps": 100, "findings": [{"id": "IGC-F1", "searches": [{"seed": 3, "found": true}], "reproduced": true}]}`), 0o644))
	got, err := loadFindings(path)
	require.NoError(t, err)
	assert.True(t, got.Findings[0].Reproduced)
}
