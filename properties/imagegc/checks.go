package imagegc

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"pgregory.net/rapid"

	core "github.com/nodeproof/nodeproof/core/imagegc"
	model "github.com/nodeproof/nodeproof/models/imagegc"
	"github.com/nodeproof/nodeproof/properties"
)

// check runs after every step: the node's use of its images, and the
// core's records against the model's.
func (m *machine) check(*rapid.T) {
	m.markUse()
	if m.core == nil {
		return
	}
	// GC-MODEL applies when the kubelet holds records to compare.
	m.tally.Check(Model, len(m.records) > 0)
	if diff := recordsDiff(m.core.Records(), m.records); diff != "" {
		properties.Fail(m.t, Model, "records differ from the model's: %s", diff)
	}
}

// recordsDiff compares the core's records with the model's.
func recordsDiff(core []core.Record, want map[string]model.Record) string {
	got := map[string]model.Record{}
	for _, r := range core {
		got[r.Key] = model.Record{FirstDetected: r.FirstDetected, LastUsed: r.LastUsed, Size: r.SizeBytes, Pinned: r.Pinned}
	}
	for _, id := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[id]
		switch {
		case !ok:
			return fmt.Sprintf("%s: the model holds %+v, the core has no record", id, want[id])
		case g != want[id]:
			return fmt.Sprintf("%s: core %+v, model %+v", id, g, want[id])
		}
	}
	for _, id := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[id]; !ok {
			return fmt.Sprintf("%s: the core holds %+v, the model has no record", id, got[id])
		}
	}
	return ""
}

// checkRestart holds the records of a fresh core kubelet to its start's
// detection.
func (m *machine) checkRestart(why string) {
	if m.core == nil {
		m.check(nil)
		return
	}
	inUse := m.inUse()
	// GC-RESTART applies when the runtime lists an image to record.
	m.tally.Check(Restart, len(m.listed) > 0)
	for _, r := range m.core.Records() {
		wantUsed := time.Time{}
		if inUse[r.Key] {
			wantUsed = m.now
		}
		if !r.FirstDetected.Equal(m.now) || !r.LastUsed.Equal(wantUsed) {
			properties.Fail(m.t, Restart, "after the %s at %s, %s is first detected %s and last used %s; want %s and %s",
				why, m.now.Format(time.RFC3339Nano), r.Key, r.FirstDetected.Format(time.RFC3339Nano), r.LastUsed.Format(time.RFC3339Nano),
				m.now.Format(time.RFC3339Nano), wantUsed.Format(time.RFC3339Nano))
		}
	}
	m.check(nil)
}

// checkPass holds one pass to every invariant, then moves the model on;
// a pass another system under test ran, to the contract alone.
func (m *machine) checkPass(p *pass) {
	if m.core == nil {
		m.checkContract(p)
		return
	}
	m.checkSafety(p)
	ageAttempts, spaceAttempts := split(p.out.Attempts)
	m.checkOrder(p, ageAttempts, spaceAttempts)
	m.checkMinAge(p, spaceAttempts)
	if p.isGC {
		m.checkMaxAge(p, ageAttempts)
		m.checkSpacePass(p, ageAttempts, spaceAttempts)
	} else {
		m.checkDeleteUnused(p, ageAttempts, spaceAttempts)
	}
	m.checkStartRace(p)
	m.checkSharedLayers(p, spaceAttempts)
	m.checkTwin(p)
	m.checkModel(p)
	m.checkContract(p)
}

func split(attempts []core.Attempt) (age, space []core.Attempt) {
	for _, a := range attempts {
		if a.Reason == core.RemovedForAge {
			age = append(age, a)
		} else {
			space = append(space, a)
		}
	}
	return age, space
}

