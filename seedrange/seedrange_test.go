package seedrange

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	first, last, err := Parse("3..12")
	require.NoError(t, err)
	assert.Equal(t, []uint64{3, 12}, []uint64{first, last})
	first, last, err = Parse("7..7")
	require.NoError(t, err, "a range of one seed")
	assert.Equal(t, []uint64{7, 7}, []uint64{first, last})

	for s, want := range map[string]string{
		"4":     `must be a range A..B of seeds (whole numbers from 0), got "4"`,
		"1..x":  `must be a range A..B of seeds (whole numbers from 0), got "1..x"`,
		"-1..2": `must be a range A..B of seeds (whole numbers from 0), got "-1..2"`,
		"5..1":  `"5..1": the range's end 1 is below its start 5`,
	} {
		_, _, err := Parse(s)
		assert.EqualError(t, err, want, s)
	}
}
