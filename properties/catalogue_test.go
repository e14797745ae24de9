package properties

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateCatalogue = flag.Bool("update-catalogue", false, "rewrite docs/invariants.md from the registry")

// TestCatalogueDoc keeps the reviewer-facing catalogue in step with the
// invariants the suites actually declare.
func TestCatalogueDoc(t *testing.T) {
	path := filepath.Join("..", "docs", "invariants.md")
	want := CatalogueMarkdown()
	if *updateCatalogue {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the catalogue: %v (generate it with -update-catalogue)", err)
	}
	if string(got) != want {
		t.Fatalf("%s is out of date with the registry; regenerate it with\n  go test ./properties -run TestCatalogueDoc -update-catalogue", path)
	}
}
