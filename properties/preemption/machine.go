package preemption

import (
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/properties/admissioncheck"
	"github.com/nodeproof/nodeproof/verify"
)

// init registers the suite, so that importing the package is enough.
func init() {
	properties.Register(properties.Suite{
		Name:       "preemption",
		Subsystem:  "preemption",
		Invariants: verify.Properties(admissioncheck.PreemptionChecks),
		Property:   func(t *rapid.T, tally *properties.Tally) { newMachine(t, tally).run() },
	})
}

// maxActive keeps the candidate pods within the brute-force search, so
// every successful preemption also measures the optimality gap.
const maxActive = 10

// minLeaving is how many pods the node keeps before one may leave: below
// it a pod arrives instead, so a critical pod usually finds several
// candidates and preemptions that need two or more victims are common
// (PR-QOS-ORDER compares victims only then).
const minLeaving = 4

type machine struct {
	t      *rapid.T
	tally  *properties.Tally
	steps  properties.Steps
	uids   int
	active []*pod.Pod
	last   *admissioncheck.PreemptionCase
}

func newMachine(t *rapid.T, tally *properties.Tally) *machine {
	return &machine{t: t, tally: tally, steps: properties.NewSteps(t, tally)}
}

func (m *machine) run() {
	m.t.Repeat(map[string]func(*rapid.T){
		"podArrives":      m.podArrives,
		"podLeaves":       m.podLeaves,
		"criticalArrives": func(t *rapid.T) { m.preempt(t, "criticalArrives", true) },
		"podFailsFit":     func(t *rapid.T) { m.preempt(t, "podFailsFit", false) },
		"":                m.check,
	})
}

func (m *machine) check(*rapid.T) {
	c := m.last
	if c == nil {
		return
	}
	m.last = nil
	properties.Evaluate(m.t, m.tally, admissioncheck.PreemptionChecks, c)
}
