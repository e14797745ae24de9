package reportview

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/upstream"
)

// The "Upstream releases" section: the release matrix nodeproof upstream
// wrote (make upstream-matrix). Its tables and notes are laid out once
// here, for report.md and index.html alike.

// releasesSection is the section as both renderings show it.
type releasesSection struct {
	// Intro says what the matrix is and how to read its states.
	Intro string
	// Columns is a row per release: its run's times, tests and error.
	Columns Table
	// Findings is a row per confirmed finding, a state per release;
	// FindingNotes explain each cell that is not "present".
	Findings     Table
	FindingNotes []releaseNote
	// Contracts is a row per contract property a suite searched with the
	// releases' code as the system under test; ContractNotes explain each
	// cell that is not "held".
	Contracts     Table
	ContractNotes []releaseNote
	// Tests are the other conformance tests some release does not agree
	// on, TestNotes their cells that are not "agrees", and Agreeing counts
	// the tests left out because every release agrees.
	Tests     Table
	TestNotes []releaseNote
	Agreeing  int
	// Failures are what fails the report (upstream.Matrix.Failures).
	Failures []string
}

// releaseNote is a cell of the matrix explained under its table.
type releaseNote struct {
	// Row is the finding's ID or the test's name.
	Row, Release, State string
	// Detail is the line of the cell's detail that says what happened
	// (upstream.FailureLine); Replay, when the test ran, the command line
	// that runs it again.
	Detail, Replay string
}

// newReleasesSection lays m out.
func newReleasesSection(m *upstream.Matrix) releasesSection {
	s := releasesSection{
		Intro: "The conformance module (nodeproof's checks modelled on " + m.Modelled + ", the tests that confirm its findings " +
			"and the suites' searches with upstream's code as the system under test) built and run against each upstream release's " +
			"own kubelet packages (nodeproof upstream, make upstream-matrix). " +
			"A finding absent on a release means that release keeps the promise the finding breaks; " +
			"a comparison that differs is a behaviour change since " + m.Modelled + ", not a bug.",
		Columns:   Table{Headings: []string{"Release", "Build (s)", "Run (s)", "Cases a comparison", "Tests", "Failed", "Error"}},
		Findings:  Table{Headings: []string{"Finding", "Broken promise"}},
		Contracts: Table{Headings: []string{"Contract property"}},
		Tests:     Table{Headings: []string{"Test"}},
		Failures:  m.Failures(),
	}
	for _, c := range m.Columns {
		s.Columns.Figures = append(s.Columns.Figures, []string{c.Release, strconv.FormatFloat(c.BuildSeconds, 'f', 1, 64),
			strconv.FormatFloat(c.RunSeconds, 'f', 1, 64), casesPerComparison(c.Checks), strconv.Itoa(len(c.Tests)), strconv.Itoa(len(c.Failed())), orDash(firstLine(c.Error))})
		s.Findings.Headings = append(s.Findings.Headings, c.Release)
		s.Contracts.Headings = append(s.Contracts.Headings, c.Release)
		s.Tests.Headings = append(s.Tests.Headings, c.Release)
	}
	for _, row := range m.Findings {
		figures, notes := stateRow([]string{row.ID, row.Title}, row.Cells, upstream.Present)
		s.Findings.Figures, s.FindingNotes = append(s.Findings.Figures, figures), append(s.FindingNotes, notes...)
	}
	for _, row := range m.Contracts {
		figures, notes := stateRow([]string{row.ID}, row.Cells, upstream.Held)
		s.Contracts.Figures, s.ContractNotes = append(s.Contracts.Figures, figures), append(s.ContractNotes, notes...)
	}
	for _, row := range m.Tests {
		figures, notes := stateRow([]string{row.Test}, row.Cells, upstream.Agrees)
		if len(notes) == 0 {
			s.Agreeing++
			continue
		}
		s.Tests.Figures, s.TestNotes = append(s.Tests.Figures, figures), append(s.TestNotes, notes...)
	}
	return s
}

