package devicemanager

import (
	"syscall"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/properties"
	"github.com/stretchr/testify/require"
)

// BenchmarkDeviceManagerMachine measures the device manager state machine
// with every invariant checked after every step: the steps/s metric is the
// figure BENCHMARKS.md records. properties.Run it on one core with -cpu 1. steps/cpu-s
// divides by the CPU time the process used instead of the wall time, which
// is the speed of one core however busy the shared machine is (the
// garbage collector's work on other threads counts too, so it errs on the
// slow side).
func BenchmarkDeviceManagerMachine(b *testing.B) {
	suite, ok := properties.Lookup("devicemanager")
	require.True(b, ok, "devicemanager suite not registered")
	steps := 0
	seed := uint64(1)
	cpuBefore := cpuTime(b)
	for b.Loop() {
		r := properties.Run(suite, properties.RunOptions{Checks: 20, Steps: 100, Seed: seed})
		if !r.Passed {
			// Failure is a pointer: reading its message on a passing run
			// would dereference nil.
			require.NotNil(b, r.Failure, "suite failed without a failure")
			require.Fail(b, "suite failed", r.Failure.Message)
		}
		steps += r.Tally.Steps
		seed += 20
	}
	cpu := cpuTime(b) - cpuBefore
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
	b.ReportMetric(float64(steps)/cpu.Seconds(), "steps/cpu-s")
}

// cpuTime is the user and system CPU time the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &u))
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
