package suites

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// TestInvariantSources holds every invariant's sources to cite's rules, so a
// reviewer can follow each one: at least one source; links only to upstream
// code at the v1.36.3 tag, upstream issues, pull requests and KEPs; documents
// that exist in this repository, with headings that exist; seed sections
// named in English; nothing that points at spec/, seeds/ or DESIGN.md, which
// exist only beside the repository.
func TestInvariantSources(t *testing.T) {
	repo := os.DirFS(filepath.Join("..", ".."))
	invariants := properties.Invariants()
	assert.NotEmpty(t, invariants)
	for _, inv := range invariants {
		if !assert.NotEmpty(t, inv.Sources, "%s: every invariant needs at least one source", inv.ID) {
			continue
		}
		seen := map[cite.Source]bool{}
		for _, s := range inv.Sources {
			assert.NoError(t, s.Validate(repo), "%s", inv.ID)
			assert.False(t, seen[s], "%s: source %q listed twice", inv.ID, s.Text)
			seen[s] = true
		}
		checkKindSources(t, inv)
	}
}

// checkKindSources holds a contract invariant to its kind: it states a
// promise Kubernetes makes its users, so it cites where the promise is
// written (the documentation or a KEP) and never upstream's code, which is
// what a fidelity invariant cites.
func checkKindSources(t *testing.T, inv verify.Property) {
	switch inv.Kind {
	case verify.Fidelity:
	case verify.Contract:
		promised := false
		for _, s := range inv.Sources {
			assert.NotEqual(t, cite.KindCode, s.Kind, "%s: a contract invariant cites the promise, never upstream's code (%s)", inv.ID, s.Text)
			promised = promised || s.Kind == cite.KindKubernetesDoc || s.Kind == cite.KindKEP
		}
		assert.True(t, promised, "%s: a contract invariant cites at least one page of the Kubernetes documentation or a KEP", inv.ID)
	default:
		t.Errorf("%s: kind %v is neither fidelity nor contract", inv.ID, inv.Kind)
	}
}

// TestKnownFindings checks every known finding against the registry: it
// names a registered suite and a contract invariant of that suite, cites
// its promise as a contract does, and says how it was confirmed.
func TestKnownFindings(t *testing.T) {
	byID := map[string]verify.Property{}
	for _, inv := range properties.Invariants() {
		byID[inv.ID] = inv
	}
	repo := os.DirFS(filepath.Join("..", ".."))
	for _, f := range verify.Findings() {
		s, ok := properties.Lookup(f.Suite)
		if !assert.True(t, ok, "%s: no suite %q", f.ID, f.Suite) {
			continue
		}
		declared := slices.ContainsFunc(s.Invariants, func(inv verify.Property) bool { return inv.ID == f.Property })
		assert.True(t, declared, "%s: suite %s declares no invariant %s", f.ID, f.Suite, f.Property)
		assert.Equal(t, verify.Contract, byID[f.Property].Kind, "%s: %s must be a contract invariant", f.ID, f.Property)
		checkKindSources(t, verify.Property{ID: f.ID, Kind: verify.Contract, Sources: f.Sources})
		for _, src := range append(slices.Clone(f.Sources), f.Tracker...) {
			assert.NoError(t, src.Validate(repo), "%s", f.ID)
		}
		assert.NotEmpty(t, f.Title, "%s: title", f.ID)
		assert.NotEmpty(t, f.Promise, "%s: promise", f.ID)
		assert.NotEmpty(t, f.Steps, "%s: steps", f.ID)
		assert.NotZero(t, f.Seed, "%s: seed", f.ID)
		assert.NotEmpty(t, f.Confirmation, "%s: confirmation test", f.ID)
		assert.NotEmpty(t, f.Releases, "%s: later releases", f.ID)
	}
}
