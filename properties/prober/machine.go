package prober

import (
	"fmt"
	"time"

	"pgregory.net/rapid"

	core "github.com/nodeproof/nodeproof/core/prober"
	model "github.com/nodeproof/nodeproof/models/prober"
	"github.com/nodeproof/nodeproof/properties"
)

// init registers the suite, so that importing the package is enough.
func init() {
	properties.Register(properties.Suite{
		Name:       "prober",
		Subsystem:  subsystem,
		Invariants: invariants(),
		Property:   func(t *rapid.T, tally *properties.Tally) { newMachine(t, tally).run() },
	})
}

// container is one container of a pod as the runtime and the status
// manager show it.
type container struct {
	id         string // "" before the first start
	running    bool
	startedAt  time.Time
	terminated *int32 // exit code of an exited container
	// started and ready are what the last sync wrote into the status
	// manager's status (UpdatePodStatus's answer).
	started, ready bool
	// health draws its probes' outcomes; an action changes it.
	health health
}

// health is how a container's probes mostly answer.
type health int

const (
	healthy   health = iota
	unhealthy        // mostly failures and timeouts
	erring           // mostly errors (an exec into a dying container, #21751)
)

// pod is a pod on the node.
type pod struct {
	spec       core.Pod // defaulted; the API pod the kubelet holds
	containers []*container
	hasStatus  bool
	phase      core.Phase
	deleted    bool
	// stopped: StopLivenessAndStartup reached the pod (the kubelet does it
	// when the pod terminates). changed names the probes an update set or
	// removed ("app/Startup"), which the API forbids. The contract
	// properties leave both out.
	stopped bool
	changed map[string]bool
}

// track is the suite's own account of one worker, from its creation:
// what the model needs to replay it and what the thresholds imply.
type track struct {
	key          core.WorkerKey
	probe        core.Probe
	kubeletStart time.Time
	firstRun     time.Time
	states       []model.State
	answers      []model.Answer
	published    []model.Publication
	probes       int
	triggered    bool
	// stopping: a stop reached it in its start-up sleep; it ends after
	// its next doProbe.
	stopping bool
	steps    int
	// lastVerdict and run restate the worker's run; hold its hold.
	lastVerdict core.Result
	run         int
	hold        bool
	containerID string
}

// machine plays a node: pods whose containers start, exit and restart,
// probes that answer, a clock, a status manager and a kubelet whose prober
// manager is the core (with a twin fed the same calls).
type machine struct {
	t     *rapid.T
	tally *properties.Tally
	step  int

	now, kubeletStart time.Time
	core, twin        *core.Manager
	pods              []*pod
	podSeq, ctrSeq    int
	tracks            map[core.WorkerKey]*track
	// shadow is the results caches rebuilt from the updates and removals.
	shadow [3]map[string]core.Result
	// contract is what the contract properties remember of the
	// containers; it outlives kubelet restarts.
	contract contract

	// other is the system under test when it is not core (NewContractSuite),
	// made anew by newOther at every kubelet start; core, twin, tracks
	// and shadow are then unused. inflight are its probes being run.
	other    Manager
	newOther NewManager
	inflight map[core.WorkerKey]*inflight
}

func newMachine(t *rapid.T, tally *properties.Tally) *machine { return newMachineOf(t, tally, nil) }

// newMachineOf is the machine with other managers made by sut as the
// system under test, or core's when sut is nil.
func newMachineOf(t *rapid.T, tally *properties.Tally, sut NewManager) *machine {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m := &machine{t: t, tally: tally, now: start, contract: newContract(), newOther: sut}
	m.newKubelet()
	m.addPod(t)
	return m
}

