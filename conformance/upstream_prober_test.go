package conformance

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	proberresults "k8s.io/kubernetes/pkg/kubelet/prober/results"
	utilexec "k8s.io/utils/exec"

	core "github.com/nodeproof/nodeproof/core/prober"
	pbsuite "github.com/nodeproof/nodeproof/properties/prober"
)

// The prober suite with upstream's own prober manager as its system under
// test: the suite's pods, containers, clock, syncs, stops and kubelet
// restarts reach this release's prober.NewManager in-process, over the fakes
// TestProber uses (its status manager, results managers and event
// recorder), and the contract properties judge the probes its workers run
// and what they publish. One kubelet run is one testing/synctest bubble
// whose clock is the suite's; a kubelet restart retires it and starts
// another, as the kubelet's prober manager starts anew.
//
// Upstream's workers are goroutines; the suite draws every probe's
// outcome. So that the same draws give the same run, the adapter runs the
// bubble from one goroutine of its own, and the runner hands each try to
// the suite's goroutine and waits: at every instant the adapter lets every
// worker that is due run up to its probe (synctest.Wait), then answers the
// waiting tries one at a time in worker order, letting each worker finish
// before the next. What a worker publishes after a try it was answered is
// that probe's verdict: it runs alone until it waits again. A worker's
// first-probe jitter is math/rand's, drawn on its goroutine: the adapter
// holds every new worker at its first use of the kubelet's context (the
// logger it reads before it draws) and lets them draw one at a time from
// math/rand's global source seeded afresh, so that each draws the same
// fraction, the one nearest to the suite's jitter for the pod's first
// probe.
//
// The probe's command carries what the worker holds of its probe (the
// pod, container, type, delays and thresholds), so that the contract
// checks judge each probe by the settings its own worker runs with. An
// exec probe answers success or failure or errs: the suite's warnings
// answer as successes and its unknowns (without an error) as failures,
// which is what prober.probe makes of them.

// newTheirProber is pbsuite.NewManager with this release's prober manager:
// one bubble per kubelet run, a goroutine of t's (synctest.Test needs a
// test).
func newTheirProber(t *testing.T) pbsuite.NewManager {
	return func(start time.Time, node pbsuite.Node) pbsuite.Manager {
		a := &theirProber{start: start, node: node, ops: make(chan func()), ended: make(chan struct{})}
		go func() {
			defer close(a.ended)
			synctest.Test(t, func(*testing.T) {
				for op := range a.ops {
					op()
				}
			})
		}()
		a.do(a.setup)
		return a
	}
}

// theirProber is one kubelet run of upstream's prober manager. Its methods
// run on the suite's goroutine and hand the bubble's work to the bubble's
// goroutine (do); the fields after ops are the bubble's.
type theirProber struct {
	start time.Time // the suite's time at the bubble's epoch (probeEpoch)
	node  pbsuite.Node
	ops   chan func()
	ended chan struct{}

	u        *prUpstream
	world    *prWorld
	rec      *prRecorder
	ctx      *holdingContext
	requests chan *theirTry
	// waiting are the tries taken off requests and not yet answered;
	// asked is the one the suite is answering.
	waiting []*theirTry
	asked   *theirTry
	// pods are the pod objects given to AddPod, by UID: their workers
	// hold them.
	pods map[string][]*v1.Pod
}

// theirTry is one try of a probe a worker waits to be answered.
type theirTry struct {
	run   pbsuite.Run
	reply chan core.Outcome
}

// do runs op on the bubble's goroutine and waits for it; a panic there is
// raised again here, where rapid reports it.
func (a *theirProber) do(op func()) {
	var failure any
	done := make(chan struct{})
	a.ops <- func() {
		defer close(done)
		defer func() { failure = recover() }()
		op()
	}
	<-done
	if failure != nil {
		panic(failure)
	}
}

// bubble is a suite time on the bubble's clock, suite the reverse.
func (a *theirProber) bubble(at time.Time) time.Time { return probeEpoch.Add(at.Sub(a.start)) }
func (a *theirProber) suite(at time.Time) time.Time  { return a.start.Add(at.Sub(probeEpoch)) }

