package properties

import (
	"fmt"
	"strings"
)

// CatalogueMarkdown renders every suite's invariants as the Markdown table
// kept in docs/invariants.md; a test fails when the file drifts from the
// registry.
func CatalogueMarkdown() string {
	var b strings.Builder
	b.WriteString("# Invariant catalogue\n\n")
	b.WriteString("Generated from the registry in `properties/` by `go test ./properties -run TestCatalogueDoc -update-catalogue`;\n")
	b.WriteString("`go test ./properties` fails when this file and the registry disagree.\n")
	b.WriteString("Every invariant is evaluated after every step of its suite's state machine. A violation message\n")
	b.WriteString("starts with the ID; `nodeproof report` counts how often each one was checked.\n")
	for _, s := range Suites() {
		fmt.Fprintf(&b, "\n## Suite `%s` (subsystem %s)\n\n", s.Name, s.Subsystem)
		b.WriteString("| ID | Statement | Source |\n|---|---|---|\n")
		for _, inv := range s.Invariants {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", inv.ID, escapeCell(inv.Statement), escapeCell(inv.Source))
		}
	}
	return b.String()
}

func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