func (m *machine) run() {
	// rapid draws the actions in name order with a bias towards the first;
	// the clock, the syncs and the containers' lives are the frequent
	// actions, so they weigh more.
	m.t.Repeat(properties.Actions(m.checkAll, map[string]properties.Action{
		"advance":        {Weight: 2, Do: m.advance},
		"advanceToBound": {Weight: 1, Do: m.advanceToBoundary},
		"containerStart": {Weight: 2, Do: m.startContainer},
		"containerExit":  {Weight: 1, Do: m.exitContainer},
		"crashRestart":   {Weight: 1, Do: m.crashRestart},
		"health":         {Weight: 2, Do: m.flipHealth},
		"killUnhealthy":  {Weight: 1, Do: m.killUnhealthy},
		"sync":           {Weight: 4, Do: m.sync},
		"updatePod":      {Weight: 2, Do: m.updatePod},
		"addPod":         {Weight: 1, Do: m.addPod},
		"deletePod":      {Weight: 1, Do: m.deletePod},
		"finishPod":      {Weight: 1, Do: m.finishPod},
		"stopLiveness":   {Weight: 1, Do: m.stopLivenessAndStartup},
		"removePod":      {Weight: 1, Do: m.removePod},
		"kubeletRestart": {Weight: 2, Do: m.kubeletRestart},
		"statusAppears":  {Weight: 1, Do: m.statusAppears},
		// The cleanup of every pod undoes the most; its name sorts it
		// last, where rapid's bias draws it least.
		"zzCleanupPods": {Weight: 1, Do: m.cleanupPods},
	}))
}

func (m *machine) begin(action, format string, args ...any) {
	m.step++
	m.tally.Action(action)
	m.t.Logf("step %d: %s at %s "+format, append([]any{m.step, action, m.clock()}, args...)...)
}

func (m *machine) clock() string { return fmt.Sprintf("start+%v", m.now.Sub(m.kubeletStart)) }

// newKubelet is a kubelet (re)start: new managers, empty caches, no
// workers; the status manager's statuses stay, as the API holds them.
func (m *machine) newKubelet() {
	if m.newOther != nil {
		if m.other != nil {
			m.other.Close()
		}
		m.kubeletStart = m.now
		m.inflight = map[core.WorkerKey]*inflight{}
		m.other = m.newOther(m.now, node{m})
		return
	}
	var err error
	if m.core, err = core.NewManager(core.Options{KubeletStart: m.now}); err != nil {
		properties.Fail(m.t, Model, "NewManager: %v", err)
	}
	if m.twin, err = core.NewManager(core.Options{KubeletStart: m.now}); err != nil {
		properties.Fail(m.t, Deterministic, "NewManager: %v", err)
	}
	m.kubeletStart = m.now
	m.tracks = map[core.WorkerKey]*track{}
	for i := range m.shadow {
		m.shadow[i] = map[string]core.Result{}
	}
}

// --- pods and containers --------------------------------------------------

var containerNames = []string{"app", "side"}

// drawProbe draws a valid defaulted probe of type typ with small periods,
// delays and thresholds, so that every boundary is reached within a case.
func drawProbe(t *rapid.T, typ core.ProbeType, label string) *core.Probe {
	p := core.Probe{
		Handler:             core.Handler{Exec: &core.ExecAction{Command: []string{"check"}}},
		InitialDelaySeconds: int32(rapid.SampledFrom([]int{0, 1, 2, 3, 3, 3}).Draw(t, label+"Delay")),
		PeriodSeconds:       int32(rapid.IntRange(1, 3).Draw(t, label+"Period")),
		FailureThreshold:    int32(rapid.IntRange(1, 3).Draw(t, label+"Failures")),
		SuccessThreshold:    1,
	}
	if typ == core.Readiness {
		p.SuccessThreshold = int32(rapid.IntRange(1, 3).Draw(t, label+"Successes"))
	}
	d := p.WithDefaults()
	return &d
}

func drawContainerSpec(t *rapid.T, name string) core.Container {
	c := core.Container{Name: name}
	for c.LivenessProbe == nil && c.ReadinessProbe == nil && c.StartupProbe == nil {
		if rapid.IntRange(0, 3).Draw(t, name+"HasLiveness") > 0 {
			c.LivenessProbe = drawProbe(t, core.Liveness, name+"Liveness")
		}
		if rapid.IntRange(0, 3).Draw(t, name+"HasReadiness") > 0 {
			c.ReadinessProbe = drawProbe(t, core.Readiness, name+"Readiness")
		}
		if rapid.IntRange(0, 2).Draw(t, name+"HasStartup") > 0 {
			c.StartupProbe = drawProbe(t, core.Startup, name+"Startup")
		}
	}
	return c
}

