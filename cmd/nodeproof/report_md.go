package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/reportview"
)

// mdLimit bounds report.md: GitHub refuses a pull-request comment longer
// than 65536 characters, and a byte is never fewer than a character.
const mdLimit = 65536

// mdMessageLimit bounds each failure's full message, which the shrunk steps
// above it already summarise.
const mdMessageLimit = 4000

// writeMarkdown writes report.md, a summary sized for a pull-request
// comment, in the order of index.html.
func writeMarkdown(w io.Writer, data *reportData) error {
	_, err := io.WriteString(w, renderMarkdown(data, mdLimit))
	return err
}

// renderMarkdown renders the report in blocks and stops before the block
// that would take it past limit, saying what was left out.
func renderMarkdown(data *reportData, limit int) string {
	blocks := markdownBlocks(data)
	var b strings.Builder
	for i, block := range blocks {
		if b.Len()+len(block) > limit-mdTruncationReserve {
			fmt.Fprintf(&b, "\n**Truncated:** %d more parts of the report do not fit a pull-request comment; "+
				"index.html and report.json have everything.\n", len(blocks)-i)
			break
		}
		b.WriteString(block)
	}
	return b.String()
}

// mdTruncationReserve keeps room for the truncation note.
const mdTruncationReserve = 256

// markdownBlocks are the report's parts in page order: the verdict, the
// matrix and what did not run first, so that truncation only ever drops
// detail from the end.
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
	fmt.Fprintf(&b, "**%s** nodeproof %s, started %s, %.1fs.\n", mdEscape(v.Headline), mdInline(data.Version), data.Started, data.Seconds)
	for _, p := range v.Problems {
		fmt.Fprintf(&b, "- %s\n", mdEscape(p))
	}
	flush()

	if len(data.Findings) > 0 {
		b.WriteString(markdownFindings(data.Findings))
		flush()
	}

	b.WriteString("\n## Coverage\n\n")
	header := append([]string{"Subsystem"}, coverage.Layers...)
	var rows [][]string
	for _, r := range data.Matrix {
		row := []string{r.Subsystem}
		for _, c := range r.Cells {
			row = append(row, c.Text)
		}
		rows = append(rows, row)
	}
	mdTable(&b, header, rows)
	flush()

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
	mdTable(&b, []string{"Suite", "Subsystem", "Result", "Checks", "Steps", "Seconds", "Seed"}, suiteRows(data.Suites))
	flush()

	for _, s := range data.Suites {
		// A suite named after its subsystem is headed by its name once.
		heading := s.Name
		if s.Subsystem != s.Name {
			heading += " (" + s.Subsystem + ")"
		}
		fmt.Fprintf(&b, "\n## %s\n", mdEscape(heading))
		if f := s.Failure; f != nil {
			fmt.Fprintf(&b, "\n### Counterexample: %s\n\nShrunk steps:\n\n", mdEscape(f.Invariant))
			mdCodeBlock(&b, strings.Join(f.Steps, "\n"))
			if f.Replay != "" {
				fmt.Fprintf(&b, "\nReplay: %s\n", mdInline(f.Replay))
			}
			message := f.Message
			if len(message) > mdMessageLimit {
				message = strings.ToValidUTF8(message[:mdMessageLimit], "") + "\n… (cut; index.html has the whole message)"
			}
			b.WriteString("\n<details><summary>Full message</summary>\n\n")
			mdCodeBlock(&b, message)
			b.WriteString("\n</details>\n")
		}
		b.WriteString("\n")
		var rows [][]string
		for _, inv := range s.Invariants {
			rows = append(rows, []string{inv.ID, inv.Kind, inv.Statement, sourceCellMarkdown(inv.Sources), strconv.Itoa(inv.Checked), strconv.Itoa(inv.Applied), violationsCell(inv)})
		}
		mdTable(&b, []string{"ID", "Kind", "Statement", "Source", "Checked", "Applied", "Violations"}, rows)
		if len(s.Statistics) > 0 {
			b.WriteString("\n")
			var stats [][]string
			for _, st := range s.Statistics {
				stats = append(stats, []string{st.Name, strconv.Itoa(st.Samples), formatStat(st.Mean), formatStat(st.Max), strconv.Itoa(st.Nonzero)})
			}
			mdTable(&b, []string{"Statistic", "Samples", "Mean", "Max", "Non-zero"}, stats)
		}
		var actions []string
		for _, bar := range reportview.Counts("", s.Actions).Bars {
			actions = append(actions, bar.Label+" "+bar.Value)
		}
		if len(actions) > 0 {
			fmt.Fprintf(&b, "\nActions: %s.\n", mdEscape(strings.Join(actions, ", ")))
		}
		flush()
	}

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
			mdTable(&b, section.table.Headings, section.table.Figures)
		}
		flush()
	}

	b.WriteString("\n## Mutants\n\n")
	if data.Mutants == nil {
		b.WriteString(mdNotRunNote(data.NotRun, coverage.MutantsID))
	} else {
		fmt.Fprintf(&b, "%d of %d killed.\n\n", killed(data.Mutants), len(data.Mutants))
		mdTable(&b, []string{"Mutant", "Subsystem", "Source", "Killed", "Killed by", "Seconds"}, mutantRows(data.Mutants))
	}
	flush()

	b.WriteString("\n## Inventory\n")
	for _, s := range data.Inventory {
		fmt.Fprintf(&b, "\n**%s**\n\n", mdEscape(s.Name))
		for _, l := range inventoryLayers(s) {
			fmt.Fprintf(&b, "- %s: %s\n", l.Layer, mdEscape(joinItems(l.Items)))
		}
		flush()
	}
	return blocks
}

