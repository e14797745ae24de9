package properties

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/verify"
)

// contractSuite's contract invariant is broken whenever the counter
// reaches 3, as a known finding's property is broken by upstream.
func contractSuite() Suite {
	const id = "TEST-CONTRACT"
	return Suite{
		Name:       "contract",
		Subsystem:  "test",
		Invariants: []verify.Property{{ID: id, Subsystem: "test", Statement: "The counter stays below 3.", Kind: verify.Contract}},
		Property: func(t *rapid.T, tally *Tally) {
			n := 0
			t.Repeat(map[string]func(*rapid.T){
				"inc": func(t *rapid.T) {
					tally.Action("inc")
					n++
					t.Logf("step %d: inc", n)
				},
				"": func(t *rapid.T) {
					tally.Check(id, true)
					if n >= 3 {
						tally.Breach(t, id, "counter is %d", n)
					}
				},
			})
		},
	}
}

func withExplained(t *testing.T, ids ...string) {
	saved := explained
	t.Cleanup(func() { explained = saved })
	explained = func(id string) bool {
		for _, known := range ids {
			if id == known {
				return true
			}
		}
		return false
	}
}

// TestBreachUnexplainedFails: a contract breach no finding explains fails
// the run like any violation.
func TestBreachUnexplainedFails(t *testing.T) {
	withExplained(t)
	res := Run(contractSuite(), RunOptions{Checks: 50, Steps: 20, Seed: 1})
	require.False(t, res.Passed)
	assert.Equal(t, "TEST-CONTRACT", res.Failure.Invariant)
	assert.Empty(t, res.Tally.Breaches)
}

// TestBreachExplainedIsCounted: a breach a known finding explains is
// counted with its first message, and the run passes.
func TestBreachExplainedIsCounted(t *testing.T) {
	withExplained(t, "TEST-CONTRACT")
	res := Run(contractSuite(), RunOptions{Checks: 50, Steps: 20, Seed: 1})
	require.True(t, res.Passed, "%+v", res.Failure)
	assert.Positive(t, res.Tally.Breaches["TEST-CONTRACT"])
	assert.Equal(t, "TEST-CONTRACT: counter is 3", res.Tally.FirstBreach["TEST-CONTRACT"])
}

// TestBreachEnforced: a search for the finding (Enforce) or a replay
// (EnforceAll) fails on the explained breach and shrinks it.
func TestBreachEnforced(t *testing.T) {
	withExplained(t, "TEST-CONTRACT")
	for name, opts := range map[string]RunOptions{
		"enforce":     {Enforce: []string{"TEST-CONTRACT"}},
		"enforce all": {EnforceAll: true},
	} {
		t.Run(name, func(t *testing.T) {
			opts.Checks, opts.Steps, opts.Seed = 50, 20, 1
			res := Run(contractSuite(), opts)
			require.False(t, res.Passed)
			assert.Equal(t, "TEST-CONTRACT", res.Failure.Invariant)
			assert.Equal(t, "TEST-CONTRACT: counter is 3", res.Failure.Steps[len(res.Failure.Steps)-1])
		})
	}
}

// TestSearchFinding: a search enforces the finding's property, finds it
// from the seed, shrinks it and counts its steps; a finding naming an
// invariant its suite lacks is an error.
func TestSearchFinding(t *testing.T) {
	withExplained(t, "TEST-CONTRACT")
	f := verify.Finding{ID: "TEST-F1", Suite: "contract", Property: "TEST-CONTRACT"}
	got, err := search(contractSuite(), f, 1, 50, 20, 0)
	require.NoError(t, err)
	assert.True(t, got.Found, "%+v", got.Failure)
	assert.Empty(t, got.Other)
	assert.Equal(t, 3, got.Steps, "three increments break the property: %q", got.Failure.Steps)
	assert.Positive(t, got.FoundAfter)
	assert.GreaterOrEqual(t, got.Seconds, got.FoundAfter)
	assert.Positive(t, got.Cases)

	f.Property = "TEST-ABSENT"
	_, err = search(contractSuite(), f, 1, 50, 20, 0)
	assert.ErrorContains(t, err, "declares no invariant TEST-ABSENT")
}

// TestSearchFindingOtherFailure: a search that fails on another invariant
// has not found the finding; it reports the invariant that failed instead.
func TestSearchFindingOtherFailure(t *testing.T) {
	withExplained(t, "TEST-CONTRACT")
	s := contractSuite()
	s.Invariants = append(s.Invariants, verify.Property{ID: "TEST-FIRST", Subsystem: "test", Statement: "The counter stays below 2.", Kind: verify.Fidelity})
	// The counter reaches 2, and fails TEST-FIRST, before it reaches 3.
	s.Property = func(rt *rapid.T, tally *Tally) {
		n := 0
		rt.Repeat(map[string]func(*rapid.T){
			"inc": func(rt *rapid.T) { n++; rt.Logf("step %d: inc", n) },
			"": func(rt *rapid.T) {
				tally.Check("TEST-FIRST", true)
				if n >= 2 {
					rt.Fatalf("TEST-FIRST: counter is %d", n)
				}
				if n >= 3 {
					tally.Breach(rt, "TEST-CONTRACT", "counter is %d", n)
				}
			},
		})
	}
	got, err := search(s, verify.Finding{ID: "TEST-F1", Suite: "contract", Property: "TEST-CONTRACT"}, 1, 50, 20, 0)
	require.NoError(t, err)
	assert.False(t, got.Found)
	assert.Equal(t, "TEST-FIRST", got.Other)
}

// TestBreachReplayLine: a failure of a known finding's property offers
// nodeproof replay only, since go test ./properties/suites counts such breaches.
func TestBreachReplayLine(t *testing.T) {
	withExplained(t, "TEST-CONTRACT")
	res := Run(contractSuite(), RunOptions{Checks: 50, Steps: 20, Seed: 1, EnforceAll: true})
	require.NotNil(t, res.Failure)
	assert.Contains(t, res.Failure.Message, "replay: nodeproof replay --suite contract --seed ")
	assert.NotContains(t, res.Failure.Message, "go test ./properties/suites")

	withExplained(t)
	res = Run(contractSuite(), RunOptions{Checks: 50, Steps: 20, Seed: 1})
	require.NotNil(t, res.Failure)
	assert.Contains(t, res.Failure.Message, "or: go test ./properties/suites -run 'TestSuites/contract$'")
}
