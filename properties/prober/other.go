package prober

import (
	"time"

	"pgregory.net/rapid"

	core "github.com/nodeproof/nodeproof/core/prober"
	model "github.com/nodeproof/nodeproof/models/prober"
	"github.com/nodeproof/nodeproof/properties"
)

// Manager is a prober manager other than core as the suite's system under
// test: one run of a kubelet's prober manager (the conformance module has
// upstream's), driven by the kubelet's calls the suite's actions make.
// Unlike core's, its workers run by themselves: every method runs, before
// it returns, the probes the call or the clock makes due at its instant,
// asking the Node for each try's outcome and telling it what each probe
// published. The suite holds it to the contract properties alone: it
// gives no worker states, twin or steps to compare with the model.
type Manager interface {
	// AddPod gives the workers the pod; jitter is the fraction of its
	// period a new worker sleeps before its first probe, as core's AddPod
	// takes it (a manager that draws its own may use it as a seed).
	AddPod(now time.Time, pod core.Pod, jitter func(core.WorkerKey) float64)
	SetDeletionTimestamp(uid string, at time.Time)
	StopLivenessAndStartup(now time.Time, pod core.Pod)
	RemovePod(now time.Time, pod core.Pod)
	CleanupPods(now time.Time, desired map[string]bool)
	// UpdatePodStatus returns status with Started and Ready set; the
	// manager's status manager holds them from then on.
	UpdatePodStatus(now time.Time, pod core.Pod, status core.PodStatus) core.PodStatus
	// Advance moves the clock to target, running every probe due up to
	// and including it.
	Advance(target time.Time)
	// Result is the results cache's entry of a type for a container.
	Result(typ core.ProbeType, containerID string) (core.Result, bool)
	// Close stops every worker; the kubelet is gone.
	Close()
}

// Node is what a Manager asks of the suite's node, on the goroutine that
// called the Manager.
type Node interface {
	// Statuses are the status manager's pod statuses, by pod UID.
	Statuses() map[string]*core.PodStatus
	// Answer runs one try of a probe: its outcome.
	Answer(run Run) core.Outcome
	// Probed reports a probe's last try, with the results it published.
	Probed(run Run, updates []core.Update)
}

// Run is one try of a probe, as its worker runs it.
type Run struct {
	Key         core.WorkerKey
	ContainerID string
	// Attempt is the try, 1 to 3: a probe that errs is tried again.
	Attempt int
	At      time.Time
	// Probe is the probe as the worker holds it.
	Probe core.Probe
}

// NewManager makes the Manager of one kubelet run, started at start.
type NewManager func(start time.Time, node Node) Manager

// NewContractSuite is the prober suite with another prober manager as its
// system under test: the same generated actions as the registered suite,
// checked against the contract properties only (the fidelity invariants
// compare core's steps, workers and twin with the model, which another
// manager does not give). Every contract property applies to it, but
// PB-C-UNKNOWN-NO-ACTION only in part: the suite sees that a probe that
// could not run published nothing, not whether the worker went on, since
// the Manager does not list its workers. properties.Run runs it.
func NewContractSuite(name string, sut NewManager) properties.Suite {
	return properties.Suite{
		Name:       name,
		Subsystem:  subsystem,
		Invariants: contractInvariants(),
		Property: func(t *rapid.T, tally *properties.Tally) {
			m := newMachineOf(t, tally, sut)
			t.Cleanup(func() { m.other.Close() })
			m.run()
		},
	}
}

// node is the machine as a Manager's Node.
type node struct{ m *machine }

func (n node) Statuses() map[string]*core.PodStatus {
	out := map[string]*core.PodStatus{}
	for _, p := range n.m.pods {
		if st := p.status(); st != nil {
			out[p.spec.UID] = st
		}
	}
	return out
}

// inflight is a probe another manager is running: the outcome drawn for
// its tries so far.
type inflight struct {
	out    core.Outcome
	answer model.Answer
}

// Answer draws a try's outcome as stepWorker draws core's: the probe's
// outcome on its first try (after the startup promises are checked), and
// for an erring one, the chance that the next try succeeds.
func (n node) Answer(run Run) core.Outcome {
	m := n.m
	p := m.podByUID(run.Key.PodUID)
	if p == nil {
		m.t.Fatalf("%v probes %s of a pod the node does not have", run.Key, run.ContainerID)
	}
	c, _ := p.container(run.Key.ContainerName)
	if c == nil {
		m.t.Fatalf("%v probes %s of a container the pod does not have", run.Key, run.ContainerID)
	}
	f := m.inflight[run.Key]
	if run.Attempt == 1 || f == nil {
		if run.Key.Type != core.Startup {
			m.contractBeforeProbe(&track{key: run.Key, probe: run.Probe, containerID: run.ContainerID}, p, run.At)
		}
		out, answer := outcome(m.t, c.health, run.Probe.Timeout())
		f = &inflight{out: out, answer: answer}
		m.inflight[run.Key] = f
	}
	if f.out.Err != nil && run.Attempt < 3 && rapid.IntRange(0, 3).Draw(m.t, "errorClears") == 0 {
		f.out, f.answer = outcome(m.t, c.health, run.Probe.Timeout())
	}
	return f.out
}

// Probed holds a probe's publications to the contract properties, as
// stepWorker does core's.
func (n node) Probed(run Run, updates []core.Update) {
	m := n.m
	f := m.inflight[run.Key]
	if f == nil {
		m.t.Fatalf("%v reports a probe of %s that it never ran", run.Key, run.ContainerID)
	}
	delete(m.inflight, run.Key)
	tr := &track{key: run.Key, probe: run.Probe, containerID: run.ContainerID}
	if f.answer == "error" {
		// Whether the worker went on is not seen: the stop, if any, is
		// the Manager's own.
		m.contractUnknown(tr, updates, false)
	} else {
		m.contractVerdict(tr, f.answer, updates, run.At)
	}
	m.t.Logf("  %v probed (%s after %d tries): %v", run.Key, f.answer, run.Attempt, updates)
}
