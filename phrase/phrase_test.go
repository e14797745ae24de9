package phrase

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCount(t *testing.T) {
	assert.Equal(t, "0 findings", Count(0, "finding"))
	assert.Equal(t, "1 finding", Count(1, "finding"))
	assert.Equal(t, "2 findings", Count(2, "finding"))
	assert.Equal(t, "-1 steps", Count(-1, "step"))
}

func TestNoun(t *testing.T) {
	assert.Equal(t, "piece", Noun(1, "piece", "pieces"))
	assert.Equal(t, "pieces", Noun(3, "piece", "pieces"))
	assert.Equal(t, "pieces", Noun(0, "piece", "pieces"))
}

func TestFigures(t *testing.T) {
	assert.Equal(t, "-", Rate(5, 0))
	assert.Equal(t, "2.5", Rate(5, 2))
	assert.Equal(t, "150", Rate(300, 2))
	assert.Equal(t, "0.1235", Stat(0.123456))
	assert.Equal(t, "2", Stat(2))
	assert.Equal(t, 1.235, RoundMilli(1.23456))
	assert.Equal(t, 1.234568, RoundMicro(1.2345678))
}