// maxPods bounds the live pods.
const maxPods = 2

func (m *machine) addPod(t *rapid.T) {
	if len(m.pods) >= maxPods {
		m.updatePod(t)
		return
	}
	m.podSeq++
	p := &pod{phase: core.PodPending}
	p.spec = core.Pod{UID: fmt.Sprintf("pod-%d", m.podSeq), Namespace: "default", Name: fmt.Sprintf("web-%d", m.podSeq),
		RestartPolicy: rapid.SampledFrom([]core.ContainerRestartPolicy{core.RestartAlways, core.RestartAlways, core.RestartOnFailure, core.RestartNever}).Draw(t, "restartPolicy")}
	for _, name := range containerNames[:rapid.IntRange(1, len(containerNames)).Draw(t, "containers")] {
		p.spec.Containers = append(p.spec.Containers, drawContainerSpec(t, name))
		p.containers = append(p.containers, &container{})
	}
	p.hasStatus = rapid.IntRange(0, 4).Draw(t, "statusAtOnce") > 0
	m.pods = append(m.pods, p)
	m.begin("addPod", "%s policy %s with %s", p.spec.UID, p.spec.RestartPolicy, describeSpec(p.spec))
	m.addPodToKubelet(p, t)
	// Most pods' containers start with the pod (a status then exists).
	for i, c := range p.containers {
		if rapid.IntRange(0, 3).Draw(t, "startsWithPod") > 0 {
			m.runContainer(p, c, m.now)
			m.t.Logf("  %s starts as %s", p.spec.Containers[i].Name, c.id)
		}
	}
}

func describeSpec(p core.Pod) string {
	s := ""
	for _, c := range p.Containers {
		s += c.Name + "{"
		for _, typ := range []core.ProbeType{core.Startup, core.Readiness, core.Liveness} {
			if pr := c.ProbeOf(typ); pr != nil {
				s += fmt.Sprintf(" %s(delay %d period %d succ %d fail %d)", typ, pr.InitialDelaySeconds, pr.PeriodSeconds, pr.SuccessThreshold, pr.FailureThreshold)
			}
		}
		s += " } "
	}
	return s
}

func (m *machine) drawPod(t *rapid.T) (*pod, bool) {
	if len(m.pods) == 0 {
		return nil, false
	}
	return m.pods[rapid.IntRange(0, len(m.pods)-1).Draw(t, "pod")], true
}

func (m *machine) drawContainer(t *rapid.T) (*pod, int, bool) {
	p, ok := m.drawPod(t)
	if !ok {
		return nil, 0, false
	}
	return p, rapid.IntRange(0, len(p.containers)-1).Draw(t, "container"), true
}

// willRestart restates the v1.36 rule for a container without its own
// policy: the pod's Always restarts it, OnFailure on a non-zero exit,
// Never not at all.
func willRestart(policy core.ContainerRestartPolicy, exitCode int32) bool {
	switch policy {
	case core.RestartNever:
		return false
	case core.RestartOnFailure:
		return exitCode != 0
	default:
		return true
	}
}

// startContainer starts (or restarts) a container under a new ID, its
// StartedAt a hair before now at times, so that the initial delay's
// boundary falls off the whole second.
func (m *machine) startContainer(t *rapid.T) {
	p, i, ok := m.drawContainer(t)
	if !ok {
		m.addPod(t)
		return
	}
	c := p.containers[i]
	if c.running || p.phase == core.PodSucceeded || p.phase == core.PodFailed {
		m.advance(t)
		return
	}
	if c.terminated != nil && !willRestart(p.spec.RestartPolicy, *c.terminated) {
		m.advance(t)
		return
	}
	m.runContainer(p, c, m.now.Add(-rapid.SampledFrom([]time.Duration{0, 0, time.Nanosecond, 999_999_999, 500 * time.Millisecond}).Draw(t, "startedEarlier")))
	m.begin("containerStart", "%s/%s as %s started at %s", p.spec.UID, p.spec.Containers[i].Name, c.id, c.startedAt.Sub(m.kubeletStart))
}

