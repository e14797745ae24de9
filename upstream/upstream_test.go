package upstream

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/verify"
)

// TestVerdictLine: a verdict survives its trip through a test's log, with
// the runner's indentation and file prefix before it.
func TestVerdictLine(t *testing.T) {
	for _, v := range []Verdict{
		{Finding: "GC-F1", Release: "v1.37.2", Present: true},
		{Finding: "PB-F2", Release: "v1.38.0-beta.0", Detail: "the replacement failed 3 probes: the promise is kept"},
		{Finding: "CG-F2", Release: "v1.35.4", Inapplicable: "v1.35 has no memoryReservationPolicy"},
	} {
		got, ok := ParseVerdict("    release_test.go:50: " + v.Line())
		require.True(t, ok, v.Line())
		assert.Equal(t, v, got)
	}
	_, ok := ParseVerdict("    some other log line")
	assert.False(t, ok)
}

// events is a test2json stream: a finding test whose subtests log
// verdicts, a comparison that fails, one that passes, a skipped test.
const events = `{"Action":"run","Test":"TestFindingX"}
{"Action":"output","Test":"TestFindingX/a","Output":"    release_test.go:50: nodeproof-matrix: finding X-F1 on v1.37.2: present\n"}
{"Action":"output","Test":"TestFindingX/b","Output":"    release_test.go:50: nodeproof-matrix: finding X-F1 on v1.37.2: absent: kept\n"}
{"Action":"pass","Test":"TestFindingX/a"}
{"Action":"pass","Test":"TestFindingX/b"}
{"Action":"pass","Test":"TestFindingX","Elapsed":0.5}
{"Action":"output","Test":"TestCompare","Output":"    harness.go:9: mismatch on input 3\n"}
{"Action":"fail","Test":"TestCompare","Elapsed":2}
{"Action":"pass","Test":"TestOther","Elapsed":1}
{"Action":"output","Test":"TestSkipped","Output":"    x_test.go:1: no host\n"}
{"Action":"skip","Test":"TestSkipped"}
{"Action":"pass"}
`

func TestEvents(t *testing.T) {
	var ended []string
	e := NewEvents(func(t Test) { ended = append(ended, t.Name) })
	require.NoError(t, e.Read(strings.NewReader(events)))
	assert.Equal(t, []string{"TestFindingX", "TestCompare", "TestOther", "TestSkipped"}, ended)
	tests := e.Tests()
	require.Len(t, tests, 4)
	assert.True(t, tests[0].Passed)
	assert.Equal(t, 0.5, tests[0].Seconds)
	assert.Equal(t, []Verdict{{Finding: "X-F1", Release: "v1.37.2", Present: true}, {Finding: "X-F1", Release: "v1.37.2", Detail: "kept"}}, tests[0].Verdicts)
	assert.False(t, tests[1].Passed)
	assert.Contains(t, tests[1].Failure, "mismatch on input 3")
	assert.False(t, tests[3].Passed, "a skipped test checked nothing")
	assert.Contains(t, tests[3].Failure, "skipped: ")

	err := NewEvents(nil).Read(strings.NewReader("{\"Action\":\"pass\"}\nbuild failed\n"))
	assert.ErrorContains(t, err, "test events, line 2: not a test2json event")
}

func TestReplay(t *testing.T) {
	r, err := Find("v1.37.2")
	require.NoError(t, err)
	assert.Equal(t, "cd conformance && go test -count=1 -modfile=releases/v1.37.2.mod -tags=kubelet1.37 -run '^TestX$' .", r.Replay("TestX"))
	m, err := Find(Modelled)
	require.NoError(t, err)
	assert.Equal(t, "cd conformance && go test -count=1 -run '^TestX$' .", m.Replay("TestX"))
	_, err = Find("v1.99.0")
	assert.ErrorContains(t, err, `release "v1.99.0": not one the matrix covers (v1.35.4, v1.36.3, v1.37.2, v1.38.0-beta.0)`)
}

func verdict(id, release string, present bool) Verdict {
	return Verdict{Finding: id, Release: release, Present: present, Detail: map[bool]string{false: "kept"}[present]}
}

