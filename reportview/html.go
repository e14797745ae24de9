package reportview

import (
	"embed"
	"html"
	"html/template"
	"io"
	"strings"

	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/inventory"
	"github.com/nodeproof/nodeproof/phrase"
)

//go:embed templates/index.html templates/style.css
var templates embed.FS

// WriteHTML writes index.html: one self-contained page (no scripts, fonts
// or network) that a reviewer can open from a CI artifact. html/template
// escapes every string from the suites, which quote program output.
func WriteHTML(w io.Writer, r *Report) error {
	return page.Execute(w, r)
}

var page = template.Must(template.New("index.html").Funcs(template.FuncMap{
	"actionChart": func(actions map[string]int) Chart {
		return Counts("actions drawn, by action", actions)
	},
	"killed":               killed,
	"sources":              sourceCellHTML,
	"localPage":            localPage,
	"stat":                 phrase.Stat,
	"verdict":              func(r *Report) Verdict { return r.Verdict() },
	"layers":               func() []string { return coverage.Layers },
	"legend":               func() []coverage.State { return coverage.Legend },
	"notRunWords":          notRunHTML,
	"notRunNote":           notRunNote,
	"notRunIDs":            func() sectionIDs { return notRunIDs },
	"inventoryLayer":       inventoryLayers,
	"statusClass":          statusClass,
	"counts":               countsText,
	"violations":           violationsCell,
	"counterexamples":      func(r *Report) int { return r.counterexamples() },
	"linearizabilityTable": LinearizabilityTable,
	"count":                phrase.Count,
	"nodeIntro":            func() string { return nodeIntro },
	"nodeSummary":          nodeSummaryTable,
	"nodeChecks":           nodeChecksTable,
	"nodeKnown":            nodeKnownTable,
	"upstreamSection":      newReleasesSection,
}).ParseFS(templates, "templates/index.html", "templates/style.css"))

// sectionIDs are the not-run list's IDs of the sections the page shows
// in place, when the report lacks them.
type sectionIDs struct{ Sim, Node, Linearizability, Conformance, Upstream, PluginCheck, Mutants string }

var notRunIDs = sectionIDs{Sim: coverage.SimID, Node: coverage.NodeID, Linearizability: coverage.LinearizabilityID,
	Conformance: coverage.ConformanceID, Upstream: coverage.UpstreamID, PluginCheck: coverage.PluginCheckID, Mutants: coverage.MutantsID}

// notRunNote is the body of a section the report lacks: its entry of the
// not-run list, as a paragraph; nothing when the list has none.
func notRunNote(list []coverage.NotRun, id string) template.HTML {
	n := notRunEntry(list, id)
	if n == nil {
		return ""
	}
	return "<p>" + notRunHTML(*n) + "</p>"
}

// notRunHTML words an entry for index.html.
func notRunHTML(n coverage.NotRun) template.HTML {
	return template.HTML(n.Words(html.EscapeString, func(s string) string { return "<code>" + html.EscapeString(s) + "</code>" }))
}

// localPage reports whether a table cell names an HTML page beside the
// report, such as a linearizability visualization, so it is shown as a link.
// Only a bare relative name qualifies: nothing that could leave the
// report's directory or point elsewhere.
func localPage(cell string) bool {
	return strings.HasSuffix(cell, ".html") && !strings.ContainsAny(cell, "/\\:?# ") && !strings.HasPrefix(cell, ".")
}

// sourceCellHTML renders an invariant's sources for a table cell, one per
// line, absolute links as links. The page may be read far from the
// repository, so a document or seed section is its text. Text and URL are
// escaped here because the result bypasses the template's escaping.
func sourceCellHTML(sources []Source) template.HTML {
	var b strings.Builder
	for i, s := range sources {
		if i > 0 {
			b.WriteString("<br>")
		}
		if strings.HasPrefix(s.URL, "https://") {
			b.WriteString(`<a href="` + html.EscapeString(s.URL) + `">` + html.EscapeString(s.Text) + "</a>")
		} else {
			b.WriteString(html.EscapeString(s.Text))
		}
	}
	return template.HTML(b.String())
}

// statusClass turns a cell state into a CSS class name.
func statusClass(status string) string { return strings.ReplaceAll(status, " ", "-") }

// inventoryLayers lists a subsystem's inventory for its section of the page,
// one line per layer that has something.
func inventoryLayers(s inventory.Subsystem) []inventoryLayer {
	var out []inventoryLayer
	for _, l := range []inventoryLayer{
		{"core", s.CorePackages}, {"reference model", s.Models}, {"state-machine suite", s.Suites},
		{"fuzz targets", s.FuzzTargets}, {"real-I/O integration", s.IntegrationTests},
		{"linearizability", s.Linearizability}, {"conformance against upstream", s.Conformance}, {"mutants", s.Mutants},
	} {
		if len(l.Items) > 0 {
			out = append(out, l)
		}
	}
	return out
}

type inventoryLayer struct {
	Layer string
	Items []string
}
