package properties

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestInvariantSources holds every invariant's sources to cite's rules, so a
// reviewer can follow each one: at least one source; links only to upstream
// code at the v1.36.3 tag, upstream issues, pull requests and KEPs; documents
// that exist in this repository, with headings that exist; seed sections
// named in English; nothing that points at spec/, seeds/ or DESIGN.md, which
// exist only beside the repository.
func TestInvariantSources(t *testing.T) {
	repo := os.DirFS("..")
	invariants := Invariants()
	assert.NotEmpty(t, invariants)
	for _, inv := range invariants {
		if !assert.NotEmpty(t, inv.Sources, "%s: every invariant needs at least one source", inv.ID) {
			continue
		}
		seen := map[Source]bool{}
		for _, s := range inv.Sources {
			assert.NoError(t, s.Validate(repo), "%s", inv.ID)
			assert.False(t, seen[s], "%s: source %q listed twice", inv.ID, s.Text)
			seen[s] = true
		}
	}
}
