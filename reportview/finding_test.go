package reportview

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/verify"
)

// TestReportFindingNoLongerReproduces: a known finding makes nothing red,
// but one whose search no longer reproduces it does, and so does a
// findings file that never searched for it.
func TestReportFindingNoLongerReproduces(t *testing.T) {
	known := []verify.Finding{syntheticFinding}
	data := syntheticReport(t)
	data.Suites = data.Suites[:1] // the passing suite alone
	data.Searches = syntheticSearches()
	data.Finish(testInventory, known, 3)
	assert.True(t, data.Passed, "%v", data.Verdict().Problems)

	data.Searches.Findings[0].Reproduced = false
	data.Finish(testInventory, known, 3)
	assert.False(t, data.Passed)
	assert.Contains(t, data.Verdict().Problems, "finding IGC-F1 no longer reproduces (IGC-C-PROMISE in suite imagegc): run nodeproof findings IGC-F1")

	data.Searches.Findings = nil
	data.Finish(testInventory, known, 3)
	assert.False(t, data.Passed)
	assert.Contains(t, data.Verdict().Problems, "finding IGC-F1 was not searched for in the findings file: run make findings again")

	data.Searches = nil
	data.Finish(testInventory, known, 3)
	assert.True(t, data.Passed)
	assert.Contains(t, data.NotRun, coverage.NotRun{ID: coverage.FindingsSearchID, Section: "findings search", Command: "make findings", Writes: DefaultFindingsFile})
}