func (a *theirProber) setup() {
	if now := time.Now(); !now.Equal(probeEpoch) {
		panic(fmt.Sprintf("the bubble's clock starts at %v, not %v", now, probeEpoch))
	}
	a.world = newPrWorld(prScenario{})
	a.rec = &prRecorder{}
	a.ctx = &holdingContext{Context: context.Background(), release: make(chan struct{})}
	a.requests = make(chan *theirTry)
	a.pods = map[string][]*v1.Pod{}
	mu := &sync.Mutex{}
	a.u = &prUpstream{status: &prStatusManager{mu: mu, world: a.world}}
	for _, typ := range []string{"Liveness", "Readiness", "Startup"} {
		a.u.results = append(a.u.results, &prResults{Manager: proberresults.NewManager(), typ: typ, out: a.rec})
	}
	a.u.m = newTheirManager(a.u.status, a.u.results, &theirRunner{a: a, tries: map[string]int{}}, &prEvents{out: a.rec})
}

// install gives the status manager the suite's statuses, on the bubble's
// clock.
func (a *theirProber) install(statuses map[string]*core.PodStatus) {
	out := map[string]*core.PodStatus{}
	for uid, st := range statuses {
		c := st.Clone()
		for _, list := range [][]core.ContainerStatus{c.InitContainerStatuses, c.ContainerStatuses} {
			for i := range list {
				if r := list[i].State.Running; r != nil {
					list[i].State.Running = &core.Running{StartedAt: a.bubble(r.StartedAt)}
				}
			}
		}
		out[uid] = &c
	}
	a.u.status.mu.Lock()
	a.world.statuses = out
	a.u.status.mu.Unlock()
}

// call runs a kubelet call at now in the bubble, with the suite's statuses,
// then the probes it makes due.
func (a *theirProber) call(now time.Time, op func()) {
	statuses := a.node.Statuses()
	a.do(func() {
		if got := time.Now(); !got.Equal(a.bubble(now)) {
			panic(fmt.Sprintf("the suite calls at %v, the bubble's clock is at %v", now, a.suite(got)))
		}
		a.install(statuses)
		op()
	})
	a.settle(now)
}

func (a *theirProber) AddPod(now time.Time, pod core.Pod, jitter func(core.WorkerKey) float64) {
	a.call(now, func() {
		p := a.v1Pod(pod)
		a.pods[pod.UID] = append(a.pods[pod.UID], p)
		a.ctx.hold()
		a.u.m.AddPod(a.ctx, p)
		seed := jitterSeed(jitter(firstProbe(pod)))
		for synctest.Wait(); a.ctx.held() > 0; synctest.Wait() {
			rand.Seed(seed)
			a.ctx.release <- struct{}{}
		}
		a.ctx.stopHolding()
	})
}

func (a *theirProber) SetDeletionTimestamp(uid string, at time.Time) {
	a.call(at, func() {
		// The workers hold these pods; they read them only while the
		// bubble waits for them.
		deleted := metav1.NewTime(a.bubble(at))
		for _, p := range a.pods[uid] {
			if p.DeletionTimestamp == nil {
				p.DeletionTimestamp = &deleted
			}
		}
	})
}

func (a *theirProber) StopLivenessAndStartup(now time.Time, pod core.Pod) {
	a.call(now, func() { a.u.m.StopLivenessAndStartup(a.v1Pod(pod)) })
}

func (a *theirProber) RemovePod(now time.Time, pod core.Pod) {
	a.call(now, func() { a.u.m.RemovePod(a.v1Pod(pod)) })
}

func (a *theirProber) CleanupPods(now time.Time, desired map[string]bool) {
	a.call(now, func() {
		keep := map[types.UID]sets.Empty{}
		for uid := range desired {
			keep[types.UID(uid)] = sets.Empty{}
		}
		a.u.m.CleanupPods(keep)
	})
}

