package linearizability

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nodeproof/nodeproof/agent/deviceplugin"
	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
	"github.com/nodeproof/nodeproof/models/deviceagent"
)

// progressLimit bounds how long an admission may take while another one is
// held in its Allocate RPC. The agent holds no lock across an RPC, so the
// second admission needs only the agent's own work, milliseconds.
const progressLimit = 2 * time.Second

// forcedNode is one agent with one test plugin per resource, for a short
// history whose interleaving the test forces with the plugins' hold knobs.
type forcedNode struct {
	t       *testing.T
	agent   *deviceplugin.Agent
	dir     string
	plugins map[string]*testplugin.Plugin
	rec     *recorder
	init    deviceagent.State
}

// startForcedNode starts an agent whose Allocate deadline is
// allocateTimeout and a plugin serving healthy devices ids for each
// resource, and waits until the agent shows them all.
func startForcedNode(t *testing.T, allocateTimeout time.Duration, devices map[string][]string) *forcedNode {
	// t.TempDir's path can be longer than a Unix socket address holds.
	root, err := os.MkdirTemp("", "nplin")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(root) })
	n := &forcedNode{t: t, dir: filepath.Join(root, "dp"), plugins: map[string]*testplugin.Plugin{}, rec: &recorder{}}
	n.agent, err = deviceplugin.Start(deviceplugin.Options{Dir: n.dir, Clock: frozenClock{}, AllocateTimeout: allocateTimeout,
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(n.agent.Stop)
	n.agent.SetSourcesReady()
	initial := map[string][]deviceagent.Device{}
	for _, res := range slices.Sorted(maps.Keys(devices)) {
		devs := testplugin.Healthy(devices[res]...)
		p, err := testplugin.Start(testplugin.Config{Dir: n.dir, Endpoint: filepath.Base(res) + ".sock", ResourceName: res,
			Devices: devs, AnswerKey: answerKey(res), Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		t.Cleanup(p.Stop)
		n.plugins[res] = p
		want := []deviceagent.Count{{Resource: res, Capacity: int64(len(devs)), Allocatable: int64(len(devs))}}
		require.NoError(t, waitFor(context.Background(), res+" to show its devices", func() bool {
			return slices.Equal(readCounts(n.agent, []string{res}), want)
		}))
		initial[res] = toModel(devs)
	}
	n.init = deviceagent.Init(initial)
	n.rec.start = time.Now()
	return n
}

// admit admits pod uid asking for count devices of res, and records it.
func (n *forcedNode) admit(client int, uid, res string, count int) error {
	_, err := admitRecorded(context.Background(), n.agent, n.rec, client, uid, []deviceagent.Want{{Resource: res, Count: count}})
	return err
}

// admitAsync starts admit on its own goroutine; the channel yields its
// answer.
func (n *forcedNode) admitAsync(client int, uid, res string, count int) <-chan error {
	done := make(chan error, 1)
	go func() { done <- n.admit(client, uid, res, count) }()
	return done
}

// remove removes pod uid, which asked for res, and records it.
func (n *forcedNode) remove(client int, uid, res string) {
	op := porcupine.Operation{ClientId: client, Input: deviceagent.Input{Op: deviceagent.Remove, Pod: uid, Resources: []string{res}},
		Output: deviceagent.Output{}, Call: n.rec.now()}
	n.agent.RemovePod(uid)
	op.Return = n.rec.now()
	n.rec.add(op)
}

// register starts a plugin of res whose socket is endpoint (relative to
// the directory) and records its registration; a refused one has no plugin
// left running.
func (n *forcedNode) register(client int, res, endpoint string) {
	op := porcupine.Operation{ClientId: client, Input: deviceagent.Input{Op: deviceagent.Register, Resources: []string{res}, Endpoint: endpoint},
		Call: n.rec.now()}
	p, err := testplugin.Start(testplugin.Config{Dir: n.dir, Endpoint: endpoint, ResourceName: res,
		Devices: testplugin.Healthy("d0"), Logger: slog.New(slog.DiscardHandler)})
	op.Return = n.rec.now()
	out := deviceagent.Output{}
	if err != nil {
		out.Err = deviceagent.ErrRefused
	} else {
		n.t.Cleanup(p.Stop)
	}
	op.Output = out
	n.rec.add(op)
}

// read records a capacity read of resources.
func (n *forcedNode) read(client int, resources ...string) {
	op := porcupine.Operation{ClientId: client, Input: deviceagent.Input{Op: deviceagent.Capacity, Resources: resources}, Call: n.rec.now()}
	counts := readCounts(n.agent, resources)
	op.Return = n.rec.now()
	op.Output = deviceagent.Output{Counts: counts}
	n.rec.add(op)
}

// heldInAllocate waits until res's plugin has received its calls-th
// Allocate call: the admission that made it has planned and reserved.
func (n *forcedNode) heldInAllocate(res string, calls int) {
	require.NoError(n.t, waitFor(context.Background(), fmt.Sprintf("Allocate call %d of %s", calls, res), func() bool {
		return len(n.plugins[res].Calls(testplugin.Allocate)) >= calls
	}))
}

// await returns the answer of an admission started by admitAsync, waiting
// at most limit; ok is false when it did not answer in time.
func await(done <-chan error, limit time.Duration) (err error, ok bool) {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case err := <-done:
		return err, true
	case <-timer.C:
		return nil, false
	}
}

// check checks the recorded history against the model and, when no order
// explains it, writes the visualization and fails the test.
func (n *forcedNode) check() {
	rec := Recording{Workload: Workload{Seed: 0}, Init: n.init, History: n.rec.ops, Faults: n.rec.faults, Clients: 3}
	checked := CheckRecording(rec, checkTimeout)
	if checked.Verdict == porcupine.Ok {
		return
	}
	var history []string
	for _, op := range n.rec.ops {
		history = append(history, fmt.Sprintf("  client %d [%d, %d] %s", op.ClientId, op.Call, op.Return,
			deviceagent.Describe(op.Input.(deviceagent.Input), op.Output.(deviceagent.Output))))
	}
	dir := n.t.TempDir()
	path, err := failureVisualization(&checked, dir)
	assert.NoError(n.t, err, "writing the visualization")
	n.t.Errorf("the history is %s: no order of its operations explains what the clients saw.\nstart: %s\nhistory:\n%s\nvisualization: %s",
		checked.Result.Result, n.init, strings.Join(history, "\n"), path)
}

// TestForcedInterleavings records short histories through the real agent
// and real plugins in which the interleavings that matter are forced with
// the test plugin's hold knobs, not left to the scheduler, and checks each
// with porcupine against models/deviceagent. Each case names the bug it is
// there to catch.
func TestForcedInterleavings(t *testing.T) {
	defer goleak.VerifyNone(t)
	const a, b = "example.com/a", "example.com/b"

	// A plan reserves its devices until the Allocate answer commits them:
	// an admission that plans while another is held in Allocate must not
	// be offered the held one's device (agent-plan-not-reserved).
	t.Run("an admission plans while another is held in Allocate", func(t *testing.T) {
		n := startForcedNode(t, 10*time.Second, map[string][]string{a: {"d0", "d1"}})
		release := make(chan struct{})
		n.plugins[a].SetFault(testplugin.Allocate, testplugin.Fault{Block: release})
		held := n.admitAsync(0, "held", a, 1)
		n.heldInAllocate(a, 1)
		n.plugins[a].SetFault(testplugin.Allocate, testplugin.Fault{})
		planned := n.admitAsync(1, "planned", a, 1)
		err, answered := await(planned, progressLimit)
		close(release)
		if !answered {
			t.Errorf("the second admission did not answer within %v while the first was held in Allocate", progressLimit)
			err, _ = await(planned, waitLimit)
		}
		assert.NoError(t, err, "the second admission")
		err, answered = await(held, waitLimit)
		require.True(t, answered, "the held admission did not answer after its release")
		assert.NoError(t, err, "the held admission")
		n.check()
	})

	// The same with the held Allocate failing: its reservation refuses a
	// concurrent admission of the only device, and its release frees it.
	t.Run("an admission plans while a failing Allocate is held", func(t *testing.T) {
		n := startForcedNode(t, 10*time.Second, map[string][]string{a: {"d0"}})
		release := make(chan struct{})
		n.plugins[a].SetFault(testplugin.Allocate, testplugin.Fault{Block: release, Err: errors.New("injected Allocate failure")})
		held := n.admitAsync(0, "held", a, 1)
		n.heldInAllocate(a, 1)
		n.plugins[a].SetFault(testplugin.Allocate, testplugin.Fault{})
		during := n.admitAsync(1, "during", a, 1)
		_, answered := await(during, progressLimit)
		close(release)
		if !answered {
			t.Errorf("the second admission did not answer within %v while the first was held in Allocate", progressLimit)
			await(during, waitLimit)
		}
		_, answered = await(held, waitLimit)
		require.True(t, answered, "the held admission did not answer after its release")
		n.admit(1, "after", a, 1)
		n.check()
	})

	// No lock is held across an RPC: while one admission waits for its
	// Allocate answer, an admission of another resource completes
	// (agent-lock-across-allocate). A history cannot show a missing
	// answer, so the bound on the wait is the check here.
	t.Run("an admission of another resource completes while one is held in Allocate", func(t *testing.T) {
		n := startForcedNode(t, 10*time.Second, map[string][]string{a: {"d0"}, b: {"d0"}})
		release := make(chan struct{})
		n.plugins[a].SetFault(testplugin.Allocate, testplugin.Fault{Block: release})
		held := n.admitAsync(0, "held", a, 1)
		n.heldInAllocate(a, 1)
		other := n.admitAsync(1, "other", b, 1)
		err, answered := await(other, progressLimit)
		close(release)
		if !answered {
			t.Errorf("an admission of %s did not answer within %v while an admission of %s was held in Allocate: the agent holds its lock across the RPC", b, progressLimit, a)
			err, _ = await(other, waitLimit)
		}
		assert.NoError(t, err, "the admission of %s", b)
		_, answered = await(held, waitLimit)
		require.True(t, answered, "the held admission did not answer after its release")
		n.check()
	})

	// An Allocate that runs past the agent's deadline fails the admission
	// and releases its reservation: a later admission gets the device
	// (agent-deadline-keeps-reservation).
	t.Run("an Allocate runs past the deadline, then a later admission wants the device", func(t *testing.T) {
		n := startForcedNode(t, 50*time.Millisecond, map[string][]string{a: {"d0"}})
		n.plugins[a].SetFault(testplugin.Allocate, testplugin.Fault{Hang: true})
		err := n.admit(0, "timed-out", a, 1)
		require.Error(t, err, "an admission whose Allocate hangs")
		n.plugins[a].SetFault(testplugin.Allocate, testplugin.Fault{})
		assert.NoError(t, n.admit(1, "later", a, 1), "the admission after the timed-out one")
		n.check()
	})

	// A registration's endpoint must name a socket directly in the device
	// plugin directory: one that leaves it is refused and no resource
	// appears (agent-endpoint-not-confined). Not a race: the history shows
	// the registration's answer and the capacity read that follows.
	t.Run("a registration whose endpoint leaves the directory is refused", func(t *testing.T) {
		const rogue = "example.com/rogue"
		n := startForcedNode(t, 10*time.Second, map[string][]string{a: {"d0"}})
		n.register(2, rogue, "../rogue.sock")
		n.read(0, a, rogue)
		n.check()
	})

	// One device, one holder at a time: two admissions one after the other
	// get distinct devices, and a removed pod's device is free again
	// (dm-double-allocation).
	t.Run("admissions one after the other get distinct devices", func(t *testing.T) {
		n := startForcedNode(t, 10*time.Second, map[string][]string{a: {"d0", "d1"}})
		assert.NoError(t, n.admit(0, "first", a, 1))
		assert.NoError(t, n.admit(1, "second", a, 1))
		n.remove(0, "first", a)
		assert.NoError(t, n.admit(0, "third", a, 1))
		n.check()
	})
}
