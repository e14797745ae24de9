package verify

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckEvaluateCountsAndPrefixesID(t *testing.T) {
	positive := Check[int]{
		Property: Property{ID: "T-POSITIVE", Statement: "The value is positive."},
		Applies:  func(v int) bool { return v != 0 },
		Holds: func(v int) error {
			if v < 0 {
				return errors.New("negative")
			}
			return nil
		},
	}
	counts := Counts{}
	require.NoError(t, positive.Evaluate(0, counts), "a check that does not apply passes")
	require.NoError(t, positive.Evaluate(3, counts))
	err := positive.Evaluate(-1, counts)
	require.EqualError(t, err, "T-POSITIVE: negative")
	assert.Equal(t, Count{Checked: 3, Applied: 2}, counts["T-POSITIVE"])

	// A nil Counts records nothing and does not panic.
	require.Error(t, positive.Evaluate(-1, nil))
}

func TestCheckWithoutAppliesAlwaysApplies(t *testing.T) {
	c := Check[string]{Property: Property{ID: "T-ANY"}, Holds: func(string) error { return nil }}
	counts := Counts{}
	require.NoError(t, c.Evaluate("", counts))
	assert.Equal(t, Count{Checked: 1, Applied: 1}, counts["T-ANY"])
}

func TestProperties(t *testing.T) {
	checks := []Check[int]{{Property: Property{ID: "A"}}, {Property: Property{ID: "B"}}}
	assert.Equal(t, []Property{{ID: "A"}, {ID: "B"}}, Properties(checks))
}

func TestCommandLineQuotesOnlyWhatAShellWouldRead(t *testing.T) {
	assert.Equal(t, "go test ./properties -run '^TestSuites$/^dm$' -rapid.seed=12",
		CommandLine("go", "test", "./properties", "-run", "^TestSuites$/^dm$", "-rapid.seed=12"))
	assert.Equal(t, "nodeproof sim --faults ''", CommandLine("nodeproof", "sim", "--faults", ""))
	assert.Equal(t, `'it'\''s'`, Quote("it's"))
	assert.Equal(t, "'a b'", Quote("a b"))
	assert.Equal(t, "'$HOME'", Quote("$HOME"))
	assert.Equal(t, "a=1,user@host:1", Quote("a=1,user@host:1"))
	assert.Equal(t, "'50%'", Quote("50%"))
}

func TestContracts(t *testing.T) {
	fidelity := Property{ID: "X-F", Kind: Fidelity}
	a, b := Property{ID: "X-C-A", Kind: Contract}, Property{ID: "X-C-B", Kind: Contract}
	assert.Equal(t, []Property{a, b}, Contracts([]Property{a, fidelity, b}))
	assert.Empty(t, Contracts([]Property{fidelity}))
}
