package reportview

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/nodeproof/nodeproof/campaign"
	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/mutants"
	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/simreport"
)

// WriteMarkdown writes report.md, a summary sized for a pull-request
// comment, in the order of index.html.
func WriteMarkdown(w io.Writer, r *Report) error {
	_, err := io.WriteString(w, RenderMarkdown(r, MarkdownLimit))
	return err
}

// RenderMarkdown renders the report in blocks and stops before the block
// that would take it past limit bytes, saying what was left out.
func RenderMarkdown(r *Report, limit int) string {
	blocks := markdownBlocks(r)
	var b strings.Builder
	for i, block := range blocks {
		if b.Len()+len(block) > limit-MarkdownTruncationReserve {
			fmt.Fprintf(&b, "\n**Truncated:** %d more parts of the report do not fit a pull-request comment; "+
				"index.html and report.json have everything.\n", len(blocks)-i)
			break
		}
		b.WriteString(block)
	}
	return b.String()
}

// markdownBlocks are the report's parts in page order: the verdict, the
// matrix, the failures and the findings first, so that truncation only
// ever drops detail from the end. Each failure is a block of its own. What
// a reviewer looks up rather than reads (each invariant, the statistics,
// the actions drawn, the simulation's invariants, the inventory) is left
// to index.html and report.json, so that a passing report fits a
// pull-request comment with room to spare.
func markdownBlocks(r *Report) []string {
	var blocks []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			blocks = append(blocks, b.String())
			b.Reset()
		}
	}

	v := r.Verdict()
	b.WriteString("# nodeproof invariant report\n\n")
	fmt.Fprintf(&b, "**%s** nodeproof %s, started %s, %.1fs.\n", MarkdownEscape(v.Headline), MarkdownInline(r.Version), r.Started, r.Seconds)
	for _, p := range v.Problems {
		fmt.Fprintf(&b, "- %s\n", MarkdownEscape(p))
	}
	flush()

	b.WriteString("\n## Coverage\n\n" + markdownLegend() + "\n\n")
	header := append([]string{"Subsystem"}, coverage.Layers...)
	var rows [][]string
	for _, row := range r.Matrix {
		cells := []string{row.Subsystem}
		for _, c := range row.Cells {
			cells = append(cells, c.Text)
		}
		rows = append(rows, cells)
	}
	MarkdownTable(&b, header, rows)
	flush()

	if r.counterexamples() > 0 {
		b.WriteString("\n## Failures\n")
	}
	for _, s := range r.Suites {
		if f := s.Failure; f != nil {
			fmt.Fprintf(&b, "\n### Counterexample: suite %s, %s\n\nShrunk steps:\n\n", MarkdownEscape(s.Name), MarkdownEscape(f.Invariant))
			MarkdownCodeBlock(&b, strings.Join(f.Steps, "\n"))
			if f.Replay != "" {
				fmt.Fprintf(&b, "\nReplay: %s\n", MarkdownInline(f.Replay))
			}
			b.WriteString("\n<details><summary>Full message</summary>\n\n")
			MarkdownCodeBlock(&b, cutMessage(f.Message))
			b.WriteString("\n</details>\n")
			flush()
		}
	}
	if r.Sim != nil {
		for _, v := range r.Sim.Violations {
			fmt.Fprintf(&b, "\n### Counterexample: seed %d, %s\n\n", v.Seed, MarkdownEscape(v.Invariant))
			MarkdownCodeBlock(&b, v.Message+"\n\n"+strings.Join(v.Trace, "\n"))
			fmt.Fprintf(&b, "\nReplay: %s\n", MarkdownInline(v.Replay))
			flush()
		}
	}

	if len(r.Findings) > 0 {
		b.WriteString(markdownFindings(r.Findings))
		flush()
	}

	if len(r.NotRun) > 0 {
		b.WriteString("\n## Not run\n\n")
		for _, n := range r.NotRun {
			fmt.Fprintf(&b, "- %s\n", markdownNotRun(n))
		}
		flush()
	}

	if c := r.Campaign; c != nil {
		b.WriteString(markdownCampaign(c))
		flush()
	}

	b.WriteString("\n## Suites\n\n")
	MarkdownTable(&b, []string{"Suite", "Subsystem", "Result", "Checks", "Steps", "Seconds", "Seed"}, suiteRows(r.Suites))
	flush()

	b.WriteString(markdownSim(r.Sim, markdownNotRunNote(r.NotRun, coverage.SimID)))
	flush()

	b.WriteString(markdownNode(r.Node, markdownNotRunNote(r.NotRun, coverage.NodeID)))
	flush()

	var lin *Table
	if r.Linearizability != nil {
		t := LinearizabilityTable(r.Linearizability)
		lin = &t
	}
	var conformance, pluginCheck *Table
	if r.Conformance != nil {
		conformance = &r.Conformance.Table
	}
	if r.PluginCheck != nil {
		pluginCheck = &r.PluginCheck.Table
	}
	tableSection := func(title, id string, table *Table) {
		fmt.Fprintf(&b, "\n## %s\n\n", title)
		if table == nil {
			b.WriteString(markdownNotRunNote(r.NotRun, id))
		} else {
			MarkdownTable(&b, table.Headings, table.Figures)
		}
		flush()
	}
	tableSection("Linearizability", coverage.LinearizabilityID, lin)
	tableSection("Conformance against upstream", coverage.ConformanceID, conformance)
	b.WriteString(markdownReleases(r.Upstream, markdownNotRunNote(r.NotRun, coverage.UpstreamID)))
	flush()
	tableSection("Plugins nobody here wrote", coverage.PluginCheckID, pluginCheck)

	b.WriteString("\n## Mutants\n\n")
	if r.Mutants == nil {
		b.WriteString(markdownNotRunNote(r.NotRun, coverage.MutantsID))
	} else {
		// The survivors are the failures; the killed are in index.html.
		fmt.Fprintf(&b, "%d of %d killed.\n", killed(r.Mutants), len(r.Mutants))
		if survivors := survivorRows(r.Mutants); len(survivors) > 0 {
			b.WriteString("\n")
			MarkdownTable(&b, []string{"Mutant", "Subsystem", "Source", "Killed", "Killed by", "Seconds"}, survivors)
		}
	}
	flush()

	b.WriteString("\nThe report's index.html and report.json hold the rest: each invariant (statement, source, checked, applied, " +
		"violations), the statistics, the actions drawn, the node simulation's invariants, the mutants killed and the inventory.\n")
	flush()
	return blocks
}

