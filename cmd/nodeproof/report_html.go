package main

import (
	"fmt"
	"html"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/reportview"
)

// writeHTML writes index.html: one self-contained page (no scripts, fonts or
// network) that a reviewer can open from a CI artifact. html/template escapes
// every string from the suites, which quote program output.
func writeHTML(w io.Writer, data *reportData) error {
	return reportPage.Execute(w, data)
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
	"actionChart": func(actions map[string]int) reportview.Chart {
		return reportview.Counts("actions drawn, by action", actions)
	},
	"killed":          killed,
	"sources":         sourceCellHTML,
	"localPage":       localPage,
	"stat":            phrase.Stat,
	"verdict":         verdict,
	"layers":          func() []string { return coverage.Layers },
	"legend":          func() []coverage.State { return coverage.Legend },
	"notRun":          notRunEntry,
	"notRunWords":     notRunHTML,
	"inventoryLayer":  inventoryLayers,
	"statusClass":     statusClass,
	"simFaults":       simFaultsText,
	"violations":      violationsCell,
	"counterexamples": counterexamples,
	"count":           phrase.Count,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>nodeproof invariant report</title>
<style>
` + reportview.Style + `</style>
</head>
<body>
<h1>nodeproof invariant report</h1>
{{with verdict .}}<div id="verdict" class="verdict {{if $.Passed}}passed{{else}}failed{{end}}"><strong>{{.Headline}}</strong>
{{with .Problems}}<ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}</div>{{end}}
<p>nodeproof {{.Version}}, started {{.Started}}, {{printf "%.1f" .Seconds}}s.{{with .Findings}} Known findings in the kubelet: <a href="#findings">{{len .}}</a>.{{end}}</p>

<section id="matrix">
<h2>Coverage</h2>
<p>One row per subsystem, one column per layer of verification; each figure links to its section. A cell's colour is its state:</p>
<ul class="legend" id="legend">{{range legend}}<li><span class="sample cell-{{.Status | statusClass}}">{{.Status}}</span> {{.Meaning}}</li>{{end}}</ul>
<table class="matrix">
<tr><th>Subsystem</th>{{range layers}}<th>{{.}}</th>{{end}}</tr>
{{range .Matrix}}<tr><th><a href="#inventory-{{.Subsystem}}">{{.Subsystem}}</a></th>{{range .Cells}}<td class="cell-{{.Status | statusClass}}">{{if .Link}}<a href="{{.Link}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}</td>{{end}}</tr>
{{end}}</table>
</section>

{{if counterexamples .}}<section id="failures">
<h2>Failures</h2>
<p>Each counterexample, shrunk, with the line that replays it; the verdict lists every problem.</p>
{{range .Suites}}{{$s := .}}{{with .Failure}}<div class="counterexample" id="failure-{{$s.Name}}">
<h3 class="failed">Counterexample: suite {{$s.Name}}, {{.Invariant}}</h3>
<p>Shrunk steps:</p>
<pre><code>{{range .Steps}}{{.}}
{{end}}</code></pre>
{{if .Replay}}<p>Replay: <code class="replay">{{.Replay}}</code></p>{{end}}
<details><summary>Full message</summary><pre><code>{{.Message}}</code></pre></details>
</div>
{{end}}{{end}}{{with .Sim}}{{range .Violations}}<div class="counterexample">
<h3 class="failed">Counterexample: seed {{.Seed}}, {{.Invariant}}</h3>
<pre><code>{{.Message}}