// UpdatePodStatus holds the status manager's lock until Started and Ready
// are written back, as TestProber does: a readiness worker the manual
// trigger wakes reads the status the sync wrote.
func (a *theirProber) UpdatePodStatus(now time.Time, pod core.Pod, status core.PodStatus) core.PodStatus {
	out := status.Clone()
	a.call(now, func() {
		api := a.v1Pod(pod)
		if pod.Ready {
			api.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}
		}
		a.u.status.mu.Lock()
		defer a.u.status.mu.Unlock()
		st := v1PrStatus(*a.world.statuses[pod.UID])
		a.u.m.UpdatePodStatus(context.Background(), api, &st)
		for i, c := range st.InitContainerStatuses {
			out.InitContainerStatuses[i].Started, out.InitContainerStatuses[i].Ready = c.Started, c.Ready
		}
		for i, c := range st.ContainerStatuses {
			out.ContainerStatuses[i].Started, out.ContainerStatuses[i].Ready = c.Started, c.Ready
		}
		a.world.writeBack(pod.UID, out)
	})
	return out
}

func (a *theirProber) Advance(target time.Time) {
	statuses := a.node.Statuses()
	a.do(func() { a.install(statuses) })
	a.settle(target)
}

func (a *theirProber) Result(typ core.ProbeType, containerID string) (core.Result, bool) {
	var r proberresults.Result
	var ok bool
	a.do(func() { r, ok = a.u.results[typ].Get(containerIDOf(containerID)) })
	return coreResult(r.String()), ok
}

// Close retires the manager (no statuses, CleanupPods of every pod, as
// TestProber's retire does), answers the tries still waiting with an error, and ends the
// bubble once every worker has: one still in its jitter sleep wakes,
// finds no status and sees its stop.
func (a *theirProber) Close() {
	a.do(func() {
		a.u.status.mu.Lock()
		a.u.status.retired = true
		a.u.status.mu.Unlock()
		a.u.m.CleanupPods(map[types.UID]sets.Empty{})
		retired := core.Outcome{Result: core.ProbeUnknown, Err: errors.New("the kubelet is gone")}
		if a.asked != nil {
			a.asked.reply <- retired
		}
		deadline := time.Now().Add(prMaxPeriod)
		for {
			synctest.Wait()
			a.drain()
			for _, w := range a.waiting {
				w.reply <- retired
			}
			a.waiting = nil
			if !time.Now().Before(deadline) {
				return
			}
			timer := time.NewTimer(time.Until(deadline))
			select {
			case w := <-a.requests:
				timer.Stop()
				a.waiting = append(a.waiting, w)
			case <-timer.C:
			}
		}
	})
	close(a.ops)
	<-a.ended
}

// settle runs the bubble to target, answering every try on the way.
func (a *theirProber) settle(target time.Time) {
	for {
		var try *theirTry
		a.do(func() { try = a.next(a.bubble(target)) })
		if try == nil {
			return
		}
		out := a.node.Answer(try.run)
		var updates []core.Update
		final := out.Err == nil || try.run.Attempt >= maxPrTries
		a.do(func() { updates = a.answer(try, out) })
		if final {
			a.node.Probed(try.run, updates)
		}
	}
}

// next is the first try, in worker order, of those waiting at the earliest
// instant up to target at which a worker waits; nil once the clock is at
// target and every worker due ran.
func (a *theirProber) next(target time.Time) *theirTry {
	for {
		synctest.Wait()
		a.drain()
		if len(a.waiting) > 0 {
			slices.SortFunc(a.waiting, func(x, y *theirTry) int { return strings.Compare(tryOrder(x), tryOrder(y)) })
			a.asked, a.waiting = a.waiting[0], a.waiting[1:]
			return a.asked
		}
		d := target.Sub(time.Now())
		if d <= 0 {
			return nil
		}
		timer := time.NewTimer(d)
		select {
		case w := <-a.requests:
			timer.Stop()
			a.waiting = append(a.waiting, w)
		case <-timer.C:
		}
	}
}

func tryOrder(w *theirTry) string {
	k := w.run.Key
	return fmt.Sprintf("%s\x00%s\x00%d", k.PodUID, k.ContainerName, k.Type)
}

// drain takes every try the workers offer now.
func (a *theirProber) drain() {
	for {
		select {
		case w := <-a.requests:
			a.waiting = append(a.waiting, w)
		default:
			return
		}
	}
}

