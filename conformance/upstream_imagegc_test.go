package conformance

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/images"

	"github.com/nodeproof/nodeproof/core/imagegc"
	"github.com/nodeproof/nodeproof/properties"
	gcsuite "github.com/nodeproof/nodeproof/properties/imagegc"
)

// The imagegc suite with upstream's own realImageGCManager as its system
// under test: the suite's node (images pulled and removed, containers
// started, stopped and starting on an image under removal, the image
// filesystem, the clock, kubelet restarts) reaches this release's code
// in-process through the harness's fake runtime (gcFakeRuntime over a
// gcWorld of the node's listing), and the contract checks judge what it
// removes. The fidelity checks compare core's own records, outcome and
// twin with the model; upstream gives none of them, and TestImageGC holds
// core to upstream already.
//
// Upstream reads the wall clock, so each call runs in a synctest bubble of
// its own whose clock is moved to the suite's instant first (a sleep there
// takes no time). The manager holds no channel or timer, only records and
// their lock, so one manager serves a kubelet run's bubbles in turn.
//
// Upstream breaks no tie: images it first detected at one instant and last
// used at one instant (never, for most) come in the order its records map
// iterates, which Go randomises on every pass (deviation I1). rapid must
// replay a case to shrink it, and the suite's answers (a removal failing, a
// container starting on the image) go to the removals in their order, so
// the adapter orders them: in the bubble, upstream's clock runs gcDilation
// times the suite's, its MinAge and MaxAge with it, and before each call
// the images upstream has no record of are detected one at a time, in ID
// order, each a bubble nanosecond after the one before, all of them first
// detected at one suite instant in the gcDilation-1 bubble nanoseconds
// before it. Every comparison upstream makes of the suite's instants and
// durations comes out as at the suite's own resolution (a first detection
// less than gcDilation bubble nanoseconds early changes no age by a whole
// suite nanosecond); only what was a tie is now ordered: by ID within one
// call, as core orders it, and by call across the calls of one instant.
// The durations in upstream's error texts are the dilated ones.

// gcDilation is how many bubble nanoseconds a suite nanosecond lasts: more
// than the first detections one instant holds (the suite's catalogue has
// 14 images), and few enough that a kubelet run of the contract budget's
// cases fits the clock (2,562 hours).
const gcDilation = 1000

