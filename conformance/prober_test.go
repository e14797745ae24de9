//go:debug randseednop=0

package conformance

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/record"
	remote "k8s.io/cri-client/pkg"
	"k8s.io/klog/v2"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	upstreamprober "k8s.io/kubernetes/pkg/kubelet/prober"
	proberresults "k8s.io/kubernetes/pkg/kubelet/prober/results"
	"k8s.io/kubernetes/pkg/kubelet/status"
	utilexec "k8s.io/utils/exec"
	"pgregory.net/rapid"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/core/prober"
)

// The prober comparison (issue 14 item 5): a generated scenario is a set of
// pods with exec probes whose answers are scripted, and a timeline of
// actions: pods added, containers started (each start a new container ID),
// exiting and waiting, pod phases, deletion, the kubelet's status sync
// (UpdatePodStatus, its Started and Ready written back to the status
// manager, as the kubelet does), the API pod's Ready condition, stops
// (StopLivenessAndStartup, RemovePod, CleanupPods) and kubelet restarts (a
// new manager, the pods added again). The same timeline runs through
// core/prober, stepped on its NextDue, and through upstream's
// prober.NewManager with a fake status manager, upstream's results
// managers, a recorder and a scripted command runner, inside a
// testing/synctest bubble whose clock is the timeline's. Compared: every
// result the results managers publish (when, which container and type,
// which result), every probe the runner is asked for (when, which try),
// every event, and Started and Ready from each UpdatePodStatus.
//
// Only exec probes: upstream's prober takes its HTTP, TCP and gRPC probers
// from unexported fields, while NewManager takes the command runner; the
// rules of prober.probe do not depend on the handler (core's Outcome is the
// handler's verdict), and the handlers themselves are agent/probe's, tested
// against real targets.
//
// Time. Upstream's worker sleeps rand.Float64()·period before its first
// probe when it starts less than one period after the manager: the
// jitter. The file's //go:debug line makes math/rand's global Seed work
// again, so that the test seeds the global source right before an AddPod
// and core is given the first Float64 of that seed. Only one goroutine may
// draw between a seed and the draw for that to be exact, so a pod added
// inside the jitter window has one probe (one worker); a pod with more
// probes is added once a period has passed since the manager's start (the
// plan delays it), where upstream draws nothing. Probes answer at once
// (the runner takes no bubble time): a probe that outlasts a tick while a
// stop or a manual trigger waits is where upstream's select picks at
// random between ready channels, which core replaces by a documented
// order; that timing is left to core's spec tests. Actions fall on the
// half second, pods are added on the half second too, and a worker's
// ticks fall between them only by the jitter; at an instant where a tick
// and an action meet, the bubble runs the tick's doProbe first (the test
// waits for every worker to block before it acts), and so does core.

// probeEpoch is where a synctest bubble's clock starts; core's clock
// starts there too.
var probeEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// prOutcome is one scripted answer of the exec runner.
type prOutcome string

const (
	prOK      prOutcome = "ok"      // exit 0, output "ok"
	prFail    prOutcome = "fail"    // exit 1, output "boom"
	prTimeout prOutcome = "timeout" // the CRI client's ErrCommandTimedOut
	prError   prOutcome = "error"   // any other runner error: retried, then thrown away
)

// prProbe is one probe of a container: its settings and its answers, used
// in turn (cyclically) by every try on each container ID.
type prProbe struct {
	InitialDelay, Timeout, Period, Success, Failure int32
	Script                                          []prOutcome
}

type prContainer struct {
	Name                       string
	Liveness, Readiness, Start *prProbe
}

func (c prContainer) probes() int {
	n := 0
	for _, p := range []*prProbe{c.Liveness, c.Readiness, c.Start} {
		if p != nil {
			n++
		}
	}
	return n
}

type prPod struct {
	UID           string
	RestartPolicy string // Always, OnFailure, Never
	Containers    []prContainer
	// Sidecars are restartable init containers; Init (when set) is a
	// regular init container before them, without probes.
	Init     bool
	Sidecars []prContainer
}

func (p prPod) probed() []prContainer { return append(slices.Clone(p.Containers), p.Sidecars...) }

func (p prPod) probes() int {
	n := 0
	for _, c := range p.probed() {
		n += c.probes()
	}
	return n
}

func (p prPod) maxPeriod() time.Duration {
	var m int32
	for _, c := range p.probed() {
		for _, pr := range []*prProbe{c.Liveness, c.Readiness, c.Start} {
			if pr != nil {
				m = max(m, pr.Period)
			}
		}
	}
	return time.Duration(m) * time.Second
}

// prStep is one action of a scenario; Op says which and which fields it
// reads.
type prStep struct {
	// Op: "wait" (Wait passes), "add" (AddPod; Seed seeds the jitter),
	// "start" (Container of Pod gets a new ID and runs; "" = the init
	// container), "exit" (it terminates with Exit), "wait4" (it waits),
	// "phase" (Pod's phase becomes Phase), "delete" (the deletion
	// timestamp), "sync" (UpdatePodStatus, written back), "ready" (the
	// API pod's PodReady is Flag), "stopLS" (StopLivenessAndStartup),
	// "remove" (RemovePod), "cleanup" (CleanupPods keeping Pod only when
	// Flag), "restart" (a new manager).
	Op        string        `json:"op"`
	Pod       int           `json:"pod,omitempty"`
	Container string        `json:"container,omitempty"`
	Exit      int32         `json:"exit,omitempty"`
	Phase     string        `json:"phase,omitempty"`
	Flag      bool          `json:"flag,omitempty"`
	Wait      time.Duration `json:"wait,omitempty"`
	Seed      int64         `json:"seed,omitempty"`
}

