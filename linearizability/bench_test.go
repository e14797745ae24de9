package linearizability

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/nodeproof/nodeproof/models/deviceagent"
	"github.com/stretchr/testify/require"
)

// synthesize makes a linearizable history of n operations from the given
// number of clients, with the agent workload's mix (admissions of one group,
// removals, reads of every resource, snapshots, crashes and updates of
// unknown outcome). It runs the model one operation at a time, in the order
// of the clients' call times, and stretches each operation over an interval
// that contains its place in that order, so clients overlap as they do
// against the agent. It lets the benchmark reach history lengths that
// recording through sockets would take minutes to produce.
func synthesize(seed uint64, n, clients int) (deviceagent.State, []porcupine.Operation) {
	rng := rand.New(rand.NewPCG(seed, 1))
	initial := map[string][]deviceagent.Device{}
	for _, r := range slices.Concat(groups...) {
		initial[r] = []deviceagent.Device{{ID: "d0", Healthy: true}, {ID: "d1", Healthy: true}, {ID: "d2", Healthy: true}, {ID: "d3", Healthy: true}}
	}
	init := deviceagent.Init(initial)
	state := init
	cursor := make([]int64, clients)
	held := make([][]deviceagent.Input, clients)
	var last int64
	history := make([]porcupine.Operation, 0, n)
	for i := range n {
		c := 0
		for j := range cursor {
			if cursor[j] < cursor[c] {
				c = j
			}
		}
		in := syntheticInput(rng, c, i, held[c])
		next, out := deviceagent.Apply(state, in)
		if in.Op == deviceagent.Update && rng.IntN(20) == 0 {
			// An update lost or not in a crash: the client never learns.
			out.Unknown = true
			if rng.IntN(2) == 0 {
				next = state
			}
		}
		state = next
		switch {
		case in.Op == deviceagent.Admit && out.Err == "":
			held[c] = append(held[c], in)
		case in.Op == deviceagent.Remove:
			held[c] = slices.DeleteFunc(held[c], func(h deviceagent.Input) bool { return h.Pod == in.Pod })
		}
		call := cursor[c]
		last = max(call, last) + 1 + rng.Int64N(3)
		ret := last + rng.Int64N(50)
		cursor[c] = ret + 1 + rng.Int64N(5)
		history = append(history, porcupine.Operation{ClientId: c, Input: in, Output: out, Call: call, Return: ret})
	}
	return init, history
}

func syntheticInput(rng *rand.Rand, client, i int, held []deviceagent.Input) deviceagent.Input {
	group := groups[rng.IntN(len(groups))]
	switch roll := rng.IntN(20); {
	case roll < 9:
		var wants []deviceagent.Want
		var resources []string
		for _, r := range group {
			if rng.IntN(2) == 0 || len(wants) == 0 && r == group[len(group)-1] {
				wants = append(wants, deviceagent.Want{Resource: r, Count: 1 + rng.IntN(2)})
				resources = append(resources, r)
			}
		}
		return deviceagent.Input{Op: deviceagent.Admit, Resources: resources, Pod: fmt.Sprintf("c%d-p%d", client, i), Wants: wants}
	case roll < 13 && len(held) > 0:
		h := held[rng.IntN(len(held))]
		return deviceagent.Input{Op: deviceagent.Remove, Resources: h.Resources, Pod: h.Pod}
	case roll < 16:
		resources := slices.Concat(groups...)
		return deviceagent.Input{Op: deviceagent.Capacity, Resources: resources}
	case roll < 19:
		r := group[rng.IntN(len(group))]
		var devs []deviceagent.Device
		for _, id := range deviceIDs {
			if rng.IntN(4) != 0 {
				devs = append(devs, deviceagent.Device{ID: id, Healthy: rng.IntN(4) != 0})
			}
		}
		return deviceagent.Input{Op: deviceagent.Update, Resources: []string{r}, Devices: devs}
	default:
		return deviceagent.Input{Op: deviceagent.Crash, Resources: []string{group[rng.IntN(len(group))]}}
	}
}

