package preemption

import (
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/properties/admissioncheck"
	"github.com/nodeproof/nodeproof/verify"
)

// init registers the suite of core/preemption with every check, so that
// importing the package is enough.
func init() {
	properties.Register(NewSuite("preemption", admissioncheck.RunPreemption, admissioncheck.PreemptionChecks))
}

// NewSuite is the preemption suite with sut as its system under test,
// checking checks after every preemption: the same generated actions drive
// core (the registered suite) or, in the conformance module, upstream's own
// critical pod admission handler, which only the contract checks
// (admissioncheck.PreemptionContractChecks) can judge. properties.Run runs
// an unregistered one.
func NewSuite(name string, sut admissioncheck.Preempter, checks []verify.Check[*admissioncheck.PreemptionCase]) properties.Suite {
	return properties.Suite{
		Name:       name,
		Subsystem:  "preemption",
		Invariants: verify.Properties(checks),
		Property:   func(t *rapid.T, tally *properties.Tally) { newMachine(t, tally, sut, checks).run() },
	}
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
	sut    admissioncheck.Preempter
	checks []verify.Check[*admissioncheck.PreemptionCase]
}

func newMachine(t *rapid.T, tally *properties.Tally, sut admissioncheck.Preempter, checks []verify.Check[*admissioncheck.PreemptionCase]) *machine {
	return &machine{t: t, tally: tally, steps: properties.NewSteps(t, tally), sut: sut, checks: checks}
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
	properties.Evaluate(m.t, m.tally, m.checks, c)
}