type prScenario struct {
	Pods  []prPod
	Steps []prStep
}

// prAction is a step at its time on the timeline (since probeEpoch).
type prAction struct {
	At    time.Duration
	Index int // the step's index
	prStep
}

// plan lays the steps out in time: waits move the clock, everything else
// happens at the current instant, and an "end" closes the timeline. An "add" of a pod with more than one
// probe inside its jitter window (less than its longest period since the
// manager's start) is moved to the window's end; a stop is moved past the
// longest window of the current manager and past every jitter sleep, so
// no stop can wait in a worker's buffer beside a manual trigger while it
// sleeps.
func (in prScenario) plan() []prAction {
	var out []prAction
	now, start, quiet := time.Duration(0), time.Duration(0), time.Duration(0)
	var maxPeriod time.Duration
	for _, p := range in.Pods {
		maxPeriod = max(maxPeriod, p.maxPeriod())
	}
	for i, s := range in.Steps {
		switch s.Op {
		case "wait":
			now += s.Wait
			continue
		case "restart":
			start = now
		case "add":
			p := in.Pods[s.Pod]
			if p.probes() > 1 && now-start < p.maxPeriod() {
				now = start + p.maxPeriod()
			}
			if now-start < p.maxPeriod() {
				quiet = max(quiet, now+p.maxPeriod())
			}
		case "stopLS", "remove", "cleanup":
			now = max(now, start+maxPeriod, quiet)
		}
		out = append(out, prAction{At: now, Index: i, prStep: s})
	}
	// The last waits pass too.
	return append(out, prAction{At: now, Index: len(in.Steps), prStep: prStep{Op: "end"}})
}

// prUpdate is one published result.
type prUpdate struct {
	At          time.Duration `json:"at"`
	Pod         string        `json:"pod"`
	ContainerID string        `json:"id"`
	Type        string        `json:"type"`
	Result      string        `json:"result"`
}

// prRun is one try of a probe the runner was asked for.
type prRun struct {
	At          time.Duration `json:"at"`
	ContainerID string        `json:"id"`
	Type        string        `json:"type"`
	Try         int           `json:"try"`
}

// prEvent is one recorded event.
type prEvent struct {
	At        time.Duration `json:"at"`
	Pod       string        `json:"pod"`
	Container string        `json:"container"`
	Text      string        `json:"text"` // type, reason, message
}

// prSync is Started and Ready of every status after an UpdatePodStatus.
type prSync struct {
	Step int      `json:"step"`
	Pod  string   `json:"pod"`
	Init []string `json:"init,omitempty"` // name:started:ready
	App  []string `json:"app,omitempty"`
}

type prResult struct {
	Updates []prUpdate
	Runs    []prRun
	Events  []prEvent
	Syncs   []prSync
	// Setup is a failure of the harness itself.
	Setup string `json:",omitempty"`
}

// normalise orders what happened at one instant: upstream's workers run
// concurrently, so only each worker's own sequence has an order. A stable
// sort by instant, pod, container and type keeps it.
func (r prResult) normalise() prResult {
	sort.SliceStable(r.Updates, func(i, j int) bool {
		a, b := r.Updates[i], r.Updates[j]
		return a.At < b.At || a.At == b.At && (a.Pod < b.Pod || a.Pod == b.Pod && (a.ContainerID < b.ContainerID || a.ContainerID == b.ContainerID && a.Type < b.Type))
	})
	sort.SliceStable(r.Runs, func(i, j int) bool {
		a, b := r.Runs[i], r.Runs[j]
		return a.At < b.At || a.At == b.At && (a.ContainerID < b.ContainerID || a.ContainerID == b.ContainerID && a.Type < b.Type)
	})
	sort.SliceStable(r.Events, func(i, j int) bool {
		a, b := r.Events[i], r.Events[j]
		return a.At < b.At || a.At == b.At && (a.Pod < b.Pod || a.Pod == b.Pod && (a.Container < b.Container || a.Container == b.Container && a.Text < b.Text))
	})
	return r
}

// prWorld is the pods' statuses as the status manager holds them, and the
// runner's script; each side has its own.
type prWorld struct {
	in       prScenario
	statuses map[string]*prober.PodStatus // by pod UID; absent: no status yet
	apiReady map[string]bool
	gen      map[string]int // container generations, by pod/container
	tries    map[string]int // tries per container ID and type
}

func newPrWorld(in prScenario) *prWorld {
	return &prWorld{in: in, statuses: map[string]*prober.PodStatus{}, apiReady: map[string]bool{}, gen: map[string]int{}, tries: map[string]int{}}
}