// TestSynthesizedHistoriesAreLinearizable keeps the benchmark honest: the
// histories it times must be ones the checker accepts, and a corrupted one
// must be refused.
func TestSynthesizedHistoriesAreLinearizable(t *testing.T) {
	init, history := synthesize(1, 2000, 8)
	require.Equal(t, porcupine.Ok, Check(init, history, 10*time.Second), "a synthesized history")
	for i, op := range history {
		out := op.Output.(deviceagent.Output)
		if op.Input.(deviceagent.Input).Op == deviceagent.Capacity && !out.Unknown {
			out.Counts = slices.Clone(out.Counts)
			out.Counts[0].Capacity += 7
			history[i].Output = out
			break
		}
	}
	require.Equal(t, porcupine.Illegal, Check(init, history, 10*time.Second), "a history with an impossible capacity read")
}

// checkers are the two checkers the benchmarks set side by side.
var checkers = []struct {
	name  string
	check func(deviceagent.State, []porcupine.Operation, time.Duration) porcupine.CheckResult
	// upTo is the longest history the checker is timed on: porcupine's
	// time grows with the square of a partition's length.
	upTo int
}{
	{"frontier", Check, math.MaxInt},
	{"porcupine", checkPorcupine, 20_000},
}

// timeCheck times check on history and reports, besides the wall time,
// the process's CPU time per check: on a shared machine the wall time
// measures the load as much as the check.
func timeCheck(b *testing.B, check func(deviceagent.State, []porcupine.Operation, time.Duration) porcupine.CheckResult, init deviceagent.State, history []porcupine.Operation) {
	cpu := cpuTime(b)
	for b.Loop() {
		require.Equal(b, porcupine.Ok, check(init, history, 10*time.Minute), "check says")
	}
	b.ReportMetric(float64((cpuTime(b)-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(len(history)), "history-ops")
}

func cpuTime(b *testing.B) time.Duration {
	var usage syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &usage))
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

// BenchmarkCheck times both checkers on synthesized histories of 10^3, 10^4
// and 10^5 operations from 8 clients.
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		init, history := synthesize(uint64(n), n, 8)
		for _, c := range checkers {
			if n > c.upTo {
				continue
			}
			b.Run(fmt.Sprintf("ops=%d/%s", n, c.name), func(b *testing.B) { timeCheck(b, c.check, init, history) })
		}
	}
}

// recordings are the histories BenchmarkCheckRecorded records, one per
// size, each once per process and outside the timer: recording 10^5
// operations through sockets takes minutes.
var recordings = map[int]*recordingOnce{}

type recordingOnce struct {
	once sync.Once
	rec  Recording
	err  error
}

// BenchmarkCheckRecorded times both checkers on histories recorded from 16
// clients (4 plugin owners, 12 pod clients) through the real agent, of
// about 10^3, 10^4 and 10^5 operations (OpsPerClient 62, 625 and 6250;
// failed Allocates and fault windows make a few more).
func BenchmarkCheckRecorded(b *testing.B) {
	for _, perClient := range []int{62, 625, 6250} {
		r, ok := recordings[perClient]
		if !ok {
			r = &recordingOnce{}
			recordings[perClient] = r
		}
		for _, c := range checkers {
			if 16*perClient > c.upTo {
				continue
			}
			b.Run(fmt.Sprintf("ops=%d/%s", 16*perClient, c.name), func(b *testing.B) {
				r.once.Do(func() {
					r.rec, r.err = recordOrLoad(Workload{Seed: 1, PodClients: 12, OpsPerClient: perClient})
				})
				require.NoError(b, r.err)
				require.Equal(b, 16, r.rec.Clients, "clients")
				timeCheck(b, c.check, r.rec.Init, r.rec.History)
			})
		}
	}
}
