package linearizability

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/nodeproof/nodeproof/models/deviceagent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func one(id string) []deviceagent.Device { return []deviceagent.Device{{ID: id, Healthy: true}} }

// admitOp is an admission of one device of res, answered err or, on
// success, granted the device ids.
func admitOp(client int, pod, res string, call, ret int64, err string, ids ...string) porcupine.Operation {
	out := deviceagent.Output{Err: err}
	if err == "" {
		out.Granted = []deviceagent.Grant{{Resource: res, DeviceIDs: ids}}
	}
	return porcupine.Operation{ClientId: client, Call: call, Return: ret,
		Input:  deviceagent.Input{Op: deviceagent.Admit, Resources: []string{res}, Pod: pod, Wants: []deviceagent.Want{{Resource: res, Count: 1}}},
		Output: out}
}

func capacityOp(client int, res string, call, ret, capacity, allocatable int64) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Call: call, Return: ret,
		Input:  deviceagent.Input{Op: deviceagent.Capacity, Resources: []string{res}},
		Output: deviceagent.Output{Counts: []deviceagent.Count{{Resource: res, Capacity: capacity, Allocatable: allocatable}}}}
}

func crashOp(client int, res string, call, ret int64) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Call: call, Return: ret,
		Input: deviceagent.Input{Op: deviceagent.Crash, Resources: []string{res}}, Output: deviceagent.Output{}}
}

// unknownUpdate is a snapshot of healthy devices ids sent just before its
// plugin crashed, recorded as the workload does: it returns once sent.
func unknownUpdate(client int, res string, call, ret int64, ids ...string) porcupine.Operation {
	devs := make([]deviceagent.Device, len(ids))
	for i, id := range ids {
		devs[i] = deviceagent.Device{ID: id, Healthy: true}
	}
	return porcupine.Operation{ClientId: client, Call: call, Return: ret,
		Input:  deviceagent.Input{Op: deviceagent.Update, Resources: []string{res}, Devices: devs},
		Output: deviceagent.Output{Unknown: true}}
}

