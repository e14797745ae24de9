package score

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// The statuses gremlins writes into its JSON report.
const (
	StatusKilled     = "KILLED"
	StatusLived      = "LIVED"
	StatusNotCovered = "NOT COVERED"
	StatusTimedOut   = "TIMED OUT"
	StatusNotViable  = "NOT VIABLE"
)

// The verdicts a row of the survivors table gives.
const (
	VerdictFixed      = "fixed"      // a stronger test now kills it
	VerdictEquivalent = "equivalent" // no test can tell it from the original
	VerdictOpen       = "open"       // a test could kill it; none does yet
)

// Mutant is one mutant of the report. File is relative to the module root.
type Mutant struct {
	File    string
	Line    int
	Column  int
	Mutator string
	Status  string
}

// Key names a mutant as the survivors table does: file:line:column and the
// mutator, which together tell apart the mutants gremlins makes of one token.
func (m Mutant) Key() string { return fmt.Sprintf("%s:%d:%d %s", m.File, m.Line, m.Column, m.Mutator) }

// Report is what one gremlins run found.
type Report struct {
	Mutants []Mutant
	Seconds float64 // how long gremlins spent testing mutants
	// Dirs are the directories the run mutated, relative to the module
	// root (core/pod). Table rows about other directories are not judged
	// against it: a run of some directories says nothing about the rest.
	Dirs []string
}

// gremlinsReport is the part of gremlins' --output file this package reads.
type gremlinsReport struct {
	Files []struct {
		Name      string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
	ElapsedSeconds float64 `json:"elapsed_time"`
}

// measured reports whether the mutant a table key names lies in one of the
// run's directories (a report without Dirs covers every row).
func (r Report) measured(key string) bool {
	if len(r.Dirs) == 0 {
		return true
	}
	for _, d := range r.Dirs {
		if strings.HasPrefix(key, d+"/") {
			return true
		}
	}
	return false
}

// Decode reads gremlins' JSON report. gremlins names files relative to the
// directory it mutated; dir (core) makes them relative to the module root.
func Decode(r io.Reader, dir string) (Report, error) {
	var in gremlinsReport
	if err := json.NewDecoder(r).Decode(&in); err != nil {
		return Report{}, fmt.Errorf("gremlins report: %v", err)
	}
	known := []string{StatusKilled, StatusLived, StatusNotCovered, StatusTimedOut, StatusNotViable}
	out := Report{Seconds: in.ElapsedSeconds}
	if dir != "" {
		out.Dirs = []string{dir}
	}
	for i, f := range in.Files {
		if f.Name == "" {
			return Report{}, fmt.Errorf("gremlins report: files[%d].file_name is empty", i)
		}
		for j, m := range f.Mutations {
			if !slices.Contains(known, m.Status) {
				return Report{}, fmt.Errorf("gremlins report: files[%d].mutations[%d].status %q is none of %s", i, j, m.Status, strings.Join(known, ", "))
			}
			if m.Type == "" || m.Line < 1 {
				return Report{}, fmt.Errorf("gremlins report: files[%d].mutations[%d] needs a type and a line of at least 1", i, j)
			}
			out.Mutants = append(out.Mutants, Mutant{
				File: strings.TrimPrefix(dir+"/"+f.Name, "/"), Line: m.Line, Column: m.Column, Mutator: m.Type, Status: m.Status,
			})
		}
	}
	return out, nil
}

// Verdict is one row of the survivors table.
type Verdict struct {
	Key     string // as Mutant.Key
	Verdict string // VerdictFixed, VerdictEquivalent or VerdictOpen
	Line    int    // the row's line in the document, for error messages
}

// ParseTable reads the survivors table of docs/mutation.md: every row whose
// first cell is a `file:line:column` in back quotes, then the mutator, then
// the verdict.
func ParseTable(doc io.Reader) ([]Verdict, error) {
	var out []Verdict
	seen := map[string]int{}
	sc := bufio.NewScanner(doc)
	for n := 1; sc.Scan(); n++ {
		cells := strings.Split(sc.Text(), "|")
		if len(cells) < 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		position := strings.Trim(strings.TrimSpace(cells[1]), "`")
		if parts := strings.Split(position, ":"); len(parts) != 3 || !isNumber(parts[1]) || !isNumber(parts[2]) {
			return nil, fmt.Errorf("line %d: the first cell %q must be file:line:column", n, position)
		}
		v := Verdict{Key: position + " " + strings.TrimSpace(cells[2]), Verdict: strings.TrimSpace(cells[3]), Line: n}
		if !slices.Contains([]string{VerdictFixed, VerdictEquivalent, VerdictOpen}, v.Verdict) {
			return nil, fmt.Errorf("line %d: status %q must be fixed, equivalent or open", n, v.Verdict)
		}
		if first, dup := seen[v.Key]; dup {
			return nil, fmt.Errorf("line %d: %s is already listed on line %d", n, v.Key, first)
		}
		seen[v.Key] = n
		out = append(out, v)
	}
	return out, sc.Err()
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// Summary is the score of a run against the survivors table.
type Summary struct {
	Killed, Lived, Equivalent, NotCovered, TimedOut, NotViable int
	Seconds                                                    float64
	// Problems are what makes the table untrue: survivors it does not list,
	// "fixed" rows whose mutant lives, rows whose mutant no longer lives.
	Problems []string
	// Unmeasured counts the table's rows about directories the run did
	// not mutate, which it cannot confirm or refute.
	Unmeasured int
}

// Score is killed / (killed + lived), leaving out the lived mutants the
// table shows to be equivalent; 0 when nothing was judged.
func (s Summary) Score() float64 {
	judged := s.Killed + s.Lived - s.Equivalent
	if judged == 0 {
		return 0
	}
	return float64(s.Killed) / float64(judged)
}

// Summarize counts the report's mutants and checks the table against it.
func Summarize(r Report, table []Verdict) Summary {
	s := Summary{Seconds: r.Seconds}
	byKey := map[string]Verdict{}
	for _, v := range table {
		byKey[v.Key] = v
	}
	status := map[string]string{}
	for _, m := range r.Mutants {
		status[m.Key()] = m.Status
		switch m.Status {
		case StatusKilled:
			s.Killed++
		case StatusNotCovered:
			s.NotCovered++
		case StatusTimedOut:
			s.TimedOut++
		case StatusNotViable:
			s.NotViable++
		case StatusLived:
			s.Lived++
			v, listed := byKey[m.Key()]
			switch {
			case !listed:
				s.Problems = append(s.Problems, fmt.Sprintf("%s lived and is not in the table", m.Key()))
			case v.Verdict == VerdictEquivalent:
				s.Equivalent++
			case v.Verdict == VerdictFixed:
				s.Problems = append(s.Problems, fmt.Sprintf("line %d: %s is marked fixed but lived", v.Line, m.Key()))
			}
		}
	}
	for _, v := range table {
		if !r.measured(v.Key) {
			s.Unmeasured++
			continue
		}
		got, found := status[v.Key]
		switch {
		case !found:
			// The code moved or changed: the row no longer names a mutant.
			s.Problems = append(s.Problems, fmt.Sprintf("line %d: %s is not a mutant of this run", v.Line, v.Key))
		case v.Verdict != VerdictFixed && got != StatusLived:
			s.Problems = append(s.Problems, fmt.Sprintf("line %d: %s is marked %s but is %s in this run", v.Line, v.Key, v.Verdict, got))
		}
	}
	return s
}
