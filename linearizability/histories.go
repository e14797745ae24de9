package linearizability

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/nodeproof/nodeproof/verify"
)

// Histories says what RecordHistories records and checks. The zero value of
// every field but Dir and Progress takes the default named beside it, the
// budget TestAgentHistoriesLinearizable runs at.
type Histories struct {
	// Count is the number of histories, recorded with seeds 1 to Count
	// (default 3). The default seeds exercise every plugin-side operation.
	Count int
	// OpsPerClient is each client's number of operations (default 30).
	OpsPerClient int
	// CheckTimeout bounds each porcupine check (default 20s). A check that
	// runs out of time answers Unknown, which is a failure.
	CheckTimeout time.Duration
	// Dir, when set, receives every history's visualization as
	// linearizability-seed-N.html, and each Result names its file relative
	// to Dir so that a report written there can link to it.
	Dir string
	// Progress, when set, is called after each history with the number
	// checked and Count. It runs on the caller's goroutine.
	Progress func(done, total int)
}

func (h Histories) withDefaults() Histories {
	if h.Count <= 0 {
		h.Count = 3
	}
	if h.OpsPerClient <= 0 {
		h.OpsPerClient = 30
	}
	if h.CheckTimeout <= 0 {
		h.CheckTimeout = 20 * time.Second
	}
	return h
}

// RecordHistories records h.Count histories of concurrent clients driving a
// real agent and real plugins over Unix sockets (Record) and checks each
// against models/deviceagent (CheckRecording). It is what `nodeproof
// report` runs in-process, so the report needs no Go toolchain. A history
// that is not linearizable is a Result whose Passed is false, not an error;
// the error is for a recording that could not be made.
func RecordHistories(ctx context.Context, h Histories) ([]Result, error) {
	h = h.withDefaults()
	results := make([]Result, 0, h.Count)
	for i := range h.Count {
		seed := uint64(i + 1)
		rec, err := Record(ctx, Workload{Seed: seed, OpsPerClient: h.OpsPerClient})
		if err != nil {
			return results, fmt.Errorf("recording the history of seed %d: %w", seed, err)
		}
		checked := CheckRecording(rec, h.CheckTimeout)
		if checked.Verdict != porcupine.Ok {
			checked.Result.Replay = ReplayCommand(seed, h.OpsPerClient)
		}
		if h.Dir != "" {
			path := filepath.Join(h.Dir, fmt.Sprintf("linearizability-seed-%d.html", seed))
			if err := checked.WriteVisualization(path); err != nil {
				return results, fmt.Errorf("writing the visualization of seed %d: %w", seed, err)
			}
			checked.Result.Visualization = filepath.Base(path)
		}
		results = append(results, checked.Result)
		if h.Progress != nil {
			h.Progress(len(results), h.Count)
		}
	}
	return results, nil
}

// ReplayCommand is the command that records the history of seed again with
// the same operation mix. The interleaving is the scheduler's, so it
// repeats the mix, not necessarily the failure.
func ReplayCommand(seed uint64, opsPerClient int) string {
	return verify.CommandLine("go", "test", "./linearizability", "-run", "TestAgentHistoriesLinearizable$",
		fmt.Sprintf("-lin.seed=%d", seed), fmt.Sprintf("-lin.ops=%d", opsPerClient))
}
