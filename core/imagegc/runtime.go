package imagegc

import "time"

// Runtime is the container runtime and stats provider as a pass needs
// them, implemented by callers (agent/cri over CRI, a fake in tests, the
// conformance harness). Calls are made one at a time, in upstream's order.
type Runtime interface {
	// View is the answer of ListImages, GetPods(all=true) and
	// GetContainerStatus for each listed container, errors included.
	View() RuntimeView
	// RemoveImage removes one image; an error keeps the image's record.
	RemoveImage(imageID, runtimeHandler string) error
	// ImageFsStats reads the image filesystem's capacity and availability.
	ImageFsStats() (FsStats, error)
}

// RunGarbageCollect runs a whole GarbageCollect at now against rt. The
// error is bad input only; upstream's error is Outcome.Err.
func (m *Manager) RunGarbageCollect(rt Runtime, now, beganGC time.Time) (Outcome, error) {
	p, err := m.GarbageCollect(now, beganGC, rt.View())
	if err != nil {
		return Outcome{}, err
	}
	return Run(p, rt)
}

// RunDeleteUnusedImages runs a whole DeleteUnusedImages at now against rt.
func (m *Manager) RunDeleteUnusedImages(rt Runtime, now time.Time) (Outcome, error) {
	p, err := m.DeleteUnusedImages(now, rt.View())
	if err != nil {
		return Outcome{}, err
	}
	return Run(p, rt)
}

// Run steps p to its end against rt. The error is bad input from rt (an
// out-of-bounds filesystem reading); the pass is left where it stopped.
func Run(p *Pass, rt Runtime) (Outcome, error) {
	for step := p.Next(); step.Kind != StepDone; step = p.Next() {
		var err error
		switch step.Kind {
		case StepRemoveImage:
			err = p.RemoveImageDone(rt.RemoveImage(step.Removal.ImageID, step.Removal.RuntimeHandler))
		case StepImageFsStats:
			err = p.ImageFsStatsDone(rt.ImageFsStats())
		}
		if err != nil {
			return p.Outcome(), err
		}
	}
	return p.Outcome(), nil
}