// TestBuild: each cell state from what a column says, oldest release
// first, and a record a cell contradicts.
func TestBuild(t *testing.T) {
	findings := []verify.Finding{
		{ID: "A-F1", Title: "a", Confirmation: "conformance: TestFindingA", Releases: "still present in v1.37.2"},
		{ID: "B-F1", Title: "b", Confirmation: "conformance: TestFindingB", Releases: "fixed in v1.37.2 by kubernetes PR #1"},
		{ID: "C-F1", Title: "c", Confirmation: "realkubelet/scenario: TestFindingC"},
		{ID: "D-F1", Title: "d", Confirmation: "conformance: TestFindingD"},
	}
	columns := []Column{
		{Release: "v1.37.2", Tests: []Test{
			{Name: "TestFindingA", Passed: true, Verdicts: []Verdict{verdict("A-F1", "v1.37.2", true), verdict("A-F1", "v1.37.2", false)}},
			{Name: "TestFindingB", Passed: true, Verdicts: []Verdict{verdict("B-F1", "v1.37.2", false)}},
			{Name: "TestCompare", Failure: "mismatch"},
			// The harness cannot drive v1.37.2: not a fix.
			{Name: "TestFindingD", Failure: "=== RUN   TestFindingD\n    assertions.go:387: \n        \tError Trace:\t/src/conformance/finding_d_test.go:76\n        \tError:      \tCondition never satisfied\n        \tMessages:   \tthe node's devices\n--- FAIL: TestFindingD (2.05s)"},
		}},
		{Release: Modelled, Tests: []Test{
			{Name: "TestFindingA", Passed: true, Verdicts: []Verdict{verdict("A-F1", Modelled, true)}},
			{Name: "TestFindingB", Passed: true},
			{Name: "TestCompare", Passed: true},
			{Name: "TestFindingD", Passed: true, Verdicts: []Verdict{verdict("D-F1", Modelled, true)}},
		}},
		{Release: "v1.38.0-beta.0", Error: "the conformance module does not build against v1.38.0-beta.0: exit status 1\nmore"},
	}
	m := Build(findings, columns)
	assert.Equal(t, []string{Modelled, "v1.37.2", "v1.38.0-beta.0"}, []string{m.Columns[0].Release, m.Columns[1].Release, m.Columns[2].Release})
	states := func(cells []Cell) []string {
		var s []string
		for _, c := range cells {
			s = append(s, c.State)
		}
		return s
	}
	require.Len(t, m.Findings, 4)
	assert.Equal(t, []string{Present, Mixed, NotRun}, states(m.Findings[0].Cells))
	assert.Equal(t, "1 of 2 cases show the bug; the others: kept", m.Findings[0].Cells[1].Detail)
	assert.Empty(t, m.Findings[0].Contradicted, "mixed is neither present nor absent")
	assert.Equal(t, []string{Broken, Absent, NotRun}, states(m.Findings[1].Cells))
	assert.Contains(t, m.Findings[1].Cells[0].Detail, "logged no verdict on B-F1")
	assert.Empty(t, m.Findings[1].Contradicted)
	assert.Equal(t, []string{NotRun, NotRun, NotRun}, states(m.Findings[2].Cells))
	assert.Contains(t, m.Findings[2].Cells[0].Detail, "confirmed on the real kubelet binary")
	assert.Equal(t, []string{Present, Broken, NotRun}, states(m.Findings[3].Cells))

	// A release without what the finding is about.
	columns[0].Tests[1].Verdicts = []Verdict{{Finding: "B-F1", Release: "v1.37.2", Inapplicable: "no such feature"}}
	na := Build(findings[1:2], columns)
	assert.Equal(t, NotApplicable, na.Findings[0].Cells[1].State)
	assert.Equal(t, "no such feature", na.Findings[0].Cells[1].Detail)
	assert.Empty(t, na.Findings[0].Contradicted, "not applicable contradicts no record")
	columns[0].Tests[1].Verdicts = []Verdict{verdict("B-F1", "v1.37.2", false)}
	require.Len(t, m.Tests, 1)
	assert.Equal(t, []string{Agrees, Differs, NotRun}, states(m.Tests[0].Cells))
	assert.Equal(t, "cd conformance && go test -count=1 -modfile=releases/v1.37.2.mod -tags=kubelet1.37 -run '^TestCompare$' .", m.Tests[0].Cells[1].Replay)
	assert.Equal(t, []string{
		"v1.38.0-beta.0: the conformance module does not build against v1.38.0-beta.0: exit status 1",
		"B-F1 on v1.36.3: TestFindingB broke: TestFindingB passed but logged no verdict on B-F1",
		"D-F1 on v1.37.2: TestFindingD broke: Condition never satisfied: the node's devices (finding_d_test.go:76)",
	}, m.Failures())

	// The record says present; the release keeps the promise.
	columns[0].Tests[0].Verdicts = []Verdict{verdict("A-F1", "v1.37.2", false)}
	m = Build(findings[:1], columns)
	assert.Equal(t, []string{"v1.37.2"}, m.Findings[0].Contradicted)
	assert.Contains(t, m.Failures(), `A-F1: the record says "still present in v1.37.2", the matrix says otherwise on v1.37.2`)
}

