package properties

import (
	"fmt"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/verify"
)

// simSubsystem is the subsystem of the node simulation's invariants: the
// whole node, every core together (package sim).
const simSubsystem = "sim"

// simConfig is the node the suite simulates. The suite runs at most a few
// hundred events a case, far short of the duration, so a case never runs
// out of time; few pods keep a shrunk case short, and fault rates well
// above the seeded runs' make every fault, and so every invariant's
// situation, reachable within a case. rapid biases draws towards zero, so
// a rate here fires less often than it says (simChance).
func simConfig() sim.Config {
	rates := sim.Rates{}
	for _, f := range sim.AllFaults() {
		rates[f] = simFaultRate
	}
	rates[sim.AllocateSlow] = simSlowAllocateRate
	return sim.Config{Seed: 1, Duration: 30 * 24 * time.Hour, Pods: 4, NodeMaxPods: simNodeMaxPods, Faults: rates}
}

// simNodeMaxPods is the pod capacity of the suite's node. rapid's zero
// draws make BestEffort, non-critical pods, which never fill a node's CPU
// or memory; with two pod slots they fill it anyway, so the critical pods
// rapid does draw must preempt, and SIM-PREEMPTED-RELEASED applies over
// 2,000 times a run (1,500 is the floor's 1.5x margin) where it applied
// 0 to 700 times at 110 slots. A preemption still shrinks to a handful of
// events: two pods, then a critical one.
const simNodeMaxPods = 2

// simFaultRate is the rate of every other fault kind in the suite.
const simFaultRate = 0.05

// simSlowAllocateRate is the rate of allocate-slow in the suite. An answer
// that outlives a kubelet restart needs a device pod's Allocate call (about
// 200 of them in a run of the suite), a slow answer, a restart while it is
// awaited and a new admission's call before it arrives: at simFaultRate the
// mutant sim-stale-allocate-committed survived the default budget.
const simSlowAllocateRate = 0.5

// simContracts are the simulation's contract invariants, by ID: their
// violations go through Tally.Breach.
var simContracts = map[string]bool{}

func init() {
	var invariants []Invariant
	for _, inv := range sim.Invariants() {
		if inv.Kind == verify.Contract {
			simContracts[inv.ID] = true
		}
		invariants = append(invariants, Invariant{ID: inv.ID, Subsystem: inv.Subsystem, Statement: inv.Statement, Sources: inv.Sources, Kind: inv.Kind})
	}
	register(Suite{
		Name:       "sim",
		Subsystem:  simSubsystem,
		Invariants: invariants,
		Property:   simProperty,
	})
}

// rapidSource answers the simulation's choices with rapid's draws, so that
// rapid generates the world and shrinks it: towards fewer events (Repeat),
// first choices (Intn towards 0) and no faults (Chance towards false).
type rapidSource struct{ t *rapid.T }

func (s rapidSource) Intn(n int) int {
	if n == 1 {
		// One choice is no choice; drawing it would only lengthen the case.
		return 0
	}
	return rapid.IntRange(0, n-1).Draw(s.t, "intn")
}

// Split draws from rapid too: a separate stream matters only to seeded runs.
func (s rapidSource) Split() sim.Source { return s }

// simChanceScale is the resolution of Chance's draw.
const simChanceScale = 1 << 20

// Chance draws a number in [0, simChanceScale) and answers true when it
// falls in the top rate of the range, so the zero draw, which rapid shrinks
// to, is false: a shrunk case keeps only the faults it needs.
func (s rapidSource) Chance(rate float64) bool {
	switch {
	case rate <= 0:
		return false
	case rate >= 1:
		return true
	}
	return float64(rapid.IntRange(0, simChanceScale-1).Draw(s.t, "chance")) >= (1-rate)*simChanceScale
}

// simMaxFolded bounds the routine events one step folds, so that a step
// cannot run away through an hour of probes that confirm their results.
const simMaxFolded = 60

// simProperty runs one generated node. Each action is one step: the next
// event that changes something, after a time jump over the routine events
// before it (sim.Event.Routine: probes that confirm their results, plugin
// ticks at which no fault fires, GC passes that remove nothing), at most
// simMaxFolded of them. Every invariant is still checked after every event,
// routine ones included; folding them keeps them out of the shrunk steps,
// which rapid could not remove otherwise: they come from the node's own
// schedule, not from a draw.
func simProperty(t *rapid.T, tally *Tally) {
	cfg := simConfig()
	s, err := sim.New(cfg, rapidSource{t})
	if err != nil {
		t.Fatalf("error: the suite's configuration: %v", err)
	}
	// sinceStep counts the routine events folded since the last step's
	// line: a violation among them comes at an event no step line shows.
	events, steps, sinceStep := 0, 0, 0
	check := func(t *rapid.T) {
		for _, r := range s.Check() {
			// Applied is the engine's own: the state had something for
			// the statement to compare (a pod holding devices, a
			// restart to survive, ...).
			tally.Check(r.ID, r.Applied)
			switch {
			case r.Err == nil:
			case simContracts[r.ID]:
				msg := strings.TrimPrefix(r.Err.Error(), r.ID+": ")
				tally.Breach(t, r.ID, "%s\n%s", msg, simWhere(s.Trace(), steps, sinceStep, events))
			default:
				t.Fatalf("%s\n%s", r.Err, simWhere(s.Trace(), steps, sinceStep, events))
			}
		}
	}
	t.Repeat(map[string]func(*rapid.T){
		"event": func(t *rapid.T) {
			for {
				e, ok := s.Step()
				if !ok {
					// simConfig's duration outlasts any case; were it to
					// end, nothing happens and the checks see the same
					// state.
					tally.Action("end")
					return
				}
				events++
				tally.Action(e.Kind)
				if e.Routine && sinceStep < simMaxFolded {
					sinceStep++
					check(t)
					continue
				}
				// The check after the step's last event is rapid's ("").
				steps++
				if sinceStep > 0 {
					t.Logf("step %d: %s (after %s)", steps, e, routineEvents(sinceStep))
				} else {
					t.Logf("step %d: %s", steps, e)
				}
				sinceStep = 0
				return
			}
		},
		"": check,
	})
}

// simWhere says where in the case a violation came, for its message. The
// step lines rapid prints above the message list the steps' events, so it
// does not list them again: it names only an event they do not show, the
// routine one the violation came at when it came while folding.
func simWhere(trace []sim.Event, steps, sinceStep, events int) string {
	switch {
	case events == 0:
		return "before any event"
	case sinceStep == 0:
		return fmt.Sprintf("after step %d (%d events in this case, the routine ones folded into the steps)", steps, events)
	}
	last := trace[len(trace)-1]
	if steps == 0 {
		return fmt.Sprintf("after %s, the last %s (%d events in this case)", routineEvents(sinceStep), last, events)
	}
	return fmt.Sprintf("after step %d and %s, the last %s (%d events in this case)", steps, routineEvents(sinceStep), last, events)
}

func routineEvents(n int) string {
	if n == 1 {
		return "1 routine event"
	}
	return fmt.Sprintf("%d routine events", n)
}