func initName(p prPod) string { return p.UID + "-init" }

// apply performs a step on the statuses; it reports false for the steps
// that are the kubelet's.
func (w *prWorld) apply(a prAction) bool {
	if a.Op == "ready" {
		w.apiReady[w.in.Pods[a.Pod].UID] = a.Flag
		return true
	}
	if a.Op != "start" && a.Op != "exit" && a.Op != "wait4" && a.Op != "phase" {
		return false
	}
	p := w.in.Pods[a.Pod]
	st := w.statuses[p.UID]
	if st == nil {
		st = &prober.PodStatus{Phase: prober.PodPending, PodIP: "10.0.0.1"}
		if p.Init {
			st.InitContainerStatuses = append(st.InitContainerStatuses, prober.ContainerStatus{Name: initName(p)})
		}
		for _, c := range p.Sidecars {
			st.InitContainerStatuses = append(st.InitContainerStatuses, prober.ContainerStatus{Name: c.Name})
		}
		for _, c := range p.Containers {
			st.ContainerStatuses = append(st.ContainerStatuses, prober.ContainerStatus{Name: c.Name})
		}
		w.statuses[p.UID] = st
	}
	if a.Op == "phase" {
		st.Phase = prober.Phase(a.Phase)
		return true
	}
	name := a.Container
	if name == "" {
		name = initName(p)
	}
	c := findPrStatus(st, name)
	if c == nil {
		return true
	}
	f := false
	switch a.Op {
	case "start":
		key := p.UID + "/" + name
		w.gen[key]++
		c.ContainerID = fmt.Sprintf("containerd://%s.%s.%d", p.UID, name, w.gen[key])
		c.State = prober.ContainerState{Running: &prober.Running{StartedAt: probeEpoch.Add(a.At)}}
		c.Started, c.Ready = &f, false
	case "exit":
		if c.ContainerID == "" {
			return true
		}
		c.State = prober.ContainerState{Terminated: &prober.Terminated{ExitCode: a.Exit}}
		c.Started, c.Ready = &f, false
	case "wait4":
		c.State = prober.ContainerState{}
		c.Started, c.Ready = &f, false
	}
	return true
}

func findPrStatus(st *prober.PodStatus, name string) *prober.ContainerStatus {
	for _, list := range [][]prober.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// writeBack stores Started and Ready from an UpdatePodStatus, as the
// kubelet's status manager does.
func (w *prWorld) writeBack(uid string, synced prober.PodStatus) {
	st := w.statuses[uid]
	for _, pair := range []struct{ to, from []prober.ContainerStatus }{{st.InitContainerStatuses, synced.InitContainerStatuses}, {st.ContainerStatuses, synced.ContainerStatuses}} {
		for i := range pair.to {
			pair.to[i].Started, pair.to[i].Ready = pair.from[i].Started, pair.from[i].Ready
		}
	}
}

// script returns the answer to the next try of a probe on a container.
func (w *prWorld) script(containerID string, t prober.ProbeType) prOutcome {
	k := containerID + "/" + t.String()
	n := w.tries[k]
	w.tries[k]++
	rest := strings.TrimPrefix(containerID, "containerd://")
	parts := strings.Split(rest, ".")
	for _, p := range w.in.Pods {
		if p.UID != parts[0] {
			continue
		}
		for _, c := range p.probed() {
			if c.Name != parts[1] {
				continue
			}
			pr := map[prober.ProbeType]*prProbe{prober.Liveness: c.Liveness, prober.Readiness: c.Readiness, prober.Startup: c.Start}[t]
			if pr != nil && len(pr.Script) > 0 {
				return pr.Script[n%len(pr.Script)]
			}
		}
	}
	return prOK
}

func prCommand(t prober.ProbeType) []string { return []string{"check", strings.ToLower(t.String())} }

// Specs on both sides.

func corePrProbe(p *prProbe, t prober.ProbeType) *prober.Probe {
	if p == nil {
		return nil
	}
	return &prober.Probe{Handler: prober.Handler{Exec: &prober.ExecAction{Command: prCommand(t)}},
		InitialDelaySeconds: p.InitialDelay, TimeoutSeconds: p.Timeout, PeriodSeconds: p.Period, SuccessThreshold: p.Success, FailureThreshold: p.Failure}
}

func corePrPod(p prPod) prober.Pod {
	pod := prober.Pod{UID: p.UID, Namespace: "default", Name: p.UID, RestartPolicy: prober.ContainerRestartPolicy(p.RestartPolicy)}
	conv := func(c prContainer) prober.Container {
		return prober.Container{Name: c.Name, LivenessProbe: corePrProbe(c.Liveness, prober.Liveness),
			ReadinessProbe: corePrProbe(c.Readiness, prober.Readiness), StartupProbe: corePrProbe(c.Start, prober.Startup)}
	}
	if p.Init {
		pod.InitContainers = append(pod.InitContainers, prober.Container{Name: initName(p)})
	}
	for _, c := range p.Sidecars {
		sc := conv(c)
		sc.RestartPolicy = prober.RestartAlways
		pod.InitContainers = append(pod.InitContainers, sc)
	}
	for _, c := range p.Containers {
		pod.Containers = append(pod.Containers, conv(c))
	}
	return pod.WithDefaults()
}

func v1PrProbe(p *prProbe, t prober.ProbeType) *v1.Probe {
	if p == nil {
		return nil
	}
	return &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: prCommand(t)}},
		InitialDelaySeconds: p.InitialDelay, TimeoutSeconds: p.Timeout, PeriodSeconds: p.Period, SuccessThreshold: p.Success, FailureThreshold: p.Failure}
}

