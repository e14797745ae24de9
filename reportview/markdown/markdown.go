package markdown

import (
	"fmt"
	"strings"
)

// Limit bounds a report.md: GitHub refuses a pull-request comment longer
// than 65536 characters, and a byte is never fewer than a character.
const Limit = 65536

// MessageLimit bounds each failure's full message, which the shrunk steps
// above it already summarise.
const MessageLimit = 4000

// TruncationReserve keeps room under Limit for the note that says what was
// left out.
const TruncationReserve = 256

// Table writes a table with header; rows of none is "(none)".
func Table(b *strings.Builder, header []string, rows [][]string) {
	if len(rows) == 0 {
		b.WriteString("(none)\n")
		return
	}
	writeRow := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + Escape(c) + " |")
		}
		b.WriteString("\n")
	}
	writeRow(header)
	b.WriteString(strings.Repeat("|---", len(header)) + "|\n")
	for _, r := range rows {
		writeRow(r)
	}
}

var escaper = strings.NewReplacer("\\", "\\\\", "|", "\\|", "<", "&lt;", ">", "&gt;", "&", "&amp;", "\r", "", "\n", " ")

// Escape makes text safe in a table cell or heading: pipes would split the
// cell, and HTML would be interpreted by the pull-request renderer.
func Escape(s string) string { return escaper.Replace(s) }

// Inline formats s as inline code, with a backtick run longer than any in s.
func Inline(s string) string {
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		// CommonMark strips one space on each side, so the fence stays apart.
		s = " " + s + " "
	}
	return fence + s + fence
}

// CodeBlock writes s as a fenced block whose fence no line of s can close.
func CodeBlock(b *strings.Builder, s string) {
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	fmt.Fprintf(b, "%stext\n%s\n%s\n", fence, strings.TrimSuffix(s, "\n"), fence)
}

// Cut shortens a message to MessageLimit bytes, on a character boundary,
// saying where the whole of it is.
func Cut(message string) string {
	if len(message) <= MessageLimit {
		return message
	}
	return strings.ToValidUTF8(message[:MessageLimit], "") + "\n… (cut; index.html has the whole message)"
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