// markdownLegend is the matrix's legend in the words of index.html's,
// which colours the states that report.md can only name.
func markdownLegend() string {
	parts := make([]string, len(coverage.Legend))
	for i, s := range coverage.Legend {
		parts[i] = "*" + s.Status + "*: " + s.Meaning
	}
	return "**Legend** (index.html colours each state): " + MarkdownEscape(strings.Join(parts, "; ")) + "."
}

// markdownNotRun words an entry of the not-run list for report.md.
func markdownNotRun(n coverage.NotRun) string { return n.Words(MarkdownEscape, MarkdownInline) }

// markdownNotRunNote is the body of a section the report lacks: its entry
// of the not-run list.
func markdownNotRunNote(list []coverage.NotRun, id string) string {
	if n := notRunEntry(list, id); n != nil {
		return markdownNotRun(*n) + "\n"
	}
	return ""
}

// suiteRows are the rows of the suites' table.
func suiteRows(suites []Suite) [][]string {
	var rows [][]string
	for _, s := range suites {
		rows = append(rows, []string{s.Name, s.Subsystem, result(s.Passed), strconv.Itoa(s.Checks), strconv.Itoa(s.Steps),
			strconv.FormatFloat(s.Seconds, 'f', 1, 64), strconv.FormatUint(s.Seed, 10)})
	}
	return rows
}

// result is a table's word for a pass or a failure.
func result(passed bool) string {
	if passed {
		return "passed"
	}
	return "FAILED"
}

// survivorRows are the kill matrix's rows of the mutants that survived.
func survivorRows(matrix []mutants.Row) [][]string {
	var rows [][]string
	for _, m := range matrix {
		if !m.Killed {
			rows = append(rows, []string{m.ID, m.Subsystem, m.Source, "survived", m.Killers(), strconv.FormatFloat(m.Seconds, 'f', 1, 64)})
		}
	}
	return rows
}

