package plugincheck

import (
	"context"
	"fmt"
	"time"

	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/verify"
)

// Severity says how much a failed check matters.
type Severity string

// The severities, from the most to the least serious.
const (
	// Contract: the plugin breaks the device plugin API contract.
	Contract Severity = "contract"
	// Kubelet: the contract is silent, but a kubelet would misbehave.
	Kubelet Severity = "kubelet"
	// Advice: worth fixing, harmless to a kubelet.
	Advice Severity = "advice"
)

// CheckSpec is one rule the checker holds a plugin to: a verify.Property
// (its ID, the rule as its Statement, what the rule rests on as its
// Sources) and how much a failure matters. (It is not called Check: that
// name is the function that runs them.)
//
// Its Kind follows from its Severity. A contract check states what the
// device plugin API asks of a plugin, in api.proto's comments and the
// Kubernetes documentation: a promise, verify.Contract. A kubelet check
// and a piece of advice state what keeps a plugin clear of what upstream's
// kubelet does with its answers, read in the kubelet's code, where the API
// is silent: they hold the plugin to upstream's behaviour, not to a
// promise, so they are verify.Fidelity.
type CheckSpec struct {
	verify.Property
	Severity Severity
}

// subsystem is the subsystem of the checks: the device plugin API.
const subsystem = "deviceplugin"

// Defaults for zero Options fields.
const (
	DefaultRegisterTimeout = 30 * time.Second
	DefaultCallTimeout     = 10 * time.Second
	DefaultChecks          = 100
	DefaultShrinkTime      = 30 * time.Second
)

// Options configure a run. Only Dir is required.
type Options struct {
	// Dir is where the checker serves kubelet.sock; the plugin registers
	// there and serves its own socket there.
	Dir string
	// RegisterTimeout bounds the wait for Register, at the start and after
	// the kubelet restart. Zero means DefaultRegisterTimeout.
	RegisterTimeout time.Duration
	// CallTimeout bounds every call to the plugin and the wait for a
	// ListAndWatch snapshot. Zero means DefaultCallTimeout.
	CallTimeout time.Duration
	// Checks is the number of rapid cases per property. Zero means
	// DefaultChecks.
	Checks int
	// ShrinkTime bounds the shrinking of each failing case of the
	// kubelet-call properties. A case whose call hangs waits out
	// CallTimeout at every attempt to shrink it, so without a bound a
	// hang takes minutes to shrink. Past the bound the finding keeps the
	// smallest failing case found by then and says the shrinking was
	// bounded (Finding.ShrinkBounded). The bound is checked between
	// attempts: the shrinking of one case ends within ShrinkTime and two
	// cases' calls, then the case is run once more to show its calls.
	// Zero means DefaultShrinkTime.
	ShrinkTime time.Duration
	// Seed is rapid's base seed. 0 reads the environment variable
	// NODEPROOF_PLUGINCHECK_SEED (SeedEnv), which a go test replay line
	// sets; without it one is picked. Result.Seed reports the seed used.
	Seed uint64
	// Mute lists checks of the kubelet-call properties (PropertyChecks)
	// that the properties judge and count but neither report nor let stop
	// a case (the smoke pass still reports them). A finding's replay line mutes the checks that had failed
	// before it, so that its case runs as it did. The checks listed in the
	// environment variable NODEPROOF_PLUGINCHECK_MUTE (MuteEnv, comma
	// separated) are muted too.
	Mute []string
	// Progress, when set, is called with the cases done and the cases
	// requested over all properties.
	Progress func(done, total int)
	// Restart runs the kubelet-restart check: kubelet.sock is removed and
	// served anew, and the plugin must register again.
	Restart bool
	// Launch, when set, starts the plugin once kubelet.sock is served. It
	// runs on its own goroutine and may block until the plugin registered
	// (testplugin.Start does), or for the plugin's whole life
	// (Process.Launch does). An error it returns before any registration
	// ends Check with that error; one it returns after says the plugin is
	// gone (an *ExitError: its process exited), which ends the run at once
	// with that exit as one PC-PLUGIN-ALIVE finding. Nil says the plugin
	// started and Launch does not watch it. The caller stops the plugin
	// after Check.
	Launch func(ctx context.Context) error
	// ReplayCommand is the command line that repeats this run, without
	// --seed and --mute; a replay line appends " --seed N" and, when checks
	// were muted, " --mute A,B". Empty means "nodeproof plugin-check --dir
	// <Dir>"; Run, given none, writes go test replay lines instead.
	ReplayCommand string

	// goTestReplay, set by Run, builds the replay lines in place of
	// ReplayCommand.
	goTestReplay func(seed uint64, muted []string) string
}