// answer gives the asked try its outcome and lets its worker run until it
// waits again; what it published meanwhile for the probed container is
// the probe's.
func (a *theirProber) answer(w *theirTry, out core.Outcome) []core.Update {
	a.rec.mu.Lock()
	from := len(a.rec.out.Updates)
	a.rec.mu.Unlock()
	a.asked = nil
	w.reply <- out
	synctest.Wait()
	a.rec.mu.Lock()
	defer a.rec.mu.Unlock()
	var updates []core.Update
	for _, u := range a.rec.out.Updates[from:] {
		if u.ContainerID == w.run.ContainerID && u.Type == w.run.Key.Type.String() {
			updates = append(updates, core.Update{Type: w.run.Key.Type, ContainerID: u.ContainerID, Result: coreResult(u.Result), PodUID: u.Pod})
		}
	}
	return updates
}

// coreResult is an upstream result's String as core's result.
func coreResult(s string) core.Result {
	switch s {
	case proberresults.Success.String():
		return core.Success
	case proberresults.Failure.String():
		return core.Failure
	}
	return core.Unknown
}

// theirRunner is the command runner: every try of a probe is the suite's
// to answer.
type theirRunner struct {
	a  *theirProber
	mu sync.Mutex
	// tries counts the tries of each probe being run, by container ID and
	// type: a try that errs is tried again, up to the third.
	tries map[string]int
}

func (r *theirRunner) RunInContainer(_ context.Context, id kubecontainer.ContainerID, cmd []string, timeout time.Duration) ([]byte, error) {
	key, probe, err := parseProbeCommand(cmd)
	if err != nil {
		return nil, err
	}
	probe.TimeoutSeconds = int32(timeout / time.Second)
	k := id.String() + "/" + key.Type.String()
	r.mu.Lock()
	r.tries[k]++
	attempt := r.tries[k]
	r.mu.Unlock()
	w := &theirTry{run: pbsuite.Run{Key: key, ContainerID: id.String(), Attempt: attempt, At: r.a.suite(time.Now()), Probe: probe}, reply: make(chan core.Outcome, 1)}
	r.a.requests <- w
	out := <-w.reply
	if out.Err == nil || attempt >= maxPrTries {
		r.mu.Lock()
		delete(r.tries, k)
		r.mu.Unlock()
	}
	switch {
	case out.Err != nil:
		return nil, out.Err
	case out.Result == core.ProbeSuccess || out.Result == core.ProbeWarning:
		return []byte(out.Output), nil
	}
	return []byte(out.Output), utilexec.CodeExitError{Err: errors.New("command terminated with non-zero exit code"), Code: 1}
}

// probeCommand is the exec command of a probe: what its worker holds.
func probeCommand(key core.WorkerKey, p core.Probe) []string {
	return []string{"nodeproof-probe", key.PodUID, key.ContainerName, strconv.Itoa(int(key.Type)),
		strconv.Itoa(int(p.InitialDelaySeconds)), strconv.Itoa(int(p.PeriodSeconds)), strconv.Itoa(int(p.SuccessThreshold)), strconv.Itoa(int(p.FailureThreshold))}
}

func parseProbeCommand(cmd []string) (core.WorkerKey, core.Probe, error) {
	if len(cmd) != 8 || cmd[0] != "nodeproof-probe" {
		return core.WorkerKey{}, core.Probe{}, fmt.Errorf("not a probe command of the suite's: %q", cmd)
	}
	var n [5]int32
	for i := range n {
		v, err := strconv.Atoi(cmd[3+i])
		if err != nil {
			return core.WorkerKey{}, core.Probe{}, fmt.Errorf("probe command %q: %v", cmd, err)
		}
		n[i] = int32(v)
	}
	key := core.WorkerKey{PodUID: cmd[1], ContainerName: cmd[2], Type: core.ProbeType(n[0])}
	return key, core.Probe{InitialDelaySeconds: n[1], PeriodSeconds: n[2], SuccessThreshold: n[3], FailureThreshold: n[4]}, nil
}

