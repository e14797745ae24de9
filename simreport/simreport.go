package simreport

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/verify"
)

// Seed is one seed's finished run and the wall time it took.
type Seed struct {
	Config  sim.Config
	Summary sim.Summary
	Seconds float64
}

// Explained are the contract invariants of the simulation that a known
// finding (verify.Findings) is about: a run counts their violations, the
// known broken promises of upstream's kubelet, and goes on.
func Explained() []string {
	var ids []string
	for _, f := range verify.Findings() {
		if f.Suite == "sim" {
			ids = append(ids, f.Property)
		}
	}
	return ids
}

// WriteSeed prints one seed's line and, on a violation, everything needed
// to act on it: the invariant, its message, the trace and the replay line.
func WriteSeed(w io.Writer, r Seed, width int) {
	st := r.Summary.Stats
	name := fmt.Sprintf("seed %d", r.Config.Seed)
	counts := fmt.Sprintf("%d events, %s simulated, %.1fs (%s simulated h/s, %s events/s)", st.Events,
		formatSimulated(st.Simulated), r.Seconds, phrase.Rate(st.Simulated.Hours(), r.Seconds), phrase.Rate(float64(st.Events), r.Seconds))
	if r.Summary.Violation == nil {
		fmt.Fprintf(w, "%-*s  passed  %s\n", width, name, counts)
		writeExplained(w, strings.Repeat(" ", width+10), st.Explained)
		return
	}
	v := NewViolation(r.Config.Seed, r.Summary)
	fmt.Fprintf(w, "%-*s  FAILED  %s after %s\n", width, name, v.Invariant, counts)
	WriteViolation(w, strings.Repeat(" ", width+10), *v)
}

// writeExplained says how often a known finding's broken promise was seen
// again: counted, not stopped at.
func writeExplained(w io.Writer, indent string, explained map[string]int) {
	for _, id := range sortedKeys(explained) {
		fmt.Fprintf(w, "%s%s broken %s: a known finding (nodeproof findings --list)\n", indent, id, phrase.Count(explained[id], "time"))
	}
}

// WriteViolation prints what a reader needs to act on a violation, each
// line after indent: its message, the trace and the replay line.
func WriteViolation(w io.Writer, indent string, v Violation) {
	for _, line := range strings.Split(strings.TrimRight(v.Message, "\n"), "\n") {
		fmt.Fprintf(w, "%s%s\n", indent, line)
	}
	fmt.Fprintf(w, "%strace (the %d events up to the violation, oldest first):\n", indent, len(v.Trace))
	for _, e := range v.Trace {
		fmt.Fprintf(w, "%s  %s\n", indent, e)
	}
	fmt.Fprintf(w, "%sreplay: %s\n", indent, v.Replay)
}

// NewViolation is a run's violation as the JSON and the report show it;
// the run must have one.
func NewViolation(seed uint64, sum sim.Summary) *Violation {
	v := sum.Violation
	sv := &Violation{Seed: seed, Invariant: v.Invariant, Message: v.Message, Event: v.Event.String(),
		Trace: make([]string, 0, len(v.Trace)), Replay: sum.Replay}
	for _, e := range v.Trace {
		sv.Trace = append(sv.Trace, e.String())
	}
	return sv
}

// WriteTotal prints the sums over every seed.
func WriteTotal(w io.Writer, s Section) {
	verdict := "passed"
	if !s.Passed {
		verdict = fmt.Sprintf("FAILED (%s)", phrase.Count(len(s.Violations), "violation"))
	}
	fmt.Fprintf(w, "total: %s, %s; %d events, %s simulated hours in %.1fs: %s simulated h/s, %s events/s\n",
		phrase.Count(s.Seeds, "seed"), verdict, s.Events, phrase.Stat(s.SimulatedHours), s.Seconds,
		phrase.Rate(s.SimulatedHours, s.Seconds), phrase.Rate(float64(s.Events), s.Seconds))
	fmt.Fprintln(w, "faults injected:")
	writeCounts(w, s.Injected)
	fmt.Fprintln(w, "invariants (checked / applied):")
	idWidth := 0
	for _, c := range s.Checks {
		idWidth = max(idWidth, len(c.ID))
	}
	for _, c := range s.Checks {
		fmt.Fprintf(w, "  %-*s  %d / %d\n", idWidth, c.ID, c.Checked, c.Applied)
	}
	if len(s.Observed) > 0 {
		fmt.Fprintln(w, "upstream behaviour observed (reported, not judged):")
		writeCounts(w, s.Observed)
	}
	for _, v := range s.Violations {
		fmt.Fprintf(w, "violation: seed %d: %s; replay: %s\n", v.Seed, v.Invariant, v.Replay)
	}
}

func writeCounts(w io.Writer, counts map[string]int) {
	if len(counts) == 0 {
		fmt.Fprintln(w, "  (none)")
		return
	}
	keys := sortedKeys(counts)
	kw := 0
	for _, k := range keys {
		kw = max(kw, len(k))
	}
	for _, k := range keys {
		fmt.Fprintf(w, "  %-*s  %d\n", kw, k, counts[k])
	}
}

func sortedKeys(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) }

// formatSimulated prints a simulated duration in whole seconds.
func formatSimulated(d time.Duration) string { return d.Truncate(time.Second).String() }