{{range .Trace}}{{.}}
{{end}}</code></pre>
<p>Replay: <code class="replay">{{.Replay}}</code></p>
</div>
{{end}}{{end}}</section>
{{end}}
{{with .Findings}}<section id="findings">
<h2>Findings in the kubelet</h2>
<p>Broken promises of the v1.36.3 kubelet: contract properties (what the Kubernetes documentation and KEPs promise) that nodeproof's generated search breaks, shrunk, and confirmed on upstream's own code. A known finding does not fail the report; one that stops reproducing does.</p>
<table>
<tr><th>Finding</th><th>Subsystem</th><th>Broken promise</th><th>Search</th><th>Upstream tracker</th></tr>
{{range .}}<tr><td><a href="#finding-{{.ID}}"><code>{{.ID}}</code></a></td><td>{{.Subsystem}}</td><td>{{.Title}}</td><td>{{.SearchText}}</td><td>{{with .Tracker}}{{sources .}}{{else}}{{.TrackerNote}}{{end}}</td></tr>
{{end}}</table>
{{range .}}<details class="finding" id="finding-{{.ID}}"><summary><code>{{.ID}}</code> {{.Title}} <small>({{.Subsystem}})</small></summary>
<p><strong>Promise:</strong> {{.Promise}} ({{sources .Sources}})</p>
<ol>{{range .Steps}}<li>{{.}}</li>{{end}}</ol>
<p>Replay: <code class="replay">{{.Replay}}</code>. Property <code>{{.Property}}</code> of suite <code>{{.Suite}}</code>: {{.SearchText}}; {{.BreachText}}.</p>
<p>Confirmed by <code>{{.Confirmation}}</code>. Upstream tracker: {{with .Tracker}}{{sources .}}{{else}}{{.TrackerNote}}{{end}}. Later releases: {{.Releases}}.</p>
</details>
{{end}}</section>
{{end}}
<section id="not-run">
<h2>Not run</h2>
{{with .NotRun}}<p>What this report does not include, and the command that produces each; <code>nodeproof report</code> includes the files they write:</p>
<ul>{{range .}}<li id="{{.Anchor}}">{{notRunWords .}}</li>{{end}}</ul>
{{else}}<p>Every suite and section ran.</p>{{end}}
</section>

{{with .Campaign}}<section id="campaign">
<h2>Campaign</h2>
<p>Merged from {{.Shards}} shards of one plan ({{.Units}} units: simulation seeds, suite runs, fuzz targets), each unit run by exactly one shard.</p>
<table>
<tr><th>Shard</th><th>File</th><th>Units</th><th>Seconds</th><th>Result</th></tr>
{{range .ShardResults}}<tr><td class="num">{{.Shard}}</td><td><code>{{.File}}</code></td><td class="num">{{.Units}}</td><td class="num">{{printf "%.1f" .Seconds}}</td>
<td>{{if .Passed}}<span class="passed">passed</span>{{else}}<span class="failed">FAILED</span>{{end}}</td></tr>
{{end}}</table>
<h3>Failures</h3>
{{with .Failures}}<table>
<tr><th>Shard</th><th>Unit</th><th>Invariant</th><th>Replay</th></tr>
{{range .}}<tr><td class="num">{{.Shard}}</td><td>{{.Unit}}</td><td class="failed"><code>{{.Invariant}}</code></td><td><code class="replay">{{.Replay}}</code></td></tr>
{{end}}</table>{{else}}<p>None: every unit passed.</p>{{end}}
{{with .Fuzz}}<h3>Fuzz targets</h3>
<table>
<tr><th>Target</th><th>Package</th><th>Shard</th><th>Seconds</th><th>Result</th></tr>
{{range .}}<tr><td><code>{{.Target}}</code></td><td><code>./{{.Package}}</code></td><td class="num">{{.Shard}}</td><td class="num">{{printf "%.1f" .Seconds}}</td>
<td>{{if .Passed}}<span class="passed">passed</span>{{else}}<span class="failed">FAILED</span>{{end}}</td></tr>
{{end}}</table>
{{range .}}{{$t := .}}{{with .Failure}}<div class="counterexample">
<h3 class="failed">Fuzz failure: {{$t.Target}} (shard {{$t.Shard}})</h3>
<pre><code>{{.Message}}</code></pre>
<p>Replay: <code class="replay">{{.Replay}}</code></p>
</div>
{{end}}{{end}}{{end}}
</section>
{{end}}
<section id="suites">
<h2>Suites</h2>
<table>
<tr><th>Suite</th><th>Subsystem</th><th>Result</th><th>Checks</th><th>Steps</th><th>Seconds</th><th>Seed</th></tr>
{{range .Suites}}<tr><td><a href="#suite-{{.Name}}">{{.Name}}</a></td><td>{{.Subsystem}}</td>
<td>{{if .Passed}}<span class="passed">passed</span>{{else}}<span class="failed">FAILED</span>{{end}}</td>
<td class="num">{{.Checks}}</td><td class="num">{{.Steps}}</td><td class="num">{{printf "%.1f" .Seconds}}</td><td class="num">{{.Seed}}</td></tr>
{{end}}</table>
<p>Each suite's invariants, statistics and actions drawn, folded:</p>
{{range .Suites}}{{$s := .}}<section class="suite" id="suite-{{.Name}}">
<h3>{{.Name}}{{if ne .Name .Subsystem}} <small>({{.Subsystem}})</small>{{end}}</h3>
{{with .Failure}}<p class="failed">Failed: <a href="#failure-{{$s.Name}}">the counterexample of {{.Invariant}}</a>.</p>
{{end}}<details><summary>{{count (len .Invariants) "invariant"}}: statement, source, checked, applied, violations</summary>
<table>
<tr><th>ID</th><th title="fidelity: upstream's behaviour; contract: Kubernetes' promise to its users">Kind</th><th>Statement</th><th>Source</th><th title="evaluations of the invariant">Checked</th><th title="evaluations where it had something to compare">Applied</th><th>Violations</th></tr>
{{range .Invariants}}<tr><td><code>{{.ID}}</code></td><td>{{.Kind}}</td><td>{{.Statement}}</td><td class="source">{{sources .Sources}}</td>
<td class="num">{{.Checked}}</td><td class="num">{{.Applied}}</td><td class="num{{if .Violations}} failed{{end}}">{{violations .}}</td></tr>
{{end}}</table>
</details>
{{with .Statistics}}<details><summary>{{count (len .) "statistic"}}: samples, mean, max, non-zero</summary>
<table>
<tr><th>Statistic</th><th>Samples</th><th>Mean</th><th>Max</th><th>Non-zero</th></tr>
{{range .}}<tr><td>{{.Name}}</td><td class="num">{{.Samples}}</td><td class="num">{{stat .Mean}}</td><td class="num">{{stat .Max}}</td><td class="num">{{.Nonzero}}</td></tr>
{{end}}</table>
</details>
{{end}}{{$chart := actionChart .Actions}}{{with $chart.SVG}}<details><summary>{{len $chart.Bars}} actions: how often the generator drew each</summary>
{{.}}
</details>
{{else}}<p>Actions drawn: {{range $i, $bar := $chart.Bars}}{{if $i}}, {{end}}{{$bar.Label}} {{$bar.Value}}{{else}}none{{end}}.</p>
{{end}}</section>
{{end}}</section>

