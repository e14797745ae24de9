package mutants

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestBaselinesPlan: one run per Tests pattern over every package its
// mutants name, the run without a pattern first, and a pattern's run over
// packages that all run whole marked Within.
func TestBaselinesPlan(t *testing.T) {
	plans := Baselines([]Mutant{
		{ID: "x-a", Packages: []string{"./a"}},
		{ID: "x-ab", Packages: []string{"./b", "./a"}},
		{ID: "x-only-a", Packages: []string{"./a"}, Tests: "^TestA$"},
		{ID: "x-only-c", Packages: []string{"./c", "./a"}, Tests: "^TestC$"},
	})
	assert.Equal(t, []BaselinePlan{
		{Packages: []string{"./a", "./b"}},
		{Packages: []string{"./a"}, Tests: "^TestA$", Within: true},
		{Packages: []string{"./a", "./c"}, Tests: "^TestC$"},
	}, plans)
	assert.Equal(t, "./a -run=^TestA$", plans[1].Label())
	assert.Equal(t, "./a ./b", plans[0].Label())
}
