package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// writeMarkdown writes report.md, a summary sized for a pull-request comment.
func writeMarkdown(w io.Writer, data *reportData) error {
	var b strings.Builder
	failed := 0
	for _, s := range data.Suites {
		if !s.Passed {
			failed++
		}
	}
	b.WriteString("# nodeproof invariant report\n\n")
	verdict := fmt.Sprintf("**All %d suites passed.**", len(data.Suites))
	if failed > 0 {
		verdict = fmt.Sprintf("**%d of %d suites failed.**", failed, len(data.Suites))
	}
	fmt.Fprintf(&b, "%s nodeproof %s, started %s, %.1fs.\n\n", verdict, mdInline(data.Version), data.Started, data.Seconds)

	mdTable(&b, []string{"Suite", "Subsystem", "Result", "Checks", "Steps", "Seconds", "Seed"}, suiteRows(data.Suites))

	b.WriteString("\n## Invariants\n\n")
	var rows [][]string
	for _, s := range data.Suites {
		for _, inv := range s.Invariants {
			rows = append(rows, []string{s.Name, inv.ID, inv.Statement, sourceCellMarkdown(inv.Sources), strconv.Itoa(inv.Checked), strconv.Itoa(inv.Violations)})
		}
	}
	mdTable(&b, []string{"Suite", "ID", "Statement", "Source", "Checked", "Violations"}, rows)

	var stats [][]string
	for _, s := range data.Suites {
		for _, st := range s.Statistics {
			stats = append(stats, []string{s.Name, st.Name, strconv.Itoa(st.Samples), formatStat(st.Mean), formatStat(st.Max), strconv.Itoa(st.Nonzero)})
		}
	}
	if len(stats) > 0 {
		b.WriteString("\n## Statistics\n\n")
		mdTable(&b, []string{"Suite", "Statistic", "Samples", "Mean", "Max", "Non-zero"}, stats)
	}

	if failed > 0 {
		b.WriteString("\n## Failures\n")
		for _, s := range data.Suites {
			if f := s.Failure; f != nil {
				fmt.Fprintf(&b, "\n### %s: %s\n\nShrunk steps:\n\n", mdEscape(s.Name), mdEscape(f.Invariant))
				mdCodeBlock(&b, strings.Join(f.Steps, "\n"))
				if f.Replay != "" {
					fmt.Fprintf(&b, "\nReplay: %s\n", mdInline(f.Replay))
				}
				b.WriteString("\n<details><summary>Full message</summary>\n\n")
				mdCodeBlock(&b, f.Message)
				b.WriteString("\n</details>\n")
			}
		}
	}

	if len(data.Mutants) > 0 {
		b.WriteString("\n## Mutants\n\n")
		fmt.Fprintf(&b, "%d of %d killed.\n\n", killed(data.Mutants), len(data.Mutants))
		mdTable(&b, []string{"Mutant", "Subsystem", "Source", "Killed", "Killed by", "Seconds"}, mutantRows(data.Mutants))
	}
	for _, section := range []struct {
		title string
		table *tableSection
	}{{"Linearizability", data.Linearizability}, {"Conformance", data.Conformance}} {
		if section.table != nil {
			fmt.Fprintf(&b, "\n## %s\n\n", section.title)
			mdTable(&b, section.table.Columns, section.table.Cells)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
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
		rows = append(rows, []string{m.ID, m.Subsystem, m.Source, verdict, m.KilledBy, strconv.FormatFloat(m.Seconds, 'f', 1, 64)})
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