func v1PrPod(p prPod) *v1.Pod {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(p.UID), Namespace: "default", Name: p.UID},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicy(p.RestartPolicy)}}
	conv := func(c prContainer) v1.Container {
		return v1.Container{Name: c.Name, LivenessProbe: v1PrProbe(c.Liveness, prober.Liveness),
			ReadinessProbe: v1PrProbe(c.Readiness, prober.Readiness), StartupProbe: v1PrProbe(c.Start, prober.Startup)}
	}
	if p.Init {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: initName(p)})
	}
	always := v1.ContainerRestartPolicyAlways
	for _, c := range p.Sidecars {
		sc := conv(c)
		sc.RestartPolicy = &always
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, sc)
	}
	for _, c := range p.Containers {
		pod.Spec.Containers = append(pod.Spec.Containers, conv(c))
	}
	return pod
}

func v1PrStatuses(in []prober.ContainerStatus) []v1.ContainerStatus {
	var out []v1.ContainerStatus
	for _, c := range in {
		s := v1.ContainerStatus{Name: c.Name, ContainerID: c.ContainerID, Ready: c.Ready}
		if c.Started != nil {
			b := *c.Started
			s.Started = &b
		}
		switch {
		case c.State.Running != nil:
			s.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(c.State.Running.StartedAt)}
		case c.State.Terminated != nil:
			s.State.Terminated = &v1.ContainerStateTerminated{ExitCode: c.State.Terminated.ExitCode}
		default:
			s.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
		}
		out = append(out, s)
	}
	return out
}

func v1PrStatus(st prober.PodStatus) v1.PodStatus {
	return v1.PodStatus{Phase: v1.PodPhase(st.Phase), PodIP: st.PodIP,
		InitContainerStatuses: v1PrStatuses(st.InitContainerStatuses), ContainerStatuses: v1PrStatuses(st.ContainerStatuses)}
}

func prSyncOf(step int, uid string, init, app []string) prSync {
	return prSync{Step: step, Pod: uid, Init: init, App: app}
}

func prFlags(name string, started *bool, ready bool) string {
	s := "nil"
	if started != nil {
		s = fmt.Sprint(*started)
	}
	return fmt.Sprintf("%s:%s:%v", name, s, ready)
}

// prJitter is the fraction upstream's worker draws after the test seeds
// math/rand's global source with seed: its first Float64.
func prJitter(seed int64) float64 { return rand.New(rand.NewSource(seed)).Float64() }

// Core's side.

func runOurProber(in prScenario) prResult { return runOurProberWith(in, prJitter) }