// checkSafety: GC-IN-USE and GC-PINNED.
func (m *machine) checkSafety(p *pass) {
	pinnedListed, usedListed := false, false
	for _, id := range p.listed {
		pinnedListed = pinnedListed || id == pause
		usedListed = usedListed || p.inUse[id]
	}
	// Each applies when the pass removed something while an image it must
	// spare (in use; pinned) was listed.
	m.tally.Check(InUse, usedListed && len(p.out.Attempts) > 0)
	m.tally.Check(Pinned, pinnedListed && len(p.out.Attempts) > 0)
	for _, a := range p.out.Attempts {
		if p.inUse[a.ImageID] {
			properties.Fail(m.t, InUse, "removed %s (%s), which a container listed at the pass's detection uses", a.ImageID, a.Reason)
		}
		if p.before[a.ImageID].Pinned {
			properties.Fail(m.t, Pinned, "removed the pinned image %s (%s)", a.ImageID, a.Reason)
		}
	}
	// The post-GC hooks get the images the space pass examined and kept,
	// all from the eviction list: never one in use or pinned. (Upstream's
	// detection also marks an image in use as used now, so the space pass
	// would skip it as used too recently; the hooks' input still tells.)
	for _, id := range p.out.Core.RemainingImages {
		if p.inUse[id] {
			properties.Fail(m.t, InUse, "the post-GC hooks get %s as an image GC examined, yet a container uses it", id)
		}
		if p.before[id].Pinned {
			properties.Fail(m.t, Pinned, "the post-GC hooks get the pinned %s as an image GC examined", id)
		}
	}
}

// checkOrder: GC-ORDER.
func (m *machine) checkOrder(p *pass, age, space []core.Attempt) {
	// GC-ORDER applies when a pass made two removals, or skipped an image.
	m.tally.Check(Order, len(p.out.Attempts) > 1 || len(space) > 0 && len(p.order) > len(space))
	for _, phase := range [][]core.Attempt{age, space} {
		for i := 1; i < len(phase); i++ {
			if !evictsBefore(p.before, phase[i-1].ImageID, phase[i].ImageID) {
				properties.Fail(m.t, Order, "%s removed before %s, against the eviction order %v; removals %s", phase[i-1].ImageID, phase[i].ImageID, p.order, ids(p.out.Attempts))
			}
		}
	}
	if len(space) == 0 {
		return
	}
	attempted := attemptedSet(space)
	last := space[len(space)-1].ImageID
	for _, id := range m.eligible(p, age) {
		if id == last {
			break
		}
		if !attempted[id] {
			properties.Fail(m.t, Order, "the space pass skipped the eligible %s, ranked before %s; eviction order %v, removals %s", id, last, p.order, ids(p.out.Attempts))
		}
	}
}

func attemptedSet(attempts []core.Attempt) map[string]bool {
	set := map[string]bool{}
	for _, a := range attempts {
		set[a.ImageID] = true
	}
	return set
}

// eligible are the images the space pass may remove, in eviction order:
// not removed by the MaxAge pass, last used before now, at least MinAge old.
func (m *machine) eligible(p *pass, age []core.Attempt) []string {
	removedForAge := map[string]bool{}
	for _, a := range age {
		if a.Err == nil {
			removedForAge[a.ImageID] = true
		}
	}
	var out []string
	for _, id := range p.order {
		r := p.before[id]
		if !removedForAge[id] && r.LastUsed.Before(m.now) && m.now.Sub(r.FirstDetected) >= m.policy.MinAge {
			out = append(out, id)
		}
	}
	return out
}

// checkMinAge: GC-MIN-AGE.
func (m *machine) checkMinAge(p *pass, space []core.Attempt) {
	young := false
	for _, id := range p.order {
		r := p.before[id]
		young = young || !r.LastUsed.Before(m.now) || m.now.Sub(r.FirstDetected) < m.policy.MinAge
	}
	// GC-MIN-AGE applies when the space pass removed something or an
	// unused image was too young or used too recently to be removed.
	m.tally.Check(MinAge, len(space) > 0 || young && (p.stats == nil || p.out.Core.Usage != nil && p.out.Core.Usage.AboveHigh || !p.isGC))
	for _, a := range space {
		r := p.before[a.ImageID]
		if age := m.now.Sub(r.FirstDetected); age < m.policy.MinAge {
			properties.Fail(m.t, MinAge, "removed %s for space, first detected %v ago, under MinAge %v", a.ImageID, age, m.policy.MinAge)
		}
		if !r.LastUsed.Before(m.now) {
			properties.Fail(m.t, MinAge, "removed %s for space, last used at the pass's own time", a.ImageID)
		}
	}
}

