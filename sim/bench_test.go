package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkRun runs the default config (24 simulated hours, 20 pods, every
// fault on) with every invariant checked after every event. events/s and
// sim-hours/s are the figures BENCHMARKS.md records.
func BenchmarkRun(b *testing.B) {
	cfg := DefaultConfig()
	events := 0
	var simulated time.Duration
	for b.Loop() {
		sum := Run(cfg, nil)
		require.Nil(b, sum.Violation)
		events += sum.Stats.Events
		simulated += sum.Stats.Simulated
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(simulated.Hours()/b.Elapsed().Seconds(), "sim-hours/s")
}