// The environment variables Check reads, so that a go test replay line
// can choose the seed and the muted checks of a run it does not build.
const (
	SeedEnv = "NODEPROOF_PLUGINCHECK_SEED"
	MuteEnv = "NODEPROOF_PLUGINCHECK_MUTE"
)

// Finding is one failed check.
type Finding struct {
	Check    string   `json:"check"`
	Severity Severity `json:"severity"`
	// Message is the one-line verdict, without the check's ID, which
	// Check holds: a reader sees "PC-X (contract): message".
	Message string `json:"message"`
	// Steps are the kubelet calls that failed, each with the answer's
	// detail lines indented under it: the shrunk case of a rapid property,
	// or the one call of the smoke pass; empty for the other checks.
	Steps []string `json:"steps,omitempty"`
	// Replay is the command that repeats the failing case of a rapid
	// property; empty for the checks that run once, which every run
	// repeats.
	Replay string `json:"replay,omitempty"`
	// ShrinkBounded says Options.ShrinkTime ended the shrinking of the
	// failing case: Steps are the smallest failing case found by then,
	// not necessarily the smallest there is.
	ShrinkBounded bool `json:"shrink_bounded,omitempty"`
}

// PluginOptions are the options a plugin registered with.
type PluginOptions struct {
	PreStartRequired                bool `json:"pre_start_required"`
	GetPreferredAllocationAvailable bool `json:"get_preferred_allocation_available"`
}

// Plugin is what registered.
type Plugin struct {
	ResourceName string        `json:"resource_name"`
	Endpoint     string        `json:"endpoint"`
	Version      string        `json:"version"`
	Options      PluginOptions `json:"options"`
	// Devices and Healthy count the devices of the first snapshot.
	Devices int `json:"devices"`
	Healthy int `json:"healthy"`
}

// Count says how often a check ran and how often it had something to judge.
type Count struct {
	Run     int `json:"run"`
	Applied int `json:"applied"`
}

// Result is the outcome of a run.
type Result struct {
	Seed uint64 `json:"seed"`
	// Replay is the command that repeats the whole run: Options.ReplayCommand
	// with the seed and the muted checks, or Run's go test line.
	Replay  string  `json:"replay"`
	Seconds float64 `json:"seconds"`
	Plugin  Plugin  `json:"plugin"`
	// Counts holds every check of Checks, by ID.
	Counts map[string]Count `json:"counts"`
	// Findings are the failed checks in Checks order.
	Findings []Finding `json:"findings"`
	// Interrupted says the run's context ended before the run finished:
	// Findings holds what was found until then, never the failures the
	// interrupt caused.
	Interrupted bool `json:"interrupted"`
}

// Verdict says in a few words how the run went: "passed", "passed, with
// 1 piece of advice", "FAILED: 2 findings", "FAILED: 1 finding, and 1
// piece of advice" or "INTERRUPTED before the run finished". Advice is
// counted apart: it does not fail a run.
func (r *Result) Verdict() string {
	failing, advice := 0, 0
	for _, f := range r.Findings {
		if f.Severity == Advice {
			advice++
		} else {
			failing++
		}
	}
	pieces := "piece"
	if advice != 1 {
		pieces = "pieces"
	}
	switch {
	case r.Interrupted && len(r.Findings) == 0:
		return "INTERRUPTED before the run finished"
	case r.Interrupted:
		return fmt.Sprintf("INTERRUPTED before the run finished, with %s by then", phrase.Count(len(r.Findings), "finding"))
	case failing == 0 && advice == 0:
		return "passed"
	case failing == 0:
		return fmt.Sprintf("passed, with %d %s of advice", advice, pieces)
	case advice == 0:
		return "FAILED: " + phrase.Count(failing, "finding")
	default:
		return fmt.Sprintf("FAILED: %s, and %d %s of advice", phrase.Count(failing, "finding"), advice, pieces)
	}
}

// Passed reports whether the run finished and no Contract and no Kubelet
// check failed. A Kubelet finding fails the run too: a plugin the kubelet
// mishandles is broken on a node, whatever the contract says. Advice does
// not fail a run. An interrupted run did not pass: it did not check all.
func (r *Result) Passed() bool {
	if r.Interrupted {
		return false
	}
	for _, f := range r.Findings {
		if f.Severity != Advice {
			return false
		}
	}
	return true
}
