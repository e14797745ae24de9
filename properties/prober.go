package properties

import (
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/prober"
	model "github.com/nodeproof/nodeproof/models/prober"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// Prober invariant IDs (PR- belongs to preemption).
const (
	PBModel           = "PB-MODEL"
	PBThreshold       = "PB-THRESHOLD"
	PBError           = "PB-ERROR"
	PBGating          = "PB-GATING"
	PBHold            = "PB-117153-HOLD"
	PBNewContainer    = "PB-NEW-CONTAINER"
	PBTerminated      = "PB-TERMINATED"
	PBDeletion        = "PB-DELETION"
	PBInitialDelay    = "PB-INITIAL-DELAY"
	PBUpdates         = "PB-UPDATES"
	PBWorkers         = "PB-WORKERS"
	PBAddPodEarly     = "PB-ADDPOD-EARLY-RETURN"
	PBStatus          = "PB-STATUS"
	PBTrigger         = "PB-TRIGGER"
	PBKubeletRestart  = "PB-KUBELET-RESTART"
	PBDeterministic   = "PB-DETERMINISTIC"
	pbSubsystem       = "prober"
	pbStatEarlyReturn = "probes of the pod left without a worker by AddPod's early return, per AddPod that returned early"
)

// Where the prober invariants come from: the v1.36.3 prober.
const (
	pbWorker  = "pkg/kubelet/prober/worker.go"
	pbManager = "pkg/kubelet/prober/prober_manager.go"
	pbProber  = "pkg/kubelet/prober/prober.go"
	pbResults = "pkg/kubelet/prober/results/results_manager.go"
)

func pbSeed(section string) cite.Source {
	return cite.Seed("the kubelet's probers", section)
}

func init() {
	doProbe := cite.Code(pbWorker, "worker.doProbe")
	Register(Suite{
		Name:      "prober",
		Subsystem: pbSubsystem,
		Invariants: append([]verify.Property{
			{ID: PBModel, Subsystem: pbSubsystem, Statement: "For every worker that no manual trigger reached, the core publishes the same results at the same times, runs the same number of probes and exits at the same tick as the reference model fed the container's states and the probes' answers.", Sources: []cite.Source{doProbe, cite.Code(pbWorker, "worker.run")}, Kind: verify.Fidelity},
			{ID: PBThreshold, Subsystem: pbSubsystem, Statement: "A probe's verdict is published exactly when the run of equal verdicts (errors skipped, the run reset only by a hold) reaches FailureThreshold for Failure or SuccessThreshold for Success and the cached result differs; a warning counts as Success and unknown without error as Failure.", Sources: []cite.Source{doProbe, cite.Code(pbProber, "prober.probe"), pbSeed("Probe parameters")}, Kind: verify.Fidelity},
			{ID: PBError, Subsystem: pbSubsystem, Statement: "A probe that errs is tried three times in all; when the third try errs too, the worker publishes nothing and its last result and run stay as they were, and one Unhealthy event says the probe errored.", Sources: []cite.Source{doProbe, cite.Code(pbProber, "prober.runProbeWithRetries"), cite.Code(pbProber, "prober.probe")}, Kind: verify.Fidelity},
			{ID: PBGating, Subsystem: pbSubsystem, Statement: "A worker probes only when the status manager has the pod's status with the container's ID and the container runs; liveness and readiness probe only once the status says Started, startup only before; a container that is not running makes the worker publish Failure and end exactly when it exited for good under the pod's restart policy.", Sources: []cite.Source{doProbe, pbSeed("The prober worker implementation")}, Kind: verify.Fidelity},
			{ID: PBHold, Subsystem: pbSubsystem, Statement: "After publishing a liveness Failure or any startup result, a worker is on hold with its run reset and probes no more until the container ID changes; no other result puts it on hold, and a new container ID ends the hold.", Sources: []cite.Source{doProbe, cite.Issue(117153)}, Kind: verify.Fidelity},
			{ID: PBNewContainer, Subsystem: pbSubsystem, Statement: "The first step that sees a new container ID removes the old ID's result and publishes the type's initial value (readiness Failure, liveness Success, startup Unknown), except for a container running since before the kubelet's start less 10 s, which gets no initial value (v1.36).", Sources: []cite.Source{doProbe, cite.Code(pbWorker, "newWorker"), cite.Issue(100277)}, Kind: verify.Fidelity},
			{ID: PBTerminated, Subsystem: pbSubsystem, Statement: "A step that finds the pod Succeeded or Failed ends the worker without publishing; StopLivenessAndStartup, RemovePod and CleanupPods end exactly the workers they name that exist (StopLivenessAndStartup: liveness and startup of the containers, not readiness).", Sources: []cite.Source{doProbe, cite.Code(pbManager, "manager.StopLivenessAndStartup"), cite.Code(pbManager, "manager.RemovePod"), cite.Code(pbManager, "manager.CleanupPods")}, Kind: verify.Fidelity},
			{ID: PBDeletion, Subsystem: pbSubsystem, Statement: "Once the pod has a deletion timestamp, a liveness or startup worker that finds its container running publishes Success (when the cache differs) and ends without probing; a readiness worker goes on.", Sources: []cite.Source{doProbe}, Kind: verify.Fidelity},
			{ID: PBInitialDelay, Subsystem: pbSubsystem, Statement: "No probe runs while the whole seconds (truncated) since the container's StartedAt are fewer than InitialDelaySeconds, and a worker otherwise due to probe does once they are not, exactly at, one ns before and after the boundary.", Sources: []cite.Source{doProbe, pbSeed("Probe parameters")}, Kind: verify.Fidelity},
			{ID: PBUpdates, Subsystem: pbSubsystem, Statement: "Every update a worker publishes changes the results cache (a new entry or a different value), and the cache equals the one rebuilt from the updates and the removals (a replaced container, an exiting worker).", Sources: []cite.Source{cite.Code(pbResults, "manager.Set"), cite.Code(pbResults, "manager.setInternal")}, Kind: verify.Fidelity},
			{ID: PBWorkers, Subsystem: pbSubsystem, Statement: "The workers are exactly those AddPod created and nothing ended, at most one per (pod, container, type); a kubelet restart starts with none.", Sources: []cite.Source{cite.Code(pbManager, "manager.AddPod"), cite.Code(pbManager, "manager.removeWorker")}, Kind: verify.Fidelity},
			{ID: PBAddPodEarly, Subsystem: pbSubsystem, Statement: "Upstream v1.36's behaviour (v1.37 goes on past an existing worker, kubernetes PR #138930): AddPod walks the containers in order, each probe in the order startup, readiness, liveness, and stops at the first probe whose worker exists, so probes a pod update adds after it get no worker; the report counts how many. No documented promise is broken: the API does not let an update change a container's probes.", Sources: []cite.Source{cite.Code(pbManager, "manager.AddPod"), pbSeed("Adding probes for a pod"), cite.Issue(138928), cite.PR(138930)}, Kind: verify.Fidelity},
			{ID: PBStatus, Subsystem: pbSubsystem, Statement: "UpdatePodStatus sets Started from the startup result, else the status's own Started, else the absence of a startup worker, and Ready from a cached readiness Success or the absence of a readiness worker (then the kubelet-restart rule), never for a container that is not running or not started.", Sources: []cite.Source{cite.Code(pbManager, "manager.UpdatePodStatus"), cite.Code(pbManager, "manager.isContainerStarted")}, Kind: verify.Fidelity},
			{ID: PBTrigger, Subsystem: pbSubsystem, Statement: "UpdatePodStatus triggers the readiness worker of every started running container without a cached Success; a worker waiting for its tick then runs at once, so readiness is not held back a whole period.", Sources: []cite.Source{cite.Code(pbManager, "manager.UpdatePodStatus")}, Kind: verify.Fidelity},
			{ID: PBKubeletRestart, Subsystem: pbSubsystem, Statement: "After a kubelet restart, a container running since before its start less 10 s keeps Started when the status said so and no startup result is cached, and without a cached readiness result is Ready exactly when it has no readiness probe or the API pod was Ready (v1.36).", Sources: []cite.Source{cite.Code(pbManager, "manager.setReadyStateOnKubeletRestart"), cite.Issue(100277), cite.PR(126883)}, Kind: verify.Fidelity},
			{ID: PBDeterministic, Subsystem: pbSubsystem, Statement: "A second manager fed the same calls returns the same steps, publications, events, worker states, caches and statuses.", Sources: []cite.Source{cite.DeterminismContract}, Kind: verify.Fidelity},
		}, pbContractInvariants()...),
		Property: func(t *rapid.T, tally *Tally) { newPBMachine(t, tally).run() },
	})
}

// pbContainer is one container of a pod as the runtime and the status
// manager show it.
type pbContainer struct {
	id         string // "" before the first start
	running    bool
	startedAt  time.Time
	terminated *int32 // exit code of an exited container
	// started and ready are what the last sync wrote into the status
	// manager's status (UpdatePodStatus's answer).
	started, ready bool
	// health draws its probes' outcomes; an action changes it.
	health pbHealth
}

// pbHealth is how a container's probes mostly answer.
type pbHealth int

const (
	pbHealthy   pbHealth = iota
	pbUnhealthy          // mostly failures and timeouts
	pbErring             // mostly errors (an exec into a dying container, #21751)
)

// pbPod is a pod on the node.
type pbPod struct {
	spec       prober.Pod // defaulted; the API pod the kubelet holds
	containers []*pbContainer
	hasStatus  bool
	phase      prober.Phase
	deleted    bool
	// stopped: StopLivenessAndStartup reached the pod (the kubelet does it
	// when the pod terminates). changed names the probes an update set or
	// removed ("app/Startup"), which the API forbids. The contract
	// properties leave both out.
	stopped bool
	changed map[string]bool
}

// pbTrack is the suite's own account of one worker, from its creation:
// what the model needs to replay it and what the thresholds imply.
type pbTrack struct {
	key          prober.WorkerKey
	probe        prober.Probe
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
	lastVerdict prober.Result
	run         int
	hold        bool
	containerID string
}

// pbMachine plays a node: pods whose containers start, exit and restart,
// probes that answer, a clock, a status manager and a kubelet whose prober
// manager is the core (with a twin fed the same calls).
type pbMachine struct {
	t     *rapid.T
	tally *Tally
	step  int

	now, kubeletStart time.Time
	core, twin        *prober.Manager
	pods              []*pbPod
	podSeq, ctrSeq    int
	tracks            map[prober.WorkerKey]*pbTrack
	// shadow is the results caches rebuilt from the updates and removals.
	shadow [3]map[string]prober.Result
	// contract is what the contract properties remember of the
	// containers; it outlives kubelet restarts.
	contract pbContract
}

func newPBMachine(t *rapid.T, tally *Tally) *pbMachine {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m := &pbMachine{t: t, tally: tally, now: start, contract: newPBContract()}
	m.newKubelet()
	m.addPod(t)
	return m
}

func (m *pbMachine) run() {
	// rapid draws the keys in name order with a bias towards the first;
	// the clock, the syncs and the containers' lives are the frequent
	// actions, so they appear under more than one key.
	m.t.Repeat(map[string]func(*rapid.T){
		"advance":         m.advance,
		"advanceAgain":    m.advance,
		"advanceToBound":  m.advanceToBoundary,
		"containerStart":  m.startContainer,
		"containerStart2": m.startContainer,
		"containerExit":   m.exitContainer,
		"crashRestart":    m.crashRestart,
		"health":          m.flipHealth,
		"killUnhealthy":   m.killUnhealthy,
		"sync":            m.sync,
		"syncAgain":       m.sync,
		"syncMore":        m.sync,
		"syncOnceMore":    m.sync,
		"healthAgain":     m.flipHealth,
		"kubeletRestart2": m.kubeletRestart,
		"updatePod":       m.updatePod,
		"updatePodAgain":  m.updatePod,
		"addPod":          m.addPod,
		"deletePod":       m.deletePod,
		"finishPod":       m.finishPod,
		"stopLiveness":    m.stopLivenessAndStartup,
		"removePod":       m.removePod,
		"kubeletRestart":  m.kubeletRestart,
		"statusAppears":   m.statusAppears,
		"zzCleanupPods":   m.cleanupPods,
		"":                m.checkAll,
	})
}

func (m *pbMachine) begin(action, format string, args ...any) {
	m.step++
	m.tally.Action(action)
	m.t.Logf("step %d: %s at %s "+format, append([]any{m.step, action, m.clock()}, args...)...)
}

func (m *pbMachine) fail(id, format string, args ...any) {
	m.t.Fatalf("%s: "+format, append([]any{id}, args...)...)
}

func (m *pbMachine) clock() string { return fmt.Sprintf("start+%v", m.now.Sub(m.kubeletStart)) }

// newKubelet is a kubelet (re)start: new managers, empty caches, no
// workers; the status manager's statuses stay, as the API holds them.
func (m *pbMachine) newKubelet() {
	var err error
	if m.core, err = prober.NewManager(prober.Options{KubeletStart: m.now}); err != nil {
		m.fail(PBModel, "NewManager: %v", err)
	}
	if m.twin, err = prober.NewManager(prober.Options{KubeletStart: m.now}); err != nil {
		m.fail(PBDeterministic, "NewManager: %v", err)
	}
	m.kubeletStart = m.now
	m.tracks = map[prober.WorkerKey]*pbTrack{}
	for i := range m.shadow {
		m.shadow[i] = map[string]prober.Result{}
	}
}

// --- pods and containers --------------------------------------------------

var pbContainerNames = []string{"app", "side"}

// drawProbe draws a valid defaulted probe of type typ with small periods,
// delays and thresholds, so that every boundary is reached within a case.
func drawProbe(t *rapid.T, typ prober.ProbeType, label string) *prober.Probe {
	p := prober.Probe{
		Handler:             prober.Handler{Exec: &prober.ExecAction{Command: []string{"check"}}},
		InitialDelaySeconds: int32(rapid.SampledFrom([]int{0, 1, 2, 3, 3, 3}).Draw(t, label+"Delay")),
		PeriodSeconds:       int32(rapid.IntRange(1, 3).Draw(t, label+"Period")),
		FailureThreshold:    int32(rapid.IntRange(1, 3).Draw(t, label+"Failures")),
		SuccessThreshold:    1,
	}
	if typ == prober.Readiness {
		p.SuccessThreshold = int32(rapid.IntRange(1, 3).Draw(t, label+"Successes"))
	}
	d := p.WithDefaults()
	return &d
}

func drawContainerSpec(t *rapid.T, name string) prober.Container {
	c := prober.Container{Name: name}
	for c.LivenessProbe == nil && c.ReadinessProbe == nil && c.StartupProbe == nil {
		if rapid.IntRange(0, 3).Draw(t, name+"HasLiveness") > 0 {
			c.LivenessProbe = drawProbe(t, prober.Liveness, name+"Liveness")
		}
		if rapid.IntRange(0, 3).Draw(t, name+"HasReadiness") > 0 {
			c.ReadinessProbe = drawProbe(t, prober.Readiness, name+"Readiness")
		}
		if rapid.IntRange(0, 2).Draw(t, name+"HasStartup") > 0 {
			c.StartupProbe = drawProbe(t, prober.Startup, name+"Startup")
		}
	}
	return c
}

// pbMaxPods bounds the live pods.
const pbMaxPods = 2

func (m *pbMachine) addPod(t *rapid.T) {
	if len(m.pods) >= pbMaxPods {
		m.updatePod(t)
		return
	}
	m.podSeq++
	p := &pbPod{phase: prober.PodPending}
	p.spec = prober.Pod{UID: fmt.Sprintf("pod-%d", m.podSeq), Namespace: "default", Name: fmt.Sprintf("web-%d", m.podSeq),
		RestartPolicy: rapid.SampledFrom([]prober.ContainerRestartPolicy{prober.RestartAlways, prober.RestartAlways, prober.RestartOnFailure, prober.RestartNever}).Draw(t, "restartPolicy")}
	for _, name := range pbContainerNames[:rapid.IntRange(1, len(pbContainerNames)).Draw(t, "containers")] {
		p.spec.Containers = append(p.spec.Containers, drawContainerSpec(t, name))
		p.containers = append(p.containers, &pbContainer{})
	}
	p.hasStatus = rapid.IntRange(0, 4).Draw(t, "statusAtOnce") > 0
	m.pods = append(m.pods, p)
	m.begin("addPod", "%s policy %s with %s", p.spec.UID, p.spec.RestartPolicy, pbDescribeSpec(p.spec))
	m.addPodToKubelet(p, t)
	// Most pods' containers start with the pod (a status then exists).
	for i, c := range p.containers {
		if rapid.IntRange(0, 3).Draw(t, "startsWithPod") > 0 {
			m.runContainer(p, c, m.now)
			m.t.Logf("  %s starts as %s", p.spec.Containers[i].Name, c.id)
		}
	}
}

func pbDescribeSpec(p prober.Pod) string {
	s := ""
	for _, c := range p.Containers {
		s += c.Name + "{"
		for _, typ := range []prober.ProbeType{prober.Startup, prober.Readiness, prober.Liveness} {
			if pr := c.ProbeOf(typ); pr != nil {
				s += fmt.Sprintf(" %s(delay %d period %d succ %d fail %d)", typ, pr.InitialDelaySeconds, pr.PeriodSeconds, pr.SuccessThreshold, pr.FailureThreshold)
			}
		}
		s += " } "
	}
	return s
}

func (m *pbMachine) drawPod(t *rapid.T) (*pbPod, bool) {
	if len(m.pods) == 0 {
		return nil, false
	}
	return m.pods[rapid.IntRange(0, len(m.pods)-1).Draw(t, "pod")], true
}

func (m *pbMachine) drawContainer(t *rapid.T) (*pbPod, int, bool) {
	p, ok := m.drawPod(t)
	if !ok {
		return nil, 0, false
	}
	return p, rapid.IntRange(0, len(p.containers)-1).Draw(t, "container"), true
}

// willRestart restates the v1.36 rule for a container without its own
// policy: the pod's Always restarts it, OnFailure on a non-zero exit,
// Never not at all.
func willRestart(policy prober.ContainerRestartPolicy, exitCode int32) bool {
	switch policy {
	case prober.RestartNever:
		return false
	case prober.RestartOnFailure:
		return exitCode != 0
	default:
		return true
	}
}

// startContainer starts (or restarts) a container under a new ID, its
// StartedAt a hair before now at times, so that the initial delay's
// boundary falls off the whole second.
func (m *pbMachine) startContainer(t *rapid.T) {
	p, i, ok := m.drawContainer(t)
	if !ok {
		m.addPod(t)
		return
	}
	c := p.containers[i]
	if c.running || p.phase == prober.PodSucceeded || p.phase == prober.PodFailed {
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
func (m *pbMachine) runContainer(p *pbPod, c *pbContainer, startedAt time.Time) {
	m.ctrSeq++
	c.id = fmt.Sprintf("containerd://c%d", m.ctrSeq)
	c.running, c.terminated, c.started, c.ready, c.startedAt = true, nil, false, false, startedAt
	p.hasStatus = true
	if p.phase == prober.PodPending {
		p.phase = prober.PodRunning
	}
}

func (m *pbMachine) exitContainer(t *rapid.T) {
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
func (m *pbMachine) crashRestart(t *rapid.T) {
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

func (m *pbMachine) flipHealth(t *rapid.T) {
	p, i, ok := m.drawContainer(t)
	if !ok {
		m.addPod(t)
		return
	}
	c := p.containers[i]
	c.health = rapid.SampledFrom([]pbHealth{pbHealthy, pbUnhealthy, pbErring}).Draw(t, "health")
	m.begin("health", "%s/%s health %d (0 healthy, 1 unhealthy, 2 erring)", p.spec.UID, p.spec.Containers[i].Name, c.health)
}

// killUnhealthy is the kubelet's sync killing a container whose liveness
// or startup result is Failure: it exits (137) and, if the policy allows,
// starts again under a new ID.
func (m *pbMachine) killUnhealthy(t *rapid.T) {
	for _, p := range m.pods {
		for i, c := range p.containers {
			if !c.running {
				continue
			}
			live, _ := m.core.Result(prober.Liveness, c.id)
			startup, _ := m.core.Result(prober.Startup, c.id)
			if live != prober.Failure && startup != prober.Failure {
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
func (m *pbMachine) statusAppears(t *rapid.T) {
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
func (p *pbPod) status() *prober.PodStatus {
	if !p.hasStatus {
		return nil
	}
	s := &prober.PodStatus{Phase: p.phase, PodIP: "10.0.0.1"}
	for i, c := range p.containers {
		cs := prober.ContainerStatus{Name: p.spec.Containers[i].Name, ContainerID: c.id, Ready: c.ready}
		started := c.started
		cs.Started = &started
		if c.running {
			cs.State.Running = &prober.Running{StartedAt: c.startedAt}
		}
		if c.terminated != nil {
			code := *c.terminated
			cs.State.Terminated = &prober.Terminated{ExitCode: code}
		}
		s.ContainerStatuses = append(s.ContainerStatuses, cs)
	}
	return s
}

func (m *pbMachine) podByUID(uid string) *pbPod {
	for _, p := range m.pods {
		if p.spec.UID == uid {
			return p
		}
	}
	return nil
}

func (p *pbPod) container(name string) (*pbContainer, int) {
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
func (m *pbMachine) advance(t *rapid.T) {
	d := rapid.SampledFrom([]time.Duration{time.Nanosecond, 500 * time.Millisecond, time.Second, time.Second, 2 * time.Second, 3 * time.Second, 7 * time.Second, 12 * time.Second, 25 * time.Second}).Draw(t, "duration")
	m.begin("advance", "+%v", d)
	m.moveTo(m.now.Add(d))
}

// advanceToBoundary moves the clock to a boundary that matters, exactly,
// one ns before or one ns after: a worker's next tick, or the end of a
// container's initial delay.
func (m *pbMachine) advanceToBoundary(t *rapid.T) {
	var targets []time.Time
	if _, due, ok := m.core.NextDue(); ok {
		targets = append(targets, due)
	}
	for _, p := range m.pods {
		for i, c := range p.containers {
			if !c.running {
				continue
			}
			for _, typ := range []prober.ProbeType{prober.Liveness, prober.Readiness, prober.Startup} {
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

// pbMaxStepsPerMove bounds the worker steps one move of the clock takes.
const pbMaxStepsPerMove = 2000

func (m *pbMachine) moveTo(target time.Time) {
	for n := 0; ; n++ {
		if n > pbMaxStepsPerMove {
			m.fail(PBModel, "more than %d worker steps before %v: a worker does not move on", pbMaxStepsPerMove, target)
		}
		key, due, ok := m.core.NextDue()
		if !ok || due.After(target) {
			break
		}
		m.stepWorker(key, due)
	}
	m.now = target
}
