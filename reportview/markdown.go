package reportview

import (
	"fmt"
	"strings"
)

// MarkdownLimit bounds report.md: GitHub refuses a pull-request comment longer
// than 65536 characters, and a byte is never fewer than a character.
const MarkdownLimit = 65536

// MarkdownMessageLimit bounds each failure's full message, which the shrunk steps
// above it already summarise.
const MarkdownMessageLimit = 4000

// MarkdownTruncationReserve keeps room for the truncation note.
const MarkdownTruncationReserve = 256

// MarkdownTable writes a table with a header row, each cell escaped;
// "(none)" without rows.
func MarkdownTable(b *strings.Builder, header []string, rows [][]string) {
	if len(rows) == 0 {
		b.WriteString("(none)\n")
		return
	}
	writeRow := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + MarkdownEscape(c) + " |")
		}
		b.WriteString("\n")
	}
	writeRow(header)
	b.WriteString(strings.Repeat("|---", len(header)) + "|\n")
	for _, r := range rows {
		writeRow(r)
	}
}

var markdownEscaper = strings.NewReplacer("\\", "\\\\", "|", "\\|", "<", "&lt;", ">", "&gt;", "&", "&amp;", "\r", "", "\n", " ")

// MarkdownEscape makes text safe in a table cell or heading: pipes would split the
// cell, and HTML would be interpreted by the pull-request renderer.
func MarkdownEscape(s string) string { return markdownEscaper.Replace(s) }

// MarkdownInline formats s as inline code, with a backtick run longer than any in s.
func MarkdownInline(s string) string {
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		// CommonMark strips one space on each side, so the fence stays apart.
		s = " " + s + " "
	}
	return fence + s + fence
}

// MarkdownCodeBlock writes s as a fenced block whose fence no line of s can close.
func MarkdownCodeBlock(b *strings.Builder, s string) {
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
