package propertiestest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/verify"
)

// JudgesAsRegistered holds a suite's contract suite, run with core behind
// it, to the registered suite named registered: its invariants are the
// contract properties want, in order, and on the same cases it draws the
// same actions and checks, applies and breaches each of them exactly as
// the registered suite does, checking nothing else. So judging another
// system under test takes nothing from the search but the fidelity
// invariants.
func JudgesAsRegistered(t *testing.T, contract properties.Suite, registered string, want []string) {
	t.Helper()
	var ids []string
	for _, p := range contract.Invariants {
		assert.Equal(t, verify.Contract, p.Kind, p.ID)
		ids = append(ids, p.ID)
	}
	require.Equal(t, want, ids)

	suite, ok := properties.Lookup(registered)
	require.True(t, ok, "no registered suite %s", registered)
	opts := properties.RunOptions{Seed: 1, Checks: 100, Steps: 100}
	theirs, ours := properties.Run(contract, opts), properties.Run(suite, opts)
	require.Nil(t, theirs.Failure)
	require.Nil(t, ours.Failure)
	assert.Equal(t, ours.Tally.Cases, theirs.Tally.Cases)
	assert.Equal(t, ours.Tally.Actions, theirs.Tally.Actions)
	for id := range theirs.Tally.Checked {
		assert.Contains(t, ids, id, "the contract suite checked a fidelity invariant")
	}
	for _, id := range ids {
		assert.Positive(t, theirs.Tally.Applied[id], id)
		assert.Equal(t, ours.Tally.Checked[id], theirs.Tally.Checked[id], id)
		assert.Equal(t, ours.Tally.Applied[id], theirs.Tally.Applied[id], id)
		assert.Equal(t, ours.Tally.Breaches[id], theirs.Tally.Breaches[id], id)
	}
}
