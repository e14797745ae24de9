package imagegc

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// StepKind says what a Pass asks its caller to do next.
type StepKind int

const (
	// StepDone: the pass has ended; Outcome holds its result.
	StepDone StepKind = iota
	// StepRemoveImage: call the runtime's RemoveImage(Removal.ImageID,
	// Removal.RuntimeHandler) and report its error with RemoveImageDone.
	StepRemoveImage
	// StepImageFsStats: read the image filesystem's stats and report them
	// with ImageFsStatsDone.
	StepImageFsStats
)

// Removal reasons, upstream's ImageGarbageCollectedTotal metric labels.
const (
	RemovedForAge   = "age"
	RemovedForSpace = "space"
)

// Step is one request of a Pass to its caller.
type Step struct {
	Kind StepKind
	// Removal is set for StepRemoveImage.
	Removal Removal
}

// Removal is one RemoveImage call the pass makes.
type Removal struct {
	// ImageID and RuntimeHandler are RemoveImage's ImageSpec. The handler is
	// the one the image was first listed with, whatever the gates.
	ImageID, RuntimeHandler string
	// SizeBytes is the size the record holds: what the kubelet counts as
	// freed, not necessarily what the filesystem gains (#68203).
	SizeBytes int64
	// Reason is RemovedForAge (the MaxAge pass) or RemovedForSpace.
	Reason string
}

// Attempt is a RemoveImage call and the runtime's answer.
type Attempt struct {
	Removal
	Err error
}

// Usage is the image filesystem as the space decision saw it.
type Usage struct {
	CapacityBytes int64
	// AvailableBytes is clamped to CapacityBytes (#116020).
	AvailableBytes int64
	// UsagePercent is 100 - available*100/capacity in integer arithmetic.
	UsagePercent int
	// AboveHigh: UsagePercent >= the high threshold, so the space pass ran.
	AboveHigh bool
	// AmountToFreeBytes is capacity*(100-low)/100 - available when AboveHigh.
	AmountToFreeBytes int64
}

// Outcome is what a pass did and returns.
type Outcome struct {
	// Err is upstream's return value, with upstream's text.
	Err error
	// Events are the events the pass records, in order.
	Events []Event
	// Attempts are the RemoveImage calls in order, failed ones included.
	Attempts []Attempt
	// FreedBytes is the space pass's sum of removed sizes (upstream's
	// freed); the MaxAge pass's removals are not counted, as upstream.
	FreedBytes int64
	// Usage is set once the filesystem stats were read with a non-zero capacity.
	Usage *Usage
	// HooksRan: the post-GC hooks ran, on RemainingImages (the images the
	// space pass examined and kept, in eviction order; images after the
	// point where enough was freed are not in it).
	HooksRan        bool
	RemainingImages []string
}

type phase int

const (
	phaseAge phase = iota
	phaseFsStats
	phaseSpace
	phaseDone
)

// Pass is one GarbageCollect or DeleteUnusedImages, stepped by its caller.
// Its detection has already run when the Manager returns it.
type Pass struct {
	m       *Manager
	now     time.Time
	isGC    bool
	phase   phase
	images  []candidate // the list the current phase walks
	next    int         // index into images of the image being examined
	pending bool        // images[next] was handed out as a removal
	kept    []candidate // images the MaxAge pass leaves for the space pass
	errs    []error     // the current phase's removal errors
	toFree  int64
	out     Outcome
}

// GarbageCollect starts upstream's GarbageCollect(ctx, beganGC) at now:
// detection on view, the eviction order, the MaxAge pass (once now is more
// than MaxAge after beganGC), then ImageFsStats and the space pass when the
// usage is at or above the high threshold. The error is bad input only
// (nothing changes); upstream's errors are in the Outcome.
func (m *Manager) GarbageCollect(now, beganGC time.Time, view RuntimeView) (*Pass, error) {
	p, err := m.start(now, view, true)
	if err != nil || p.phase == phaseDone {
		return p, err
	}
	if m.policy.MaxAge == 0 || now.Sub(beganGC) <= m.policy.MaxAge {
		p.kept, p.phase = p.images, phaseFsStats
	}
	return p, nil
}

