package report

import (
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notRunRE finds a "not run" on a page; "could not run" in a statement
// counts too, and "not running" does not.
var notRunRE = regexp.MustCompile(`(?i)\bnot run\b`)

// verdictCountRE reads the verdict's count of what did not run.
var verdictCountRE = regexp.MustCompile(`(\d+) (?:sections? )?not run`)

// listedNotRun is an entry of report.json's not_run list.
type listedNotRun struct {
	ID      string `json:"id"`
	Section string `json:"section"`
	Command string `json:"command"`
	Writes  string `json:"writes"`
}

// words is the entry's line as every renderer words it, markup aside.
func (n listedNotRun) words() string {
	s := n.Section + " not run: run it with " + n.Command
	if n.Writes != "" {
		s += ", which writes " + n.Writes
	}
	return s + "."
}

// shownNotRun is what one rendering shows of what did not run.
type shownNotRun struct {
	// counted is the verdict's count; listed the not-run list's lines,
	// markup stripped.
	counted int
	listed  []string
	// named counts, per entry's section, the places outside the list that
	// say it did not run: matrix cells (by report.json's not_run ids) and
	// lines that say "<section> not run".
	named map[string]int
	// unnamed are the places that say "not run" and name no entry.
	unnamed []string
}

// reportedNotRun is what report.json says: the list, and for each matrix
// cell the entries that explain it.
type reportedNotRun struct {
	entries []listedNotRun
	// cells[row][column] holds a cell's entry ids.
	cells [][][]string
}

func readReportedNotRun(t *testing.T, dir string) reportedNotRun {
	var data struct {
		NotRun []listedNotRun `json:"not_run"`
		Matrix []struct {
			Cells []struct {
				NotRun []string `json:"not_run"`
			} `json:"cells"`
		} `json:"matrix"`
	}
	require.NoError(t, json.Unmarshal([]byte(read(t, dir, "report.json")), &data))
	r := reportedNotRun{entries: data.NotRun}
	for _, row := range data.Matrix {
		var cells [][]string
		for _, c := range row.Cells {
			cells = append(cells, c.NotRun)
		}
		r.cells = append(r.cells, cells)
	}
	return r
}

// section is the entry's section for an id; "" for an unknown id.
func (r reportedNotRun) section(id string) string {
	for _, e := range r.entries {
		if e.ID == id {
			return e.Section
		}
	}
	return ""
}

// nameCell records a matrix cell: one that says "not run" must name its
// entries, and one that names entries must say "not run".
func (r reportedNotRun) nameCell(shown *shownNotRun, row, column int, text string) {
	var ids []string
	if row < len(r.cells) && column < len(r.cells[row]) {
		ids = r.cells[row][column]
	}
	says := notRunRE.MatchString(text)
	switch {
	case says && len(ids) == 0:
		shown.unnamed = append(shown.unnamed, "matrix cell "+strconv.Itoa(row)+"/"+strconv.Itoa(column)+": "+text)
	case !says && len(ids) > 0:
		shown.unnamed = append(shown.unnamed, "matrix cell "+strconv.Itoa(row)+"/"+strconv.Itoa(column)+" names "+strings.Join(ids, ", ")+" but says "+text)
	}
	for _, id := range ids {
		if s := r.section(id); s != "" {
			shown.named[s]++
		} else {
			shown.unnamed = append(shown.unnamed, "matrix cell names no listed entry "+id)
		}
	}
}

// nameLine records a line of text outside the list and the matrix: each
// "not run" on it must follow an entry's section.
func (r reportedNotRun) nameLine(shown *shownNotRun, line string) {
	entries := append([]listedNotRun(nil), r.entries...)
	// The longest section first, so that one that contains another is not
	// counted twice.
	sort.Slice(entries, func(i, j int) bool { return len(entries[i].Section) > len(entries[j].Section) })
	rest := line
	for _, e := range entries {
		mention := e.Section + " not run"
		if n := strings.Count(rest, mention); n > 0 {
			shown.named[e.Section] += n
			rest = strings.ReplaceAll(rest, mention, "")
		}
	}
	if notRunRE.MatchString(rest) {
		shown.unnamed = append(shown.unnamed, line)
	}
}

var (
	htmlTagRE     = regexp.MustCompile(`<[^>]*>`)
	htmlVerdictRE = regexp.MustCompile(`(?s)<div id="verdict".*?</div>`)
	htmlListRE    = regexp.MustCompile(`(?s)<section id="not-run">.*?</section>`)
	htmlItemRE    = regexp.MustCompile(`(?s)<li[^>]*>(.*?)</li>`)
	htmlMatrixRE  = regexp.MustCompile(`(?s)<table class="matrix">.*?</table>`)
	htmlRowRE     = regexp.MustCompile(`(?s)<tr><th><a href="#inventory-[^"]*">[^<]*</a></th>(.*?)</tr>`)
	htmlCellRE    = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
)

func htmlText(s string) string { return html.UnescapeString(htmlTagRE.ReplaceAllString(s, "")) }

func (r reportedNotRun) shownInHTML(page string) shownNotRun {
	shown := shownNotRun{named: map[string]int{}}
	verdict := htmlVerdictRE.FindString(page)
	if m := verdictCountRE.FindStringSubmatch(htmlText(verdict)); m != nil {
		shown.counted, _ = strconv.Atoi(m[1])
	}
	list := htmlListRE.FindString(page)
	for _, item := range htmlItemRE.FindAllStringSubmatch(list, -1) {
		shown.listed = append(shown.listed, htmlText(item[1]))
	}
	matrix := htmlMatrixRE.FindString(page)
	for i, row := range htmlRowRE.FindAllStringSubmatch(matrix, -1) {
		for j, cell := range htmlCellRE.FindAllStringSubmatch(row[1], -1) {
			r.nameCell(&shown, i, j, htmlText(cell[1]))
		}
	}
	rest := page
	for _, part := range []string{verdict, list, matrix} {
		rest = strings.Replace(rest, part, "", 1)
	}
	// The style sheet's class names are not text, and the matrix's legend
	// explains the state "not run" rather than saying something did not.
	rest = regexp.MustCompile(`(?s)<style>.*?</style>`).ReplaceAllString(rest, "")
	rest = regexp.MustCompile(`(?s)<ul class="legend".*?</ul>`).ReplaceAllString(rest, "")
	for _, line := range strings.Split(htmlText(rest), "\n") {
		r.nameLine(&shown, line)
	}
	return shown
}

func (r reportedNotRun) shownInMarkdown(md string) shownNotRun {
	shown := shownNotRun{named: map[string]int{}}
	lines := strings.Split(md, "\n")
	heading := ""
	row := 0
	for _, line := range lines {
		text := strings.ReplaceAll(line, "`", "")
		switch {
		case strings.HasPrefix(line, "## "):
			// Headings name sections; "## Not run" heads the list.
			heading = line
		case strings.HasPrefix(line, "**") && heading == "":
			if m := verdictCountRE.FindStringSubmatch(text); m != nil {
				shown.counted, _ = strconv.Atoi(m[1])
			}
		case heading == "## Not run" && strings.HasPrefix(line, "- "):
			shown.listed = append(shown.listed, strings.TrimPrefix(text, "- "))
		case heading == "## Coverage" && strings.HasPrefix(line, "**Legend**"):
			// The legend explains the state "not run"; it names nothing that did not run.
		case heading == "## Coverage" && strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| Subsystem |"):
			cells := strings.Split(strings.Trim(line, "| "), " | ")
			for j, cell := range cells[1:] {
				r.nameCell(&shown, row, j, cell)
			}
			row++
		default:
			r.nameLine(&shown, text)
		}
	}
	return shown
}

// shownOnTerminal reads report's stderr: the verdict line and one line per
// entry.
func (r reportedNotRun) shownOnTerminal(stderr string) shownNotRun {
	shown := shownNotRun{named: map[string]int{}}
	for _, line := range strings.Split(stderr, "\n") {
		if !notRunRE.MatchString(line) {
			continue
		}
		if strings.HasPrefix(line, "PASSED: ") || strings.HasPrefix(line, "FAILED: ") {
			if m := verdictCountRE.FindStringSubmatch(line); m != nil {
				shown.counted, _ = strconv.Atoi(m[1])
			}
			continue
		}
		shown.listed = append(shown.listed, line)
	}
	return shown
}

// TestNotRunOneSourceOfTruth: whatever a report shows as not run (a
// section, a suite --suite left out, a matrix cell whose results are
// missing or partial) is an entry of its not-run list, each entry is shown
// where it belongs, and the verdict counts the list, in index.html,
// report.md and on the terminal alike, in the same words. Before, the
// verdict counted optional sections only: with --suite the suites left out,
// the plugin check without conformance results, and the mutants and
// conformance comparisons a results file lacks all said "not run" on the
// page and went uncounted.
func TestNotRunOneSourceOfTruth(t *testing.T) {
	t.Chdir(t.TempDir())
	// Results for one of preemption's mutants and its one conformance
	// comparison: every other subsystem's are missing from them.
	partialMutants := filepath.Join(t.TempDir(), "mutants.json")
	require.NoError(t, os.WriteFile(partialMutants, []byte(`[{"id":"pr-distance-unsquared","subsystem":"preemption","killed":true,"killed_by":"PR-X"}]`), 0o644))
	partialConformance := filepath.Join(t.TempDir(), "conformance.json")
	require.NoError(t, os.WriteFile(partialConformance, []byte(`[{"function":"preemption.HandleAdmissionFailure","cases":3,"mismatches":0}]`), 0o644))

	for name, files := range map[string][]string{
		"no results files":      nil,
		"partial results files": {"--mutants", partialMutants, "--conformance", partialConformance},
	} {
		t.Run(name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"report", "--out", out, "--suite", "^preemption$", "--checks", "1", "--steps", "5",
				"--histories", "0", "--sim-seeds", "0"}, files...)
			status, _, stderr := runReport(properties.Suites(), verify.Findings(), args[1:]...)
			require.Equal(t, 0, status, stderr)
			reported := readReportedNotRun(t, out)
			require.NotEmpty(t, reported.entries)
			var want []string
			sections := map[string]bool{}
			for _, e := range reported.entries {
				want = append(want, e.words())
				sections[e.Section] = true
			}
			for renderer, shown := range map[string]shownNotRun{
				"index.html": reported.shownInHTML(read(t, out, "index.html")),
				"report.md":  reported.shownInMarkdown(read(t, out, "report.md")),
				"stderr":     reported.shownOnTerminal(stderr),
			} {
				assert.Equal(t, len(reported.entries), shown.counted, "%s: the verdict's count", renderer)
				assert.Equal(t, want, shown.listed, "%s: the not-run list, in the words of every renderer", renderer)
				assert.Empty(t, shown.unnamed, "%s: places that say not run and name no entry of the list", renderer)
				if renderer == "stderr" {
					continue
				}
				for s := range sections {
					assert.Positive(t, shown.named[s], "%s: entry %q is shown nowhere but in the list", renderer, s)
				}
			}
		})
	}
}
