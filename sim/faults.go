package sim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The fault kinds. Each rate is the probability that the fault fires at
// one opportunity for it; the comment says what the opportunity is and what
// the fault does.
const (
	// PluginCrash: at each plugin's health tick, its ListAndWatch stream
	// ends (Disconnected); the plugin registers again after a drawn delay,
	// sometimes past the 5-minute endpoint grace period.
	PluginCrash Fault = "plugin-crash"
	// PluginReregister: at a plugin's health tick, it registers again while
	// still connected; the old stream's late end must not wipe the new one.
	PluginReregister Fault = "plugin-reregister"
	// AllocateError: an Allocate RPC fails with an error.
	AllocateError Fault = "allocate-error"
	// AllocateHang: an Allocate RPC hangs and after 30 s ends with a
	// DeadlineExceeded error. Upstream's Allocate sets no deadline of its
	// own, so the error is the plugin's (a call it makes timing out).
	AllocateHang Fault = "allocate-hang"
	// AllocateMalformed: an Allocate answer carries no container response;
	// the core rejects it.
	AllocateMalformed Fault = "allocate-malformed"
	// AllocateSlow: a plugin takes 1 s to 3 min to answer an Allocate RPC
	// that then succeeds. Upstream's Allocate runs under context.TODO()
	// (spec/devicemanager.md §1.1), so the kubelet waits for as long as the
	// plugin takes and admits nothing else meanwhile; a kubelet restart in
	// that time leaves the answer to a process that is gone. The plugin
	// answers one call at a time, so a call made while it is slow is
	// answered after the slow one. Drawn from a stream of its own
	// (Source.Split), so that it leaves every other draw of a seed as it
	// was.
	AllocateSlow Fault = "allocate-slow"
	// KubeletRestart: after any event, the kubelet restarts.
	KubeletRestart Fault = "kubelet-restart"
	// RestartMidAdmission: when an Allocate answer arrives, the kubelet
	// restarts before reporting it (between a Plan and its Commit).
	RestartMidAdmission Fault = "restart-mid-admission"
	// RestartBeforeCheckpoint: after an Allocate answer is committed, the
	// kubelet restarts before the checkpoint is written.
	RestartBeforeCheckpoint Fault = "restart-before-checkpoint"
	// ImageRemoveError: a RemoveImage call of image GC fails.
	ImageRemoveError Fault = "image-remove-error"
	// ProbeTimeout: a probe runs past its timeout (a Failure).
	ProbeTimeout Fault = "probe-timeout"
	// ProbeError: one try of a probe errors (retried up to three times).
	ProbeError Fault = "probe-error"
	// DiskFill: at each image GC period, something fills the image
	// filesystem by a drawn amount.
	DiskFill Fault = "disk-fill"
	// RuntimeListError: ListImages or GetPods fails for one GC pass
	// (#118559).
	RuntimeListError Fault = "runtime-list-error"
	// KillError: a preemption kill fails; the kubelet retries it later.
	KillError Fault = "kill-error"
)

// AllFaults returns every fault kind in the order of the constants above:
// device plugins, kubelet restarts, image GC, probes, disk, runtime, kills.
func AllFaults() []Fault {
	return []Fault{PluginCrash, PluginReregister, AllocateError, AllocateHang, AllocateMalformed,
		AllocateSlow, KubeletRestart, RestartMidAdmission, RestartBeforeCheckpoint, ImageRemoveError,
		ProbeTimeout, ProbeError, DiskFill, RuntimeListError, KillError}
}

// DefaultRates turns every kind on, at rates chosen so that each fires many
// times in 24 simulated hours of a 20-pod node without drowning the
// uneventful behaviour the invariants also need.
func DefaultRates() Rates {
	return Rates{
		PluginCrash:             0.05,
		PluginReregister:        0.05,
		AllocateError:           0.05,
		AllocateHang:            0.05,
		AllocateMalformed:       0.05,
		AllocateSlow:            0.05,
		KubeletRestart:          0.0002,
		RestartMidAdmission:     0.05,
		RestartBeforeCheckpoint: 0.05,
		ImageRemoveError:        0.1,
		ProbeTimeout:            0.005,
		ProbeError:              0.005,
		DiskFill:                0.1,
		RuntimeListError:        0.05,
		KillError:               0.2,
	}
}

func knownFault(f Fault) bool {
	for _, k := range AllFaults() {
		if k == f {
			return true
		}
	}
	return false
}

// ParseRates reads "default", "none" (every kind off), or a comma-separated
// list of kind=rate that sets those kinds and leaves the rest off. An empty
// string is an error, not "none": a script whose variable came out empty
// would otherwise run without faults and not know it.
func ParseRates(s string) (Rates, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "default":
		return DefaultRates(), nil
	case "none":
		return Rates{}, nil
	case "":
		return nil, fmt.Errorf("faults: empty: give default, none (every kind off) or kind=rate,... of the kinds %s", kindList())
	}
	r := Rates{}
	for _, item := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return nil, fmt.Errorf("faults: %q: want kind=rate", item)
		}
		f := Fault(strings.TrimSpace(name))
		if !knownFault(f) {
			return nil, fmt.Errorf("faults: %q: unknown fault kind; known kinds: %s", f, kindList())
		}
		if _, dup := r[f]; dup {
			return nil, fmt.Errorf("faults: %s: given twice", f)
		}
		rate, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return nil, fmt.Errorf("faults: %s: rate %q is not a number", f, value)
		}
		if !(rate >= 0 && rate <= 1) {
			return nil, fmt.Errorf("faults: %s: rate %v must be in [0, 1]", f, rate)
		}
		r[f] = rate
	}
	return r, nil
}

func kindList() string {
	var names []string
	for _, f := range AllFaults() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// validate checks rates that did not come from ParseRates.
func (r Rates) validate() error {
	for _, f := range r.sortedKinds() {
		if !knownFault(f) {
			return fmt.Errorf("faults: %q: unknown fault kind; known kinds: %s", f, kindList())
		}
		if rate := r[f]; !(rate >= 0 && rate <= 1) {
			return fmt.Errorf("faults: %s: rate %v must be in [0, 1]", f, rate)
		}
	}
	return nil
}

func (r Rates) sortedKinds() []Fault {
	kinds := make([]Fault, 0, len(r))
	for f := range r {
		kinds = append(kinds, f)
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i] < kinds[j] })
	return kinds
}

// String is the canonical form: kinds sorted by name, zero rates left out
// (a kind left out is off), "none" when every kind is off. ParseRates reads
// it back to equal rates.
func (r Rates) String() string {
	var parts []string
	for _, f := range r.sortedKinds() {
		if r[f] == 0 {
			continue
		}
		parts = append(parts, string(f)+"="+strconv.FormatFloat(r[f], 'g', -1, 64))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}