// TestCheckerCanFail feeds histories no sequential order explains and
// expects Illegal, so an Ok from the agent's histories means something; and
// their linearizable neighbours, which must stay Ok.
func TestCheckerCanFail(t *testing.T) {
	init := deviceagent.Init(map[string][]deviceagent.Device{"r/a": one("a0"), "r/b": one("b0"),
		"r/c": {{ID: "c0", Healthy: true}, {ID: "c1", Healthy: true}}})
	crash := porcupine.Operation{ClientId: 2, Call: 0, Return: 10, Input: deviceagent.Input{Op: deviceagent.Crash, Resources: []string{"r/a"}}, Output: deviceagent.Output{}}
	for _, tc := range []struct {
		name    string
		history []porcupine.Operation
		want    porcupine.CheckResult
	}{
		{"two pods granted the only device", []porcupine.Operation{
			admitOp(0, "p1", "r/a", 0, 10, "", "a0"), admitOp(1, "p2", "r/a", 5, 15, "", "a0"),
		}, porcupine.Illegal},
		{"one of two pods granted the only device", []porcupine.Operation{
			admitOp(0, "p1", "r/a", 0, 10, "", "a0"), admitOp(1, "p2", "r/a", 5, 15, deviceagent.ErrUnavailable),
		}, porcupine.Ok},
		{"a read after a crash still sees a healthy device", []porcupine.Operation{
			crash, capacityOp(0, "r/a", 20, 30, 1, 1),
		}, porcupine.Illegal},
		{"a read during a crash sees a healthy device", []porcupine.Operation{
			crash, capacityOp(0, "r/a", 5, 30, 1, 1),
		}, porcupine.Ok},
		{"a failed Allocate's reservation outlives the admission", []porcupine.Operation{
			admitOp(0, "p1", "r/a", 0, 10, deviceagent.ErrAllocateFailed), admitOp(1, "p2", "r/a", 20, 30, deviceagent.ErrUnavailable),
		}, porcupine.Illegal},
		{"a failed Allocate's reservation refuses a concurrent admission", []porcupine.Operation{
			admitOp(0, "p1", "r/a", 0, 10, deviceagent.ErrAllocateFailed), admitOp(1, "p2", "r/a", 5, 30, deviceagent.ErrUnavailable),
		}, porcupine.Ok},
		{"an unknown admission may have taken the device", []porcupine.Operation{
			{ClientId: 0, Call: 0, Return: Never, Input: admitOp(0, "p1", "r/a", 0, 0, "", "a0").Input, Output: deviceagent.Output{Unknown: true}},
			admitOp(1, "p2", "r/a", 20, 30, deviceagent.ErrUnavailable),
		}, porcupine.Ok},
		{"one device granted to two pods one after the other", []porcupine.Operation{
			admitOp(0, "p1", "r/c", 0, 10, "", "c0"), admitOp(1, "p2", "r/c", 20, 30, "", "c0"),
		}, porcupine.Illegal},
		{"two devices granted to two pods one after the other", []porcupine.Operation{
			admitOp(0, "p1", "r/c", 0, 10, "", "c0"), admitOp(1, "p2", "r/c", 20, 30, "", "c1"),
		}, porcupine.Ok},
		{"a device granted while a failed Allocate reserved it", []porcupine.Operation{
			admitOp(0, "p1", "r/a", 0, 30, deviceagent.ErrAllocateFailed), admitOp(1, "p2", "r/a", 5, 10, "", "a0"),
		}, porcupine.Ok},
		// A snapshot sent just before the plugin crashed (its operation
		// returns once sent) may land before the crash, never after: the
		// crashed plugin's devices stay unhealthy.
		{"an update of unknown outcome lands after the crash", []porcupine.Operation{
			unknownUpdate(2, "r/c", 0, 1, "c0", "c1"), crashOp(2, "r/c", 2, 10),
			capacityOp(0, "r/c", 20, 30, 2, 2), admitOp(1, "p1", "r/c", 20, 30, "", "c1"),
		}, porcupine.Illegal},
		{"an update of unknown outcome lands before the crash", []porcupine.Operation{
			unknownUpdate(2, "r/c", 0, 1, "c0", "c1", "c2"), capacityOp(0, "r/c", 2, 3, 2, 2),
			capacityOp(0, "r/c", 4, 5, 3, 3), crashOp(2, "r/c", 6, 10), capacityOp(0, "r/c", 20, 30, 3, 0),
		}, porcupine.Ok},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Check(init, tc.history, time.Second)
			assert.Equal(t, tc.want, got, "check says")
		})
	}
}

// TestPartitionKeepsJointResourcesTogether checks that an admission of two
// resources puts both in one group, and that a capacity read is cut by group.
func TestPartitionKeepsJointResourcesTogether(t *testing.T) {
	joint := porcupine.Operation{Input: deviceagent.Input{Op: deviceagent.Admit, Resources: []string{"r/b", "r/c"}, Pod: "p",
		Wants: []deviceagent.Want{{Resource: "r/b", Count: 1}, {Resource: "r/c", Count: 1}}}, Output: deviceagent.Output{}}
	read := porcupine.Operation{Input: deviceagent.Input{Op: deviceagent.Capacity, Resources: []string{"r/a", "r/b", "r/c"}},
		Output: deviceagent.Output{Counts: []deviceagent.Count{{Resource: "r/a"}, {Resource: "r/b"}, {Resource: "r/c"}}}}
	groups := partition([]porcupine.Operation{joint, read})
	require.Len(t, groups, 2)
	var sizes []int
	for _, g := range groups {
		sizes = append(sizes, len(g))
		last := g[len(g)-1].Output.(deviceagent.Output)
		assert.Len(t, last.Counts, len(g[len(g)-1].Input.(deviceagent.Input).Resources), "a projected read has %d counts for %v", len(last.Counts), g[len(g)-1].Input)
	}
	assert.Equal(t, 3, sizes[0]+sizes[1], "group sizes %v, want the admission and two cuts of the read", sizes)
}