// checkMaxAge: GC-MAX-AGE.
func (m *machine) checkMaxAge(p *pass, age []core.Attempt) {
	maxAge := m.policy.MaxAge
	// GC-MAX-AGE applies when MaxAge is set and there was an unused image
	// to judge.
	m.tally.Check(MaxAge, maxAge > 0 && len(p.order) > 0)
	waited := maxAge > 0 && m.now.Sub(m.beganGC) > maxAge
	var want []string
	if waited {
		for _, id := range p.order {
			if m.now.Sub(p.before[id].LastUsed) > maxAge {
				want = append(want, id)
			}
		}
	}
	var got []string
	for _, a := range age {
		got = append(got, a.ImageID)
	}
	if !slices.Equal(got, want) {
		properties.Fail(m.t, MaxAge, "MaxAge %v, %v since the kubelet started: the MaxAge pass tried %v, want %v (eviction order %v)", maxAge, m.now.Sub(m.beganGC), got, want, p.order)
	}
}

// checkSpacePass: GC-STOP and GC-LOW.
func (m *machine) checkSpacePass(p *pass, age, space []core.Attempt) {
	ageFailed := false
	for _, a := range age {
		ageFailed = ageFailed || a.Err != nil
	}
	if ageFailed || p.stats == nil {
		if len(space) > 0 {
			properties.Fail(m.t, Stop, "space removals %s without reading the filesystem after a clean MaxAge pass", ids(space))
		}
		return
	}
	capacity, available := p.stats.CapacityBytes, min(p.stats.AvailableBytes, p.stats.CapacityBytes)
	usage := 100 - int(available*100/capacity)
	above := usage >= m.policy.HighThresholdPercent
	// GC-LOW applies when the usage reached the high threshold, so the
	// space pass ran; GC-STOP when that pass tried a removal.
	m.tally.Check(Low, above)
	m.tally.Check(Stop, above && len(space) > 0)
	if !above {
		if len(space) > 0 || p.out.Err != nil {
			properties.Fail(m.t, Low, "usage %d%% under the high threshold %d%%, yet removals %s, error %v", usage, m.policy.HighThresholdPercent, ids(space), p.out.Err)
		}
		return
	}
	amount := capacity*int64(100-m.policy.LowThresholdPercent)/100 - available
	if u := p.out.Core.Usage; u == nil || u.AmountToFreeBytes != amount || u.UsagePercent != usage {
		properties.Fail(m.t, Low, "usage %d%% of %d bytes, %d available, low %d%%: want amountToFree %d, the core has %+v", usage, capacity, available, m.policy.LowThresholdPercent, amount, u)
	}

	var counted int64
	spaceFailed := false
	for i, a := range space {
		if a.Err != nil {
			spaceFailed = true
			continue
		}
		counted += a.SizeBytes
		if counted >= amount && i != len(space)-1 {
			properties.Fail(m.t, Stop, "counted %d bytes ≥ amountToFree %d after %s, yet went on to %s", counted, amount, a.ImageID, ids(space[i+1:]))
		}
	}
	if counted != p.out.FreedBytes {
		properties.Fail(m.t, Stop, "the removals %s count %d bytes, the pass says it freed %d", ids(space), counted, p.out.FreedBytes)
	}
	eligible := m.eligible(p, age)
	if counted < amount && len(space) != len(eligible) {
		properties.Fail(m.t, Stop, "ended at %d of %d bytes having tried %s of the eligible %v", counted, amount, ids(space), eligible)
	}

	var eligibleBytes int64
	for _, id := range eligible {
		eligibleBytes += p.before[id].Size
	}
	wantOK := !spaceFailed && eligibleBytes >= amount
	if (p.out.Err == nil) != wantOK {
		properties.Fail(m.t, Low, "eligible %v hold %d bytes for amountToFree %d, removal failed: %t; want success %t, got error %v", eligible, eligibleBytes, amount, spaceFailed, wantOK, p.out.Err)
	}
	if p.out.Err != nil {
		return
	}
	if target := capacity * int64(100-m.policy.LowThresholdPercent) / 100; available+counted < target {
		properties.Fail(m.t, Low, "succeeded with %d available and %d counted, under the low target %d", available, counted, target)
	}
	if overCount := m.overCount(p, space); overCount == 0 {
		if realAvailable := capacity - p.usedAfter; realAvailable < capacity*int64(100-m.policy.LowThresholdPercent)/100 && len(p.raced) == 0 {
			properties.Fail(m.t, Low, "succeeded with no shared layer, yet the filesystem has %d bytes available, under the low target", realAvailable)
		}
	}
}

