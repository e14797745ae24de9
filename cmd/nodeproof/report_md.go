package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/reportview"
)

// writeMarkdown writes report.md, a summary sized for a pull-request
// comment, in the order of index.html.
func writeMarkdown(w io.Writer, data *reportData) error {
	_, err := io.WriteString(w, renderMarkdown(data, reportview.MarkdownLimit))
	return err
}

// renderMarkdown renders the report in blocks and stops before the block
// that would take it past limit, saying what was left out.
func renderMarkdown(data *reportData, limit int) string {
	blocks := markdownBlocks(data)
	var b strings.Builder
	for i, block := range blocks {
		if b.Len()+len(block) > limit-reportview.MarkdownTruncationReserve {
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
func markdownBlocks(data *reportData) []string {
	var blocks []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			blocks = append(blocks, b.String())
			b.Reset()
		}
	}

	v := verdict(data)
	b.WriteString("# nodeproof invariant report\n\n")
	fmt.Fprintf(&b, "**%s** nodeproof %s, started %s, %.1fs.\n", reportview.MarkdownEscape(v.Headline), reportview.MarkdownInline(data.Version), data.Started, data.Seconds)
	for _, p := range v.Problems {
		fmt.Fprintf(&b, "- %s\n", reportview.MarkdownEscape(p))
	}
	flush()

	b.WriteString("\n## Coverage\n\n" + mdLegend() + "\n\n")
	header := append([]string{"Subsystem"}, coverage.Layers...)
	var rows [][]string
	for _, r := range data.Matrix {
		row := []string{r.Subsystem}
		for _, c := range r.Cells {
			row = append(row, c.Text)
		}
		rows = append(rows, row)
	}
	reportview.MarkdownTable(&b, header, rows)
	flush()

	if counterexamples(data) > 0 {
		b.WriteString("\n## Failures\n")
	}
	for _, s := range data.Suites {
		if f := s.Failure; f != nil {
			fmt.Fprintf(&b, "\n### Counterexample: suite %s, %s\n\nShrunk steps:\n\n", reportview.MarkdownEscape(s.Name), reportview.MarkdownEscape(f.Invariant))
			reportview.MarkdownCodeBlock(&b, strings.Join(f.Steps, "\n"))
			if f.Replay != "" {
				fmt.Fprintf(&b, "\nReplay: %s\n", reportview.MarkdownInline(f.Replay))
			}
			message := f.Message
			if len(message) > reportview.MarkdownMessageLimit {
				message = strings.ToValidUTF8(message[:reportview.MarkdownMessageLimit], "") + "\n… (cut; index.html has the whole message)"
			}
			b.WriteString("\n<details><summary>Full message</summary>\n\n")
			reportview.MarkdownCodeBlock(&b, message)
			b.WriteString("\n</details>\n")
			flush()
		}
	}
	if data.Sim != nil {
		for _, v := range data.Sim.Violations {
			fmt.Fprintf(&b, "\n### Counterexample: seed %d, %s\n\n", v.Seed, reportview.MarkdownEscape(v.Invariant))
			reportview.MarkdownCodeBlock(&b, v.Message+"\n\n"+strings.Join(v.Trace, "\n"))
			fmt.Fprintf(&b, "\nReplay: %s\n", reportview.MarkdownInline(v.Replay))
			flush()
		}
	}

	if len(data.Findings) > 0 {
		b.WriteString(markdownFindings(data.Findings))
		flush()
	}

	if len(data.NotRun) > 0 {
		b.WriteString("\n## Not run\n\n")
		for _, n := range data.NotRun {
			fmt.Fprintf(&b, "- %s\n", mdNotRun(n))
		}
		flush()
	}

	if c := data.Campaign; c != nil {
		b.WriteString(markdownCampaign(c))
		flush()
	}

	b.WriteString("\n## Suites\n\n")
	reportview.MarkdownTable(&b, []string{"Suite", "Subsystem", "Result", "Checks", "Steps", "Seconds", "Seed"}, suiteRows(data.Suites))
	flush()

	b.WriteString(markdownSim(data.Sim, mdNotRunNote(data.NotRun, coverage.SimID)))
	flush()

	for _, section := range []struct {
		title, id string
		table     *tableSection
	}{
		{"Linearizability", coverage.LinearizabilityID, data.Linearizability},
		{"Conformance against upstream", coverage.ConformanceID, data.Conformance},
		{"Plugins nobody here wrote", coverage.PluginCheckID, data.PluginCheck},
	} {
		fmt.Fprintf(&b, "\n## %s\n\n", section.title)
		if section.table == nil {
			b.WriteString(mdNotRunNote(data.NotRun, section.id))
		} else {
			reportview.MarkdownTable(&b, section.table.Headings, section.table.Figures)
		}
		flush()
	}

	b.WriteString("\n## Mutants\n\n")
	if data.Mutants == nil {
		b.WriteString(mdNotRunNote(data.NotRun, coverage.MutantsID))
	} else {
		// The survivors are the failures; the killed are in index.html.
		fmt.Fprintf(&b, "%d of %d killed.\n", killed(data.Mutants), len(data.Mutants))
		if survivors := survivorRows(data.Mutants); len(survivors) > 0 {
			b.WriteString("\n")
			reportview.MarkdownTable(&b, []string{"Mutant", "Subsystem", "Source", "Killed", "Killed by", "Seconds"}, survivors)
		}
	}
	flush()

	b.WriteString("\nThe report's index.html and report.json hold the rest: each invariant (statement, source, checked, applied, " +
		"violations), the statistics, the actions drawn, the node simulation's invariants, the mutants killed and the inventory.\n")
	flush()
	return blocks
}

// mdLegend is the matrix's legend in the words of index.html's, which
// colours the states that report.md can only name.
func mdLegend() string {
	parts := make([]string, len(coverage.Legend))
	for i, s := range coverage.Legend {
		parts[i] = "*" + s.Status + "*: " + s.Meaning
	}
	return "**Legend** (index.html colours each state): " + reportview.MarkdownEscape(strings.Join(parts, "; ")) + "."
}

// mdNotRun words an entry of the not-run list for report.md.
func mdNotRun(n coverage.NotRun) string {
	return n.Words(reportview.MarkdownEscape, reportview.MarkdownInline)
}

// mdNotRunNote is the body of a section the report lacks: its entry of the
// not-run list.
func mdNotRunNote(list []coverage.NotRun, id string) string {
	if n := notRunEntry(list, id); n != nil {
		return mdNotRun(*n) + "\n"
	}
	return ""
}

// suiteRows are the rows of the suites' table.
func suiteRows(suites []suiteReport) [][]string {
	var rows [][]string
	for _, s := range suites {
		result := "passed"
		if !s.Passed {
			result = "FAILED"
		}
		rows = append(rows, []string{s.Name, s.Subsystem, result, strconv.Itoa(s.Checks), strconv.Itoa(s.Steps),
			strconv.FormatFloat(s.Seconds, 'f', 1, 64), strconv.FormatUint(s.Seed, 10)})
	}
	return rows
}

// survivorRows are the kill matrix's rows of the mutants that survived.
func survivorRows(mutants []mutantRow) [][]string {
	var rows [][]string
	for _, m := range mutants {
		if !m.Killed {
			rows = append(rows, []string{m.ID, m.Subsystem, m.Source, "survived", m.Killers(), strconv.FormatFloat(m.Seconds, 'f', 1, 64)})
		}
	}
	return rows
}

func killed(mutants []mutantRow) int {
	n := 0
	for _, m := range mutants {
		if m.Killed {
			n++
		}
	}
	return n
}
