package properties

import (
	"errors"
	"fmt"

	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/admission"
	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
	"github.com/nodeproof/nodeproof/properties/admissioncheck"
	"github.com/nodeproof/nodeproof/verify"
)

// The admission suite drives core/admission: a node with a GPU device
// plugin, pods arriving one after the other (critical or not, sometimes
// failing another predicate, sometimes with a failing Allocate RPC or
// kills), pods leaving, and terminating victims finally going. A twin node
// gets the same arrivals and answers.
func init() {
	var invs []Invariant
	for _, c := range admissioncheck.AdmissionChecks {
		invs = append(invs, Invariant{ID: c.ID, Subsystem: "admission", Statement: c.Statement, Sources: c.Sources, Kind: c.Kind})
	}
	register(Suite{
		Name:       "admission",
		Subsystem:  "admission",
		Invariants: invs,
		Property:   func(t *rapid.T, tally *Tally) { newADMachine(t, tally).run() },
	})
}

// adGPUs is the node's GPU count: few enough that pods run out of them.
const adGPUs = 3

type adMachine struct {
	t       *rapid.T
	tally   *Tally
	step    int
	uids    int
	node    *admission.Node
	twin    *admission.Node
	devices *dm.Manager
	twinDM  *dm.Manager
	last    *admissioncheck.AdmissionCase
}

// gpuManager is a device manager with one GPU plugin of adGPUs healthy
// devices, past the kubelet's start.
func gpuManager(t *rapid.T) *dm.Manager {
	m := dm.New(dm.DefaultLimits())
	m.SetSourcesReady()
	if _, err := m.Connected(string(admissioncheck.GPU), "gpu.sock", dm.PluginOptions{}); err != nil {
		t.Fatalf("%s: connect: %v", admissioncheck.ADDevices, err)
	}
	var devs []dm.Device
	for i := 0; i < adGPUs; i++ {
		devs = append(devs, dm.Device{ID: fmt.Sprintf("gpu%d", i), Health: dm.Healthy})
	}
	if err := m.Update(string(admissioncheck.GPU), devs); err != nil {
		t.Fatalf("%s: snapshot: %v", admissioncheck.ADDevices, err)
	}
	return m
}

func newADMachine(t *rapid.T, tally *Tally) *adMachine {
	m := &adMachine{t: t, tally: tally, devices: gpuManager(t), twinDM: gpuManager(t)}
	alloc := pod.ResourceList{
		pod.Pods:             int64(rapid.IntRange(2, 8).Draw(t, "maxPods")),
		pod.CPU:              rapid.SampledFrom([]int64{500, 1000, 2000}).Draw(t, "cpu"),
		pod.Memory:           rapid.SampledFrom([]int64{256 << 20, 512 << 20, 1 << 30}).Draw(t, "memory"),
		pod.EphemeralStorage: rapid.SampledFrom([]int64{2 << 30, 8 << 30}).Draw(t, "storage"),
		admissioncheck.GPU:   adGPUs,
	}
	var err error
	if m.node, err = admission.NewNode(alloc, m.devices); err != nil {
		t.Fatalf("%s: %v", admissioncheck.ADDecision, err)
	}
	if m.twin, err = admission.NewNode(alloc, m.twinDM); err != nil {
		t.Fatalf("%s: %v", admissioncheck.ADDecision, err)
	}
	t.Logf("node allocatable=%v gpus=%d", alloc, adGPUs)
	return m
}

func (m *adMachine) run() {
	m.t.Repeat(map[string]func(*rapid.T){
		"podArrives":      func(t *rapid.T) { m.arrive(t, "podArrives", false) },
		"criticalArrives": func(t *rapid.T) { m.arrive(t, "criticalArrives", true) },
		"podLeaves":       m.podLeaves,
		"killRetried":     m.killRetried,
		"":                m.check,
	})
}

func (m *adMachine) begin(action, format string, args ...any) {
	m.step++
	m.tally.Action(action)
	m.t.Logf("step %d: %s "+format, append([]any{m.step, action}, args...)...)
}

func (m *adMachine) arrive(t *rapid.T, action string, critical bool) {
	m.uids++
	p := admissioncheck.Pod(t, fmt.Sprintf("p%d", m.uids), admissioncheck.PodOptions{GPUs: true, Critical: critical})
	var opts admission.Options
	if rapid.IntRange(0, 7).Draw(t, "otherReason") == 0 {
		opts.OtherReasons = []*preemption.PredicateFailure{admissioncheck.OtherReason(t)}
	}
	rpcFails := rapid.IntRange(0, 7).Draw(t, "rpcFails") == 0
	m.begin(action, "%s other=%d rpcFails=%t", describePod(p), len(opts.OtherReasons), rpcFails)
	c, err := admissioncheck.Admit(m.node, m.twin, m.devices, m.twinDM, adGPUs, admissioncheck.Arrival{
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
	m.t.Logf("  admitted=%t reason=%q evicted=%s killFailed=%d", r.Admitted, r.Reason, describeUIDs(r.Evicted), len(r.KillFailed))
	m.last = c
}

// remove takes a pod off both nodes.
func (m *adMachine) remove(uid string) {
	if err := m.node.Remove(uid); err != nil {
		m.t.Fatalf("%s: %v", admissioncheck.ADNode, err)
	}
	if err := m.twin.Remove(uid); err != nil {
		m.t.Fatalf("%s: twin: %v", admissioncheck.ADDeterministic, err)
	}
}

func (m *adMachine) podLeaves(t *rapid.T) {
	active := m.node.Active()
	if len(active) == 0 {
		m.arrive(t, "podArrives", false)
		return
	}
	p := rapid.SampledFrom(active).Draw(t, "leaving").Pod
	m.begin("podLeaves", "%s", p.UID)
	m.remove(p.UID)
}

// killRetried is the kubelet's retry of a failed kill succeeding: the
// terminating victim finally goes.
func (m *adMachine) killRetried(t *rapid.T) {
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
	m.begin("killRetried", "%s", p.UID)
	m.remove(p.UID)
}

func (m *adMachine) check(*rapid.T) {
	c := m.last
	if c == nil {
		return
	}
	m.last = nil
	for _, chk := range admissioncheck.AdmissionChecks {
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
