package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScriptAnswersInOrder(t *testing.T) {
	s := NewScript("# a comment line\n2 T\n  # another\n0 F 1\n")
	assert.Equal(t, 2, s.Intn(3))
	assert.True(t, s.Chance(0.5))
	assert.Equal(t, 0, s.Intn(1), "one choice takes no draw")
	assert.True(t, s.Chance(1), "a certain outcome takes no draw")
	assert.False(t, s.Chance(0), "an impossible one neither")
	assert.Equal(t, 0, s.Split().Intn(4), "Split shares the script")
	assert.False(t, s.Chance(0.5))
	assert.Equal(t, 1, s.Intn(2))
	require.NoError(t, s.Err())
	assert.Equal(t, 0, s.Intn(5), "past the script, the zero draw")
	assert.False(t, s.Chance(0.9))
	assert.NoError(t, s.Err())
}

func TestScriptDivergence(t *testing.T) {
	for name, tc := range map[string]struct {
		script string
		draw   func(*Script)
		want   string
	}{
		"a Chance where an Intn was drawn": {"T", func(s *Script) { s.Intn(2) }, `draw 1: Intn(2) got "T"`},
		"an Intn where a Chance was drawn": {"3", func(s *Script) { s.Chance(0.5) }, `draw 1: Chance got "3"`},
		"out of range":                     {"5", func(s *Script) { s.Intn(5) }, `draw 1: Intn(5) got "5"`},
		"negative":                         {"-1", func(s *Script) { s.Intn(5) }, `draw 1: Intn(5) got "-1"`},
		"draws left over":                  {"1 1", func(s *Script) { s.Intn(2) }, "the run took 1 of the script's 2 draws"},
	} {
		t.Run(name, func(t *testing.T) {
			s := NewScript(tc.script)
			tc.draw(s)
			assert.ErrorContains(t, s.Err(), tc.want)
		})
	}
}