// v1Pod is the suite's pod as the kubelet holds it, every probe an exec
// of probeCommand, on the bubble's clock.
func (a *theirProber) v1Pod(p core.Pod) *v1.Pod {
	out := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(p.UID), Namespace: p.Namespace, Name: p.Name},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicy(p.RestartPolicy)}}
	if p.DeletionTimestamp != nil {
		at := metav1.NewTime(a.bubble(*p.DeletionTimestamp))
		out.DeletionTimestamp = &at
	}
	conv := func(c core.Container) v1.Container {
		k := v1.Container{Name: c.Name}
		for _, typ := range []core.ProbeType{core.Liveness, core.Readiness, core.Startup} {
			pr := c.ProbeOf(typ)
			if pr == nil {
				continue
			}
			v := &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: probeCommand(core.WorkerKey{PodUID: p.UID, ContainerName: c.Name, Type: typ}, *pr)}},
				InitialDelaySeconds: pr.InitialDelaySeconds, TimeoutSeconds: pr.TimeoutSeconds, PeriodSeconds: pr.PeriodSeconds,
				SuccessThreshold: pr.SuccessThreshold, FailureThreshold: pr.FailureThreshold}
			switch typ {
			case core.Liveness:
				k.LivenessProbe = v
			case core.Readiness:
				k.ReadinessProbe = v
			default:
				k.StartupProbe = v
			}
		}
		if c.RestartPolicy != "" {
			policy := v1.ContainerRestartPolicy(c.RestartPolicy)
			k.RestartPolicy = &policy
		}
		return k
	}
	for _, c := range p.InitContainers {
		out.Spec.InitContainers = append(out.Spec.InitContainers, conv(c))
	}
	for _, c := range p.Containers {
		out.Spec.Containers = append(out.Spec.Containers, conv(c))
	}
	return out
}

// firstProbe is the key of the pod's first probe in AddPod's order.
func firstProbe(p core.Pod) core.WorkerKey {
	for _, c := range append(slices.Clone(p.Containers), p.InitContainers...) {
		for _, typ := range []core.ProbeType{core.Startup, core.Readiness, core.Liveness} {
			if c.ProbeOf(typ) != nil {
				return core.WorkerKey{PodUID: p.UID, ContainerName: c.Name, Type: typ}
			}
		}
	}
	return core.WorkerKey{PodUID: p.UID}
}

// jitterSeeds are the seeds found for the fractions asked, within
// jitterSlack: the first Float64 of math/rand seeded with one.
var (
	jitterMu    sync.Mutex
	jitterSeeds = map[float64]int64{}
)

const jitterSlack = 1e-3

func jitterSeed(fraction float64) int64 {
	jitterMu.Lock()
	defer jitterMu.Unlock()
	if s, ok := jitterSeeds[fraction]; ok {
		return s
	}
	for s := int64(1); ; s++ {
		if f := prJitter(s); f >= fraction-jitterSlack && f <= fraction+jitterSlack {
			jitterSeeds[fraction] = s
			return s
		}
	}
}

// holdingContext is the kubelet's context given to AddPod, which every
// worker it starts keeps: while holding, every use of it but AddPod's own
// first one (its logger) waits for a release, so that the new workers,
// whose first use is their logger, right before their jitter draw, draw
// one at a time.
type holdingContext struct {
	context.Context
	mu      sync.Mutex
	holding bool
	skip    int
	waiting int
	release chan struct{}
}

func (c *holdingContext) hold() {
	c.mu.Lock()
	c.holding, c.skip = true, 1
	c.mu.Unlock()
}

func (c *holdingContext) stopHolding() {
	c.mu.Lock()
	c.holding = false
	c.mu.Unlock()
}

func (c *holdingContext) held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waiting
}

func (c *holdingContext) Value(key any) any {
	c.mu.Lock()
	switch {
	case c.holding && c.skip > 0:
		c.skip--
	case c.holding:
		c.waiting++
		c.mu.Unlock()
		<-c.release
		c.mu.Lock()
		c.waiting--
	}
	c.mu.Unlock()
	return c.Context.Value(key)
}