<section id="sim">
<h2>Node simulation</h2>
{{with .Sim}}<p>The whole node (every core, simulated plugins, runtime and probe targets) on a virtual clock, faults drawn from each seed, every cross-subsystem invariant checked after every event.</p>
<table>
<tr><th>Result</th><th>Seeds</th><th>Hours per seed</th><th>Simulated hours</th><th>Events</th><th>Pods</th><th>Seconds</th><th>Violations</th></tr>
<tr><td>{{if .Passed}}<span class="passed">passed</span>{{else}}<span class="failed">FAILED</span>{{end}}</td><td class="num">{{.Seeds}} ({{.FirstSeed}}..{{.LastSeed}})</td>
<td class="num">{{stat .Hours}}</td><td class="num">{{stat .SimulatedHours}}</td><td class="num">{{.Events}}</td><td class="num">{{.Pods}}</td>
<td class="num">{{printf "%.1f" .Seconds}}</td><td class="num{{if .Violations}} failed{{end}}">{{len .Violations}}</td></tr>
</table>
<p>Faults injected: {{simFaults .Injected}}.{{with .Violations}} <a href="#failures">The counterexamples</a> are under Failures.{{end}}</p>
<details><summary>{{count (len .Checks) "invariant"}}: statement, checked, applied</summary>
<table>
<tr><th>ID</th><th>Statement</th><th title="evaluations of the invariant">Checked</th><th title="evaluations where it had something to compare">Applied</th></tr>
{{range .Checks}}<tr><td><code>{{.ID}}</code></td><td>{{.Statement}}</td><td class="num">{{.Checked}}</td><td class="num">{{.Applied}}</td></tr>
{{end}}</table>
</details>
{{else}}` + notRunNote(coverage.SimID) + `{{end}}
</section>

<section id="linearizability">
<h2>Linearizability</h2>
{{with .Linearizability}}<p>Concurrent clients drove a real agent and real plugins over Unix sockets; porcupine checked each history against models/deviceagent. Each visualization is beside this page.</p>
{{template "table" .}}{{else}}` + notRunNote(coverage.LinearizabilityID) + `{{end}}
</section>

<section id="conformance">
<h2>Conformance against upstream</h2>
{{with .Conformance}}{{template "table" .}}{{else}}` + notRunNote(coverage.ConformanceID) + `{{end}}
</section>

<section id="plugin-check">
<h2>Plugins nobody here wrote</h2>
{{with .PluginCheck}}<p>agent/plugincheck against upstream's device plugin stub and the Kubernetes sample device plugin (<code>make conformance</code>). Their findings are facts about their code (docs/findings.md), not part of this report's verdict.</p>
{{template "table" .}}{{else}}` + notRunNote(coverage.PluginCheckID) + `{{end}}
</section>

