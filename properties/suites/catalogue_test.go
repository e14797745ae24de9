package suites

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/properties"
)

var update = flag.Bool("update", false, "rewrite docs/invariants.md from the registry")

// TestCatalogueDoc keeps the reviewer-facing catalogue in step with the
// invariants the suites actually declare.
func TestCatalogueDoc(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "invariants.md")
	want := properties.CatalogueMarkdown()
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err, "reading the catalogue (generate it with -update)")
	require.Equal(t, want, string(got), "%s is out of date with the registry; regenerate it with\n  go test ./properties/suites -run TestCatalogueDoc -update", path)
}
