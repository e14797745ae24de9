package sim

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkRun runs the default config (24 simulated hours, 20 pods, every
// fault on) with every invariant checked after every event. events/s and
// sim-hours/s are per wall second; events/cpu-s divides by the CPU time the
// process used instead, which is the speed of one core however busy the
// machine is (the run is single-threaded; the garbage collector's work on
// other threads counts too, so it errs on the slow side). BENCHMARKS.md
// records all three.
func BenchmarkRun(b *testing.B) {
	cfg := explained(DefaultConfig())
	events := 0
	var simulated time.Duration
	cpuBefore := cpuTime(b)
	for b.Loop() {
		sum := Run(cfg, nil)
		require.Nil(b, sum.Violation)
		events += sum.Stats.Events
		simulated += sum.Stats.Simulated
	}
	cpu := cpuTime(b) - cpuBefore
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(events)/cpu.Seconds(), "events/cpu-s")
	b.ReportMetric(simulated.Hours()/b.Elapsed().Seconds(), "sim-hours/s")
}

// cpuTime is the user and system CPU time the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &u))
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
