package properties

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestActionsWeighsByKeys: an action of weight n appears under n keys that
// sort next to each other, right where its name sorts, and the check under
// "".
func TestActionsWeighsByKeys(t *testing.T) {
	var ran []string
	step := func(name string) func(*rapid.T) { return func(*rapid.T) { ran = append(ran, name) } }
	got := Actions(step("check"), map[string]Action{
		"tick":     {Weight: 3, Do: step("tick")},
		"tickle":   {Weight: 1, Do: step("tickle")},
		"gc":       {Weight: 2, Do: step("gc")},
		"restart2": {Weight: 1, Do: step("restart2")},
	})
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	assert.Equal(t, []string{"", "gc", "gc#2", "restart2", "tick", "tick#2", "tick#3", "tickle"}, keys)
	for _, k := range keys {
		got[k](nil)
	}
	assert.Equal(t, []string{"check", "gc", "gc", "restart2", "tick", "tick", "tick", "tickle"}, ran)
}

func TestActionsRefusesAZeroWeight(t *testing.T) {
	require.Panics(t, func() { Actions(nil, map[string]Action{"tick": {Do: func(*rapid.T) {}}}) })
	require.Panics(t, func() { Actions(nil, map[string]Action{"tick": {Weight: 1}}) })
}
