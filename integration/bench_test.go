package integration

import (
	"context"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/agent/deviceplugin"
	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
	"github.com/stretchr/testify/require"
)

// BenchmarkAdmitCycle measures admissions through real sockets. Each
// iteration admits a pod asking for one device (the Allocate RPC over the
// plugin's Unix socket and the checkpoint write with its fsyncs included),
// then removes the pod and collects garbage so that its device is free for
// the next one. It reports complete cycles per second as admissions/s, and
// the p50 and p99 latency of Admit alone.
func BenchmarkAdmitCycle(b *testing.B) {
	e := newEnv(b, deviceplugin.Options{})
	e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0", "d1", "d2", "d3")})
	e.waitCapacity(4, 4)
	// Garbage collection frees nothing until the pod sources are ready.
	e.agent.SetSourcesReady()

	ctx := context.Background()
	var latencies []time.Duration
	start := time.Now()
	for b.Loop() {
		uid := "pod" + strconv.Itoa(len(latencies))
		began := time.Now()
		require.NoError(b, e.agent.Admit(ctx, podWith(uid, 1)))
		latencies = append(latencies, time.Since(began))
		e.agent.RemovePod(uid)
		e.agent.CollectGarbage()
	}
	elapsed := time.Since(start)

	slices.Sort(latencies)
	b.ReportMetric(float64(len(latencies))/elapsed.Seconds(), "admissions/s")
	b.ReportMetric(microseconds(quantile(latencies, 0.50)), "p50-µs")
	b.ReportMetric(microseconds(quantile(latencies, 0.99)), "p99-µs")
}

// quantile returns the nearest-rank q-quantile of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(q * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

func microseconds(d time.Duration) float64 {
	return float64(d) / float64(time.Microsecond)
}