// runOurProberWith runs core with the jitter fraction given for each
// AddPod's seed (the self-test gives a wrong one).
func runOurProberWith(in prScenario, jitter func(seed int64) float64) prResult {
	var out prResult
	world := newPrWorld(in)
	start := probeEpoch
	m, err := prober.NewManager(prober.Options{KubeletStart: start})
	if err != nil {
		return prResult{Setup: err.Error()}
	}
	pods := map[string]prober.Pod{}
	record := func(now time.Time, st prober.Step) {
		at := now.Sub(probeEpoch)
		for _, u := range st.Updates {
			out.Updates = append(out.Updates, prUpdate{At: at, Pod: u.PodUID, ContainerID: u.ContainerID, Type: u.Type.String(), Result: u.Result.String()})
		}
		for _, e := range st.Events {
			out.Events = append(out.Events, prEvent{At: at, Pod: e.PodUID, Container: e.ContainerName, Text: e.Type + " " + e.Reason + " " + e.Message})
		}
	}
	fail := func(err error) prResult {
		out.Setup = "core: " + err.Error()
		return out
	}
	// advance runs every worker due at or before now, each probe
	// answering at once.
	advance := func(now time.Time) error {
		for key, due, ok := m.NextDue(); ok && !due.After(now); key, due, ok = m.NextDue() {
			var status *prober.PodStatus
			if st := world.statuses[key.PodUID]; st != nil {
				c := st.Clone()
				status = &c
			}
			st, err := m.Step(key, due, status)
			if err != nil {
				return err
			}
			record(due, st)
			for st.Kind == prober.StepProbe {
				out.Runs = append(out.Runs, prRun{At: due.Sub(probeEpoch), ContainerID: st.Run.ContainerID, Type: key.Type.String(), Try: st.Run.Attempt})
				var o prober.Outcome
				switch world.script(st.Run.ContainerID, key.Type) {
				case prOK:
					o = prober.Outcome{Result: prober.ProbeSuccess, Output: "ok"}
				case prFail:
					o = prober.Outcome{Result: prober.ProbeFailure, Output: "boom"}
				case prTimeout:
					o = prober.Outcome{Result: prober.ProbeFailure, Output: prober.ExecTimeoutOutput(prCommand(key.Type), st.Run.Timeout)}
				case prError:
					o = prober.Outcome{Result: prober.ProbeUnknown, Err: errPrExec}
				}
				if st, err = m.ProbeDone(key, due, o); err != nil {
					return err
				}
				record(due, st)
			}
		}
		return nil
	}
	for _, a := range in.plan() {
		now := probeEpoch.Add(a.At)
		if err := advance(now); err != nil {
			return fail(err)
		}
		if world.apply(a) {
			continue
		}
		p := in.Pods[a.Pod]
		switch a.Op {
		case "restart":
			start = now
			if m, err = prober.NewManager(prober.Options{KubeletStart: start}); err != nil {
				return fail(err)
			}
			pods = map[string]prober.Pod{}
		case "add":
			pod := corePrPod(p)
			if old, ok := pods[p.UID]; ok {
				pod.DeletionTimestamp = old.DeletionTimestamp
			}
			pods[p.UID] = pod
			frac := jitter(a.Seed)
			if _, err := m.AddPod(now, pod, func(prober.WorkerKey) float64 { return frac }); err != nil {
				return fail(err)
			}
		case "delete":
			pod, ok := pods[p.UID]
			if !ok || pod.DeletionTimestamp != nil {
				continue
			}
			pod.DeletionTimestamp = &now
			pods[p.UID] = pod
			m.SetDeletionTimestamp(p.UID, now)
		case "sync":
			st := world.statuses[p.UID]
			if st == nil {
				continue
			}
			api := corePrPod(p)
			api.Ready = world.apiReady[p.UID]
			res, err := m.UpdatePodStatus(now, api, *st)
			if err != nil {
				return fail(err)
			}
			var init, app []string
			for _, c := range res.Status.InitContainerStatuses {
				init = append(init, prFlags(c.Name, c.Started, c.Ready))
			}
			for _, c := range res.Status.ContainerStatuses {
				app = append(app, prFlags(c.Name, c.Started, c.Ready))
			}
			out.Syncs = append(out.Syncs, prSyncOf(a.Index, p.UID, init, app))
			world.writeBack(p.UID, res.Status)
		case "stopLS":
			m.StopLivenessAndStartup(now, corePrPod(p))
		case "remove":
			m.RemovePod(now, corePrPod(p))
		case "cleanup":
			desired := map[string]bool{}
			if a.Flag {
				desired[p.UID] = true
			}
			m.CleanupPods(now, desired)
		}
		// A manual trigger makes a worker due at once.
		if err := advance(now); err != nil {
			return fail(err)
		}
	}
	return out.normalise()
}

var errPrExec = errors.New("rpc error: code = Unknown desc = failed to exec in container: OCI runtime exec failed")

// Upstream's side: the fakes.

// prStatusManager is the status manager the workers read: the world's
// statuses while its manager is the kubelet's, none after a restart.
type prStatusManager struct {
	status.Manager
	mu      *sync.Mutex
	world   *prWorld
	retired bool
}

func (s *prStatusManager) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.world.statuses[string(uid)]
	if s.retired || st == nil {
		return v1.PodStatus{}, false
	}
	return v1PrStatus(*st), true
}

// prResults wraps one of upstream's results managers and records each
// update it publishes at the bubble's time: the update a Set sends is
// taken off the channel under the lock, so it is that Set's.
type prResults struct {
	proberresults.Manager
	mu      sync.Mutex
	typ     string
	out     *prRecorder
	retired bool
}

func (r *prResults) Set(id kubecontainer.ContainerID, result proberresults.Result, pod *v1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Manager.Set(id, result, pod)
	select {
	case u := <-r.Manager.Updates():
		if !r.retired {
			r.out.update(prUpdate{At: time.Since(probeEpoch), Pod: string(u.PodUID), ContainerID: u.ContainerID.String(), Type: r.typ, Result: u.Result.String()})
		}
	default:
	}
}

// prRecorder collects upstream's outputs from the workers' goroutines.
type prRecorder struct {
	mu  sync.Mutex
	out prResult
}

func (r *prRecorder) update(u prUpdate) {
	r.mu.Lock()
	r.out.Updates = append(r.out.Updates, u)
	r.mu.Unlock()
}

// prRunner is the scripted command runner.
type prRunner struct {
	mu      *sync.Mutex
	world   *prWorld
	out     *prRecorder
	retired bool
	// errRun counts the tries of the current run that erred, per
	// container ID and type: the runner cannot see which try it is
	// asked for, but an error is retried until the third.
	errRun map[string]int
}

