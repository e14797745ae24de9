package main

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nodeproof/nodeproof/agent/plugincheck"
)

// pluginCheckSection is one run of the checker: what `nodeproof
// plugin-check` prints and report.json of its --out.
type pluginCheckSection struct {
	Version string  `json:"version"`
	Started string  `json:"started"` // RFC 3339
	Seconds float64 `json:"seconds"`
	// Target is how the plugin was found: "--dir DIR" or "--exec 'CMD'".
	Target string `json:"target"`
	// Passed: no contract or kubelet check failed (advice does not count).
	Passed bool               `json:"passed"`
	Seed   uint64             `json:"seed"`
	Replay string             `json:"replay"`
	Plugin plugincheck.Plugin `json:"plugin"`
	// Evaluations counts the checks' runs over the whole run, and
	// PerSecond is Evaluations per second of wall time.
	Evaluations int              `json:"evaluations"`
	PerSecond   float64          `json:"per_second"`
	Checks      []pluginCheckRow `json:"checks"`
	// Findings are in the order of Checks; never null.
	Findings []plugincheck.Finding `json:"findings"`
}

// pluginCheckRow is one check of the catalogue and what it did.
type pluginCheckRow struct {
	ID       string               `json:"id"`
	Rule     string               `json:"rule"`
	Source   string               `json:"source"`
	Severity plugincheck.Severity `json:"severity"`
	Run      int                  `json:"run"`
	Applied  int                  `json:"applied"`
	// Result is "passed", "failed" or "not run".
	Result string `json:"result"`
}

func newPluginCheckSection(res *plugincheck.Result, opts pluginCheckOptions, started time.Time) pluginCheckSection {
	s := pluginCheckSection{
		Version: version(), Started: started.Format(time.RFC3339), Seconds: roundMillis(res.Seconds),
		Passed: res.Passed(), Seed: res.Seed, Replay: runReplay(opts.check, res.Seed),
		Plugin: res.Plugin, Findings: append([]plugincheck.Finding{}, res.Findings...),
	}
	if opts.exec != "" {
		s.Target = "--exec " + shellQuote(opts.exec)
	} else {
		s.Target = "--dir " + shellQuote(opts.dir)
	}
	failed := map[string]bool{}
	for _, f := range res.Findings {
		failed[f.Check] = true
	}
	for _, c := range plugincheck.Checks() {
		n := res.Counts[c.ID]
		row := pluginCheckRow{ID: c.ID, Rule: c.Rule, Source: c.Source, Severity: c.Severity, Run: n.Run, Applied: n.Applied, Result: "passed"}
		switch {
		case failed[c.ID]:
			row.Result = "failed"
		case n.Run == 0:
			row.Result = "not run"
		}
		s.Evaluations += n.Run
		s.Checks = append(s.Checks, row)
	}
	if res.Seconds > 0 {
		s.PerSecond = roundMillis(float64(s.Evaluations) / res.Seconds)
	}
	return s
}

// printPluginCheck prints the summary table, then every finding in full.
func printPluginCheck(w io.Writer, s pluginCheckSection) {
	p := s.Plugin
	fmt.Fprintf(w, "plugin %s on %s, version %s, pre_start_required %t, get_preferred_allocation_available %t, %d devices (%d healthy)\n",
		orDash(p.ResourceName), orDash(p.Endpoint), orDash(p.Version), p.Options.PreStartRequired,
		p.Options.GetPreferredAllocationAvailable, p.Devices, p.Healthy)
	idWidth := len("check")
	for _, c := range s.Checks {
		idWidth = max(idWidth, len(c.ID))
	}
	fmt.Fprintf(w, "%-*s  %-8s  %7s  %7s  %s\n", idWidth, "check", "severity", "run", "applied", "result")
	for _, c := range s.Checks {
		result := c.Result
		if result == "failed" {
			result = "FAILED"
		}
		fmt.Fprintf(w, "%-*s  %-8s  %7d  %7d  %s\n", idWidth, c.ID, c.Severity, c.Run, c.Applied, result)
	}
	for _, f := range s.Findings {
		fmt.Fprintf(w, "\n%s (%s): %s\n", f.Check, f.Severity, f.Message)
		if len(f.Steps) > 0 {
			fmt.Fprintln(w, "  kubelet calls:")
			for _, step := range f.Steps {
				fmt.Fprintf(w, "    %s\n", step)
			}
		}
		if f.Replay != "" {
			fmt.Fprintf(w, "  replay: %s\n", f.Replay)
		}
	}
	verdict := "passed"
	if !s.Passed {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "\n%s: %s; %d check evaluations in %.1fs (%s/s); seed %d (rerun: %s)\n", verdict,
		count(len(s.Findings), "finding"), s.Evaluations, s.Seconds, formatRate(float64(s.Evaluations), s.Seconds), s.Seed, s.Replay)
}