// checkDeleteUnused: GC-DELETE-UNUSED.
func (m *machine) checkDeleteUnused(p *pass, age, space []core.Attempt) {
	eligible := m.eligible(p, nil)
	// GC-DELETE-UNUSED applies when there was an unused image to judge.
	m.tally.Check(DeleteUnused, len(p.order) > 0)
	var got []string
	failed := false
	for _, a := range space {
		got = append(got, a.ImageID)
		failed = failed || a.Err != nil
	}
	if len(age) > 0 || !slices.Equal(got, eligible) {
		properties.Fail(m.t, DeleteUnused, "tried %s, want every eligible image %v (eviction order %v)", ids(p.out.Attempts), eligible, p.order)
	}
	if p.stats != nil || p.out.Core.Usage != nil {
		properties.Fail(m.t, DeleteUnused, "read the filesystem's stats")
	}
	if (p.out.Err != nil) != failed {
		properties.Fail(m.t, DeleteUnused, "a removal failed: %t, error %v", failed, p.out.Err)
	}
}

// checkStartRace: GC-123631-START-RACE; the count goes to the report.
func (m *machine) checkStartRace(p *pass) {
	// It applies when a container started on an image under removal.
	m.tally.Check(StartRace, len(p.raced) > 0)
	if len(p.raced) == 0 {
		return
	}
	attempted := attemptedSet(p.out.Attempts)
	removedInUse := 0
	for _, id := range p.raced {
		if !attempted[id] {
			properties.Fail(m.t, StartRace, "a container started on %s while its removal was under way, and the pass did not go on to remove it: %s", id, ids(p.out.Attempts))
		}
		if _, failed := p.failing[id]; !failed {
			removedInUse++
		}
	}
	m.tally.Observe(statStartRace, float64(removedInUse))
}

// overCount is what #68203 predicts the kubelet over-counts for the given
// successful removals: per layer, its size times the removed images holding
// it, less one when the layer came free.
func (m *machine) overCount(p *pass, attempts []core.Attempt) int64 {
	holders := map[string]int64{}
	for _, a := range attempts {
		if a.Err == nil {
			for _, l := range imageLayers(a.ImageID) {
				holders[l]++
			}
		}
	}
	var over int64
	for l, n := range holders {
		if !p.heldAfter[l] {
			n--
		}
		over += layers[l] * n
	}
	return over
}

