package verify

import (
	"fmt"

	"github.com/nodeproof/nodeproof/verify/cite"
)

// Property is one statement nodeproof checks: an invariant of a suite, of
// the node simulation or of the admission checks, or a rule the device
// plugin checker holds a plugin to. Every kind of check in nodeproof is
// described by one, so that the catalogue, the report, the replay line and
// the kill matrix of mutants name checks the same way.
type Property struct {
	// ID is stable and unique across nodeproof ("DM-EXCLUSIVE",
	// "SIM-DEVICES", "PC-REG-VERSION"); a violation's message starts with
	// it, so that tools can attribute a failure.
	ID string
	// Kind says whether Statement is upstream's behaviour (fidelity) or
	// Kubernetes' promise to its users (contract).
	Kind Kind
	// Subsystem is the subsystem the statement is about ("devicemanager",
	// "imagegc", "prober", "preemption", "admission", "cgroups", "sim",
	// "deviceplugin").
	Subsystem string
	// Statement is one sentence a reviewer reads without the code.
	Statement string
	// Sources say where the statement comes from; a contract property
	// cites the Kubernetes documentation or a KEP, never upstream's code.
	Sources []cite.Source
}

// Contracts are the contract properties of ps, in order: the ones that
// judge a system under test other than nodeproof's core, whose fidelity
// properties compare it with upstream's behaviour.
func Contracts(ps []Property) []Property {
	var out []Property
	for _, p := range ps {
		if p.Kind == Contract {
			out = append(out, p)
		}
	}
	return out
}

// Check is a Property and how it is checked on a state of type S: a case
// of a generated test, the node simulation after an event, a plugin's
// answer.
type Check[S any] struct {
	Property
	// Applies says whether the statement has something to compare in s
	// (a pod holding devices, a preemption that chose victims); nil means
	// always. A check that does not apply still counts as checked, so that
	// a reader sees how often the statement was put to the test.
	Applies func(s S) bool
	// Holds returns the violation, nil when the statement holds. Its text
	// says what is wrong; Evaluate prefixes the ID.
	Holds func(s S) error
}

// Evaluate checks s, counting the evaluation (and whether it applied) in
// counts, which may be nil. A violation comes back as "ID: what is wrong".
func (c Check[S]) Evaluate(s S, counts Counts) error {
	applied := c.Applies == nil || c.Applies(s)
	counts.Record(c.ID, applied)
	if !applied || c.Holds == nil {
		return nil
	}
	if err := c.Holds(s); err != nil {
		return fmt.Errorf("%s: %w", c.ID, err)
	}
	return nil
}

// Properties lists the properties of checks, in their order.
func Properties[S any](checks []Check[S]) []Property {
	out := make([]Property, len(checks))
	for i, c := range checks {
		out[i] = c.Property
	}
	return out
}

// Count is how often one check was evaluated, and how many of those
// evaluations had something to compare.
type Count struct {
	Checked int `json:"checked"`
	Applied int `json:"applied"`
}

// Counts are the counts of checks by ID. The zero (nil) value records
// nothing, for callers that do not count.
type Counts map[string]Count

// Record counts one evaluation of id.
func (c Counts) Record(id string, applied bool) {
	if c == nil {
		return
	}
	n := c[id]
	n.Checked++
	if applied {
		n.Applied++
	}
	c[id] = n
}
