package sim

import (
	"fmt"
	"time"

	"github.com/nodeproof/nodeproof/verify"
)

// Source is where every choice of a simulation comes from. Its answers are
// ordered so that the zero draw is the uneventful one: Intn(n) returning 0 is
// the first choice, Chance returning false is "nothing happens". rapid
// shrinks draws towards zero, so a shrunk run has few faults and simple pods.
type Source interface {
	// Intn returns a number in [0, n); n > 0.
	Intn(n int) int
	// Chance returns true with probability rate, in [0, 1].
	Chance(rate float64) bool
	// Split returns a Source for a kind of choice drawn apart from the
	// rest: a choice added after seeded runs were measured draws from it,
	// so that every other draw of a seed stays as it was. Its answers
	// depend only on this Source's state when Split is called.
	Split() Source
}

// Fault is one kind of fault the world can inject.
type Fault string

// Config is one simulation's parameters besides its Source.
type Config struct {
	// Seed names the run in replay lines; NewSeeded(Seed) is its Source.
	Seed uint64
	// Duration is the simulated time to run for.
	Duration time.Duration
	// Pods is the number of pods the node holds at once on average: arrivals
	// are paced so that about this many are admitted or pending.
	Pods int
	// NodeMaxPods is the node's pod capacity (the kubelet's --max-pods);
	// 0 means the kubelet's default, 110. A node whose pod slots run out
	// turns pods away and makes its critical pods preempt even when its
	// pods request no CPU or memory.
	NodeMaxPods int
	// Faults gives each fault kind its rate: the probability that the fault
	// fires at each opportunity for it (a plugin answering, a GC removal, a
	// probe running, ...). A kind left out never fires.
	Faults Rates
	// TraceLen is how many of the latest events a violation reports; 0 means
	// DefaultTraceLen.
	TraceLen int
	// Explained names the contract invariants whose violations a known
	// finding explains (a broken promise of upstream's kubelet, confirmed
	// on its code: the verify package's findings, which the caller
	// chooses and passes in). Run counts their violations in
	// Stats.Explained and goes on, instead of stopping at the first one;
	// a violation of any other invariant still stops it. It does not
	// change the events, so a replay line need not name it.
	Explained []string
}

// Rates gives each fault kind its rate.
type Rates map[Fault]float64

// Event is one thing that happened, as the trace and the progress show it.
type Event struct {
	// Seq numbers the events of a run from 1.
	Seq int
	// At is the simulated time since the start of the run.
	At time.Duration
	// Kind is the event's kind ("pod-arrive", "probe", "gc", "plugin-crash", ...).
	Kind string
	// Detail says what it did, in a line.
	Detail string
	// Routine: the event changed nothing a reader of a trace needs to
	// see: an opportunity for trouble at which no fault fired, a probe
	// that confirmed the result it had, work that found nothing to do.
	// The rapid suite folds such events into the next event's step.
	Routine bool
}

func (e Event) String() string {
	return fmt.Sprintf("#%d %s %s: %s", e.Seq, e.At, e.Kind, e.Detail)
}

// CheckResult is one invariant's evaluation on one state.
type CheckResult struct {
	ID string
	// Applied is whether the statement had something to compare in this
	// state (a pod holding devices, a restart to survive, ...).
	Applied bool
	// Err is the violation, nil when the invariant holds. Its text starts
	// with the invariant ID.
	Err error
}

// Stats is what a run has done so far.
type Stats struct {
	Events    int
	Simulated time.Duration
	// ByKind counts events by kind; Faults counts injected faults by kind.
	ByKind map[string]int
	Faults map[Fault]int
	// Checks counts invariant evaluations by ID.
	Checks verify.Counts
	// Observed counts upstream behaviour the run saw and reports rather
	// than judges, such as image GC removing an image a container started
	// using after the pass's detection (#123631), by description.
	Observed map[string]int
	// Explained counts, by invariant ID, the violations of the invariants
	// Config.Explained names: the checks that found the known broken
	// promise again.
	Explained map[string]int
}

// Violation is the first invariant a run broke.
type Violation struct {
	Invariant string
	Message   string
	// Event is the event after which the check failed; Trace the events
	// before it and it, oldest first.
	Event Event
	Trace []Event
}

// Summary is a finished run.
type Summary struct {
	Config    Config
	Stats     Stats
	Violation *Violation
	// Replay is the command line that reruns exactly this run.
	Replay string
}