// upstreamKubelet is gcsuite.Kubelet with this release's
// realImageGCManager, each call made in a bubble of t's.
func upstreamKubelet(t *testing.T) gcsuite.Kubelet {
	return func(policy imagegc.Policy) (gcsuite.Collector, error) {
		c := &upstreamCollector{t: t, rt: &gcFakeRuntime{}, events: &gcEvents{node: &corev1.ObjectReference{Kind: "Node", Name: "node", UID: "node"}}, known: map[string]bool{}}
		var err error
		c.manager, err = newUpstreamGCManager(c.rt, nil, c.events, c.events.node,
			gcPolicy{High: policy.HighThresholdPercent, Low: policy.LowThresholdPercent, MinAge: gcDilation * policy.MinAge, MaxAge: gcDilation * policy.MaxAge})
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// upstreamCollector is one kubelet run's realImageGCManager.
type upstreamCollector struct {
	t       *testing.T
	rt      *gcFakeRuntime
	events  *gcEvents
	manager images.ImageGCManager
	// origin is the suite's instant of the run's first call, which the
	// bubble's clock shows as gcEpoch.
	origin time.Time
	// known are the images upstream holds a record of: those its last
	// detection listed, less those it removed since.
	known map[string]bool
	// instant is the suite's instant of the last call, and firsts how many
	// images were first detected there.
	instant time.Time
	firsts  int
}

func (c *upstreamCollector) Detect(now time.Time, view imagegc.RuntimeView) error {
	err, refused := c.call(now, view, "detect", time.Time{}, nil)
	if refused != nil {
		return refused
	}
	return err
}

func (c *upstreamCollector) Collect(gc bool, now, beganGC time.Time, view imagegc.RuntimeView, rt gcsuite.Runtime) (gcsuite.Outcome, error) {
	a := &suiteAnswers{node: rt, sizes: map[string]int64{}}
	for _, img := range view.Images {
		a.sizes[img.ID] = img.SizeBytes
	}
	op := "delete"
	if gc {
		op = "gc"
	}
	err, refused := c.call(now, view, op, beganGC, a)
	if a.raised != nil {
		panic(a.raised)
	}
	if refused != nil {
		return gcsuite.Outcome{}, refused
	}
	if a.refused != nil {
		return gcsuite.Outcome{}, a.refused
	}
	for _, at := range a.attempts {
		if at.Err == nil {
			delete(c.known, at.ImageID)
		}
	}
	return gcsuite.Outcome{Attempts: a.attempts, FreedBytes: a.freed, Err: err}, nil
}

// bubbleTime is the suite's instant at on the bubble's clock.
func (c *upstreamCollector) bubbleTime(at time.Time) (time.Time, error) {
	since := at.Sub(c.origin)
	if since < 0 || since > math.MaxInt64/gcDilation {
		return time.Time{}, fmt.Errorf("the suite's %v is outside the kubelet run that began at %v, as far as the dilated clock reaches", at, c.origin)
	}
	return gcEpoch.Add(gcDilation * since), nil
}

// call makes op's upstream call at now, the runtime listing view and a
// answering the pass, after detecting the images new to upstream one at a
// time. Its first error is upstream's; refused is the adapter unable to
// make the call as the suite asks.
func (c *upstreamCollector) call(now time.Time, view imagegc.RuntimeView, op string, began time.Time, a *suiteAnswers) (err, refused error) {
	if c.origin.IsZero() {
		c.origin = now
	}
	at, refused := c.bubbleTime(now)
	if refused != nil {
		return nil, refused
	}
	var beganAt time.Time
	if op == "gc" {
		if beganAt, refused = c.bubbleTime(began); refused != nil {
			return nil, refused
		}
	}
	var fresh []string
	for _, img := range view.Images {
		if !c.known[img.ID] {
			fresh = append(fresh, img.ID)
		}
	}
	slices.Sort(fresh)
	fresh = slices.Compact(fresh)
	if !now.Equal(c.instant) {
		c.instant, c.firsts = now, 0
	}
	first := c.firsts
	if c.firsts += len(fresh); c.firsts >= gcDilation {
		return nil, fmt.Errorf("%d images first detected at %v; the dilated clock separates at most %d", c.firsts, now, gcDilation-1)
	}
	world := viewWorld(view)
	c.rt.call = &gcCall{Op: op}
	c.events.call = c.rt.call
	synctest.Test(c.t, func(*testing.T) {
		time.Sleep(time.Until(at))
		if now := time.Now(); !now.Equal(at) {
			refused = fmt.Errorf("the bubble's clock is at %v, not at %v", now, at)
			return
		}
		ctx := context.Background()
		c.rt.answers, c.rt.space = nil, false
		for i := range fresh {
			c.rt.world = listingOnly(world, c.known, fresh[:i+1])
			if _, refused = upstreamDetectImages(c.rt.manager, ctx, at.Add(time.Duration(first+i-(gcDilation-1)))); refused != nil {
				return
			}
		}
		c.rt.world, c.rt.space = world, op == "delete"
		if a != nil {
			c.rt.answers = a
		}
		err = upstreamGCCall(ctx, c.rt, c.manager, op, beganAt)
	})
	clear(c.known)
	for _, img := range view.Images {
		c.known[img.ID] = true
	}
	return err, refused
}

// listingOnly is world with the images listed that upstream knows and
// those of fresh.
func listingOnly(world *gcWorld, known map[string]bool, fresh []string) *gcWorld {
	w := *world
	w.listed = slices.DeleteFunc(slices.Clone(world.listed), func(l gcListed) bool {
		id := world.universe[l.Image].ID
		return !known[id] && !slices.Contains(fresh, id)
	})
	return &w
}

// viewWorld is the harness's world listing view: each image and container
// the runtime lists, in order, and each image volume.
func viewWorld(view imagegc.RuntimeView) *gcWorld {
	w := newGCWorld(gcScenario{})
	image := func(id, handler string) int {
		if i := w.imageIndex(id); i >= 0 {
			return i
		}
		w.universe = append(w.universe, gcImage{ID: id, Handler: handler})
		return len(w.universe) - 1
	}
	for _, img := range view.Images {
		w.listed = append(w.listed, gcListed{Image: image(img.ID, img.RuntimeHandler), Size: img.SizeBytes, Pinned: img.Pinned})
	}
	for _, ctr := range view.Containers {
		c := gcContainer{Pod: ctr.PodID, ID: ctr.ID, Image: image(ctr.ImageID, ctr.ImageRuntimeHandler)}
		for _, id := range ctr.MountedImageIDs {
			c.Mounts = append(c.Mounts, image(id, ""))
		}
		w.containers = append(w.containers, c)
	}
	return w
}

// errAbandoned answers upstream once the suite's case has ended in a
// bubble: upstream runs on to its return, touching the node no more.
var errAbandoned = errors.New("the suite's case ended during the pass")

// suiteAnswers is the suite's node answering upstream's pass from inside a
// bubble, and the pass's record: each RemoveImage with its pass (the MaxAge
// pass's until the filesystem is read, the space pass's after, and every
// one of DeleteUnusedImages) and the size upstream counts for it, the one
// its detection listed. The node draws its answers with rapid, whose
// failing or invalid case ends in a panic: raised inside the bubble, it is
// kept and raised again on the suite's goroutine once the bubble ends, so
// that it unwinds through neither upstream nor the bubble's test runner.
type suiteAnswers struct {
	node     gcsuite.Runtime
	sizes    map[string]int64
	attempts []imagegc.Attempt
	freed    int64
	raised   any
	// refused is the node reporting bytes no stats provider can.
	refused error
}

func (a *suiteAnswers) RemoveImage(image kubecontainer.ImageSpec, space bool) (err error) {
	if a.raised != nil {
		return errAbandoned
	}
	defer func() {
		if v := recover(); v != nil {
			a.raised, err = v, errAbandoned
		}
	}()
	removal := imagegc.Removal{ImageID: image.Image, RuntimeHandler: image.RuntimeHandler, SizeBytes: a.sizes[image.Image], Reason: imagegc.RemovedForAge}
	if space {
		removal.Reason = imagegc.RemovedForSpace
	}
	err = a.node.RemoveImage(removal)
	a.attempts = append(a.attempts, imagegc.Attempt{Removal: removal, Err: err})
	if err == nil && space {
		a.freed += removal.SizeBytes
	}
	return err
}

func (a *suiteAnswers) ImageFsStats() (capacity, available uint64, err error) {
	if a.raised != nil {
		return 0, 0, errAbandoned
	}
	defer func() {
		if v := recover(); v != nil {
			a.raised, err = v, errAbandoned
		}
	}()
	s := a.node.ImageFsStats()
	if s.CapacityBytes < 0 || s.AvailableBytes < 0 {
		a.refused = fmt.Errorf("the node reports %+v, which FsStats cannot carry", s)
		return 0, 0, a.refused
	}
	return uint64(s.CapacityBytes), uint64(s.AvailableBytes), nil
}

// TestUpstreamImageGCDecidesAsCore: the adapter changes nothing upstream
// decides but the order of ties. The contract suite runs with core beside
// the adapter: upstream's pass drives the node, and core's same pass, on
// the same view and at the suite's own instants, is answered as the node
// answered upstream, image by image; the two must make the same removals,
// in order and for the same pass, count the same bytes and fail alike.
// Where core's first differing removal is a choice between two images its
// records tie (first detected at one instant by two detections, which the
// adapter orders by call and core by ID), the kubelet run goes on
// uncompared.
func TestUpstreamImageGCDecidesAsCore(t *testing.T) {
	var compared, diverged int
	kubelet := upstreamKubelet(t)
	paired := func(policy imagegc.Policy) (gcsuite.Collector, error) {
		up, err := kubelet(policy)
		if err != nil {
			return nil, err
		}
		core, err := imagegc.NewManager(policy, imagegc.Options{})
		if err != nil {
			return nil, err
		}
		return &pairedCollector{up: up, core: core, compared: &compared, diverged: &diverged}, nil
	}
	res := properties.Run(gcsuite.ContractSuite("imagegc", paired), contractBudget)
	require.Nil(t, res.Failure, "upstream and core decided differently")
	t.Logf("%d passes compared; %d kubelet runs left uncompared after a tie", compared, diverged)
	assert.Greater(t, compared, 10*diverged, "ties cut the comparison short too often")
}

// pairedCollector is upstream's manager with core's beside it.
type pairedCollector struct {
	up   gcsuite.Collector
	core *imagegc.Manager
	// apart: a tie took the two apart; core runs no more.
	apart              bool
	compared, diverged *int
}

func (p *pairedCollector) Detect(now time.Time, view imagegc.RuntimeView) error {
	if !p.apart {
		if err := p.core.Detect(now, view); err != nil {
			return err
		}
	}
	return p.up.Detect(now, view)
}

// answered is the node's answers to upstream's pass.
type answered struct {
	node     gcsuite.Runtime
	removals []imagegc.Attempt
	stats    *imagegc.FsStats
}

func (a *answered) RemoveImage(r imagegc.Removal) error {
	err := a.node.RemoveImage(r)
	a.removals = append(a.removals, imagegc.Attempt{Removal: r, Err: err})
	return err
}

func (a *answered) ImageFsStats() imagegc.FsStats {
	s := a.node.ImageFsStats()
	a.stats = &s
	return s
}

func (p *pairedCollector) Collect(gc bool, now, beganGC time.Time, view imagegc.RuntimeView, rt gcsuite.Runtime) (gcsuite.Outcome, error) {
	a := &answered{node: rt}
	out, err := p.up.Collect(gc, now, beganGC, view, a)
	if err != nil || p.apart {
		return out, err
	}
	// Core's detection at the pass's instant, as the pass's own would be,
	// so that its records show the ties the pass sorts.
	if err := p.core.Detect(now, view); err != nil {
		return out, err
	}
	records := map[string]imagegc.Record{}
	for _, r := range p.core.Records() {
		records[r.Key] = r
	}
	tied := func(x, y string) bool {
		rx, okX := records[x]
		ry, okY := records[y]
		return okX && okY && rx.LastUsed.Equal(ry.LastUsed) && rx.FirstDetected.Equal(ry.FirstDetected)
	}
	var pass *imagegc.Pass
	if gc {
		pass, err = p.core.GarbageCollect(now, beganGC, view)
	} else {
		pass, err = p.core.DeleteUnusedImages(now, view)
	}
	if err != nil {
		return out, err
	}
	n := 0
	for step := pass.Next(); step.Kind != imagegc.StepDone; step = pass.Next() {
		switch step.Kind {
		case imagegc.StepRemoveImage:
			id := step.Removal.ImageID
			if n >= len(a.removals) || a.removals[n].ImageID != id {
				upstream := "no removal"
				if n < len(a.removals) {
					upstream = a.removals[n].ImageID
					if tied(id, upstream) {
						p.apart = true
						*p.diverged++
						return out, nil
					}
				}
				return out, fmt.Errorf("removal %d: core removes %s, upstream %s (upstream's removals %v)", n, id, upstream, attemptIDs(out.Attempts))
			}
			err = pass.RemoveImageDone(a.removals[n].Err)
			n++
		case imagegc.StepImageFsStats:
			if a.stats == nil {
				return out, fmt.Errorf("core reads the filesystem's stats after %d removals; upstream did not read them (removals %v)", n, attemptIDs(out.Attempts))
			}
			err = pass.ImageFsStatsDone(*a.stats, nil)
		}
		if err != nil {
			return out, err
		}
	}
	o := pass.Outcome()
	*p.compared++
	if got, want := attemptIDs(out.Attempts), attemptIDs(o.Attempts); got != want || out.FreedBytes != o.FreedBytes || (out.Err == nil) != (o.Err == nil) {
		return out, fmt.Errorf("upstream removes %s, frees %d, fails %v; core removes %s, frees %d, fails %v", got, out.FreedBytes, out.Err, want, o.FreedBytes, o.Err)
	}
	return out, nil
}

// attemptIDs prints removals as image/pass, failed ones marked.
func attemptIDs(attempts []imagegc.Attempt) string {
	var s []string
	for _, a := range attempts {
		id := a.ImageID + "/" + a.Reason
		if a.Err != nil {
			id += "(failed)"
		}
		s = append(s, id)
	}
	return fmt.Sprint(s)
}