// checkSharedLayers: GC-68203-SHARED-LAYERS. The filesystem's real gain over
// the pass is set against the sizes every successful removal counted (the
// MaxAge pass's too, which upstream does not add to freed but counts alike).
func (m *machine) checkSharedLayers(p *pass, space []core.Attempt) {
	var counted, successes int64
	for _, a := range p.out.Attempts {
		if a.Err == nil {
			counted += a.SizeBytes
			successes++
		}
	}
	// It applies when a removal succeeded.
	m.tally.Check(SharedLayers, successes > 0)
	if successes == 0 {
		return
	}
	regained := p.usedBefore - p.usedAfter
	over := m.overCount(p, p.out.Attempts)
	if counted-regained != over {
		properties.Fail(m.t, SharedLayers, "removals %s counted %d bytes, the filesystem regained %d: over-count %d, want %d from the shared layers", ids(p.out.Attempts), counted, regained, counted-regained, over)
	}
	m.tally.Observe(statOverCount, float64(over))
}

// checkTwin: GC-DETERMINISTIC. The twin runs the same pass on the same view
// with the runtime's answers replayed.
func (m *machine) checkTwin(p *pass) {
	view := core.RuntimeView{}
	for _, id := range p.listed {
		view.Images = append(view.Images, core.Image{ID: id, SizeBytes: reportedSize(id), Pinned: id == pause})
	}
	// The containers at detection: the pass's own starts came later.
	for _, c := range m.containers[:len(m.containers)-len(p.raced)] {
		view.Containers = append(view.Containers, core.Container{PodID: c.podID, ID: c.id, ImageID: c.imageID, MountedImageIDs: slices.Clone(c.mounts)})
	}
	var pass *core.Pass
	var err error
	if p.isGC {
		pass, err = m.twin.GarbageCollect(m.now, m.beganGC, view)
	} else {
		pass, err = m.twin.DeleteUnusedImages(m.now, view)
	}
	if err != nil {
		properties.Fail(m.t, Deterministic, "the twin refuses the same view: %v", err)
	}
	answers := p.answers
	for step := pass.Next(); step.Kind != core.StepDone; step = pass.Next() {
		switch {
		case step.Kind == core.StepRemoveImage && len(answers) > 0:
			err = pass.RemoveImageDone(answers[0])
			answers = answers[1:]
		case step.Kind == core.StepImageFsStats && p.stats != nil:
			err = pass.ImageFsStatsDone(*p.stats, nil)
		default:
			properties.Fail(m.t, Deterministic, "the twin asks for %+v, which the first manager did not", step)
		}
		if err != nil {
			properties.Fail(m.t, Deterministic, "the twin refuses an answer the first manager took: %v", err)
		}
	}
	// GC-DETERMINISTIC applies when there was something to decide: an
	// image the pass could have removed.
	m.tally.Check(Deterministic, len(p.order) > 0)
	if got, want := outcomeText(pass.Outcome()), outcomeText(*p.out.Core); got != want || len(answers) > 0 {
		properties.Fail(m.t, Deterministic, "same inputs, different outcomes:\n  first: %s\n  twin:  %s", want, got)
	}
	if !reflect.DeepEqual(m.twin.Records(), m.core.Records()) {
		properties.Fail(m.t, Deterministic, "same inputs, different records:\n  first: %+v\n  twin:  %+v", m.core.Records(), m.twin.Records())
	}
}

// outcomeText prints an outcome with its errors as text and its usage
// by value, so two outcomes compare by what they say.
func outcomeText(o core.Outcome) string {
	usage := "none"
	if o.Usage != nil {
		usage = fmt.Sprintf("%+v", *o.Usage)
	}
	return fmt.Sprintf("err=%v attempts=%s freed=%d usage=%s events=%+v hooks=%t remaining=%v", o.Err, ids(o.Attempts), o.FreedBytes, usage, o.Events, o.HooksRan, o.RemainingImages)
}

