package properties

import (
	"fmt"
	"regexp"
	"time"

	"github.com/nodeproof/nodeproof/verify"
)

// Search is one search for a known finding from one base seed: its suite
// run at the given budget with the finding's contract property enforced,
// so that rapid stops at the first breach and shrinks it.
type Search struct {
	Finding verify.Finding
	Seed    uint64
	// Found: the search broke the finding's property. Other is the
	// invariant that failed instead, when another one did: a failure no
	// known finding explains.
	Found bool
	Other string
	// FoundAfter is the seconds until the first breaking case ended, and
	// Seconds the whole run's, shrinking included.
	FoundAfter, Seconds float64
	// Cases is how many generated cases ran up to and including the first
	// failing one.
	Cases int
	// Steps is the shrunk case's number of steps; Failure the case itself.
	Steps   int
	Failure *Failure
}

// SearchFinding searches f's suite from seed with rapid's default budget
// changed only by checks and steps (0 keeps rapid's default), shrinking the
// case it finds for at most shrink (0: rapid's default, 30 s).
func SearchFinding(f verify.Finding, seed uint64, checks, steps int, shrink time.Duration) (Search, error) {
	s, ok := Lookup(f.Suite)
	if !ok {
		return Search{}, fmt.Errorf("finding %s: no suite %q", f.ID, f.Suite)
	}
	return search(s, f, seed, checks, steps, shrink)
}

func search(s Suite, f verify.Finding, seed uint64, checks, steps int, shrink time.Duration) (Search, error) {
	if !s.declares(f.Property) {
		return Search{}, fmt.Errorf("finding %s: suite %s declares no invariant %s", f.ID, f.Suite, f.Property)
	}
	res := Run(s, RunOptions{Seed: seed, Checks: checks, Steps: steps, Enforce: []string{f.Property}, ShrinkTime: shrink})
	out := Search{Finding: f, Seed: res.Seed, Seconds: res.Seconds, Cases: res.Tally.Cases, Failure: res.Failure}
	if res.Failure == nil {
		return out, nil
	}
	out.FoundAfter = res.FoundAfter
	out.Steps = countSteps(res.Failure.Steps)
	if res.Failure.Invariant == f.Property {
		out.Found = true
	} else {
		out.Other = res.Failure.Invariant
	}
	return out, nil
}

// stepRE matches the first line of a shrunk case's step.
var stepRE = regexp.MustCompile(`^step \d+: `)

func countSteps(lines []string) int {
	n := 0
	for _, l := range lines {
		if stepRE.MatchString(l) {
			n++
		}
	}
	return n
}
