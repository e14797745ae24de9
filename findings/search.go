package findings

import (
	"fmt"
	"slices"
	"time"

	"github.com/nodeproof/nodeproof/properties"
	// The suites register themselves with properties when imported.
	_ "github.com/nodeproof/nodeproof/properties/suites"
	"github.com/nodeproof/nodeproof/verify"
)

// The budget of every search is the suites' default one in `go test
// ./...` and the report: a finding must be reachable at it.
const (
	Checks = 300
	Steps  = 100
)

// Search is one search for a finding from one seed.
type Search struct {
	Seed       uint64  `json:"seed"`
	Found      bool    `json:"found"`
	Other      string  `json:"other,omitempty"`
	FoundAfter float64 `json:"found_after_seconds"`
	Seconds    float64 `json:"seconds"`
	Cases      int     `json:"cases"`
	// Steps is the shrunk case's length, Shrunk its lines.
	Steps  int      `json:"steps"`
	Shrunk []string `json:"shrunk,omitempty"`
	Replay string   `json:"replay,omitempty"`
}

// Result is one finding's searches and what they add up to.
type Result struct {
	ID       string   `json:"id"`
	Suite    string   `json:"suite"`
	Property string   `json:"property"`
	Searches []Search `json:"searches"`
	// Reproduced: found from the finding's own seed, or in a sweep from at
	// least one seed, and no other invariant failed.
	Reproduced bool `json:"reproduced"`
	// The medians are over the searches that found it.
	MedianFoundAfter float64 `json:"median_found_after_seconds"`
	MedianSteps      float64 `json:"median_steps"`
}

// File is what `nodeproof findings --json` writes.
type File struct {
	Checks   int      `json:"checks"`
	Steps    int      `json:"steps"`
	Findings []Result `json:"findings"`
}

// Searcher runs one search; properties.SearchFinding is the real one.
type Searcher func(f verify.Finding, seed uint64, checks, steps int, shrink time.Duration) (properties.Search, error)

// Options say how Run searches.
type Options struct {
	// Seeds, when set, are searched from for every finding (a sweep);
	// otherwise each finding is searched from its own seed.
	Seeds []uint64
	// Shrink bounds rapid's shrinking of each case found; 0 is rapid's.
	Shrink time.Duration
	// Starting is called before each search, so that a caller can print
	// the seed before the work; Searched after it, with its outcome.
	Starting func(f verify.Finding, seed uint64)
	Searched func(f verify.Finding, s Search)
}

// Run searches for every finding in turn and returns the File.
func Run(all []verify.Finding, search Searcher, opts Options) (File, error) {
	out := File{Checks: Checks, Steps: Steps, Findings: []Result{}}
	for _, f := range all {
		seeds := opts.Seeds
		if seeds == nil {
			seeds = []uint64{f.Seed}
		}
		r := Result{ID: f.ID, Suite: f.Suite, Property: f.Property}
		for _, seed := range seeds {
			if opts.Starting != nil {
				opts.Starting(f, seed)
			}
			got, err := search(f, seed, Checks, Steps, opts.Shrink)
			if err != nil {
				return out, err
			}
			s := Search{Seed: got.Seed, Found: got.Found, Other: got.Other, FoundAfter: got.FoundAfter,
				Seconds: got.Seconds, Cases: got.Cases, Steps: got.Steps}
			if got.Failure != nil {
				s.Shrunk, s.Replay = got.Failure.Steps, got.Failure.Replay
			}
			if opts.Searched != nil {
				opts.Searched(f, s)
			}
			r.Searches = append(r.Searches, s)
		}
		r.settle()
		out.Findings = append(out.Findings, r)
	}
	return out, nil
}

// settle derives whether the searches reproduced the finding, and the
// medians over those that found it.
func (r *Result) settle() {
	var found []Search
	other := false
	for _, s := range r.Searches {
		if s.Found {
			found = append(found, s)
		}
		other = other || s.Other != ""
	}
	r.Reproduced = len(found) > 0 && !other
	r.MedianFoundAfter = median(found, func(s Search) float64 { return s.FoundAfter })
	r.MedianSteps = median(found, func(s Search) float64 { return float64(s.Steps) })
}

// Found counts the searches that found the finding.
func (r Result) Found() int {
	n := 0
	for _, s := range r.Searches {
		if s.Found {
			n++
		}
	}
	return n
}

// Summary says what the searches found, in a line: one search's time and
// shrunk length, or a sweep's counts and medians.
func (r Result) Summary() string {
	if len(r.Searches) == 1 {
		s := r.Searches[0]
		if !s.Found {
			return fmt.Sprintf("not found from seed %d in %d cases", s.Seed, s.Cases)
		}
		return fmt.Sprintf("found from seed %d after %.2f s, shrunk to %d steps", s.Seed, s.FoundAfter, s.Steps)
	}
	return fmt.Sprintf("found from %d of %d seeds; median %.2f s to find, median %.0f shrunk steps",
		r.Found(), len(r.Searches), r.MedianFoundAfter, r.MedianSteps)
}

// median of the values f picks from searches; 0 without any.
func median(searches []Search, f func(Search) float64) float64 {
	if len(searches) == 0 {
		return 0
	}
	v := make([]float64, len(searches))
	for i, s := range searches {
		v[i] = f(s)
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