<section id="mutants">
<h2>Mutants</h2>
{{with .Mutants}}<p>{{killed .}} of {{len .}} killed.</p>
<details{{if lt (killed .) (len .)}} open{{end}}><summary>The kill matrix: each mutant, its source and what killed it</summary>
<table>
<tr><th>Mutant</th><th>Subsystem</th><th>Source</th><th>Killed</th><th>Killed by</th><th>Seconds</th></tr>
{{range .}}<tr><td><code>{{.ID}}</code></td><td>{{.Subsystem}}</td><td>{{.Source}}</td>
<td>{{if .Killed}}<span class="passed">killed</span>{{else}}<span class="failed">survived</span>{{end}}</td>
<td>{{.Killers}}</td><td class="num">{{printf "%.1f" .Seconds}}</td></tr>
{{end}}</table>
</details>
{{else}}` + notRunNote(coverage.MutantsID) + `{{end}}
</section>

<section id="inventory">
<h2>Inventory</h2>
<p>What the source tree holds for each subsystem, as the matrix counts it.</p>
{{range .Inventory}}<details id="inventory-{{.Name}}"><summary>{{.Name}}</summary>
<table>
{{range inventoryLayer .}}<tr><th>{{.Layer}}</th><td>{{range $i, $item := .Items}}{{if $i}}, {{end}}<code>{{$item}}</code>{{end}}</td></tr>
{{else}}<tr><td>Nothing built yet.</td></tr>
{{end}}</table>
</details>
{{end}}
</section>
</body>
</html>
{{define "table"}}{{if .Figures}}<table>
<tr>{{range .Headings}}<th>{{.}}</th>{{end}}</tr>
{{range .Figures}}<tr>{{range .}}<td>{{if localPage .}}<a href="{{.}}">{{.}}</a>{{else}}{{.}}{{end}}</td>{{end}}</tr>
{{end}}</table>{{else}}<p>(none)</p>{{end}}{{end}}`))

// notRunNote is the body of a section the report lacks: its entry of the
// not-run list.
func notRunNote(id string) string {
	return `{{with notRun $.NotRun "` + id + `"}}<p>{{notRunWords .}}</p>{{end}}`
}

// statusClass turns a cell state into a CSS class name.
func statusClass(status string) string { return strings.ReplaceAll(status, " ", "-") }

// counterexamples counts the failures that come with a counterexample to
// show under Failures: a suite's, or a simulated seed's.
func counterexamples(d *reportData) int {
	n := 0
	for _, s := range d.Suites {
		if s.Failure != nil {
			n++
		}
	}
	if d.Sim != nil {
		n += len(d.Sim.Violations)
	}
	return n
}

// reportVerdict is the banner at the top of the page.
type reportVerdict struct {
	Headline string
	Problems []string
}

// verdict says in one line whether the report passed and lists what failed.
func verdict(d *reportData) reportVerdict {
	var problems []string
	if d.Campaign != nil {
		// A merged report lists every failed unit of every shard, where a
		// suite's row holds only its first counterexample.
		problems = d.Campaign.Problems()
	} else {
		for _, s := range d.Suites {
			if f := s.Failure; f != nil {
				problems = append(problems, "suite "+s.Name+": "+f.Invariant+" violated; replay: "+f.Replay)
			}
		}
		problems = append(problems, simProblems(d.Sim)...)
	}
	if d.Linearizability != nil {
		for _, cells := range d.Linearizability.Cells {
			row := map[string]string{}
			for i, col := range d.Linearizability.Columns {
				row[col] = cells[i]
			}
			if row["result"] != "Ok" {
				problems = append(problems, "linearizability: the history of "+row["history"]+" is "+row["result"])
			}
		}
	}
	var differ []string
	for _, r := range conformanceResults(d.Conformance) {
		if r.Mismatches > 0 {
			differ = append(differ, "conformance: "+r.Function+" differs from upstream")
		}
	}
	slices.Sort(differ)
	problems = append(problems, differ...)
	problems = append(problems, findingProblems(d.Findings, d.searches != nil)...)
	for _, m := range d.Mutants {
		if !m.Killed {
			problems = append(problems, "mutant "+m.ID+" survived")
		}
	}
	headline := "PASSED: every check this report ran passed"
	if !d.Passed {
		headline = "FAILED: " + phrase.Count(len(problems), "problem")
	}
	if len(d.NotRun) > 0 {
		headline += fmt.Sprintf("; %d not run", len(d.NotRun))
	}
	return reportVerdict{Headline: headline + ".", Problems: problems}
}
