package properties

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// Source is one place an invariant comes from; build it with cite's
// constructors (cite.Code, cite.Issue, cite.Seed, ...).
type Source = cite.Source

// Suite is one rapid state machine with the invariants it checks.
type Suite struct {
	Name      string
	Subsystem string
	// Invariants are the statements the suite checks after every step. IDs
	// are stable and unique across all suites (for example
	// "DM-EXCLUSIVE"): a violation message starts with one, so tools can
	// attribute a failure. Every invariant has at least one source, and a
	// contract invariant cites the Kubernetes documentation or a KEP, never
	// upstream's code, and reports a violation through Tally.Breach.
	Invariants []verify.Property
	// Property runs one generated case. It reports every action it takes and every
	// invariant it checks to tally, which the report turns into its tables.
	Property func(t *rapid.T, tally *Tally)
}

// Tally counts what a suite did. It is not safe for concurrent use; rapid runs
// one case at a time.
type Tally struct {
	Cases   int
	Steps   int
	Actions map[string]int
	// Checked counts evaluations: each time an invariant's check ran.
	Checked map[string]int
	// Applied counts the evaluations where the invariant had something to
	// compare (two holdings of one resource, a Burstable pod lacking a
	// limit, a preemption that chose victims): a check that runs on an
	// empty node passes without saying anything, and the report shows both
	// figures so that a reader sees how often each statement was put to the
	// test.
	Applied map[string]int
	// Stats summarise the values observed for each statistic, by name.
	Stats map[string]*Stat
	// Breaches counts the violations of contract properties that a known
	// finding explains (verify.Findings), which Breach records instead of
	// failing the case; FirstBreach keeps the first message of each, the
	// evidence the report shows that the search reached the finding.
	Breaches    map[string]int
	FirstBreach map[string]string
	// enforced are the contract properties whose breach fails the case even
	// though a known finding explains it; all of them when enforceAll.
	enforced   map[string]bool
	enforceAll bool
}

// Stat summarises the values observed for one statistic: a measurement
// that is not pass or fail, such as how far a greedy choice is from the
// best one. The report shows the number of samples, the mean, the maximum
// and how many samples were not zero.
type Stat struct {
	Samples int
	Sum     float64
	Max     float64
	Nonzero int
}

// Mean is the average sample, 0 without samples.
func (s *Stat) Mean() float64 {
	if s.Samples == 0 {
		return 0
	}
	return s.Sum / float64(s.Samples)
}

// NewTally returns an empty tally.
func NewTally() *Tally {
	return &Tally{Actions: map[string]int{}, Checked: map[string]int{}, Applied: map[string]int{}, Stats: map[string]*Stat{},
		Breaches: map[string]int{}, FirstBreach: map[string]string{}}
}

// Breach reports that the contract property id does not hold. A breach no
// known finding explains fails the case, as any violation does; one a known
// finding explains is counted in Breaches and the case goes on, so that the
// known bug neither hides the other checks nor turns every run red. A run
// that searches for a finding (RunOptions.Enforce) or replays a case
// (RunOptions.EnforceAll) makes the breach fail the case again, so that
// rapid shrinks it.
func (t *Tally) Breach(rt *rapid.T, id, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if t.enforceAll || t.enforced[id] || !explained(id) {
		rt.Fatalf("%s: %s", id, msg)
		return
	}
	t.Breaches[id]++
	if _, seen := t.FirstBreach[id]; !seen {
		t.FirstBreach[id] = id + ": " + msg
	}
}

// Observe records one sample of a statistic. Names are sentences a reader
// understands without the code, with the unit ("excess victims over the
// fewest possible, per preemption").
func (t *Tally) Observe(name string, value float64) {
	s := t.Stats[name]
	if s == nil {
		s = &Stat{}
		t.Stats[name] = s
	}
	if s.Samples == 0 || value > s.Max {
		s.Max = value
	}
	s.Samples++
	s.Sum += value
	if value != 0 {
		s.Nonzero++
	}
}

// Case records the start of one generated case.
func (t *Tally) Case() { t.Cases++ }

// Action records one executed state machine step.
func (t *Tally) Action(name string) {
	t.Steps++
	t.Actions[name]++
}

