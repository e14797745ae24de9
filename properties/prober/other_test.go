package prober

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	core "github.com/nodeproof/nodeproof/core/prober"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/verify"
)

// coreAsOther is core's manager behind the Manager interface, its workers
// stepped at their due times as a kubelet's goroutines would run them: a
// manager whose promises the suite's own search has judged.
type coreAsOther struct {
	m    *core.Manager
	node Node
	// hideStartup keeps what startup probes publish from the suite: a
	// manager that starts liveness and readiness probes without a word.
	hideStartup bool
}

func newCoreAsOther(hideStartup bool) NewManager {
	return func(start time.Time, node Node) Manager {
		m, err := core.NewManager(core.Options{KubeletStart: start})
		if err != nil {
			panic(err)
		}
		return &coreAsOther{m: m, node: node, hideStartup: hideStartup}
	}
}

func (c *coreAsOther) AddPod(now time.Time, pod core.Pod, jitter func(core.WorkerKey) float64) {
	if _, err := c.m.AddPod(now, pod, jitter); err != nil {
		panic(err)
	}
	c.Advance(now)
}

func (c *coreAsOther) SetDeletionTimestamp(uid string, at time.Time) {
	c.m.SetDeletionTimestamp(uid, at)
	c.Advance(at)
}

func (c *coreAsOther) StopLivenessAndStartup(now time.Time, pod core.Pod) {
	c.m.StopLivenessAndStartup(now, pod)
	c.Advance(now)
}

func (c *coreAsOther) RemovePod(now time.Time, pod core.Pod) {
	c.m.RemovePod(now, pod)
	c.Advance(now)
}

func (c *coreAsOther) CleanupPods(now time.Time, desired map[string]bool) {
	c.m.CleanupPods(now, desired)
	c.Advance(now)
}

func (c *coreAsOther) UpdatePodStatus(now time.Time, pod core.Pod, status core.PodStatus) core.PodStatus {
	res, err := c.m.UpdatePodStatus(now, pod, status)
	if err != nil {
		panic(err)
	}
	return res.Status
}

func (c *coreAsOther) Advance(target time.Time) {
	for key, due, ok := c.m.NextDue(); ok && !due.After(target); key, due, ok = c.m.NextDue() {
		ws, _ := c.m.Worker(key)
		step, err := c.m.Step(key, due, c.node.Statuses()[key.PodUID])
		var run Run
		for err == nil && step.Kind == core.StepProbe {
			run = Run{Key: key, ContainerID: step.Run.ContainerID, Attempt: step.Run.Attempt, At: due, Probe: ws.Probe}
			step, err = c.m.ProbeDone(key, due, c.node.Answer(run))
		}
		if err != nil {
			panic(err)
		}
		if run.Attempt > 0 {
			updates := step.Updates
			if c.hideStartup && key.Type == core.Startup {
				updates = nil
			}
			c.node.Probed(run, updates)
		}
	}
}

func (c *coreAsOther) Result(typ core.ProbeType, containerID string) (core.Result, bool) {
	return c.m.Result(typ, containerID)
}

func (c *coreAsOther) Close() {}

func ids(ps []verify.Property) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return out
}

// TestContractSuiteOnAnotherManager: the contract suite judges another
// manager by the contract properties alone, puts each of them to the
// test, and finds a breach of core's own (PB-F2's) through the interface.
func TestContractSuiteOnAnotherManager(t *testing.T) {
	s := NewContractSuite("prober-core", newCoreAsOther(false))
	contract := []string{ContractStartupGate, ContractDelayAfter, ContractFailureRun, ContractSuccessRun, ContractUnknownNoop, ContractReadyOwnProbes}
	assert.Equal(t, contract, ids(s.Invariants), "the contract properties alone")
	res := properties.Run(s, properties.RunOptions{Seed: 1, Checks: 100, Steps: 100, Enforce: []string{ContractFailureRun}, ShrinkTime: time.Second})
	require.NotNil(t, res.Failure, "the search through the interface did not breach %s, which core breaks", ContractFailureRun)
	assert.Equal(t, ContractFailureRun, res.Failure.Invariant)
	for _, id := range contract {
		assert.Positive(t, res.Tally.Applied[id], "%s never applied", id)
	}
}

// TestContractSuiteSeesWhatIsPublished: core's manager keeps
// PB-C-STARTUP-GATE through the interface; hiding what its startup probes
// publish breaches it, since the suite knows a startup probe succeeded
// only from what the manager reports.
func TestContractSuiteSeesWhatIsPublished(t *testing.T) {
	opts := properties.RunOptions{Seed: 1, Checks: 100, Steps: 100, Enforce: []string{ContractStartupGate}, ShrinkTime: time.Second}
	res := properties.Run(NewContractSuite("prober-core", newCoreAsOther(false)), opts)
	require.Nil(t, res.Failure, "core breaches %s", ContractStartupGate)
	require.Positive(t, res.Tally.Applied[ContractStartupGate])
	res = properties.Run(NewContractSuite("prober-hidden", newCoreAsOther(true)), opts)
	require.NotNil(t, res.Failure)
	assert.Equal(t, ContractStartupGate, res.Failure.Invariant)
}
