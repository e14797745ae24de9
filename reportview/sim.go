package reportview

import (
	"maps"
	"slices"
	"sort"

	"github.com/nodeproof/nodeproof/sim"
)

// The report's node simulation budget: a few seconds of make report on the
// CI machine (BENCHMARKS.md); nodeproof sim --seeds sweeps further.
const (
	DefaultSimSeeds = 2
	DefaultSimHours = 2.0
)

// Sim is what a set of seeds did: the output of nodeproof sim --json (the
// sim.json of make sim) and the "sim" key of report.json.
type Sim struct {
	Seeds     int    `json:"seeds"`
	FirstSeed uint64 `json:"first_seed"`
	LastSeed  uint64 `json:"last_seed"`
	// Hours is the simulated time per seed, Pods and Faults the rest of the
	// configuration, Faults as --faults takes it.
	Hours  float64 `json:"hours"`
	Pods   int     `json:"pods"`
	Faults string  `json:"faults"`
	// The sums over every seed: events, simulated hours, wall seconds, the
	// faults injected and the upstream behaviour observed, by kind.
	Events         int            `json:"events"`
	SimulatedHours float64        `json:"simulated_hours"`
	Seconds        float64        `json:"seconds"`
	Injected       map[string]int `json:"injected"`
	Checks         []SimCheck     `json:"checks"`
	Observed       map[string]int `json:"observed"`
	Passed         bool           `json:"passed"`
	Violations     []SimViolation `json:"violations"`
	Runs           []SimRun       `json:"runs"`
}

// SimCheck is how often one invariant was evaluated and applied.
type SimCheck struct {
	ID        string `json:"id"`
	Statement string `json:"statement"`
	Checked   int    `json:"checked"`
	Applied   int    `json:"applied"`
}

// SimRun is one seed's run.
type SimRun struct {
	Seed           uint64         `json:"seed"`
	Events         int            `json:"events"`
	SimulatedHours float64        `json:"simulated_hours"`
	Seconds        float64        `json:"seconds"`
	EventsByKind   map[string]int `json:"events_by_kind"`
	Injected       map[string]int `json:"injected"`
	Checks         []SimCheck     `json:"checks"`
	Observed       map[string]int `json:"observed"`
	Passed         bool           `json:"passed"`
	Violation      *SimViolation  `json:"violation"`
	Replay         string         `json:"replay"`
}

// SimViolation is the invariant a seed broke, the event after which the
// check failed, the events up to it (oldest first) and the replay line.
type SimViolation struct {
	Seed      uint64   `json:"seed"`
	Invariant string   `json:"invariant"`
	Message   string   `json:"message"`
	Event     string   `json:"event"`
	Trace     []string `json:"trace"`
	Replay    string   `json:"replay"`
}

// SimResult is one seed's finished run and the wall time it took.
type SimResult struct {
	Config  sim.Config
	Summary sim.Summary
	Seconds float64
}

// NewSim sums the runs of consecutive seeds of one configuration; seconds
// is the wall time of them all.
func NewSim(runs []SimResult, seconds float64) Sim {
	cfg := runs[0].Config
	s := Sim{
		Seeds: len(runs), FirstSeed: cfg.Seed, LastSeed: runs[len(runs)-1].Config.Seed,
		Hours: Millis(cfg.Duration.Hours()), Pods: cfg.Pods, Faults: cfg.Faults.String(),
		Seconds: Micro(seconds), Injected: map[string]int{}, Observed: map[string]int{},
		Passed: true, Violations: []SimViolation{},
	}
	for _, r := range runs {
		s.Runs = append(s.Runs, newSimRun(r))
	}
	s.sumRuns()
	return s
}

// sumRuns sets the section's totals from its runs: events, simulated
// hours, faults, observations, checks and violations. A sweep and a merge
// of campaign shards both take their totals this way.
func (s *Sim) sumRuns() {
	checks := map[string]sim.Count{}
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
	s.SimulatedHours = Millis(simulated)
	s.Checks = simChecks(checks)
}

func newSimRun(r SimResult) SimRun {
	sum, st := r.Summary, r.Summary.Stats
	rr := SimRun{
		Seed: r.Config.Seed, Events: st.Events, SimulatedHours: Millis(st.Simulated.Hours()),
		Seconds: Micro(r.Seconds), EventsByKind: orEmpty(st.ByKind), Injected: map[string]int{},
		Checks: simChecks(st.Checks), Observed: orEmpty(st.Observed), Passed: sum.Violation == nil, Replay: sum.Replay,
	}
	for kind, n := range st.Faults {
		rr.Injected[string(kind)] = n
	}
	if sum.Violation != nil {
		rr.Violation = NewSimViolation(r.Config.Seed, sum)
	}
	return rr
}

// NewSimViolation is a run's violation as the JSON and the report show it;
// the run must have one.
func NewSimViolation(seed uint64, sum sim.Summary) *SimViolation {
	v := sum.Violation
	sv := &SimViolation{Seed: seed, Invariant: v.Invariant, Message: v.Message, Event: v.Event.String(),
		Trace: make([]string, 0, len(v.Trace)), Replay: sum.Replay}
	for _, e := range v.Trace {
		sv.Trace = append(sv.Trace, e.String())
	}
	return sv
}

// simChecks lists the counts in the order of sim.Invariants, then any
// other ID in name order, so that every table reads the same way.
func simChecks(counts map[string]sim.Count) []SimCheck {
	order := map[string]int{}
	statements := map[string]string{}
	for i, inv := range sim.Invariants() {
		order[inv.ID] = i
		statements[inv.ID] = inv.Statement
	}
	out := make([]SimCheck, 0, len(counts))
	for id, c := range counts {
		out = append(out, SimCheck{ID: id, Statement: statements[id], Checked: c.Checked, Applied: c.Applied})
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

// SortedKeys are a count's keys in order, the order every list of counts
// is shown in.
func SortedKeys(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) }