// runReplay is the command that repeats the whole run.
func runReplay(o plugincheck.Options, seed uint64) string {
	line := fmt.Sprintf("%s --seed %d", o.ReplayCommand, seed)
	if len(o.Mute) > 0 {
		line += " --mute " + strings.Join(o.Mute, ",")
	}
	return line
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writePluginCheckReport writes index.html, report.md and report.json of
// one run into dir and returns their paths.
func writePluginCheckReport(dir string, s pluginCheckSection) ([]string, error) {
	renderers := []struct {
		name   string
		render func(io.Writer, pluginCheckSection) error
	}{
		{"index.html", func(w io.Writer, s pluginCheckSection) error { return pluginCheckPage.Execute(w, s) }},
		{"report.md", func(w io.Writer, s pluginCheckSection) error {
			_, err := io.WriteString(w, renderPluginCheckMarkdown(s))
			return err
		}},
		{"report.json", writePluginCheckJSON},
	}
	var paths []string
	for _, r := range renderers {
		path := filepath.Join(dir, r.name)
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		if err := r.render(f, s); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func writePluginCheckJSON(w io.Writer, s pluginCheckSection) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Messages quote plugin answers and shell commands; keep <, > and & readable.
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}

// renderPluginCheckMarkdown is report.md: sized for a pull-request comment
// like the invariant report's, each finding's message cut at
// mdMessageLimit.
func renderPluginCheckMarkdown(s pluginCheckSection) string {
	var b strings.Builder
	verdict := "PASSED: no contract or kubelet check failed."
	if !s.Passed {
		verdict = "FAILED: " + count(len(s.Findings), "finding") + "."
	}
	b.WriteString("# nodeproof plugin-check\n\n")
	fmt.Fprintf(&b, "**%s** nodeproof %s, started %s, %.1fs, plugin %s, seed %d.\n\nReplay: %s\n\n",
		mdEscape(verdict), mdInline(s.Version), s.Started, s.Seconds, mdInline(s.Target), s.Seed, mdInline(s.Replay))
	p := s.Plugin
	mdTable(&b, []string{"Resource", "Endpoint", "Version", "PreStartRequired", "GetPreferredAllocationAvailable", "Devices", "Healthy"},
		[][]string{{p.ResourceName, p.Endpoint, p.Version, strconv.FormatBool(p.Options.PreStartRequired),
			strconv.FormatBool(p.Options.GetPreferredAllocationAvailable), strconv.Itoa(p.Devices), strconv.Itoa(p.Healthy)}})
	b.WriteString("\n## Checks\n\n")
	var rows [][]string
	for _, c := range s.Checks {
		rows = append(rows, []string{c.ID, string(c.Severity), c.Rule, strconv.Itoa(c.Run), strconv.Itoa(c.Applied), c.Result})
	}
	mdTable(&b, []string{"Check", "Severity", "Rule", "Run", "Applied", "Result"}, rows)
	fmt.Fprintf(&b, "\n%d check evaluations, %s per second.\n", s.Evaluations, formatRate(float64(s.Evaluations), s.Seconds))
	b.WriteString("\n## Findings\n\n")
	if len(s.Findings) == 0 {
		b.WriteString("(none)\n")
	}
	for _, f := range s.Findings {
		fmt.Fprintf(&b, "### %s (%s)\n\n", mdEscape(f.Check), mdEscape(string(f.Severity)))
		message := f.Message
		if len(message) > mdMessageLimit {
			message = strings.ToValidUTF8(message[:mdMessageLimit], "") + "\n… (cut; index.html has the whole message)"
		}
		mdCodeBlock(&b, message)
		if len(f.Steps) > 0 {
			b.WriteString("\nKubelet calls:\n\n")
			mdCodeBlock(&b, strings.Join(f.Steps, "\n"))
		}
		if f.Replay != "" {
			fmt.Fprintf(&b, "\nReplay: %s\n", mdInline(f.Replay))
		}
		b.WriteString("\n")
	}
	out := b.String()
	if len(out) > mdLimit {
		out = strings.ToValidUTF8(out[:mdLimit-mdTruncationReserve], "") + "\n\n**Truncated:** index.html and report.json have everything.\n"
	}
	return out
}

// pluginCheckPage is index.html: self-contained like the invariant
// report's, with its style.
var pluginCheckPage = template.Must(template.New("index.html").Funcs(template.FuncMap{
	"rate": func(n int, seconds float64) string { return formatRate(float64(n), seconds) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>nodeproof plugin-check</title>
<style>
` + reportStyle + `</style>
</head>
<body>
<h1>nodeproof plugin-check</h1>
<div id="verdict" class="verdict {{if .Passed}}passed{{else}}failed{{end}}"><strong>{{if .Passed}}PASSED: no contract or kubelet check failed.{{else}}FAILED: {{len .Findings}} findings.{{end}}</strong></div>
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
