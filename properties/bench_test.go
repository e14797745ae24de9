package properties

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkDeviceManagerMachine measures the device manager state machine
// with every invariant checked after every step: the steps/s metric is the
// figure BENCHMARKS.md records. Run it on one core with -cpu 1.
func BenchmarkDeviceManagerMachine(b *testing.B) {
	suite, ok := Lookup("devicemanager")
	require.True(b, ok, "devicemanager suite not registered")
	steps := 0
	seed := uint64(1)
	for b.Loop() {
		r := Run(suite, RunOptions{Checks: 20, Steps: 100, Seed: seed})
		if !r.Passed {
			// Failure is a pointer: reading its message on a passing run
			// would dereference nil.
			require.NotNil(b, r.Failure, "suite failed without a failure")
			require.Fail(b, "suite failed", r.Failure.Message)
		}
		steps += r.Tally.Steps
		seed += 20
	}
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
}
