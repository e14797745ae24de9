package reportview

import (
	"fmt"
	"strings"

	"github.com/nodeproof/nodeproof/findings"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/verify"
)

// Finding is one known kubelet finding as the report shows it: what verify
// registers about it, what this report's suites saw of it and, when
// make findings ran, its search.
type Finding struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	Subsystem string   `json:"subsystem"`
	Suite     string   `json:"suite"`
	Property  string   `json:"property"`
	Promise   string   `json:"promise"`
	Sources   []Source `json:"sources"`
	Steps     []string `json:"steps"`
	// Replay searches for the finding and prints its shrunk case.
	Replay       string `json:"replay"`
	Confirmation string `json:"confirmation"`
	// RealKubelet names the test that shows it on the real kubelet
	// binary, or says why none does.
	RealKubelet string `json:"real_kubelet"`
	// Tracker is empty when no upstream issue tracks the finding, which
	// TrackerNote then says.
	Tracker     []Source `json:"tracker"`
	TrackerNote string   `json:"tracker_note,omitempty"`
	// Releases says what later releases do about it.
	Releases string `json:"releases"`
	// Breaches counts the breaches of the property this report's suite run
	// counted instead of failing (-1: the suite did not run); FirstBreach
	// is the first one's message.
	Breaches    int    `json:"breaches"`
	FirstBreach string `json:"first_breach,omitempty"`
	// Search is nodeproof findings' search for it; null when not run.
	Search *findings.Result `json:"search"`
	// searched says whether the report was given a findings file, which
	// Search may still lack.
	searched bool
}

// Sources converts an invariant's or a finding's sources for report.json;
// never nil, so that none shows [] rather than null.
func Sources(sources []properties.Source) []Source {
	out := make([]Source, len(sources))
	for i, s := range sources {
		out[i] = Source{Kind: string(s.Kind), Text: s.Text, URL: s.URL}
	}
	return out
}

// newFindings lists every known finding with what the suites that ran saw
// of it and the searches read from a findings file (nil: not run).
func newFindings(known []verify.Finding, suites []Suite, searches *findings.File) []Finding {
	out := []Finding{}
	for _, f := range known {
		r := Finding{ID: f.ID, Title: f.Title, Subsystem: f.Subsystem, Suite: f.Suite, Property: f.Property,
			Promise: f.Promise, Sources: Sources(f.Sources), Steps: f.Steps, Replay: "nodeproof findings " + f.ID,
			Confirmation: f.Confirmation, RealKubelet: f.RealKubelet, Tracker: Sources(f.Tracker), Releases: f.Releases, Breaches: -1, searched: searches != nil}
		if len(f.Tracker) == 0 {
			r.TrackerNote = verify.NoTracker
		}
		for _, s := range suites {
			if s.Name != f.Suite {
				continue
			}
			for _, inv := range s.Invariants {
				if inv.ID == f.Property {
					r.Breaches, r.FirstBreach = inv.Breaches, inv.FirstBreach
				}
			}
		}
		if searches != nil {
			for i := range searches.Findings {
				if searches.Findings[i].ID == f.ID {
					r.Search = &searches.Findings[i]
				}
			}
		}
		out = append(out, r)
	}
	return out
}

// findingProblems are the verdict's words on the findings: a known
// finding makes nothing red, but one its search no longer reproduces, or
// a findings file that lacks a known finding, does.
func findingProblems(list []Finding, searched bool) []string {
	var problems []string
	for _, f := range list {
		switch {
		case !searched:
		case f.Search == nil:
			problems = append(problems, fmt.Sprintf("finding %s was not searched for in the findings file: run make findings again", f.ID))
		case !f.Search.Reproduced:
			problems = append(problems, fmt.Sprintf("finding %s no longer reproduces (%s in suite %s): run %s", f.ID, f.Property, f.Suite, f.Replay))
		}
	}
	return problems
}

// violationsCell is an invariant's violations, with the breaches a known
// finding explains beside them.
func violationsCell(inv Invariant) string {
	if inv.Breaches == 0 {
		return fmt.Sprint(inv.Violations)
	}
	return fmt.Sprintf("%d (+%d explained by a known finding)", inv.Violations, inv.Breaches)
}

// SearchText says what the findings search found, in a line.
func (f Finding) SearchText() string {
	switch {
	case f.Search == nil && !f.searched:
		// The words of the findings search's entry of the not-run list.
		return "findings search not run"
	case f.Search == nil:
		return "missing from the findings file: run make findings again"
	case !f.Search.Reproduced:
		return "NO LONGER REPRODUCES: " + f.Replay
	}
	return f.Search.Summary()
}

// BreachText says what this report's suite run saw of the finding.
func (f Finding) BreachText() string {
	switch {
	case f.Breaches < 0:
		return "suite " + f.Suite + " not run in this report"
	case f.Breaches == 0:
		return "not reached by this report's run of suite " + f.Suite
	}
	return fmt.Sprintf("reached %d times by this report's run of suite %s", f.Breaches, f.Suite)
}

// TrackerText is the tracker's sources, or the note that none was found.
func (f Finding) TrackerText() string {
	if len(f.Tracker) == 0 {
		return f.TrackerNote
	}
	texts := make([]string, len(f.Tracker))
	for i, t := range f.Tracker {
		texts[i] = t.Text
	}
	return strings.Join(texts, "; ")
}
