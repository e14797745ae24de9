package mutants

import (
	"fmt"
	"math"
	"strings"
)

// Row is one row of the kill matrix: what `nodeproof mutants --json`
// writes, one per mutant run, and what the report reads back.
type Row struct {
	ID        string `json:"id"`
	Subsystem string `json:"subsystem"`
	Source    string `json:"source"`
	Killed    bool   `json:"killed"`
	KilledBy  string `json:"killed_by"`
	// AlsoFailed are the header's other checks that failed in the same run.
	AlsoFailed []string `json:"also_failed,omitempty"`
	// Seed is the rapid seed of the killing case (0: a plain test) and Rerun
	// the go test command that repeats the kill on the patched tree.
	Seed    uint64  `json:"seed,omitempty"`
	Rerun   string  `json:"rerun,omitempty"`
	Seconds float64 `json:"seconds"`
	// Phases says where Seconds went; absent from kill matrices written
	// before it was measured.
	Phases *Phases `json:"phases,omitempty"`
}

// NewRow is r's row of the kill matrix, its times rounded to hundredths of
// a second.
func NewRow(r Result) Row {
	return Row{
		ID: r.ID, Subsystem: r.Subsystem, Source: r.Source, Killed: r.Killed,
		KilledBy: r.KilledBy, AlsoFailed: r.AlsoFailed, Seed: r.Seed, Rerun: r.Rerun, Seconds: centiseconds(r.Seconds),
		Phases: &Phases{
			Copy: centiseconds(r.Phases.Copy), Apply: centiseconds(r.Phases.Apply), Build: centiseconds(r.Phases.Build),
			Test: centiseconds(r.Phases.Test), Rerun: centiseconds(r.Phases.Rerun),
		},
	}
}

// Killers is the "killed by" cell: the killing check, then the header's
// other checks that failed in the same run.
func (m Row) Killers() string {
	if len(m.AlsoFailed) == 0 {
		return m.KilledBy
	}
	return m.KilledBy + " (also " + strings.Join(m.AlsoFailed, ", ") + ")"
}

// centiseconds rounds seconds to hundredths for the kill matrix.
func centiseconds(seconds float64) float64 {
	return math.Round(seconds*100) / 100
}

// Verdict says what r means for m in a few words, as the progress line of
// each mutant shows it: who killed it and with which seed, or why it does
// not count as killed.
func (r Result) Verdict(m Mutant) string {
	expected := strings.Join(m.Checks, " or ")
	switch r.Status {
	case StatusKilled:
		also := ""
		if len(r.AlsoFailed) > 0 {
			also = "; also failed: " + strings.Join(r.AlsoFailed, ", ")
		}
		if r.Seed != 0 {
			return fmt.Sprintf("killed by %s (seed %d)%s", r.KilledBy, r.Seed, also)
		}
		return "killed by " + r.KilledBy + also
	case StatusMisattributed:
		return fmt.Sprintf("MISATTRIBUTED: failed %s, expected %s", r.KilledBy, expected)
	case StatusNotReproduced:
		return fmt.Sprintf("NOT REPRODUCED: %s failed, but not again on `%s`", r.KilledBy, r.Rerun)
	case StatusTimedOut:
		return "TIMED OUT (a hang is not a kill)"
	case StatusSurvived:
		return "SURVIVED (expected " + expected + " to catch it)"
	case StatusDoesNotApply:
		return "DOES NOT APPLY"
	case StatusDoesNotCompile:
		return "DOES NOT COMPILE"
	default:
		return "ERROR"
	}
}