// runContainer starts a container under a new ID; the status manager
// then has the pod's status.
func (m *machine) runContainer(p *pod, c *container, startedAt time.Time) {
	m.ctrSeq++
	c.id = fmt.Sprintf("containerd://c%d", m.ctrSeq)
	c.running, c.terminated, c.started, c.ready, c.startedAt = true, nil, false, false, startedAt
	p.hasStatus = true
	if p.phase == core.PodPending {
		p.phase = core.PodRunning
	}
}

func (m *machine) exitContainer(t *rapid.T) {
	p, i, ok := m.drawContainer(t)
	if !ok || !p.containers[i].running {
		m.startContainer(t)
		return
	}
	c := p.containers[i]
	code := rapid.SampledFrom([]int32{0, 1, 137}).Draw(t, "exitCode")
	c.running, c.terminated = false, &code
	m.begin("containerExit", "%s/%s (%s) exit %d", p.spec.UID, p.spec.Containers[i].Name, c.id, code)
}

// crashRestart is a running container crashing and the kubelet starting
// it again at once under a new ID, as its restart policy allows: the
// replacement containers the probes' promises speak of.
func (m *machine) crashRestart(t *rapid.T) {
	p, i, ok := m.drawContainer(t)
	if !ok || !p.containers[i].running {
		m.startContainer(t)
		return
	}
	c := p.containers[i]
	code := rapid.SampledFrom([]int32{1, 137, 0}).Draw(t, "exitCode")
	old := c.id
	c.running, c.terminated = false, &code
	if willRestart(p.spec.RestartPolicy, code) {
		m.runContainer(p, c, m.now)
	}
	m.begin("crashRestart", "%s/%s (%s) exit %d, now %s (running=%t)", p.spec.UID, p.spec.Containers[i].Name, old, code, c.id, c.running)
}

func (m *machine) flipHealth(t *rapid.T) {
	p, i, ok := m.drawContainer(t)
	if !ok {
		m.addPod(t)
		return
	}
	c := p.containers[i]
	c.health = rapid.SampledFrom([]health{healthy, unhealthy, erring}).Draw(t, "health")
	m.begin("health", "%s/%s health %d (0 healthy, 1 unhealthy, 2 erring)", p.spec.UID, p.spec.Containers[i].Name, c.health)
}

// killUnhealthy is the kubelet's sync killing a container whose liveness
// or startup result is Failure: it exits (137) and, if the policy allows,
// starts again under a new ID.
func (m *machine) killUnhealthy(t *rapid.T) {
	for _, p := range m.pods {
		for i, c := range p.containers {
			if !c.running {
				continue
			}
			live, _ := m.result(core.Liveness, c.id)
			startup, _ := m.result(core.Startup, c.id)
			if live != core.Failure && startup != core.Failure {
				continue
			}
			code := int32(137)
			c.running, c.terminated = false, &code
			m.begin("killUnhealthy", "%s/%s (%s)", p.spec.UID, p.spec.Containers[i].Name, c.id)
			if willRestart(p.spec.RestartPolicy, code) && rapid.Bool().Draw(t, "restartAtOnce") {
				m.runContainer(p, c, m.now)
				m.t.Logf("  restarted as %s", c.id)
			}
			return
		}
	}
	m.advance(t)
}

// statusAppears gives the status manager a status for a pod it had none for.
func (m *machine) statusAppears(t *rapid.T) {
	for _, p := range m.pods {
		if !p.hasStatus {
			p.hasStatus = true
			m.begin("statusAppears", "%s", p.spec.UID)
			return
		}
	}
	m.startContainer(t)
}

