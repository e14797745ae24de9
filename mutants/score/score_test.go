package score

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sampleReport = `{"go_module":"github.com/nodeproof/nodeproof","elapsed_time":12.5,"files":[
 {"file_name":"pod/qos.go","mutations":[
  {"type":"CONDITIONALS_BOUNDARY","status":"KILLED","line":10,"column":5},
  {"type":"CONDITIONALS_NEGATION","status":"LIVED","line":10,"column":5},
  {"type":"ARITHMETIC_BASE","status":"LIVED","line":20,"column":9},
  {"type":"ARITHMETIC_BASE","status":"LIVED","line":30,"column":9}]},
 {"file_name":"cgroups/pod.go","mutations":[
  {"type":"INVERT_NEGATIVES","status":"NOT COVERED","line":4,"column":2},
  {"type":"INVERT_NEGATIVES","status":"TIMED OUT","line":5,"column":2},
  {"type":"ARITHMETIC_BASE","status":"KILLED","line":6,"column":2},
  {"type":"ARITHMETIC_BASE","status":"KILLED","line":7,"column":2}]}]}`

func TestDecodeNamesFilesFromTheModuleRoot(t *testing.T) {
	r, err := Decode(strings.NewReader(sampleReport), "core")
	require.NoError(t, err)
	assert.Equal(t, 12.5, r.Seconds)
	require.Len(t, r.Mutants, 8)
	assert.Equal(t, Mutant{File: "core/pod/qos.go", Line: 10, Column: 5, Mutator: "CONDITIONALS_BOUNDARY", Status: StatusKilled}, r.Mutants[0])
	assert.Equal(t, "core/pod/qos.go:10:5 CONDITIONALS_NEGATION", r.Mutants[1].Key())
}

func TestDecodeRejectsWhatItCannotScore(t *testing.T) {
	for name, tc := range map[string]struct{ json, want string }{
		"not JSON":       {`{`, "gremlins report: unexpected EOF"},
		"unknown status": {`{"files":[{"file_name":"a.go","mutations":[{"type":"X","status":"RUNNABLE","line":1}]}]}`, `files[0].mutations[0].status "RUNNABLE" is none of`},
		"no file name":   {`{"files":[{"mutations":[]}]}`, "files[0].file_name is empty"},
		"no line":        {`{"files":[{"file_name":"a.go","mutations":[{"type":"X","status":"KILLED"}]}]}`, "files[0].mutations[0] needs a type and a line"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tc.json), "core")
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

const sampleTable = "| Mutant | Mutator | Status | Why |\n|---|---|---|---|\n" +
	"| `core/pod/qos.go:10:5` | CONDITIONALS_NEGATION | equivalent | both branches return the same |\n" +
	"| `core/pod/qos.go:20:9` | ARITHMETIC_BASE | open | a test with two containers would |\n" +
	"| `core/cgroups/pod.go:7:2` | ARITHMETIC_BASE | fixed | TestX now kills it |\n"

func TestSummarizeLeavesOutOnlyEquivalentSurvivors(t *testing.T) {
	r, err := Decode(strings.NewReader(sampleReport), "core")
	require.NoError(t, err)
	table, err := ParseTable(strings.NewReader(sampleTable))
	require.NoError(t, err)
	s := Summarize(r, table)
	assert.Equal(t, Summary{Killed: 3, Lived: 3, Equivalent: 1, NotCovered: 1, TimedOut: 1, Seconds: 12.5,
		Problems: []string{"core/pod/qos.go:30:9 ARITHMETIC_BASE lived and is not in the table"}}, s)
	// 3 killed of the 5 non-equivalent mutants that were judged.
	assert.InDelta(t, 0.6, s.Score(), 1e-9)
}

func TestSummarizeReportsRowsThatAreNoLongerTrue(t *testing.T) {
	r := Report{Mutants: []Mutant{
		{File: "core/a.go", Line: 1, Column: 1, Mutator: "M", Status: StatusLived},
		{File: "core/a.go", Line: 2, Column: 1, Mutator: "M", Status: StatusKilled},
	}}
	table := []Verdict{
		{Key: "core/a.go:1:1 M", Verdict: VerdictFixed, Line: 3},
		{Key: "core/a.go:2:1 M", Verdict: VerdictEquivalent, Line: 4},
		{Key: "core/a.go:9:1 M", Verdict: VerdictOpen, Line: 5},
	}
	assert.Equal(t, []string{
		"line 3: core/a.go:1:1 M is marked fixed but lived",
		"line 4: core/a.go:2:1 M is marked equivalent but is KILLED in this run",
		"line 5: core/a.go:9:1 M is not a mutant of this run",
	}, Summarize(r, table).Problems)
}

func TestParseTableRejectsBadRows(t *testing.T) {
	for name, tc := range map[string]struct{ row, want string }{
		"no column":       {"| `core/a.go:1` | M | open | x |", `line 1: the first cell "core/a.go:1" must be file:line:column`},
		"unknown verdict": {"| `core/a.go:1:2` | M | maybe | x |", `line 1: status "maybe" must be fixed, equivalent or open`},
		"listed twice":    {"| `core/a.go:1:2` | M | open | x |\n| `core/a.go:1:2` | M | open | y |", "line 2: core/a.go:1:2 M is already listed on line 1"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseTable(strings.NewReader(tc.row))
			assert.EqualError(t, err, tc.want)
		})
	}
}

func TestScoreOfNothingJudgedIsZero(t *testing.T) {
	assert.Zero(t, Summary{NotCovered: 3}.Score())
}

// TestSummarizeJudgesOnlyTheRunsDirectories: a run of some directories
// leaves the rows of the others alone (counted as unmeasured), while a row of
// a measured directory whose mutant is gone is still a problem.
func TestSummarizeJudgesOnlyTheRunsDirectories(t *testing.T) {
	r := Report{Dirs: []string{"core/pod"}, Mutants: []Mutant{
		{File: "core/pod/a.go", Line: 1, Column: 1, Mutator: "M", Status: StatusLived},
	}}
	table := []Verdict{
		{Key: "core/pod/a.go:1:1 M", Verdict: VerdictEquivalent, Line: 3},
		{Key: "core/pod/a.go:7:1 M", Verdict: VerdictFixed, Line: 4},
		{Key: "core/podx/b.go:1:1 M", Verdict: VerdictFixed, Line: 5},
		{Key: "core/cgroups/b.go:1:1 M", Verdict: VerdictFixed, Line: 6},
	}
	s := Summarize(r, table)
	assert.Equal(t, []string{"line 4: core/pod/a.go:7:1 M is not a mutant of this run"}, s.Problems)
	assert.Equal(t, 2, s.Unmeasured)
	assert.Equal(t, 1, s.Equivalent)
}