// Check records one evaluation of an invariant, and whether it applied:
// whether the statement had something to compare in this state. Every call
// site says in a comment what applying means for its invariant.
func (t *Tally) Check(id string, applied bool) {
	t.Checked[id]++
	if applied {
		t.Applied[id]++
	}
}

// Steps numbers the steps of one generated case. Begin logs a step as
// "step N: action details", the lines a shrunk failure prints, and counts
// the action in the tally.
type Steps struct {
	t     *rapid.T
	tally *Tally
	n     int
}

// NewSteps numbers t's steps, counting their actions in tally.
func NewSteps(t *rapid.T, tally *Tally) Steps { return Steps{t: t, tally: tally} }

// Begin logs the next step and counts its action.
func (s *Steps) Begin(action, format string, args ...any) {
	s.n++
	s.tally.Action(action)
	s.t.Logf("step %d: %s "+format, append([]any{s.n, action}, args...)...)
}

// Fail fails the case on a violation of the invariant id, with a message
// that starts with the ID, so that rapid's failure line names it.
func Fail(t *rapid.T, id, format string, args ...any) {
	t.Fatalf("%s: "+format, append([]any{id}, args...)...)
}

// Evaluate runs every check on s, counting each evaluation and whether
// it applied in tally: a fidelity check that does not hold fails the case,
// a contract check that does not hold is a Breach (which fails the case
// unless a known finding explains it). Suites whose checks are functions
// of a case (admission, preemption) run them through it.
func Evaluate[S any](t *rapid.T, tally *Tally, checks []verify.Check[S], s S) {
	for _, c := range checks {
		applies := c.Applies == nil || c.Applies(s)
		tally.Check(c.ID, applies)
		if !applies || c.Holds == nil {
			continue
		}
		if err := c.Holds(s); err != nil {
			if c.Kind == verify.Contract {
				tally.Breach(t, c.ID, "%v", err)
				continue
			}
			t.Fatalf("%s: %v", c.ID, err)
		}
	}
}

// CheckCounts records checked evaluations of an invariant at once, applied
// of them applying, as that many calls of Check would: a suite that counts
// a case's checks in slots of its own, cheaper than Check's two map
// updates after every step, hands them over when the case ends.
func (t *Tally) CheckCounts(id string, checked, applied int) {
	if checked > 0 {
		t.Checked[id] += checked
	}
	if applied > 0 {
		t.Applied[id] += applied
	}
}

// explained says whether a known finding explains breaches of a contract
// property; tests replace it to exercise Breach without a real finding.
var explained = verify.Explains

var registry []Suite

// Register adds a suite. Each suite's package calls it from init, and
// package properties/suites imports every suite's package, so that the test
// binary and the report see the same list.
func Register(s Suite) {
	for _, existing := range registry {
		if existing.Name == s.Name {
			panic(fmt.Sprintf("properties: suite %q registered twice", s.Name))
		}
	}
	registry = append(registry, s)
	sort.Slice(registry, func(i, j int) bool { return registry[i].Name < registry[j].Name })
}

// Suites returns every registered suite in name order.
func Suites() []Suite {
	return append([]Suite(nil), registry...)
}

// Lookup returns the suite with the given name.
func Lookup(name string) (Suite, bool) {
	for _, s := range registry {
		if s.Name == name {
			return s, true
		}
	}
	return Suite{}, false
}

// SuiteNames lists the names of suites, in their order.
func SuiteNames(suites []Suite) []string {
	names := make([]string, 0, len(suites))
	for _, s := range suites {
		names = append(names, s.Name)
	}
	return names
}

// Select returns the suites whose name matches re, or an error listing
// every name when none does; the caller names the flag or field re came
// from.
func Select(re *regexp.Regexp, suites []Suite) ([]Suite, error) {
	var selected []Suite
	for _, s := range suites {
		if re.MatchString(s.Name) {
			selected = append(selected, s)
		}
	}
	if len(selected) == 0 {
		names := "(none registered)"
		if len(suites) > 0 {
			names = strings.Join(SuiteNames(suites), ", ")
		}
		return nil, fmt.Errorf("%q matches no suite; suites: %s", re, names)
	}
	return selected, nil
}

// Invariants returns every invariant of every suite, in suite order.
func Invariants() []verify.Property {
	var all []verify.Property
	for _, s := range registry {
		all = append(all, s.Invariants...)
	}
	return all
}