func (r *prRunner) RunInContainer(_ context.Context, id kubecontainer.ContainerID, cmd []string, timeout time.Duration) ([]byte, error) {
	t := map[string]prober.ProbeType{"liveness": prober.Liveness, "readiness": prober.Readiness, "startup": prober.Startup}[cmd[len(cmd)-1]]
	r.mu.Lock()
	if r.retired {
		r.mu.Unlock()
		return nil, errors.New("a retired manager's worker probed")
	}
	k := id.String() + "/" + t.String()
	try := r.errRun[k] + 1
	outcome := r.world.script(id.String(), t)
	if outcome == prError && try < maxPrTries {
		r.errRun[k]++
	} else {
		delete(r.errRun, k)
	}
	r.mu.Unlock()
	r.out.mu.Lock()
	r.out.out.Runs = append(r.out.out.Runs, prRun{At: time.Since(probeEpoch), ContainerID: id.String(), Type: t.String(), Try: try})
	r.out.mu.Unlock()
	switch outcome {
	case prFail:
		return []byte("boom"), utilexec.CodeExitError{Err: errors.New("command terminated with non-zero exit code"), Code: 1}
	case prTimeout:
		return nil, fmt.Errorf("%w: %q timed out after %s", remote.ErrCommandTimedOut, strings.Join(cmd, " "), timeout)
	case prError:
		return nil, errPrExec
	}
	return []byte("ok"), nil
}

// maxPrTries is prober.probe's: a try that errs is repeated up to three
// times.
const maxPrTries = 3

// prEvents is the event recorder; events come from the workers'
// goroutines.
type prEvents struct {
	out *prRecorder
}

func (e *prEvents) Event(obj apiruntime.Object, eventtype, reason, message string) {
	e.record(obj, eventtype+" "+reason+" "+message)
}

func (e *prEvents) Eventf(obj apiruntime.Object, eventtype, reason, messageFmt string, args ...any) {
	e.record(obj, eventtype+" "+reason+" "+fmt.Sprintf(messageFmt, args...))
}

func (e *prEvents) AnnotatedEventf(obj apiruntime.Object, _ map[string]string, eventtype, reason, messageFmt string, args ...any) {
	e.Eventf(obj, eventtype, reason, messageFmt, args...)
}

func (e *prEvents) WithLogger(klog.Logger) record.EventRecorderLogger { return e }

func (e *prEvents) record(obj apiruntime.Object, text string) {
	ev := prEvent{At: time.Since(probeEpoch), Text: text}
	if ref, ok := obj.(*v1.ObjectReference); ok {
		ev.Pod = string(ref.UID)
		path := ref.FieldPath
		if i := strings.IndexByte(path, '{'); i >= 0 && strings.HasSuffix(path, "}") {
			ev.Container = path[i+1 : len(path)-1]
		} else {
			ev.Container = "?" + path
		}
	}
	e.out.mu.Lock()
	e.out.out.Events = append(e.out.out.Events, ev)
	e.out.mu.Unlock()
}

// prUpstream is one kubelet's prober manager and its fakes.
type prUpstream struct {
	m       upstreamprober.Manager
	status  *prStatusManager
	results []*prResults
	runner  *prRunner
}

func (u *prUpstream) retire() {
	u.status.mu.Lock()
	u.status.retired, u.runner.retired = true, true
	u.status.mu.Unlock()
	for _, r := range u.results {
		r.mu.Lock()
		r.retired = true
		r.mu.Unlock()
	}
	u.m.CleanupPods(map[types.UID]sets.Empty{})
}

// newTheirManager is upstream's prober manager over the fakes, the results
// managers in the order liveness, readiness, startup: the one call of
// prober.NewManager, whose arguments may change between releases.
func newTheirManager(statuses *prStatusManager, results []*prResults, runner kubecontainer.CommandRunner, events *prEvents) upstreamprober.Manager {
	return upstreamprober.NewManager(statuses, results[0], results[1], results[2], runner, events)
}

func runTheirProber(t *testing.T, in prScenario) prResult {
	var out prResult
	synctest.Test(t, func(*testing.T) {
		out = theirProberInBubble(in)
	})
	return out
}

