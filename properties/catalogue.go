package properties

import (
	"fmt"
	"path"
	"strings"

	"github.com/nodeproof/nodeproof/verify/cite"
)

// catalogueDir is where CatalogueMarkdown's output lives in the repository;
// links to nodeproof's documents are made relative to it.
const catalogueDir = "docs"

// CatalogueMarkdown renders every suite's invariants as the Markdown table
// kept in docs/invariants.md; a test fails when the file drifts from the
// registry.
func CatalogueMarkdown() string {
	var b strings.Builder
	b.WriteString("# Invariant catalogue\n\n")
	b.WriteString("Generated from the registry in `properties/` (its suites in `properties/<subsystem>/`) by `go test ./properties/suites -run TestCatalogueDoc -update`;\n")
	b.WriteString("`go test ./properties/suites` fails when this file and the registry disagree.\n")
	b.WriteString("Every invariant is evaluated after every step of its suite's state machine. A violation message\n")
	b.WriteString("starts with the ID; `nodeproof report` counts how often each one was checked and how often it applied\n")
	b.WriteString("(had something to compare, such as two holdings of one resource).\n\n")
	b.WriteString("An invariant is of one of two kinds. A *fidelity* invariant says what upstream's kubelet does, bugs\n")
	b.WriteString("included, and cites upstream's code: it holds nodeproof's core to upstream. A *contract* invariant says\n")
	b.WriteString("what Kubernetes promises its users and cites the documentation or a KEP, never upstream's code: it is the\n")
	b.WriteString("kind that finds bugs in the kubelet. A contract invariant that upstream is known to break is a finding\n")
	b.WriteString("([findings.md](findings.md)); its breaches are counted, not failed, and `make findings` checks that each\n")
	b.WriteString("one still reproduces.\n\n")
	fmt.Fprintf(&b, "Sources link upstream code at the Kubernetes %s tag (naming the function), upstream issues, pull requests\n", cite.KubernetesTag)
	b.WriteString("and KEPs, and nodeproof's own documents. The seed articles are not public: a seed source names the article's\n")
	b.WriteString("subject and the section's title in English, without a link. `go test ./properties/suites` checks every source's form;\n")
	b.WriteString("`conformance/` (TestCodeSourcesExistAtTag) checks that each cited file declares the function it names at that tag.\n")
	for _, s := range Suites() {
		fmt.Fprintf(&b, "\n## Suite `%s` (subsystem %s)\n\n", s.Name, s.Subsystem)
		b.WriteString("| ID | Kind | Statement | Sources |\n|---|---|---|---|\n")
		for _, inv := range s.Invariants {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", inv.ID, inv.Kind, escapeCell(inv.Statement), escapeCell(catalogueSources(inv.Sources)))
		}
	}
	return b.String()
}

// catalogueSources renders sources as Markdown links, one per line of the
// cell; a document's link is made relative to the catalogue's directory so
// that it works on GitHub and in a checkout.
func catalogueSources(sources []Source) string {
	cells := make([]string, len(sources))
	for i, s := range sources {
		switch {
		case s.Linked():
			cells[i] = "[" + s.Text + "](" + s.URL + ")"
		case s.Kind == cite.KindDoc:
			cells[i] = "[" + s.Text + "](" + relativeToCatalogue(s.URL) + ")"
		default:
			cells[i] = s.Text
		}
	}
	return strings.Join(cells, "<br>")
}

// relativeToCatalogue turns a repository-relative path (with an optional
// #anchor) into one relative to catalogueDir.
func relativeToCatalogue(repoPath string) string {
	if rest, ok := strings.CutPrefix(repoPath, catalogueDir+"/"); ok {
		return rest
	}
	return path.Join("..", repoPath)
}

func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
