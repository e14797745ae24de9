package reportview

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nodeproof/nodeproof/realkubelet/sweep"
)

// The "Real kubelet" section: nodeproof node's sweep (make node-e2e). Its
// figures are laid out once here, for report.md and index.html alike.

// nodeIntro says what the section shows.
const nodeIntro = "Generated scenarios played against the real kubelet v1.36.3 binary (nodeproof node, make node-e2e), " +
	"each on a node of its own: static pods with devices, kill -9 of the kubelet, device plugin crashes and health flips; " +
	"every RK-* property checked from outside after every step. Breaches a known kubelet bug explains are counted apart, not as violations."

// nodeSummaryTable is the sweep's one-row table.
func nodeSummaryTable(s *sweep.Summary) Table {
	return Table{
		Headings: []string{"Result", "Seeds", "Scenarios", "Steps", "Step median / p95 (s)", "kill -9 restart median / p95 (s)", "Seconds", "Violations"},
		Figures: [][]string{{result(s.Passed), fmt.Sprintf("%d..%d", s.FirstSeed, s.LastSeed), strconv.Itoa(s.Scenarios), strconv.Itoa(s.Steps),
			seconds(s.StepMedianSeconds) + " / " + seconds(s.StepP95Seconds), seconds(s.RestartMedianSeconds) + " / " + seconds(s.RestartP95Seconds),
			seconds(s.Seconds), strconv.Itoa(len(s.Violations))}},
	}
}

// nodeChecksTable is each property's checked and applied counts.
func nodeChecksTable(s *sweep.Summary) Table {
	t := Table{Headings: []string{"Property", "Checked", "Applied"}}
	for _, c := range s.Checks {
		t.Figures = append(t.Figures, []string{c.ID, strconv.Itoa(c.Checked), strconv.Itoa(c.Applied)})
	}
	return t
}

// nodeKnownTable is the known kubelet bugs the sweep saw; nil when none.
func nodeKnownTable(s *sweep.Summary) *Table {
	if len(s.Known) == 0 {
		return nil
	}
	t := Table{Headings: []string{"Known bug", "Breaches it explained"}}
	for _, k := range s.Known {
		t.Figures = append(t.Figures, []string{k.ID, strconv.Itoa(k.Breaches)})
	}
	return &t
}

func seconds(s float64) string { return strconv.FormatFloat(s, 'f', 3, 64) }

// markdownNode is the real kubelet's block of report.md; notRun is its body
// when the report lacks it.
func markdownNode(s *sweep.Summary, notRun string) string {
	var b strings.Builder
	b.WriteString("\n## Real kubelet\n\n")
	if s == nil {
		b.WriteString(notRun)
		return b.String()
	}
	b.WriteString(nodeIntro + "\n\n")
	t := nodeSummaryTable(s)
	MarkdownTable(&b, t.Headings, t.Figures)
	fmt.Fprintf(&b, "\nSteps by kind: %s.\n\nThe simulation's divergences from the node (RK-SIM-PREDICTS), by class: %s.\n\n",
		MarkdownEscape(countsText(s.Kinds)), MarkdownEscape(countsText(s.Divergences)))
	t = nodeChecksTable(s)
	MarkdownTable(&b, t.Headings, t.Figures)
	if k := nodeKnownTable(s); k != nil {
		b.WriteString("\n")
		MarkdownTable(&b, k.Headings, k.Figures)
	}
	for _, v := range s.Violations {
		fmt.Fprintf(&b, "\nSeed %d violated a property; replay: %s or %s\n\n```text\n%s\n```\n", v.Seed, MarkdownInline(v.Replay), MarkdownInline(v.TestReplay), v.Report)
	}
	for _, n := range s.NotCovered {
		fmt.Fprintf(&b, "\nNot covered: %s.\n", MarkdownEscape(n))
	}
	return b.String()
}
