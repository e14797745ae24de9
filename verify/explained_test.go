package verify

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestExplainedIn(t *testing.T) {
	var want []string
	for _, f := range simFindings {
		want = append(want, f.Property)
	}
	assert.ElementsMatch(t, want, ExplainedIn("sim"), "the sim findings' properties")
	assert.Empty(t, ExplainedIn("no-such-suite"))
}