// stateRow is a table row, lead (the row's ID first) then each cell's
// state, and a note for each cell not in the expected state.
func stateRow(lead []string, cells []upstream.Cell, expected string) ([]string, []releaseNote) {
	figures := lead
	var notes []releaseNote
	for _, c := range cells {
		figures = append(figures, c.State)
		if c.State != expected {
			notes = append(notes, newReleaseNote(lead[0], c))
		}
	}
	return figures, notes
}

func newReleaseNote(row string, c upstream.Cell) releaseNote {
	return releaseNote{Row: row, Release: c.Release, State: c.State, Detail: upstream.FailureLine(c.Detail), Replay: c.Replay}
}

// AgreeingText is the line that counts the tests the table leaves out.
func (s releasesSection) AgreeingText() string {
	switch {
	case len(s.Tests.Figures) > 0:
	case s.Agreeing == 0:
		return "No other conformance test ran."
	default:
		return fmt.Sprintf("Every other conformance test (%d) agrees on every release.", s.Agreeing)
	}
	return fmt.Sprintf("%s %s on every release.", phrase.Count(s.Agreeing, "other test"), phrase.Noun(s.Agreeing, "agrees", "agree"))
}

// firstLine is s up to its first line break: a column's error's, which
// says what did not build and why, the lines after it the go command's.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// markdownReleases is the upstream releases' block of report.md; notRun is
// its body when the report lacks the matrix.
func markdownReleases(m *upstream.Matrix, notRun string) string {
	var b strings.Builder
	b.WriteString("\n## Upstream releases\n\n")
	if m == nil {
		b.WriteString(notRun)
		return b.String()
	}
	s := newReleasesSection(m)
	b.WriteString(MarkdownEscape(s.Intro) + "\n\n")
	MarkdownTable(&b, s.Columns.Headings, s.Columns.Figures)
	b.WriteString("\n")
	MarkdownTable(&b, s.Findings.Headings, s.Findings.Figures)
	markdownReleaseNotes(&b, s.FindingNotes)
	if len(s.Contracts.Figures) > 0 {
		b.WriteString("\n")
		MarkdownTable(&b, s.Contracts.Headings, s.Contracts.Figures)
		markdownReleaseNotes(&b, s.ContractNotes)
	}
	if len(s.Tests.Figures) > 0 {
		b.WriteString("\n")
		MarkdownTable(&b, s.Tests.Headings, s.Tests.Figures)
		markdownReleaseNotes(&b, s.TestNotes)
	}
	fmt.Fprintf(&b, "\n%s\n", MarkdownEscape(s.AgreeingText()))
	if len(s.Failures) > 0 {
		b.WriteString("\nFailures, which fail this report:\n\n")
		for _, f := range s.Failures {
			fmt.Fprintf(&b, "- %s\n", MarkdownEscape(f))
		}
	}
	return b.String()
}

// markdownReleaseNotes lists the cells a table's states do not explain.
func markdownReleaseNotes(b *strings.Builder, notes []releaseNote) {
	if len(notes) == 0 {
		return
	}
	b.WriteString("\n")
	for _, n := range notes {
		fmt.Fprintf(b, "- %s on %s: %s", MarkdownInline(n.Row), MarkdownEscape(n.Release), MarkdownEscape(n.State))
		if n.Detail != "" {
			b.WriteString(": " + MarkdownEscape(n.Detail))
		}
		if n.Replay != "" {
			b.WriteString("; replay: " + MarkdownInline(n.Replay))
		}
		b.WriteString("\n")
	}
}

// casesPerComparison is a column's budget: its own, or the module's
// default when it ran with none.
func casesPerComparison(checks int) string {
	if checks == 0 {
		return "10,000 (the module's)"
	}
	return strconv.Itoa(checks)
}
