package upstream

import (
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// Text is the matrix for a terminal: the findings' states per release,
// then every cell that is not the expected one with its detail and replay
// line, then the failures.
func Text(m Matrix) string {
	var b strings.Builder
	var findings, contracts []stateRow
	for _, row := range m.Findings {
		findings = append(findings, stateRow{row.ID, row.Cells})
	}
	for _, row := range m.Contracts {
		contracts = append(contracts, stateRow{row.ID, row.Cells})
	}
	writeStates(&b, m.Columns, "finding", findings, Present)
	if len(contracts) > 0 {
		writeStates(&b, m.Columns, "contract (upstream as the system under test)", contracts, Held)
	}
	agree := 0
	for _, row := range m.Tests {
		differs := false
		for _, c := range row.Cells {
			if c.State != Agrees {
				differs = true
				fmt.Fprintf(&b, "%s on %s: %s", row.Test, c.Release, c.State)
				if c.Detail != "" {
					fmt.Fprintf(&b, ": %s", FailureLine(c.Detail))
				}
				b.WriteString("\n")
				if c.Replay != "" {
					fmt.Fprintf(&b, "  replay: %s\n", c.Replay)
				}
			}
		}
		if !differs {
			agree++
		}
	}
	fmt.Fprintf(&b, "%d of %d other conformance tests agree on every release run\n", agree, len(m.Tests))
	if f := m.Failures(); len(f) > 0 {
		fmt.Fprintf(&b, "%d failures:\n", len(f))
		for _, line := range f {
			fmt.Fprintf(&b, "  %s\n", line)
		}
	}
	return b.String()
}

// FailureLine is what a failed test's output says failed, on one line:
// testify's "Error:" text with its "Messages:" and the file and line of its
// "Error Trace:" or, without testify's report, the first line that is not
// the runner's "=== RUN". The report's notes under the matrix use it too.
func FailureLine(output string) string {
	var first, trace, failure, messages string
	for line := range strings.SplitSeq(output, "\n") {
		t := strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(t, "Error Trace:"); ok && trace == "" {
			trace = filepath.Base(strings.TrimSpace(rest))
			continue
		}
		if rest, ok := strings.CutPrefix(t, "Error:"); ok && failure == "" {
			failure = strings.TrimSpace(rest)
			continue
		}
		if rest, ok := strings.CutPrefix(t, "Messages:"); ok && failure != "" && messages == "" {
			messages = strings.TrimSpace(rest)
			continue
		}
		if first == "" && t != "" && !strings.HasPrefix(t, "=== ") {
			first = t
		}
	}
	if failure == "" {
		return first
	}
	if messages != "" {
		failure += ": " + messages
	}
	if trace != "" {
		failure += " (" + trace + ")"
	}
	return failure
}

// stateRow is a finding's or a contract property's cells, by its ID.
type stateRow struct {
	id    string
	cells []Cell
}

// writeStates writes rows as a table of states, a column a release, then
// each cell that is not expected, with its detail and replay line.
func writeStates(b *strings.Builder, columns []Column, heading string, rows []stateRow, expected string) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	header := heading
	for _, c := range columns {
		header += "\t" + c.Release
	}
	fmt.Fprintln(tw, header)
	for _, row := range rows {
		line := row.id
		for _, c := range row.cells {
			line += "\t" + c.State
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	for _, row := range rows {
		for _, c := range row.cells {
			if c.State == expected || c.Detail == "" {
				continue
			}
			fmt.Fprintf(b, "%s on %s: %s: %s\n", row.id, c.Release, c.State, FailureLine(c.Detail))
			if c.Replay != "" {
				fmt.Fprintf(b, "  replay: %s\n", c.Replay)
			}
		}
	}
}
