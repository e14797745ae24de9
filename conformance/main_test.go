package conformance

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// defaultChecks is the number of generated inputs per function unless
// -rapid.checks says otherwise: issue 6 asks for at least 10^4.
const defaultChecks = 10_000

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
	if !set {
		if err := flag.Set("rapid.checks", fmt.Sprint(defaultChecks)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	// Upstream's preemption logs every eviction through klog; thousands of
	// cases would bury a mismatch report.
	klog.SetLogger(logr.Discard())
	code := m.Run()
	if err := writePluginCheckResults(); err != nil {
		fmt.Fprintln(os.Stderr, "conformance: plugin-check results:", err)
		if code == 0 {
			code = 1
		}
	}
	if err := WriteResults(); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
