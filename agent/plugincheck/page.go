package plugincheck

import (
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/reportview"
)

// WriteHTML writes index.html: self-contained like the invariant report's,
// with its style.
func (s Report) WriteHTML(w io.Writer) error { return page.Execute(w, s) }

// Markdown is report.md: sized for a pull-request comment like the
// invariant report's, each finding's message cut at
// reportview.MarkdownMessageLimit.
func (s Report) Markdown() string {
	var b strings.Builder
	verdict := s.Verdict + "."
	if s.Passed {
		verdict += " No contract or kubelet check failed."
	}
	b.WriteString("# nodeproof plugin-check\n\n")
	fmt.Fprintf(&b, "**%s** nodeproof %s, started %s, %.1fs, plugin %s, seed %d.\n\nReplay: %s\n\n",
		reportview.MarkdownEscape(verdict), reportview.MarkdownInline(s.Version), s.Started, s.Seconds, reportview.MarkdownInline(s.Target), s.Seed, reportview.MarkdownInline(s.Replay))
	p := s.Plugin
	reportview.MarkdownTable(&b, []string{"Resource", "Endpoint", "Version", "PreStartRequired", "GetPreferredAllocationAvailable", "Devices", "Healthy"},
		[][]string{{p.ResourceName, p.Endpoint, p.Version, strconv.FormatBool(p.Options.PreStartRequired),
			strconv.FormatBool(p.Options.GetPreferredAllocationAvailable), strconv.Itoa(p.Devices), strconv.Itoa(p.Healthy)}})
	b.WriteString("\n## Checks\n\n")
	var rows [][]string
	for _, c := range s.Checks {
		rows = append(rows, []string{c.ID, string(c.Severity), c.Rule, strconv.Itoa(c.Run), strconv.Itoa(c.Applied), c.Result})
	}
	reportview.MarkdownTable(&b, []string{"Check", "Severity", "Rule", "Run", "Applied", "Result"}, rows)
	fmt.Fprintf(&b, "\n%d check evaluations, %s per second.\n", s.Evaluations, phrase.Rate(float64(s.Evaluations), s.Seconds))
	b.WriteString("\n## Findings\n\n")
	if len(s.Findings) == 0 {
		b.WriteString("(none)\n")
	}
	for _, f := range s.Findings {
		fmt.Fprintf(&b, "### %s (%s)\n\n", reportview.MarkdownEscape(f.Check), reportview.MarkdownEscape(string(f.Severity)))
		message := f.Message
		if len(message) > reportview.MarkdownMessageLimit {
			message = strings.ToValidUTF8(message[:reportview.MarkdownMessageLimit], "") + "\n… (cut; index.html has the whole message)"
		}
		reportview.MarkdownCodeBlock(&b, message)
		if len(f.Steps) > 0 {
			b.WriteString("\nKubelet calls:\n\n")
			reportview.MarkdownCodeBlock(&b, strings.Join(f.Steps, "\n"))
		}
		if f.Replay != "" {
			fmt.Fprintf(&b, "\nReplay: %s\n", reportview.MarkdownInline(f.Replay))
		}
		b.WriteString("\n")
	}
	out := b.String()
	if len(out) > reportview.MarkdownLimit {
		out = strings.ToValidUTF8(out[:reportview.MarkdownLimit-reportview.MarkdownTruncationReserve], "") + "\n\n**Truncated:** index.html and report.json have everything.\n"
	}
	return out
}

// page is index.html: self-contained like the invariant
// report's, with its style.
var page = template.Must(template.New("index.html").Funcs(template.FuncMap{
	"rate": func(n int, seconds float64) string { return phrase.Rate(float64(n), seconds) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>nodeproof plugin-check</title>
<style>
` + reportview.Style + `</style>
</head>
<body>
<h1>nodeproof plugin-check</h1>
<div id="verdict" class="verdict {{if .Passed}}passed{{else}}failed{{end}}"><strong>{{.Verdict}}.{{if .Passed}} No contract or kubelet check failed.{{end}}</strong></div>
<p>nodeproof {{.Version}}, started {{.Started}}, {{printf "%.1f" .Seconds}}s, plugin <code>{{.Target}}</code>, seed {{.Seed}}.</p>
<p>Replay: <code class="replay">{{.Replay}}</code></p>
{{with .Plugin}}<table>
<tr><th>Resource</th><th>Endpoint</th><th>Version</th><th>PreStartRequired</th><th>GetPreferredAllocationAvailable</th><th>Devices</th><th>Healthy</th></tr>
<tr><td>{{.ResourceName}}</td><td>{{.Endpoint}}</td><td>{{.Version}}</td><td>{{.Options.PreStartRequired}}</td><td>{{.Options.GetPreferredAllocationAvailable}}</td><td class="num">{{.Devices}}</td><td class="num">{{.Healthy}}</td></tr>
</table>{{end}}
<section id="checks">
<h2>Checks</h2>
<p>{{.Evaluations}} check evaluations, {{rate .Evaluations .Seconds}} per second.</p>
<table>
<tr><th>Check</th><th>Severity</th><th>Rule</th><th>Source</th><th title="evaluations of the check">Run</th><th title="evaluations where it had something to judge">Applied</th><th>Result</th></tr>
{{range .Checks}}<tr><td><code>{{.ID}}</code></td><td>{{.Severity}}</td><td>{{.Rule}}</td><td>{{.Source}}</td><td class="num">{{.Run}}</td><td class="num">{{.Applied}}</td>
<td>{{if eq .Result "failed"}}<span class="failed">FAILED</span>{{else if eq .Result "passed"}}<span class="passed">passed</span>{{else}}{{.Result}}{{end}}</td></tr>
{{end}}</table>
</section>
<section id="findings">
<h2>Findings</h2>
{{range .Findings}}<div class="counterexample">
<h3 class="failed">{{.Check}} ({{.Severity}})</h3>
<pre><code>{{.Message}}</code></pre>
{{with .Steps}}<p>Kubelet calls:</p>
<pre><code>{{range .}}{{.}}
{{end}}</code></pre>{{end}}
{{with .Replay}}<p>Replay: <code class="replay">{{.}}</code></p>{{end}}
</div>
{{else}}<p>None.</p>{{end}}
</section>
</body>
</html>
`))