// DeleteUnusedImages starts upstream's DeleteUnusedImages at now (the
// eviction manager under disk pressure): the space pass with no bound on
// the bytes to free, obeying MinAge and pinning, ignoring the thresholds
// and MaxAge.
func (m *Manager) DeleteUnusedImages(now time.Time, view RuntimeView) (*Pass, error) {
	p, err := m.start(now, view, false)
	if err != nil || p.phase == phaseDone {
		return p, err
	}
	p.phase, p.toFree = phaseSpace, math.MaxInt64
	return p, nil
}

func (m *Manager) start(now time.Time, view RuntimeView, isGC bool) (*Pass, error) {
	if err := view.Validate(); err != nil {
		return nil, err
	}
	p := &Pass{m: m, now: now, isGC: isGC}
	inUse, err := m.detect(now, view)
	if err != nil {
		p.finish(err)
		return p, nil
	}
	p.images, p.out.Events = m.evictionOrder(inUse)
	return p, nil
}

// Next returns what the pass needs next. It returns the same step until
// that step's result is reported.
func (p *Pass) Next() Step {
	policy := p.m.policy
	for {
		switch p.phase {
		case phaseAge:
			if p.next == len(p.images) {
				p.endAgePass()
				continue
			}
			c := p.images[p.next]
			// A zero lastUsed (not seen in use since the Manager was
			// created) is always older than MaxAge; firstDetected and MinAge
			// are not consulted here.
			if p.now.Sub(c.record.LastUsed) > policy.MaxAge {
				p.pending = true
				return p.removalStep(c, RemovedForAge)
			}
			p.kept = append(p.kept, c)
			p.next++
		case phaseFsStats:
			return Step{Kind: StepImageFsStats}
		case phaseSpace:
			if p.next == len(p.images) {
				p.endSpacePass()
				continue
			}
			c := p.images[p.next]
			// Used at or after the pass's time: used too recently.
			if !c.record.LastUsed.Before(p.now) {
				p.keep(c)
				continue
			}
			// Strict: an image exactly MinAge old is eligible.
			if p.now.Sub(c.record.FirstDetected) < policy.MinAge {
				p.keep(c)
				continue
			}
			p.pending = true
			return p.removalStep(c, RemovedForSpace)
		default:
			return Step{Kind: StepDone}
		}
	}
}

func (p *Pass) removalStep(c candidate, reason string) Step {
	return Step{Kind: StepRemoveImage, Removal: Removal{
		ImageID: c.id, RuntimeHandler: c.record.RuntimeHandler, SizeBytes: c.record.SizeBytes, Reason: reason,
	}}
}

// keep leaves the current image to the post-GC hooks and moves on.
func (p *Pass) keep(c candidate) {
	p.out.RemainingImages = append(p.out.RemainingImages, c.id)
	p.next++
}

// RemoveImageDone reports the runtime's answer to the StepRemoveImage
// that Next returned. A failure is recorded and the pass continues, as
// upstream; a success deletes the image's record. The returned error is a
// protocol misuse (no removal was asked for); nothing changes then.
func (p *Pass) RemoveImageDone(removeErr error) error {
	if !p.pending {
		return inputErrorf("RemoveImageDone", "no RemoveImage step is outstanding")
	}
	p.pending = false
	c := p.images[p.next]
	reason := RemovedForSpace
	if p.phase == phaseAge {
		reason = RemovedForAge
	}
	p.out.Attempts = append(p.out.Attempts, Attempt{Removal: p.removalStep(c, reason).Removal, Err: removeErr})
	p.next++
	if removeErr != nil {
		p.errs = append(p.errs, removeErr)
		if p.phase == phaseAge {
			p.kept = append(p.kept, c)
		} else {
			p.out.RemainingImages = append(p.out.RemainingImages, c.id)
		}
		return nil
	}
	// Upstream deletes the key rebuilt from the ID it removed and the
	// handler the image was pulled with.
	delete(p.m.records, p.m.key(c.id, c.record.RuntimeHandler))
	if p.phase == phaseSpace {
		p.out.FreedBytes += c.record.SizeBytes
		if p.out.FreedBytes >= p.toFree {
			// Enough: the rest of the list is neither examined nor
			// handed to the hooks.
			p.endSpacePass()
		}
	}
	return nil
}