func theirProberInBubble(in prScenario) prResult {
	if now := time.Now(); !now.Equal(probeEpoch) {
		return prResult{Setup: fmt.Sprintf("the bubble's clock starts at %v, not %v", now, probeEpoch)}
	}
	ctx := context.Background()
	world := newPrWorld(in)
	mu := &sync.Mutex{}
	rec := &prRecorder{}
	events := &prEvents{out: rec}
	newKubelet := func() *prUpstream {
		u := &prUpstream{status: &prStatusManager{mu: mu, world: world}, runner: &prRunner{mu: mu, world: world, out: rec, errRun: map[string]int{}}}
		for _, typ := range []string{"Liveness", "Readiness", "Startup"} {
			u.results = append(u.results, &prResults{Manager: proberresults.NewManager(), typ: typ, out: rec})
		}
		u.m = newTheirManager(u.status, u.results, u.runner, events)
		return u
	}
	kubelets := []*prUpstream{newKubelet()}
	// Every pod object AddPod was given, by UID: the workers of each
	// hold theirs.
	pods := map[string][]*v1.Pod{}
	var syncs []prSync
	for _, a := range in.plan() {
		if d := probeEpoch.Add(a.At).Sub(time.Now()); d > 0 {
			time.Sleep(d)
		}
		synctest.Wait()
		mu.Lock()
		applied := world.apply(a)
		mu.Unlock()
		if applied {
			continue
		}
		u := kubelets[len(kubelets)-1]
		p := in.Pods[a.Pod]
		switch a.Op {
		case "restart":
			u.retire()
			kubelets = append(kubelets, newKubelet())
			pods = map[string][]*v1.Pod{}
		case "add":
			pod := v1PrPod(p)
			if old := pods[p.UID]; len(old) > 0 {
				pod.DeletionTimestamp = old[0].DeletionTimestamp
			}
			pods[p.UID] = append(pods[p.UID], pod)
			rand.Seed(a.Seed)
			u.m.AddPod(ctx, pod)
		case "delete":
			old := pods[p.UID]
			if len(old) == 0 || old[0].DeletionTimestamp != nil {
				continue
			}
			// The workers hold these pods; they read them only while
			// the test waits for them.
			now := metav1.NewTime(time.Now())
			for _, pod := range old {
				pod.DeletionTimestamp = &now
			}
		case "sync":
			// The status manager's lock is held until Started and Ready
			// are written back: a readiness worker the manual trigger
			// wakes reads the status the sync wrote, as core's does.
			mu.Lock()
			st := world.statuses[p.UID]
			if st == nil {
				mu.Unlock()
				continue
			}
			status := v1PrStatus(*st)
			api := v1PrPod(p)
			if world.apiReady[p.UID] {
				api.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}
			}
			u.m.UpdatePodStatus(ctx, api, &status)
			var init, app []string
			synced := prober.PodStatus{}
			for _, c := range status.InitContainerStatuses {
				init = append(init, prFlags(c.Name, c.Started, c.Ready))
				synced.InitContainerStatuses = append(synced.InitContainerStatuses, prober.ContainerStatus{Started: c.Started, Ready: c.Ready})
			}
			for _, c := range status.ContainerStatuses {
				app = append(app, prFlags(c.Name, c.Started, c.Ready))
				synced.ContainerStatuses = append(synced.ContainerStatuses, prober.ContainerStatus{Started: c.Started, Ready: c.Ready})
			}
			syncs = append(syncs, prSyncOf(a.Index, p.UID, init, app))
			world.writeBack(p.UID, synced)
			mu.Unlock()
		case "stopLS":
			u.m.StopLivenessAndStartup(v1PrPod(p))
		case "remove":
			u.m.RemovePod(v1PrPod(p))
		case "cleanup":
			desired := map[types.UID]sets.Empty{}
			if a.Flag {
				desired[types.UID(p.UID)] = sets.Empty{}
			}
			u.m.CleanupPods(desired)
		}
		synctest.Wait()
	}
	// The bubble ends when every worker has: stop them all; one still in
	// its jitter sleep probes once more (with no status) first, so the
	// clock runs past every sleep (synctest does not advance it for
	// goroutines left behind once the test's function returns).
	kubelets[len(kubelets)-1].retire()
	time.Sleep(prMaxPeriod)
	synctest.Wait()
	rec.mu.Lock()
	out := rec.out
	rec.mu.Unlock()
	out.Syncs = syncs
	return out.normalise()
}

// Generation.

func genPrProbe(t *rapid.T, label string, typ prober.ProbeType) *prProbe {
	if !rapid.Bool().Draw(t, label) {
		return nil
	}
	p := &prProbe{
		InitialDelay: rapid.SampledFrom([]int32{0, 0, 1, 3}).Draw(t, label+".initialDelay"),
		Timeout:      rapid.Int32Range(1, 2).Draw(t, label+".timeout"),
		Period:       rapid.SampledFrom([]int32{1, 2, 3, 5, 10}).Draw(t, label+".period"),
		Success:      1,
		Failure:      rapid.Int32Range(1, 3).Draw(t, label+".failure"),
	}
	if typ == prober.Readiness {
		p.Success = rapid.Int32Range(1, 3).Draw(t, label+".success")
	}
	p.Script = rapid.SliceOfN(rapid.SampledFrom([]prOutcome{prOK, prOK, prFail, prFail, prTimeout, prError}), 1, 6).Draw(t, label+".script")
	return p
}

func genPrContainer(t *rapid.T, label, name string) prContainer {
	return prContainer{Name: name,
		Liveness:  genPrProbe(t, label+".liveness", prober.Liveness),
		Readiness: genPrProbe(t, label+".readiness", prober.Readiness),
		Start:     genPrProbe(t, label+".startup", prober.Startup)}
}

// prMaxPeriod is the longest period drawn.
const prMaxPeriod = 10 * time.Second

// prWaits are the waits drawn, on the half second.
var prWaits = []time.Duration{500 * time.Millisecond, time.Second, 1500 * time.Millisecond, 2 * time.Second, 3 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second}

