package realkubelet

import (
	"testing"

	"go.uber.org/goleak"
)

// The harness starts goroutines (process reapers, gRPC and HTTP clients,
// the test plugin's); every one must be gone when the tests end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