func (p *Pass) endAgePass() {
	if len(p.errs) > 0 {
		p.finish(fmt.Errorf("wanted to free images older than %v, encountered errors in image deletion: %v", p.m.policy.MaxAge, aggregate(p.errs)))
		return
	}
	p.phase = phaseFsStats
}

// ImageFsStatsDone reports ImageFsStats' answer to the StepImageFsStats
// that Next returned. The returned error is bad input (a size out of
// bounds) or a protocol misuse; nothing changes then.
func (p *Pass) ImageFsStatsDone(stats FsStats, statsErr error) error {
	if p.phase != phaseFsStats {
		return inputErrorf("ImageFsStatsDone", "no ImageFsStats step is outstanding")
	}
	if statsErr != nil {
		p.finish(statsErr)
		return nil
	}
	if err := stats.Validate(); err != nil {
		return err
	}
	capacity, available := stats.CapacityBytes, stats.AvailableBytes
	if available > capacity {
		available = capacity
	}
	if capacity == 0 {
		err := errors.New("invalid capacity 0 on image filesystem")
		p.out.Events = append(p.out.Events, Event{Type: EventTypeWarning, Reason: ReasonInvalidDiskCapacity, Message: err.Error()})
		p.finish(err)
		return nil
	}
	policy := p.m.policy
	usage := &Usage{CapacityBytes: capacity, AvailableBytes: available, UsagePercent: 100 - int(available*100/capacity)}
	p.out.Usage = usage
	if usage.UsagePercent < policy.HighThresholdPercent {
		p.finish(nil)
		return nil
	}
	usage.AboveHigh = true
	usage.AmountToFreeBytes = capacity*int64(100-policy.LowThresholdPercent)/100 - available
	p.images, p.kept, p.next = p.kept, nil, 0
	p.phase, p.toFree = phaseSpace, usage.AmountToFreeBytes
	return nil
}

func (p *Pass) endSpacePass() {
	if len(p.errs) > 0 {
		p.out.RemainingImages = nil
		p.finish(fmt.Errorf("wanted to free %d bytes, but freed %d bytes space with errors in image deletion: %w", p.toFree, p.out.FreedBytes, aggregate(p.errs)))
		return
	}
	p.out.HooksRan = true
	if p.isGC && p.out.FreedBytes < p.toFree {
		message := fmt.Sprintf("Insufficient free disk space on the node's image filesystem (%d%% of %s used). "+
			"Failed to free sufficient space by deleting unused images (freed %d bytes). "+
			"Investigate disk usage, as it could be used by active images, logs, volumes, or other data.",
			p.out.Usage.UsagePercent, FormatSize(p.out.Usage.CapacityBytes), p.out.FreedBytes)
		p.out.Events = append(p.out.Events, Event{Type: EventTypeWarning, Reason: ReasonFreeDiskSpaceFailed, Message: message})
		p.finish(errors.New(message))
		return
	}
	p.finish(nil)
}

func (p *Pass) finish(err error) {
	p.out.Err = err
	p.phase = phaseDone
}

// Outcome returns the pass's result; it is final once Next returns StepDone.
func (p *Pass) Outcome() Outcome { return p.out }