// Section is what a set of seeds did: the output of `nodeproof sim
// --json` and the "sim" key of report.json.
type Section struct {
	Seeds     int    `json:"seeds"`
	FirstSeed uint64 `json:"first_seed"`
	LastSeed  uint64 `json:"last_seed"`
	// Hours is the simulated time per seed, Pods and Faults the rest of the
	// configuration, Faults as --faults takes it.
	Hours  float64 `json:"hours"`
	Pods   int     `json:"pods"`
	Faults string  `json:"faults"`
	// The sums over every seed.
	Events         int            `json:"events"`
	SimulatedHours float64        `json:"simulated_hours"`
	Seconds        float64        `json:"seconds"`
	Injected       map[string]int `json:"injected"`
	Checks         []Check        `json:"checks"`
	Observed       map[string]int `json:"observed"`
	Passed         bool           `json:"passed"`
	Violations     []Violation    `json:"violations"`
	Runs           []Run          `json:"runs"`
}

// Check is how often one invariant was evaluated and applied.
type Check struct {
	ID        string `json:"id"`
	Statement string `json:"statement"`
	Checked   int    `json:"checked"`
	Applied   int    `json:"applied"`
}

// Run is one seed's run.
type Run struct {
	Seed           uint64         `json:"seed"`
	Events         int            `json:"events"`
	SimulatedHours float64        `json:"simulated_hours"`
	Seconds        float64        `json:"seconds"`
	EventsByKind   map[string]int `json:"events_by_kind"`
	Injected       map[string]int `json:"injected"`
	Checks         []Check        `json:"checks"`
	Observed       map[string]int `json:"observed"`
	Passed         bool           `json:"passed"`
	Violation      *Violation     `json:"violation"`
	Replay         string         `json:"replay"`
}

// Violation is the invariant a seed broke, the event after which the
// check failed, the events up to it (oldest first) and the replay line.
type Violation struct {
	Seed      uint64   `json:"seed"`
	Invariant string   `json:"invariant"`
	Message   string   `json:"message"`
	Event     string   `json:"event"`
	Trace     []string `json:"trace"`
	Replay    string   `json:"replay"`
}

// NewSection sums the runs of consecutive seeds of one configuration;
// seconds is the wall time of them all.
func NewSection(runs []Seed, seconds float64) Section {
	cfg := runs[0].Config
	s := Section{
		Seeds: len(runs), FirstSeed: cfg.Seed, LastSeed: runs[len(runs)-1].Config.Seed,
		Hours: phrase.RoundMilli(cfg.Duration.Hours()), Pods: cfg.Pods, Faults: cfg.Faults.String(),
		Seconds: phrase.RoundMicro(seconds), Injected: map[string]int{}, Observed: map[string]int{},
		Passed: true, Violations: []Violation{},
	}
	for _, r := range runs {
		s.Runs = append(s.Runs, newRun(r))
	}
	s.SumRuns()
	return s
}

// SumRuns sets the section's totals from its runs: events, simulated
// hours, faults, observations, checks and violations. A sweep and a merge
// of campaign shards both take their totals this way.
func (s *Section) SumRuns() {
	checks := verify.Counts{}
	simulated := 0.0
	for _, r := range s.Runs {
		s.Events += r.Events
		simulated += r.SimulatedHours
		for k, n := range r.Injected {
			s.Injected[k] += n
		}
		for k, n := range r.Observed {
			s.Observed[k] += n
		}
		for _, c := range r.Checks {
			sum := checks[c.ID]
			sum.Checked += c.Checked
			sum.Applied += c.Applied
			checks[c.ID] = sum
		}
		if r.Violation != nil {
			s.Passed = false
			s.Violations = append(s.Violations, *r.Violation)
		}
	}
	s.SimulatedHours = phrase.RoundMilli(simulated)
	s.Checks = checkList(checks)
}

func newRun(r Seed) Run {
	sum, st := r.Summary, r.Summary.Stats
	rr := Run{
		Seed: r.Config.Seed, Events: st.Events, SimulatedHours: phrase.RoundMilli(st.Simulated.Hours()),
		Seconds: phrase.RoundMicro(r.Seconds), EventsByKind: orEmpty(st.ByKind), Injected: map[string]int{},
		Checks: checkList(st.Checks), Observed: orEmpty(st.Observed), Passed: sum.Violation == nil, Replay: sum.Replay,
	}
	for kind, n := range st.Faults {
		rr.Injected[string(kind)] = n
	}
	if sum.Violation != nil {
		rr.Violation = NewViolation(r.Config.Seed, sum)
	}
	return rr
}

// checkList lists the counts in the order of sim.Invariants, then any
// other ID in name order, so that every table reads the same way.
func checkList(counts verify.Counts) []Check {
	order := map[string]int{}
	statements := map[string]string{}
	for i, inv := range sim.Invariants() {
		order[inv.ID] = i
		statements[inv.ID] = inv.Statement
	}
	out := make([]Check, 0, len(counts))
	for id, c := range counts {
		out = append(out, Check{ID: id, Statement: statements[id], Checked: c.Checked, Applied: c.Applied})
	}
	sort.Slice(out, func(i, j int) bool {
		oi, iKnown := order[out[i].ID]
		oj, jKnown := order[out[j].ID]
		if iKnown != jKnown {
			return iKnown
		}
		if iKnown {
			return oi < oj
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// orEmpty keeps a nil map from appearing as null in JSON.
func orEmpty(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}