// TestTheirProberAnswersInOrder: the adapter hands the suite every probe a
// worker runs, on the probe's worker, container and settings, and the
// results it publishes, the same each time for the same answers.
func TestTheirProberAnswersInOrder(t *testing.T) {
	run := func() []string {
		start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		n := &scriptedNode{start: start}
		m := newTheirProber(t)(start, n)
		defer m.Close()
		probe := &core.Probe{Handler: core.Handler{Exec: &core.ExecAction{Command: []string{"check"}}}, PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 2}
		pod := core.Pod{UID: "pod-1", Namespace: "default", Name: "web-1", RestartPolicy: core.RestartAlways,
			Containers: []core.Container{{Name: "app", LivenessProbe: probe, ReadinessProbe: probe}, {Name: "side", LivenessProbe: probe}}}
		started := false
		n.statuses = map[string]*core.PodStatus{"pod-1": {Phase: core.PodRunning, ContainerStatuses: []core.ContainerStatus{
			{Name: "app", ContainerID: "containerd://c1", State: core.ContainerState{Running: &core.Running{StartedAt: start}}, Started: &started},
			{Name: "side", ContainerID: "containerd://c2", State: core.ContainerState{Running: &core.Running{StartedAt: start}}, Started: &started},
		}}}
		// Inside its first period the manager jitters the first probes;
		// the fraction 0 puts them at once.
		m.AddPod(start, pod, func(core.WorkerKey) float64 { return 0 })
		st := m.UpdatePodStatus(start, pod, *n.statuses["pod-1"])
		n.statuses["pod-1"] = &st
		m.Advance(start.Add(3 * time.Second))
		r, ok := m.Result(core.Liveness, "containerd://c1")
		assert.True(t, ok)
		n.log = append(n.log, "liveness of c1 "+r.String())
		return n.log
	}
	// Every worker drew the fraction of jitterSeed(0).
	j := time.Duration(prJitter(jitterSeed(0)) * float64(time.Second))
	first := run()
	assert.Equal(t, []string{
		"probed app/Liveness containerd://c1 try 1 at +" + j.String() + " failure 2 []",
		// The sync's trigger waited in the worker's buffer while it slept.
		"probed app/Readiness containerd://c1 try 1 at +" + j.String() + " failure 2 [Success]",
		"probed app/Readiness containerd://c1 try 1 at +" + j.String() + " failure 2 []",
		"probed side/Liveness containerd://c2 try 1 at +" + j.String() + " failure 2 []",
		"probed app/Liveness containerd://c1 try 1 at +" + (time.Second + j).String() + " failure 2 [Failure]",
		"probed app/Readiness containerd://c1 try 1 at +" + (time.Second + j).String() + " failure 2 []",
		"probed side/Liveness containerd://c2 try 1 at +" + (time.Second + j).String() + " failure 2 [Failure]",
		// Both liveness workers are on hold.
		"probed app/Readiness containerd://c1 try 1 at +" + (2*time.Second + j).String() + " failure 2 []",
		"liveness of c1 Failure",
	}, first)
	assert.Equal(t, first, run())
}

// scriptedNode answers every liveness try with a failure and every other
// with a success, and logs what it was asked.
type scriptedNode struct {
	start    time.Time
	statuses map[string]*core.PodStatus
	log      []string
}

func (n *scriptedNode) Statuses() map[string]*core.PodStatus { return n.statuses }

func (n *scriptedNode) Answer(run pbsuite.Run) core.Outcome {
	if run.Key.Type == core.Liveness {
		return core.Outcome{Result: core.ProbeFailure, Output: "down"}
	}
	return core.Outcome{Result: core.ProbeSuccess}
}

func (n *scriptedNode) Probed(run pbsuite.Run, updates []core.Update) {
	var results []string
	for _, u := range updates {
		results = append(results, u.Result.String())
	}
	n.log = append(n.log, fmt.Sprintf("probed %s/%s %s try %d at +%v failure %d [%s]", run.Key.ContainerName, run.Key.Type, run.ContainerID, run.Attempt,
		run.At.Sub(n.start), run.Probe.FailureThreshold, strings.Join(results, " ")))
}

// containerIDOf is the container ID "type://id" as the kubelet parses it;
// written here because v1.37 gave kubecontainer.ParseContainerID a logger.
func containerIDOf(s string) kubecontainer.ContainerID {
	typ, id, _ := strings.Cut(s, "://")
	return kubecontainer.ContainerID{Type: typ, ID: id}
}