// TestContractVerdicts: a contract verdict survives the log, and the
// matrix gives each state, the replay naming the subtest that searched.
func TestContractVerdicts(t *testing.T) {
	v := ContractVerdict{Property: "PR-C-X", Release: "v1.37.2", Test: "TestUpstreamContracts/preemption/PR-C-X", Checked: 200, Applied: 12, Breached: true, Detail: "PR-C-X: the static pod was the victim; steps: 1. podArrives"}
	got, ok := ParseContractVerdict("    release_test.go:9: " + v.Line())
	require.True(t, ok, v.Line())
	assert.Equal(t, v, got)

	held := v
	held.Breached, held.Detail, held.Release = false, "", Modelled
	none := ContractVerdict{Property: "PR-C-Y", Release: Modelled, Test: "TestUpstreamContracts/preemption/PR-C-Y", Checked: 200}
	inexpressible := none
	inexpressible.Release, inexpressible.Detail = "v1.35.4", "the release has no such policy"
	got, ok = ParseContractVerdict(inexpressible.Line())
	require.True(t, ok, inexpressible.Line())
	assert.Equal(t, inexpressible, got)
	columns := []Column{
		{Release: "v1.35.4", Tests: []Test{{Name: "TestUpstreamContracts", Passed: true, Contracts: []ContractVerdict{inexpressible}}}},
		{Release: Modelled, Tests: []Test{{Name: "TestUpstreamContracts", Passed: true, Contracts: []ContractVerdict{held, none}}}},
		{Release: "v1.37.2", Tests: []Test{{Name: "TestUpstreamContracts", Passed: true, Contracts: []ContractVerdict{v}}}},
	}
	m := Build(nil, columns)
	require.Len(t, m.Contracts, 2)
	assert.Equal(t, NotRun, m.Contracts[0].Cells[0].State)
	assert.Equal(t, NotApplicable, m.Contracts[1].Cells[0].State)
	assert.Equal(t, "checked 200, applied in none: the release has no such policy", m.Contracts[1].Cells[0].Detail)
	columns = columns[1:]
	m = Build(nil, columns)
	assert.Empty(t, m.Tests, "a suite's search is not a comparison row")
	assert.Equal(t, Held, m.Contracts[0].Cells[0].State)
	assert.Equal(t, Breached, m.Contracts[0].Cells[1].State)
	assert.Equal(t, "checked 200, applied 12: PR-C-X: the static pod was the victim; steps: 1. podArrives", m.Contracts[0].Cells[1].Detail)
	assert.Equal(t, "cd conformance && go test -count=1 -modfile=releases/v1.37.2.mod -tags=kubelet1.37 -run '^TestUpstreamContracts$/^preemption$/^PR-C-X$' .", m.Contracts[0].Cells[1].Replay)
	assert.Equal(t, NotApplicable, m.Contracts[1].Cells[0].State)
	assert.Equal(t, NotRun, m.Contracts[1].Cells[1].State)
	assert.Empty(t, m.Failures(), "a breach is the matrix's content, not a failure")
	assert.Contains(t, Text(m), "PR-C-X on v1.37.2: breached: checked 200, applied 12")
}