// markdownSim is the simulation's block of report.md; notRun is its body
// when the report lacks it. Its counterexamples are under Failures, its
// invariants' counts in index.html.
func markdownSim(s *simreport.Section, notRun string) string {
	var b strings.Builder
	b.WriteString("\n## Node simulation\n\n")
	if s == nil {
		b.WriteString(notRun)
		return b.String()
	}
	MarkdownTable(&b, []string{"Result", "Seeds", "Hours per seed", "Simulated hours", "Events", "Pods", "Seconds", "Violations"},
		[][]string{{result(s.Passed), fmt.Sprintf("%d (%d..%d)", s.Seeds, s.FirstSeed, s.LastSeed), phrase.Stat(s.Hours), phrase.Stat(s.SimulatedHours),
			strconv.Itoa(s.Events), strconv.Itoa(s.Pods), strconv.FormatFloat(s.Seconds, 'f', 1, 64), strconv.Itoa(len(s.Violations))}})
	fmt.Fprintf(&b, "\nFaults injected: %s.\n", MarkdownEscape(countsText(s.Injected)))
	return b.String()
}

// markdownFindings is the "Findings in the kubelet" part of report.md. The
// promises' sources, a link or two each, are left to index.html: they
// would double the table.
func markdownFindings(list []Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Findings in the kubelet\n\n%d known broken %s of the v1.36.3 kubelet, each confirmed on upstream's own code (docs/findings.md). A known finding does not fail the report.\n\n",
		len(list), phrase.Noun(len(list), "promise", "promises"))
	var rows [][]string
	for _, f := range list {
		rows = append(rows, []string{f.ID, f.Subsystem, f.Title, f.SearchText(), MarkdownInline(f.Replay), f.Confirmation, f.RealKubelet, f.TrackerText()})
	}
	MarkdownTable(&b, []string{"ID", "Subsystem", "Broken promise", "Search", "Replay", "Confirmed by", "On the real kubelet", "Upstream tracker"}, rows)
	return b.String()
}

// markdownCampaign is the campaign's block of report.md.
func markdownCampaign(c *campaign.Section) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Campaign\n\nMerged from %d shards of one plan (%d units), each unit run by exactly one shard.\n\n", c.Shards, c.Units)
	var rows [][]string
	for _, r := range c.ShardResults {
		rows = append(rows, []string{strconv.Itoa(r.Shard), r.File, strconv.Itoa(r.Units), strconv.FormatFloat(r.Seconds, 'f', 1, 64), result(r.Passed)})
	}
	MarkdownTable(&b, []string{"Shard", "File", "Units", "Seconds", "Result"}, rows)
	b.WriteString("\n### Failures\n\n")
	if len(c.Failures) == 0 {
		b.WriteString("None: every unit passed.\n")
	} else {
		// A list, not a table: a table cell would escape the replay line's
		// characters inside its code span.
		for _, f := range c.Failures {
			fmt.Fprintf(&b, "- shard %d, %s: %s; replay: %s\n", f.Shard, MarkdownEscape(f.Unit), MarkdownEscape(f.Invariant), MarkdownInline(orDash(f.Replay)))
		}
	}
	if len(c.Fuzz) > 0 {
		b.WriteString("\n### Fuzz targets\n\n")
		rows = nil
		for _, f := range c.Fuzz {
			rows = append(rows, []string{f.Target, "./" + f.Package, strconv.Itoa(f.Shard), strconv.FormatFloat(f.Seconds, 'f', 1, 64), result(f.Passed)})
		}
		MarkdownTable(&b, []string{"Target", "Package", "Shard", "Seconds", "Result"}, rows)
	}
	return b.String()
}

// cutMessage shortens a failure's message to MarkdownMessageLimit bytes,
// on a character boundary, saying where the whole of it is.
func cutMessage(message string) string {
	if len(message) <= MarkdownMessageLimit {
		return message
	}
	return strings.ToValidUTF8(message[:MarkdownMessageLimit], "") + "\n… (cut; index.html has the whole message)"
}
