package verify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nodeproof/nodeproof/verify/cite"
)

// Finding is a broken promise of upstream's kubelet: a contract property
// that nodeproof's generated search breaks, shrunk to a short case and
// confirmed by driving upstream's own code (the conformance module) or the
// real kubelet binary the same way.
type Finding struct {
	// ID is stable and unique, the subsystem's invariant prefix and a
	// number: "PB-F1", "GC-F1", "SIM-F1".
	ID string
	// Title says what breaks, in a line.
	Title string
	// Subsystem is the subsystem whose code breaks the promise, as in
	// properties.Invariant.Subsystem ("prober", "imagegc", ...).
	Subsystem string
	// Suite is the registered suite whose generated search finds it, and
	// Property the contract property ID it breaks.
	Suite, Property string
	// Promise is what Kubernetes promises, in the user's terms; Sources
	// cite it (the documentation or a KEP, never upstream's code).
	Promise string
	Sources []cite.Source
	// Steps is the shortest case known, as steps a kubelet engineer reads.
	Steps []string
	// Seed is a base seed from which the suite's search at its default
	// budget reaches the finding; `nodeproof findings` searches from it.
	Seed uint64
	// Confirmation names the test that shows the broken promise on
	// upstream's own code: "conformance: TestFindingPBStartupGate" (the
	// v1.36.3 kubelet packages) or a real-kubelet test.
	Confirmation string
	// RealKubelet names the test that shows the broken promise on the
	// real kubelet binary, run as a node ("realkubelet/scenario:
	// TestFindingCGQuotaFloorOnNode"), or says why no such test exists:
	// what keeps a node under the harness from showing it.
	RealKubelet string
	// Tracker cites the upstream issues or pull requests that track it;
	// empty when none was found (NoTracker says so in words).
	Tracker []cite.Source
	// Releases says what later releases do, read from their code:
	// "still present in v1.37.2" or "fixed in v1.37.2 by kubernetes PR #N".
	Releases string
}

// Why a finding has no real-kubelet test (Finding.RealKubelet).
const (
	imageGCOnNode = "not observable on a node in a test's time: the kubelet's first image GC pass runs as it starts, " +
		"when every image has just been detected, so imageMinimumGCAge keeps them all, and imageMaximumGCAge's " +
		"removals wait until that age has passed since the start; the next pass is 5 minutes later (ImageGCPeriod, " +
		"which no flag or configuration field sets). An imageMinimumGCAge of 0 would let the first pass remove the " +
		"images the node's pods are about to use"
	readinessFromAPIServer = "not observable on a standalone node: across a kubelet restart the kubelet keeps a " +
		"probed container Ready only while the pod it was given holds a True Ready condition (read: " +
		"pkg/kubelet/prober/prober_manager.go setReadyStateOnKubeletRestart), and the harness's pods are static pods " +
		"read from files, with no status, for want of an API server: every probed container of theirs starts a " +
		"restart not Ready, on either side of the line the finding draws"
)

// NoTracker is what the report and docs/findings.md say of a finding no
// upstream issue or pull request tracks: the most valuable kind.
const NoTracker = "no upstream issue found"

// Findings returns every known finding, by ID.
func Findings() []Finding {
	var all []Finding
	for _, list := range [][]Finding{devicemanagerFindings, imagegcFindings, proberFindings, preemptionFindings, cgroupsFindings, simFindings} {
		all = append(all, list...)
	}
	slices.SortFunc(all, func(a, b Finding) int { return strings.Compare(a.ID, b.ID) })
	return all
}

// Explains reports whether a known finding is about the contract property
// id, and so whether a breach of it is expected.
func Explains(id string) bool {
	return slices.ContainsFunc(Findings(), func(f Finding) bool { return f.Property == id })
}

// ByID returns the finding with that ID.
func ByID(id string) (Finding, error) {
	for _, f := range Findings() {
		if f.ID == id {
			return f, nil
		}
	}
	return Finding{}, fmt.Errorf("finding %q: no such finding (nodeproof findings --list names them)", id)
}