// checkModel: GC-MODEL for the pass; the model's records become the
// machine's.
func (m *machine) checkModel(p *pass) {
	round := model.Round{Records: m.records, Images: nil, InUse: p.inUse, Policy: model.Policy{
		High: m.policy.HighThresholdPercent, Low: m.policy.LowThresholdPercent, MinAge: m.policy.MinAge, MaxAge: m.policy.MaxAge,
	}, Now: m.now, BeganGC: m.beganGC, FailingRemovals: p.failing, DeleteUnused: !p.isGC}
	for _, id := range p.listed {
		round.Images = append(round.Images, model.Image{ID: id, Size: reportedSize(id), Pinned: id == pause})
	}
	if p.stats != nil {
		round.CapacityBytes, round.AvailableBytes = p.stats.CapacityBytes, p.stats.AvailableBytes
	}
	res := model.Collect(round)
	var got []model.Removal
	for _, a := range p.out.Attempts {
		got = append(got, model.Removal{ID: a.ImageID, Reason: a.Reason, Failed: a.Err != nil})
	}
	errText := ""
	if p.out.Err != nil {
		errText = p.out.Err.Error()
	}
	// GC-MODEL applies to every pass that had an image to judge.
	m.tally.Check(Model, len(p.order) > 0)
	if !slices.Equal(got, res.Removals) || res.Freed != p.out.FreedBytes || res.Err != errText {
		properties.Fail(m.t, Model, "the pass and the model differ:\n  core:  %v freed %d err %q\n  model: %v freed %d err %q", got, p.out.FreedBytes, errText, res.Removals, res.Freed, res.Err)
	}
	var inputErr *core.InputError
	if errors.As(p.out.Err, &inputErr) {
		properties.Fail(m.t, Model, "the pass's outcome is an input error on valid input: %v", p.out.Err)
	}
	m.records = res.Records
	m.check(nil)
}

// --- the contract --------------------------------------------------------

// checkContract holds one pass to what the documentation promises, judged
// from the node (m.arrived, m.lastUse, the filesystem), not the kubelet's
// records. A breach goes through Tally.Breach: a known finding explains it.
func (m *machine) checkContract(p *pass) {
	m.checkContractInUse(p)
	m.checkContractMinAge(p)
	if p.isGC {
		m.checkContractMaxAge(p)
		m.checkContractLow(p)
	}
}

// unusedSince is the start of an image's current unused stretch as the
// documentation counts it: its last use, its arrival or the kubelet's start
// ("the tracked image age is reset" by a restart), whichever is latest.
func (m *machine) unusedSince(p *pass, id string) time.Time {
	since := p.arrivedBefore[id]
	if u := p.lastUseBefore[id]; u.After(since) {
		since = u
	}
	if m.beganGC.After(since) {
		since = m.beganGC
	}
	return since
}

// checkContractInUse: GC-C-IN-USE.
func (m *machine) checkContractInUse(p *pass) {
	// It applies when a removal succeeded while a container was listed.
	applied := false
	for _, a := range p.out.Attempts {
		applied = applied || a.Err == nil && len(m.containers) > 0
	}
	m.tally.Check(ContractInUse, applied)
	for _, id := range p.removedInUse {
		m.tally.Breach(m.t, ContractInUse, "the pass removed %s while a listed container used it (removals %s)", id, ids(p.out.Attempts))
	}
}

// checkContractMinAge: GC-C-MIN-AGE.
func (m *machine) checkContractMinAge(p *pass) {
	minAge := m.policy.MinAge
	// It applies when a removal succeeded under a non-zero MinAge.
	applied := false
	for _, a := range p.out.Attempts {
		applied = applied || a.Err == nil && minAge > 0
	}
	m.tally.Check(ContractMinAge, applied)
	for _, a := range p.out.Attempts {
		if a.Err != nil {
			continue
		}
		if age := m.now.Sub(p.arrivedBefore[a.ImageID]); age < minAge {
			m.tally.Breach(m.t, ContractMinAge, "removed %s (%s) %v after it came to the node, under imageMinimumGCAge %v", a.ImageID, a.Reason, age, minAge)
		}
	}
}

