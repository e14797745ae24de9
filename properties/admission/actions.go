package admission

import (
	"errors"
	"fmt"

	"pgregory.net/rapid"

	core "github.com/nodeproof/nodeproof/core/admission"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
	"github.com/nodeproof/nodeproof/properties/admissioncheck"
)

func (m *machine) arrive(t *rapid.T, action string, critical bool) {
	m.uids++
	p := admissioncheck.Pod(t, fmt.Sprintf("p%d", m.uids), admissioncheck.PodOptions{GPUs: true, Scalars: true, Critical: critical})
	var opts core.Options
	if rapid.IntRange(0, 7).Draw(t, "otherReason") == 0 {
		opts.OtherReasons = []*preemption.PredicateFailure{admissioncheck.OtherReason(t)}
	}
	rpcFails := rapid.IntRange(0, 7).Draw(t, "rpcFails") == 0
	m.steps.Begin(action, "%s other=%d rpcFails=%t", admissioncheck.DescribePod(p), len(opts.OtherReasons), rpcFails)
	c, err := admissioncheck.Admit(m.node, m.twin, m.devices, m.twinDM, gpus, admissioncheck.Arrival{
		Pod: p, Opts: opts,
		AllocateErr: func(round int) error {
			if rpcFails && round == 0 {
				return errors.New("rpc error: code = Unavailable desc = plugin restarting")
			}
			return nil
		},
		KillErr: func(int) error {
			if rapid.IntRange(0, 3).Draw(t, "killFails") == 0 {
				return errors.New("failed to kill pod: context deadline exceeded")
			}
			return nil
		},
	})
	if err != nil {
		m.t.Fatalf("%s: %v", admissioncheck.ADDecision, err)
	}
	r := c.Result
	m.t.Logf("  admitted=%t reason=%q evicted=%s killFailed=%d", r.Admitted, r.Reason, admissioncheck.DescribeUIDs(r.Evicted), len(r.KillFailed))
	m.last = c
}

// remove takes a pod off both nodes.
func (m *machine) remove(uid string) {
	if err := m.node.Remove(uid); err != nil {
		m.t.Fatalf("%s: %v", admissioncheck.ADNode, err)
	}
	if err := m.twin.Remove(uid); err != nil {
		m.t.Fatalf("%s: twin: %v", admissioncheck.ADDeterministic, err)
	}
}

func (m *machine) podLeaves(t *rapid.T) {
	active := m.node.Active()
	if len(active) == 0 {
		m.arrive(t, "podArrives", false)
		return
	}
	p := rapid.SampledFrom(active).Draw(t, "leaving").Pod
	m.steps.Begin("podLeaves", "%s", p.UID)
	m.remove(p.UID)
}

// killRetried is the kubelet's retry of a failed kill succeeding: the
// terminating victim finally goes.
func (m *machine) killRetried(t *rapid.T) {
	var terminating []*pod.Pod
	for _, a := range m.node.Active() {
		if a.Terminating {
			terminating = append(terminating, a.Pod)
		}
	}
	if len(terminating) == 0 {
		if rapid.Bool().Draw(t, "critical") {
			m.arrive(t, "criticalArrives", true)
		} else {
			m.arrive(t, "podArrives", false)
		}
		return
	}
	p := rapid.SampledFrom(terminating).Draw(t, "killed")
	m.steps.Begin("killRetried", "%s", p.UID)
	m.remove(p.UID)
}
