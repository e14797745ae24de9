package reportview

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/simreport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMarkdownFitsAPullRequestComment fills a report far past GitHub's
// limit: report.md stays within it, keeps the verdict, the matrix and the
// first counterexample, and says it was cut.
func TestMarkdownFitsAPullRequestComment(t *testing.T) {
	data := finishedReport(t)
	failed := data.Suites[1]
	failed.Failure.Message = strings.Repeat("a long message line\n", 2000)
	for i := range 200 {
		s := failed
		s.Name = fmt.Sprintf("suite-%03d", i)
		data.Suites = append(data.Suites, s)
	}
	md := RenderMarkdown(data, MarkdownLimit)
	assert.LessOrEqual(t, len(md), MarkdownLimit)
	assert.True(t, strings.HasPrefix(md, "# nodeproof invariant report\n\n**FAILED: "), md[:200])
	assert.Contains(t, md, "| Subsystem | core |")
	assert.Contains(t, md, "### Counterexample: suite devicemanager, DM-EXCLUSIVE")
	assert.Contains(t, md, "Replay: `nodeproof replay --suite devicemanager --seed 59 --steps 100`")
	assert.Contains(t, md, "(cut; index.html has the whole message)")
	assert.Regexp(t, `\*\*Truncated:\*\* \d+ more parts of the report do not fit a pull-request comment`, md)

	small := RenderMarkdown(finishedReport(t), MarkdownLimit)
	assert.NotContains(t, small, "Truncated")
}

// TestReportFailsOnSimViolation: a simulated seed that broke an invariant
// fails the report, and the verdict, report.md and index.html give the
// invariant, the trace and the replay line.
func TestReportFailsOnSimViolation(t *testing.T) {
	data := syntheticReport(t)
	data.Suites = data.Suites[:1] // the passing suite only
	data.Mutants = nil
	replay := "nodeproof sim --seed 43 --hours 2 --pods 20 --faults 'plugin-crash=0.01'"
	v := simreport.Violation{Seed: 43, Invariant: "SIM-DEVICES", Message: "SIM-DEVICES: device d1 held by <p1> and p2",
		Event: "#9 1m0s plugin-crash: p", Trace: []string{"#8 50s pod-arrive: p1", "#9 1m0s plugin-crash: p"}, Replay: replay}
	data.Sim.Passed = false
	data.Sim.Violations = []simreport.Violation{v}
	data.Finish(testInventory, nil, 3)
	assert.False(t, data.Passed, "a report whose simulation broke an invariant passes")
	assert.Equal(t, []string{"sim: seed 43: SIM-DEVICES violated; replay: " + replay}, data.Verdict().Problems)

	md := RenderMarkdown(data, MarkdownLimit)
	assert.Contains(t, md, "| FAILED | 2 (42..43) |")
	assert.Contains(t, md, "### Counterexample: seed 43, SIM-DEVICES\n\n```text\nSIM-DEVICES: device d1 held by <p1> and p2\n\n#8 50s pod-arrive: p1\n#9 1m0s plugin-crash: p\n```")
	assert.Contains(t, md, "Replay: `"+replay+"`")

	var html bytes.Buffer
	require.NoError(t, WriteHTML(&html, data))
	assert.Contains(t, html.String(), `<h3 class="failed">Counterexample: seed 43, SIM-DEVICES</h3>`)
	assert.Contains(t, html.String(), "SIM-DEVICES: device d1 held by &lt;p1&gt; and p2\n\n#8 50s pod-arrive: p1\n#9 1m0s plugin-crash: p\n</code></pre>")
	assert.Contains(t, html.String(), `<code class="replay">nodeproof sim --seed 43 --hours 2 --pods 20 --faults &#39;plugin-crash=0.01&#39;</code>`)
}