// checkContractMaxAge: GC-C-MAX-AGE-UNUSED and GC-C-MAX-AGE-BOUND.
func (m *machine) checkContractMaxAge(p *pass) {
	maxAge := m.policy.MaxAge
	age, _ := split(p.out.Attempts)
	// candidates: MaxAge is set and an unused, unpinned image was listed
	// at the pass's detection.
	var due []string
	candidates := false
	for _, id := range p.listed {
		if p.inUse[id] || id == pause || maxAge == 0 {
			continue
		}
		candidates = true
		if m.now.Sub(m.unusedSince(p, id)) > maxAge {
			due = append(due, id)
		}
	}
	// GC-C-MAX-AGE-UNUSED applies when the pass removed for age or had
	// candidates it could have removed (during the start-up wait too:
	// none may go then).
	m.tally.Check(ContractMaxAgeUnused, len(age) > 0 || candidates)
	for _, a := range age {
		if a.Err != nil {
			continue
		}
		if unused := m.now.Sub(m.unusedSince(p, a.ImageID)); unused < maxAge {
			m.tally.Breach(m.t, ContractMaxAgeUnused, "removed %s for age after %v unused (since %s), under imageMaximumGCAge %v", a.ImageID, unused, m.unusedSince(p, a.ImageID).Sub(m.beganGC), maxAge)
		}
	}
	// GC-C-MAX-AGE-BOUND applies when there were candidates.
	m.tally.Check(ContractMaxAgeBound, candidates)
	attempted := attemptedSet(p.out.Attempts)
	for _, id := range due {
		if !attempted[id] {
			m.tally.Breach(m.t, ContractMaxAgeBound, "%s has been unused for %v, over imageMaximumGCAge %v, yet the pass did not try to remove it (removals %s)", id, m.now.Sub(m.unusedSince(p, id)), maxAge, ids(p.out.Attempts))
		}
	}
}

// checkContractLow: GC-C-LOW. The trigger is judged from the usage when the
// pass reads the filesystem, after the MaxAge pass (a mechanism of its own
// that the threshold promise does not describe), from the filesystem's own
// bytes rather than the kubelet's integer percent.
func (m *machine) checkContractLow(p *pass) {
	capacity := m.capacityBytes
	above := p.stats != nil && p.usedAtStats*100 > int64(m.policy.HighThresholdPercent)*capacity
	// Passes where the runtime failed a removal or a container started
	// during the pass are outside the promise (a failure is allowed; a
	// started container holds its image's layers).
	clean := len(p.failing) == 0 && len(p.raced) == 0
	m.tally.Check(ContractLow, above && clean)
	if !above || !clean {
		return
	}
	// The low target in whole bytes: available at least capacity×(100−low)/100
	// rounded down, the nearest byte to the threshold.
	target := capacity * int64(100-m.policy.LowThresholdPercent) / 100
	available := capacity - m.usedBytes()
	if available >= target {
		return
	}
	// Images it may delete: listed, unpinned, not used at the pass's
	// instant, and imageMinimumGCAge old counted from when this kubelet
	// run first listed them. That is the most lenient reading of the age:
	// the kubelet learns of an image at its detections and, as the
	// documentation notes for imageMaximumGCAge, restarts its tracking at
	// a restart, so neither the detection's delay nor a restart's wait is
	// held against it here.
	var left []string
	for _, id := range m.listed {
		since, seen := m.listedSince[id]
		usedNow := !p.lastUseBefore[id].Before(m.now)
		if seen && !p.inUse[id] && !usedNow && id != pause && m.now.Sub(since) >= m.policy.MinAge {
			left = append(left, id)
		}
	}
	if len(left) > 0 {
		m.tally.Breach(m.t, ContractLow, "usage %s of %s was above the high threshold %d%%; the pass stopped at %s used (%s available, the low threshold %d%% needs %s) though it may still delete %v (removals %s, counted freed %d)",
			core.FormatSize(p.usedAtStats), core.FormatSize(capacity), m.policy.HighThresholdPercent, core.FormatSize(m.usedBytes()), core.FormatSize(available),
			m.policy.LowThresholdPercent, core.FormatSize(target), left, ids(p.out.Attempts), p.out.FreedBytes)
	}
}
