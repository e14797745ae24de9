package sim

import (
	"fmt"
	"strconv"
	"time"

	"github.com/nodeproof/nodeproof/verify"
)

// DefaultTraceLen is how many events a violation reports by default.
const DefaultTraceLen = 40

// MaxPods bounds Config.Pods: the node's 110-pod limit leaves room for the
// critical pods and the terminating ones beside the steady population.
const MaxPods = 100

// MaxHours bounds the simulated hours per seed a command asks for (sim
// --hours, report --sim-hours, a campaign plan's sim.hours): a simulated
// year, far beyond what a run needs, and far below what a time.Duration
// holds (292 years).
const MaxHours = 24 * 365

// DefaultConfig is one simulated day of a 20-pod node with every fault on.
func DefaultConfig() Config {
	return Config{Seed: 1, Duration: 24 * time.Hour, Pods: 20, Faults: DefaultRates()}
}

// Validate names the first field that breaks its rule.
func (c Config) Validate() error {
	switch {
	case c.Duration <= 0:
		return fmt.Errorf("duration: %v must be positive", c.Duration)
	case c.Pods < 1 || c.Pods > MaxPods:
		return fmt.Errorf("pods: %d must be between 1 and %d", c.Pods, MaxPods)
	case c.NodeMaxPods < 0 || c.NodeMaxPods > defaultNodeMaxPods:
		return fmt.Errorf("nodeMaxPods: %d must be between 0 (the default, %d) and %d", c.NodeMaxPods, defaultNodeMaxPods, defaultNodeMaxPods)
	case c.TraceLen < 0:
		return fmt.Errorf("traceLen: %d must not be negative", c.TraceLen)
	}
	if err := c.validateExplained(); err != nil {
		return err
	}
	return c.Faults.validate()
}

// validateExplained: a known finding explains only a contract invariant's
// violations; a fidelity invariant's violation is a bug of the simulation
// or of a core, which nothing excuses.
func (c Config) validateExplained() error {
	contract := map[string]bool{}
	for _, inv := range Invariants() {
		contract[inv.ID] = inv.Kind == verify.Contract
	}
	for _, id := range c.Explained {
		known, ok := contract[id]
		switch {
		case !ok:
			return fmt.Errorf("explained: %q is not an invariant of the simulation", id)
		case !known:
			return fmt.Errorf("explained: %s is a fidelity invariant; only a contract invariant's violations can be explained by a known finding", id)
		}
	}
	return nil
}

func (c Config) traceLen() int {
	if c.TraceLen == 0 {
		return DefaultTraceLen
	}
	return c.TraceLen
}

func (c Config) nodeMaxPods() int64 {
	if c.NodeMaxPods == 0 {
		return defaultNodeMaxPods
	}
	return int64(c.NodeMaxPods)
}

// ReplayCommand is the nodeproof command line that reruns this config.
func (c Config) ReplayCommand() string {
	words := []string{"nodeproof", "sim", "--seed", strconv.FormatUint(c.Seed, 10),
		"--hours", strconv.FormatFloat(c.Duration.Hours(), 'f', -1, 64), "--pods", strconv.Itoa(c.Pods)}
	if c.NodeMaxPods != 0 {
		words = append(words, "--max-pods", strconv.Itoa(c.NodeMaxPods))
	}
	return verify.CommandLine(append(words, "--faults", c.Faults.String())...)
}
