package main

import (
	"cmp"
	"html"
	"html/template"
	"io"
	"slices"
	"strings"
)

// writeHTML writes index.html: one self-contained page (no scripts, fonts or
// network) that a reviewer can open from a CI artifact. html/template escapes
// every string from the suites, which quote program output.
func writeHTML(w io.Writer, data *reportData) error {
	return reportPage.Execute(w, data)
}

// Geometry of the action histograms, in SVG user units.
const (
	chartRowHeight = 22
	chartBarHeight = 16
	chartBarWidth  = 360 // the longest bar
	chartCharWidth = 7   // an estimate for the 12px labels, to size the label column
	chartGap       = 8
)

// barChart is a horizontal bar chart laid out for the template.
type barChart struct {
	Width, Height int
	LabelWidth    int
	BarHeight     int
	Bars          []bar
}

type bar struct {
	Label         string
	Count         int
	Y, TextY      int
	Width, CountX int
}

// actionChart lays out one bar per action, most frequent first, so that a
// reviewer sees at a glance which actions the generator favoured or starved.
func actionChart(actions map[string]int) barChart {
	names := make([]string, 0, len(actions))
	most, longest := 1, 0
	for name, n := range actions {
		names = append(names, name)
		most = max(most, n)
		longest = max(longest, len(name))
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(actions[b], actions[a]), cmp.Compare(a, b))
	})
	c := barChart{LabelWidth: longest*chartCharWidth + chartGap, BarHeight: chartBarHeight}
	c.Width = c.LabelWidth + chartBarWidth + chartGap + 8*chartCharWidth
	c.Height = len(names) * chartRowHeight
	for i, name := range names {
		width := max(1, actions[name]*chartBarWidth/most)
		y := i * chartRowHeight
		c.Bars = append(c.Bars, bar{
			Label:  name,
			Count:  actions[name],
			Y:      y + (chartRowHeight-chartBarHeight)/2,
			TextY:  y + chartRowHeight/2 + 4,
			Width:  width,
			CountX: c.LabelWidth + width + chartGap/2,
		})
	}
	return c
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
func sourceCellHTML(sources []sourceReport) template.HTML {
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

var reportPage = template.Must(template.New("index.html").Funcs(template.FuncMap{
	"chart":     actionChart,
	"killed":    killed,
	"localPage": localPage,
	"sources":   sourceCellHTML,
	"stat":      formatStat,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>nodeproof invariant report</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; color: #1b1f24; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; }
th, td { border: 1px solid #d0d7de; padding: 0.3rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.passed { color: #1a7f37; font-weight: 600; }
.failed { color: #cf222e; font-weight: 600; }
pre { background: #f6f8fa; padding: 0.75rem; overflow-x: auto; }
code { font-family: ui-monospace, monospace; }
section.suite { border-top: 1px solid #d0d7de; margin-top: 2rem; }
svg text { font: 12px ui-monospace, monospace; fill: #1b1f24; }
svg rect { fill: #0969da; }
</style>
</head>
<body>
<h1>nodeproof invariant report</h1>
<p>nodeproof {{.Version}}, started {{.Started}}, {{printf "%.1f" .Seconds}}s.</p>

<h2>Suites</h2>
<table>
<tr><th>Suite</th><th>Subsystem</th><th>Result</th><th>Checks</th><th>Steps</th><th>Seconds</th><th>Seed</th></tr>
{{range .Suites}}<tr><td><a href="#suite-{{.Name}}">{{.Name}}</a></td><td>{{.Subsystem}}</td>
<td>{{if .Passed}}<span class="passed">passed</span>{{else}}<span class="failed">FAILED</span>{{end}}</td>
<td class="num">{{.Checks}}</td><td class="num">{{.Steps}}</td><td class="num">{{printf "%.1f" .Seconds}}</td><td class="num">{{.Seed}}</td></tr>
{{end}}</table>

{{range .Suites}}<section class="suite" id="suite-{{.Name}}">
<h2>{{.Name}} <small>({{.Subsystem}})</small></h2>
{{with .Failure}}<h3 class="failed">Failure: {{.Invariant}}</h3>
<p>Shrunk steps:</p>
<pre><code>{{range .Steps}}{{.}}
{{end}}</code></pre>
{{if .Replay}}<p>Replay: <code>{{.Replay}}</code></p>{{end}}
<details><summary>Full message</summary><pre><code>{{.Message}}</code></pre></details>
{{end}}
<h3>Invariants</h3>
<table>
<tr><th>ID</th><th>Statement</th><th>Source</th><th>Checked</th><th>Violations</th></tr>
{{range .Invariants}}<tr><td><code>{{.ID}}</code></td><td>{{.Statement}}</td><td>{{sources .Sources}}</td>
<td class="num">{{.Checked}}</td><td class="num{{if .Violations}} failed{{end}}">{{.Violations}}</td></tr>
{{end}}</table>
{{with .Statistics}}<h3>Statistics</h3>
<table>
<tr><th>Statistic</th><th>Samples</th><th>Mean</th><th>Max</th><th>Non-zero</th></tr>
{{range .}}<tr><td>{{.Name}}</td><td class="num">{{.Samples}}</td><td class="num">{{stat .Mean}}</td><td class="num">{{stat .Max}}</td><td class="num">{{.Nonzero}}</td></tr>
{{end}}</table>
{{end}}<h3>Actions</h3>
{{with chart .Actions}}{{if .Bars}}<svg width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="actions executed, by action">
{{$labelWidth := .LabelWidth}}{{$barHeight := .BarHeight}}{{range .Bars}}<g><title>{{.Label}}: {{.Count}}</title>
<text x="{{$labelWidth}}" dx="-8" y="{{.TextY}}" text-anchor="end">{{.Label}}</text>
<rect x="{{$labelWidth}}" y="{{.Y}}" width="{{.Width}}" height="{{$barHeight}}"></rect>
<text x="{{.CountX}}" y="{{.TextY}}">{{.Count}}</text></g>
{{end}}</svg>{{else}}<p>No actions ran.</p>{{end}}{{end}}
</section>
{{end}}

{{with .Mutants}}<h2>Mutants</h2>
<p>{{killed .}} of {{len .}} killed.</p>
<table>
<tr><th>Mutant</th><th>Subsystem</th><th>Source</th><th>Killed</th><th>Killed by</th><th>Seconds</th></tr>
{{range .}}<tr><td><code>{{.ID}}</code></td><td>{{.Subsystem}}</td><td>{{.Source}}</td>
<td>{{if .Killed}}<span class="passed">killed</span>{{else}}<span class="failed">survived</span>{{end}}</td>
<td>{{.KilledBy}}</td><td class="num">{{printf "%.1f" .Seconds}}</td></tr>
{{end}}</table>
{{end}}
{{with .Linearizability}}<h2>Linearizability</h2>
{{template "table" .}}{{end}}
{{with .Conformance}}<h2>Conformance</h2>
{{template "table" .}}{{end}}
</body>
</html>
{{define "table"}}{{if .Cells}}<table>
<tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Cells}}<tr>{{range .}}<td>{{if localPage .}}<a href="{{.}}">{{.}}</a>{{else}}{{.}}{{end}}</td>{{end}}</tr>
{{end}}</table>{{else}}<p>(none)</p>{{end}}{{end}}`))
