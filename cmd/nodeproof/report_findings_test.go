package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nodeproof/nodeproof/coverage"
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
	assert.Contains(t, data.NotRun, coverage.NotRun{ID: coverage.FindingsSearchID, Section: "findings search", Command: "make findings", Writes: defaultFindingsFile})
}
