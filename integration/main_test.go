package integration

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"testing"
	"time"
)

// childEnv, when set, turns the test binary into a workload for the cgroup
// enforcement tests: the test re-executes itself with it, places the child in
// a cgroup while the child waits on stdin, and then releases it.
const childEnv = "NODEPROOF_CGROUP_CHILD"

// Workloads the child runs once released.
const (
	childAllocate = "allocate" // touch memory until killed
	childSpin     = "spin"     // burn CPU until killed
)

// childGiveUp ends a child that outlives its test (its parent died, or the
// limit was not enforced), so that no workload is ever left running.
const childGiveUp = 30 * time.Second

// exitNotKilled is the child's exit status when it allocated childMaxBytes
// without being killed.
const exitNotKilled = 3

// childMaxBytes bounds what the allocating child touches: far above any
// limit the tests set, far below the machine's memory.
const childMaxBytes = 1 << 30

// rapidChecks is this package's default budget for rapid properties; each
// check creates and removes real cgroups. -rapid.checks or RAPID_CHECKS
// still override it.
const rapidChecks = "20"

// spinSink keeps the spinning loop's work observable.
var spinSink int

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
	if _, inEnv := os.LookupEnv("RAPID_CHECKS"); !set && !inEnv {
		if err := flag.Set("rapid.checks", rapidChecks); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}

// runChild waits for one byte on stdin, the parent's signal that the child
// is in its cgroup, then runs the workload.
func runChild(mode string) int {
	var b [1]byte
	if _, err := os.Stdin.Read(b[:]); err != nil {
		fmt.Fprintln(os.Stderr, "child: not released:", err)
		return 2
	}
	deadline := time.Now().Add(childGiveUp)
	switch mode {
	case childAllocate:
		// The collector would only slow the allocation down; every chunk
		// stays referenced anyway.
		debug.SetGCPercent(-1)
		var kept [][]byte
		for total := 0; total < childMaxBytes && time.Now().Before(deadline); total += 1 << 20 {
			chunk := make([]byte, 1<<20)
			for i := 0; i < len(chunk); i += 4096 {
				chunk[i] = 1 // fault the page in, so it is charged to the cgroup
			}
			kept = append(kept, chunk)
		}
		fmt.Fprintf(os.Stderr, "child: allocated %d MiB without being killed\n", len(kept))
		return exitNotKilled
	case childSpin:
		for time.Now().Before(deadline) && os.Getppid() != 1 {
			for i := 0; i < 1_000_000; i++ {
				spinSink++
			}
		}
		fmt.Fprintln(os.Stderr, "child: spun until the deadline")
		return 0
	}
	fmt.Fprintln(os.Stderr, "child: unknown mode", mode)
	return 2
}
