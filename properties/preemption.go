package properties

import (
	"errors"
	"fmt"
	"strings"

	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
	"github.com/nodeproof/nodeproof/properties/admissioncheck"
	"github.com/nodeproof/nodeproof/verify"
)

// The preemption suite drives core/preemption directly: pods come and go,
// and pods (critical or not) arrive with generated failure reasons,
// including non-resource ones and amounts no fit would produce, so every
// branch of HandleAdmissionFailure is reached. The admission suite drives
// the same code through a node.
func init() {
	var invs []Invariant
	for _, c := range admissioncheck.PreemptionChecks {
		invs = append(invs, Invariant{ID: c.ID, Subsystem: "preemption", Statement: c.Statement, Sources: c.Sources, Kind: c.Kind})
	}
	register(Suite{
		Name:       "preemption",
		Subsystem:  "preemption",
		Invariants: invs,
		Property:   func(t *rapid.T, tally *Tally) { newPRMachine(t, tally).run() },
	})
}

// prMaxActive keeps the candidate pods within the brute-force search, so
// every successful preemption also measures the optimality gap.
const prMaxActive = 10

// prMinLeaving is how many pods the node keeps before one may leave: below
// it a pod arrives instead, so a critical pod usually finds several
// candidates and preemptions that need two or more victims are common
// (PR-QOS-ORDER compares victims only then).
const prMinLeaving = 4

type prMachine struct {
	t      *rapid.T
	tally  *Tally
	step   int
	uids   int
	active []*pod.Pod
	last   *admissioncheck.PreemptionCase
}

func newPRMachine(t *rapid.T, tally *Tally) *prMachine {
	return &prMachine{t: t, tally: tally}
}

func (m *prMachine) run() {
	m.t.Repeat(map[string]func(*rapid.T){
		"podArrives":      m.podArrives,
		"podLeaves":       m.podLeaves,
		"criticalArrives": func(t *rapid.T) { m.preempt(t, "criticalArrives", true) },
		"podFailsFit":     func(t *rapid.T) { m.preempt(t, "podFailsFit", false) },
		"":                m.check,
	})
}

func (m *prMachine) begin(action, format string, args ...any) {
	m.step++
	m.tally.Action(action)
	m.t.Logf("step %d: %s "+format, append([]any{m.step, action}, args...)...)
}

func (m *prMachine) newUID() string {
	m.uids++
	return fmt.Sprintf("p%d", m.uids)
}

// podArrives adds one to four pods: preemption removes pods too, and the
// interesting cases need several candidates. On a full node it does not
// apply (t.Skip before any draw makes rapid draw another action), rather
// than turning into another action: a shrunk case then keeps each step's
// meaning when rapid deletes an earlier one.
func (m *prMachine) podArrives(t *rapid.T) {
	if len(m.active) >= prMaxActive {
		t.Skip("the node runs as many pods as the brute force can search")
	}
	n := min(rapid.IntRange(1, 4).Draw(t, "arriving"), prMaxActive-len(m.active))
	var added []string
	for i := 0; i < n; i++ {
		p := admissioncheck.Pod(t, m.newUID(), admissioncheck.PodOptions{})
		m.active = append(m.active, p)
		added = append(added, describePod(p))
	}
	m.begin("podArrives", "%s", strings.Join(added, " "))
}

func (m *prMachine) podLeaves(t *rapid.T) {
	if len(m.active) < prMinLeaving {
		t.Skip("too few pods for one to leave")
	}
	i := rapid.IntRange(0, len(m.active)-1).Draw(t, "leaving")
	m.begin("podLeaves", "%s", m.active[i].UID)
	m.active = append(m.active[:i], m.active[i+1:]...)
}

// preempt asks core/preemption about an arriving pod; each victim's kill
// fails with probability 1/4, and the victims killed leave.
func (m *prMachine) preempt(t *rapid.T, action string, critical bool) {
	p := admissioncheck.Pod(t, m.newUID(), admissioncheck.PodOptions{Critical: critical})
	reasons := admissioncheck.Reasons(t)
	m.begin(action, "%s reasons=%s active=%s", describePod(p), describeReasons(reasons), describeUIDs(m.active))
	c, err := admissioncheck.RunPreemption(p, append([]*pod.Pod(nil), m.active...), reasons, func(i int) error {
		if rapid.IntRange(0, 3).Draw(t, "killFails") == 0 {
			return errors.New("failed to kill pod: context deadline exceeded")
		}
		return nil
	})
	if err != nil {
		m.t.Fatalf("%s: %v", admissioncheck.PRModel, err)
	}
	m.t.Logf("  victims=%s killFailed=%d err=%v", describeUIDs(c.Decision.Victims), len(c.Outcome.KillFailed), c.Decision.Err)
	for _, v := range c.Outcome.Evicted {
		for i, a := range m.active {
			if a == v {
				m.active = append(m.active[:i], m.active[i+1:]...)
				break
			}
		}
	}
	c.Observe(m.tally.Observe)
	m.last = c
}

func (m *prMachine) check(*rapid.T) {
	c := m.last
	if c == nil {
		return
	}
	m.last = nil
	for _, chk := range admissioncheck.PreemptionChecks {
		// Every check is evaluated on every case; it applies where its
		// Applies says the statement has something to say about the case,
		// and only then is it run.
		applies := chk.Applies(c)
		m.tally.Check(chk.ID, applies)
		if !applies {
			continue
		}
		if err := chk.Check(c); err != nil {
			if chk.Kind == verify.Contract {
				// A broken promise is a finding candidate: Breach fails the
				// case unless a known finding explains it.
				m.tally.Breach(m.t, chk.ID, "%v", err)
				continue
			}
			m.t.Fatalf("%s: %v", chk.ID, err)
		}
	}
}

// describePod is a pod as a step line shows it.
func describePod(p *pod.Pod) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s{%s", p.UID, p.QOS())
	if p.Priority != nil {
		fmt.Fprintf(&b, " prio=%d", *p.Priority)
	}
	if p.IsStatic() {
		b.WriteString(" static")
	}
	if p.IsMirror() {
		b.WriteString(" mirror")
	}
	if p.IsCritical() {
		b.WriteString(" critical")
	}
	fmt.Fprintf(&b, " requests=%v", p.EffectiveRequests(pod.Options{}))
	if len(p.InitContainers) > 0 {
		fmt.Fprintf(&b, " init=%d", len(p.InitContainers))
	}
	if p.Resources != nil {
		b.WriteString(" podLevel")
	}
	b.WriteString("}")
	return b.String()
}

func describeUIDs(pods []*pod.Pod) string {
	var s []string
	for _, p := range pods {
		s = append(s, p.UID)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func describeReasons(reasons []preemption.Reason) string {
	var s []string
	for _, r := range reasons {
		if ir, ok := r.(*preemption.InsufficientResource); ok {
			s = append(s, fmt.Sprintf("%s short %d", ir.ResourceName, ir.InsufficientAmount()))
		} else {
			s = append(s, r.GetReason())
		}
	}
	return "[" + strings.Join(s, ", ") + "]"
}
