package imagegc

import (
	"fmt"
	"time"

	core "github.com/nodeproof/nodeproof/core/imagegc"
)

// Kubelet starts the image GC manager of one kubelet run with policy: a
// system under test other than core (ContractSuite). The machine calls it
// at the node's start and at every restart; the conformance module's
// starts upstream's realImageGCManager.
type Kubelet func(policy core.Policy) (Collector, error)

// Collector is one kubelet run's image GC manager, driven by the machine.
// Its errors are the system refusing a valid input, never a pass's error
// (Outcome.Err).
type Collector interface {
	// Detect is the background detection at now, the runtime answering
	// with view.
	Detect(now time.Time, view core.RuntimeView) error
	// Collect runs GarbageCollect (gc, the GC loop having begun at
	// beganGC) or DeleteUnusedImages at now, the runtime listing view: it
	// asks rt for every RemoveImage and ImageFsStats call, in the order it
	// makes them, and returns what the pass did.
	Collect(gc bool, now, beganGC time.Time, view core.RuntimeView, rt Runtime) (Outcome, error)
}

// Runtime is the node answering a pass: the container runtime's
// RemoveImage (removal says which image, for which pass and what the
// kubelet counts it as) and the stats provider's ImageFsStats.
type Runtime interface {
	RemoveImage(removal core.Removal) error
	ImageFsStats() core.FsStats
}

// Outcome is what a pass did, as every Collector tells it; the contract
// checks read nothing else. Core is core/imagegc's whole outcome (the
// usage it computed, events, the post-GC hooks' input), which only core
// gives: the fidelity checks compare it with the model and the twin, and
// apply only to a pass core ran.
type Outcome struct {
	// Attempts are the RemoveImage calls in order, failed ones included,
	// each with its pass: RemovedForAge (the MaxAge pass) or
	// RemovedForSpace.
	Attempts []core.Attempt
	// FreedBytes is what the space pass counted as freed.
	FreedBytes int64
	// Err is the pass's error.
	Err error
	// Core is nil when another system under test (upstream's manager, in
	// the conformance module) ran the pass.
	Core *core.Outcome
}

// coreCollector is core/imagegc's manager as the registered suite's
// system under test.
type coreCollector struct{ *core.Manager }

// Collect runs core's pass through its stepped API, rt answering each step.
func (c coreCollector) Collect(gc bool, now, beganGC time.Time, view core.RuntimeView, rt Runtime) (Outcome, error) {
	var pass *core.Pass
	var err error
	if gc {
		pass, err = c.GarbageCollect(now, beganGC, view)
	} else {
		pass, err = c.DeleteUnusedImages(now, view)
	}
	if err != nil {
		return Outcome{}, fmt.Errorf("a valid view is refused: %v", err)
	}
	for step := pass.Next(); step.Kind != core.StepDone; step = pass.Next() {
		switch step.Kind {
		case core.StepRemoveImage:
			if err := pass.RemoveImageDone(rt.RemoveImage(step.Removal)); err != nil {
				return Outcome{}, fmt.Errorf("RemoveImageDone after a removal step: %v", err)
			}
		case core.StepImageFsStats:
			stats := rt.ImageFsStats()
			if err := pass.ImageFsStatsDone(stats, nil); err != nil {
				return Outcome{}, fmt.Errorf("valid stats %+v refused: %v", stats, err)
			}
		}
	}
	o := pass.Outcome()
	return Outcome{Attempts: o.Attempts, FreedBytes: o.FreedBytes, Err: o.Err, Core: &o}, nil
}