// mdNotRun words an entry of the not-run list for report.md.
func mdNotRun(n coverage.NotRun) string { return n.Words(mdEscape, mdInline) }

// mdNotRunNote is the body of a section the report lacks: its entry of the
// not-run list.
func mdNotRunNote(list []coverage.NotRun, id string) string {
	if n := notRunEntry(list, id); n != nil {
		return mdNotRun(*n) + "\n"
	}
	return ""
}

// sourceCellMarkdown renders an invariant's sources for a table cell, links
// as [text](url). The report may be read far from the repository, so only
// absolute links are links; a document or seed section is its text. The cell
// then goes through mdEscape, which leaves brackets and parentheses alone.
func sourceCellMarkdown(sources []sourceReport) string {
	cells := make([]string, len(sources))
	for i, s := range sources {
		cells[i] = s.Text
		if strings.HasPrefix(s.URL, "https://") && !strings.ContainsAny(s.Text, "[]") && !strings.ContainsAny(s.URL, " ()") {
			cells[i] = "[" + s.Text + "](" + s.URL + ")"
		}
	}
	return strings.Join(cells, "; ")
}

// suiteRows and mutantRows are the rows of the summary tables.
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

func mutantRows(mutants []mutantRow) [][]string {
	var rows [][]string
	for _, m := range mutants {
		verdict := "survived"
		if m.Killed {
			verdict = "killed"
		}
		rows = append(rows, []string{m.ID, m.Subsystem, m.Source, verdict, m.Killers(), strconv.FormatFloat(m.Seconds, 'f', 1, 64)})
	}
	return rows
}

// formatStat prints a statistic with at most four decimals and no trailing zeros.
func formatStat(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64)
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

func mdTable(b *strings.Builder, header []string, rows [][]string) {
	if len(rows) == 0 {
		b.WriteString("(none)\n")
		return
	}
	writeRow := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + mdEscape(c) + " |")
		}
		b.WriteString("\n")
	}
	writeRow(header)
	b.WriteString(strings.Repeat("|---", len(header)) + "|\n")
	for _, r := range rows {
		writeRow(r)
	}
}

var mdEscaper = strings.NewReplacer("\\", "\\\\", "|", "\\|", "<", "&lt;", ">", "&gt;", "&", "&amp;", "\r", "", "\n", " ")

// mdEscape makes text safe in a table cell or heading: pipes would split the
// cell, and HTML would be interpreted by the pull-request renderer.
func mdEscape(s string) string { return mdEscaper.Replace(s) }

// mdInline formats s as inline code, with a backtick run longer than any in s.
func mdInline(s string) string {
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		// CommonMark strips one space on each side, so the fence stays apart.
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdCodeBlock writes s as a fenced block whose fence no line of s can close.
func mdCodeBlock(b *strings.Builder, s string) {
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	fmt.Fprintf(b, "%stext\n%s\n%s\n", fence, strings.TrimSuffix(s, "\n"), fence)
}

func longestRun(s string, r rune) int {
	longest, run := 0, 0
	for _, c := range s {
		if c == r {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}