func genPrScenario() *rapid.Generator[prScenario] {
	return rapid.Custom(func(t *rapid.T) prScenario {
		var s prScenario
		for i := range rapid.IntRange(1, 3).Draw(t, "pods") {
			label := fmt.Sprintf("pods[%d]", i)
			p := prPod{UID: fmt.Sprintf("p%d", i), RestartPolicy: rapid.SampledFrom([]string{"Always", "Always", "OnFailure", "Never"}).Draw(t, label+".restartPolicy")}
			for j := range rapid.IntRange(1, 2).Draw(t, label+".containers") {
				p.Containers = append(p.Containers, genPrContainer(t, fmt.Sprintf("%s.containers[%d]", label, j), fmt.Sprintf("c%d", j)))
			}
			if rapid.IntRange(0, 2).Draw(t, label+".sidecar") == 0 {
				p.Sidecars = append(p.Sidecars, genPrContainer(t, label+".sidecar", "side"))
			}
			p.Init = rapid.IntRange(0, 3).Draw(t, label+".init") == 0
			s.Pods = append(s.Pods, p)
		}
		ops := []string{"wait", "wait", "wait", "wait", "add", "add", "start", "start", "start", "exit", "wait4", "phase",
			"delete", "sync", "sync", "sync", "sync", "ready", "stopLS", "remove", "cleanup", "restart"}
		for k := range rapid.IntRange(1, 40).Draw(t, "steps") {
			at := fmt.Sprintf("steps[%d]", k)
			st := prStep{Op: rapid.SampledFrom(ops).Draw(t, at+".op")}
			st.Pod = rapid.IntRange(0, len(s.Pods)-1).Draw(t, at+".pod")
			p := s.Pods[st.Pod]
			switch st.Op {
			case "wait":
				st.Pod = 0
				st.Wait = rapid.SampledFrom(prWaits).Draw(t, at+".wait")
			case "add":
				st.Seed = rapid.Int64().Draw(t, at+".seed")
			case "start", "exit", "wait4":
				var names []string
				for _, c := range p.probed() {
					names = append(names, c.Name)
				}
				if p.Init {
					names = append(names, "")
				}
				st.Container = rapid.SampledFrom(names).Draw(t, at+".container")
				if st.Op == "exit" {
					st.Exit = rapid.Int32Range(0, 2).Draw(t, at+".exit")
				}
			case "phase":
				st.Phase = rapid.SampledFrom([]string{"Running", "Running", "Pending", "Succeeded", "Failed"}).Draw(t, at+".phase")
			case "ready", "cleanup":
				st.Flag = rapid.Bool().Draw(t, at+".flag")
			}
			s.Steps = append(s.Steps, st)
		}
		return s
	})
}

func TestProber(t *testing.T) {
	Compare(t, Comparison[prScenario, prResult]{
		Name:   "prober.Manager: workers, results, UpdatePodStatus",
		Gen:    genPrScenario(),
		Ours:   runOurProber,
		Theirs: func(in prScenario) prResult { return runTheirProber(t, in) },
	})
}

// TestProberGeneratorReaches checks that the generated scenarios reach
// every outcome the comparison is meant to cover, so that a generator
// change cannot quietly stop comparing one of them.
func TestProberGeneratorReaches(t *testing.T) {
	want := []string{"Liveness Failure", "Liveness Success", "Readiness Success", "Readiness Failure", "Startup Success",
		"Startup Failure", "Startup UNKNOWN", "try 3", "probe failed event", "probe errored event", "timed out event",
		"ready", "not ready", "started", "not started", "jittered first probe", "probe after a restart", "new container ID",
		"init container ready", "sidecar"}
	seen := map[string]int{}
	g := genPrScenario()
	for i := range 2000 {
		in := g.Example(i)
		out := runOurProber(in)
		require.Empty(t, out.Setup, "scenario %d", i)
		ids := map[string]bool{}
		for _, u := range out.Updates {
			seen[u.Type+" "+u.Result]++
			if strings.Contains(u.ContainerID, ".side.") {
				seen["sidecar"]++
			}
			if !strings.HasSuffix(u.ContainerID, ".1") {
				seen["new container ID"]++
			}
			ids[u.ContainerID] = true
		}
		for _, r := range out.Runs {
			seen[fmt.Sprintf("try %d", r.Try)]++
		}
		for _, e := range out.Events {
			switch {
			case strings.Contains(e.Text, "timed out after"):
				seen["timed out event"]++
			case strings.Contains(e.Text, "probe failed"):
				seen["probe failed event"]++
			case strings.Contains(e.Text, "probe errored"):
				seen["probe errored event"]++
			}
		}
		for _, s := range out.Syncs {
			for _, c := range append(slices.Clone(s.Init), s.App...) {
				if strings.HasSuffix(c, ":true") {
					seen["ready"]++
					if strings.Contains(c, "-init:") {
						seen["init container ready"]++
					}
				} else {
					seen["not ready"]++
				}
				if strings.Contains(c, ":true:") {
					seen["started"]++
				} else {
					seen["not started"]++
				}
			}
		}
		// A pod added inside its window with one probe sleeps its jitter:
		// its first run is off the half-second grid.
		for _, r := range out.Runs {
			if r.At%(500*time.Millisecond) != 0 {
				seen["jittered first probe"]++
			}
		}
		for _, a := range in.plan() {
			if a.Op == "restart" {
				for _, r := range out.Runs {
					if r.At > a.At {
						seen["probe after a restart"]++
						break
					}
				}
			}
		}
	}
	for _, name := range want {
		assert.Positive(t, seen[name], "no generated scenario reaches %q", name)
	}
	t.Logf("outcomes in 2000 scenarios: %v", seen)
}