// status is the status manager's status of the pod (nil: none yet).
func (p *pod) status() *core.PodStatus {
	if !p.hasStatus {
		return nil
	}
	s := &core.PodStatus{Phase: p.phase, PodIP: "10.0.0.1"}
	for i, c := range p.containers {
		cs := core.ContainerStatus{Name: p.spec.Containers[i].Name, ContainerID: c.id, Ready: c.ready}
		started := c.started
		cs.Started = &started
		if c.running {
			cs.State.Running = &core.Running{StartedAt: c.startedAt}
		}
		if c.terminated != nil {
			code := *c.terminated
			cs.State.Terminated = &core.Terminated{ExitCode: code}
		}
		s.ContainerStatuses = append(s.ContainerStatuses, cs)
	}
	return s
}

func (m *machine) podByUID(uid string) *pod {
	for _, p := range m.pods {
		if p.spec.UID == uid {
			return p
		}
	}
	return nil
}

func (p *pod) container(name string) (*container, int) {
	for i, c := range p.spec.Containers {
		if c.Name == name {
			return p.containers[i], i
		}
	}
	return nil, -1
}

// --- the clock --------------------------------------------------------------

// advance moves the clock by a drawn duration and steps every worker due
// on the way, each at its own due time.
func (m *machine) advance(t *rapid.T) {
	d := rapid.SampledFrom([]time.Duration{time.Nanosecond, 500 * time.Millisecond, time.Second, time.Second, 2 * time.Second, 3 * time.Second, 7 * time.Second, 12 * time.Second, 25 * time.Second}).Draw(t, "duration")
	m.begin("advance", "+%v", d)
	m.moveTo(m.now.Add(d))
}

// advanceToBoundary moves the clock to a boundary that matters, exactly,
// one ns before or one ns after: a worker's next tick, or the end of a
// container's initial delay.
func (m *machine) advanceToBoundary(t *rapid.T) {
	var targets []time.Time
	// Another manager does not say when its workers are due.
	if m.other == nil {
		if _, due, ok := m.core.NextDue(); ok {
			targets = append(targets, due)
		}
	}
	for _, p := range m.pods {
		for i, c := range p.containers {
			if !c.running {
				continue
			}
			for _, typ := range []core.ProbeType{core.Liveness, core.Readiness, core.Startup} {
				if pr := p.spec.Containers[i].ProbeOf(typ); pr != nil && pr.InitialDelaySeconds > 0 {
					targets = append(targets, c.startedAt.Add(time.Duration(pr.InitialDelaySeconds)*time.Second))
				}
			}
		}
	}
	if len(targets) == 0 {
		m.advance(t)
		return
	}
	target := rapid.SampledFrom(targets).Draw(t, "boundary").Add(rapid.SampledFrom([]time.Duration{-time.Nanosecond, 0, 0, time.Nanosecond}).Draw(t, "offset"))
	if target.Before(m.now) {
		target = m.now
	}
	m.begin("advanceToBoundary", "to %v", target.Sub(m.kubeletStart))
	m.moveTo(target)
}

// maxStepsPerMove bounds the worker steps one move of the clock takes.
const maxStepsPerMove = 2000

func (m *machine) moveTo(target time.Time) {
	if m.other != nil {
		m.other.Advance(target)
		m.now = target
		return
	}
	for n := 0; ; n++ {
		if n > maxStepsPerMove {
			properties.Fail(m.t, Model, "more than %d worker steps before %v: a worker does not move on", maxStepsPerMove, target)
		}
		key, due, ok := m.core.NextDue()
		if !ok || due.After(target) {
			break
		}
		m.stepWorker(key, due)
	}
	m.now = target
}

// result is the system under test's cached result of a type for a
// container.
func (m *machine) result(typ core.ProbeType, containerID string) (core.Result, bool) {
	if m.other != nil {
		return m.other.Result(typ, containerID)
	}
	return m.core.Result(typ, containerID)
}
