package sim

import (
	"fmt"
	"time"

	"github.com/nodeproof/nodeproof/core/imagegc"
)

// removalLatency is how long one RemoveImage takes: long enough that a
// container can start between a pass's detection and its removals, the
// #123631 window.
const removalLatency = 300 * time.Millisecond

// gcStart is the kubelet's 5-minute image GC loop: the disk may have
// filled since the last one (the disk-fill fault; log rotation drains it
// again), then GarbageCollect starts with a detection on the runtime's
// view.
func (s *Sim) gcStart() string {
	k := s.kubelet
	s.schedule(&queued{at: s.now.Add(imagegc.GCPeriod), kind: evGC, kubelet: k.gen})
	rt := s.runtime
	rt.fillerBytes -= 2 * gi
	if rt.fillerBytes < 0 {
		rt.fillerBytes = 0
	}
	if s.fault(DiskFill) {
		rt.fillerBytes += int64(10+s.src.Intn(16)) * gi
	}
	if k.pass != nil {
		return s.nothingHappened("a pass is still running")
	}
	pass, err := k.gc.GarbageCollect(s.now, k.beganGC, s.runtimeView())
	if err != nil {
		s.coreErr("imagegc.GarbageCollect", err)
		return "refused"
	}
	k.pass = &gcPass{pass: pass, detectedAt: s.now, seenStarts: s.runtime.nextID}
	return fmt.Sprintf("usage %d%%; %s", 100-s.fsStats().AvailableBytes*100/imageFsBytes, s.advanceGC())
}

// advanceGC steps the pass until it needs a removal, which takes time, or
// ends.
func (s *Sim) advanceGC() string {
	k := s.kubelet
	gp := k.pass
	for {
		step := gp.pass.Next()
		switch step.Kind {
		case imagegc.StepImageFsStats:
			s.coreErr("imagegc.ImageFsStatsDone", gp.pass.ImageFsStatsDone(s.fsStats(), nil))
		case imagegc.StepRemoveImage:
			gp.removal = step.Removal
			s.schedule(&queued{at: s.now.Add(removalLatency), kind: evGCStep, kubelet: k.gen})
			return "removing " + step.Removal.ImageID
		default:
			k.pass = nil
			out := gp.pass.Outcome()
			k.gcLoop.Observe(out.Err)
			if out.Err != nil {
				return "done: " + out.Err.Error()
			}
			if len(out.Attempts) == 0 {
				s.nothingHappened("")
			}
			return fmt.Sprintf("done, %d removals", len(out.Attempts))
		}
	}
}

// gcStep is the runtime performing one RemoveImage of the pass.
func (s *Sim) gcStep() string {
	gp := s.kubelet.pass
	if gp == nil {
		return s.nothingHappened("no pass")
	}
	id := gp.removal.ImageID
	var err error
	if s.fault(ImageRemoveError) {
		err = fmt.Errorf("rpc error: code = Unknown desc = failed to remove image %q: image is being used", id)
	} else {
		s.imageRemoved(id, gp)
	}
	s.coreErr("imagegc.RemoveImageDone", gp.pass.RemoveImageDone(err))
	return id + ": " + s.advanceGC()
}

// imageRemoved takes the image off the filesystem and judges it against
// the containers running it: one that started before the pass's detection
// was in use and must not lose its image; one that started after it is
// upstream's #123631 window, reported as observed behaviour. Which came
// first is judged by the order of the starts, not by their time: a
// container started at the detection's instant but after it is in the
// window too.
func (s *Sim) imageRemoved(id string, gp *gcPass) {
	delete(s.runtime.images, id)
	for _, uid := range s.podOrder {
		p := s.pods[uid]
		for _, c := range p.containers {
			if !c.running || c.image != id {
				continue
			}
			if c.startSeq > gp.seenStarts {
				c.imageRemovedInWindow = true
				s.stats.Observed["image GC removed the image of a container started after the pass's detection (#123631)"]++
				continue
			}
			s.gcBad = append(s.gcBad, fmt.Sprintf("image GC removed %s, in use by %s/%s (%s) running since %v, before the pass's detection at %v",
				id, uid, c.name, c.id, c.startedAt.Sub(simStart), gp.detectedAt.Sub(simStart)))
		}
	}
}
