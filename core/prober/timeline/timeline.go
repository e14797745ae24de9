package timeline

import (
	"fmt"
	"sort"
	"time"

	"github.com/nodeproof/nodeproof/core/prober"
)

// Bounds of a timeline.
const (
	// MaxDuration bounds Options.Duration.
	MaxDuration = 7 * 24 * time.Hour
	// MaxEntries bounds a timeline's entries: a run past it is an error,
	// never a cut-short answer.
	MaxEntries = 200000
	// MaxContainers bounds the containers and sidecars of a pod.
	MaxContainers = 64
)

// The kubelet's container restart back-off (pkg/kubelet: backOffPeriod and
// MaxContainerBackOff), as nodeproof assumes it: the gates that shorten it
// (ReduceDefaultCrashLoopBackOffDecay, KubeletCrashLoopBackOffMax) off.
const (
	InitialBackOff = 10 * time.Second
	MaxBackOff     = 300 * time.Second
)

// KillExitCode is the exit code of a container killed for a failed probe,
// as nodeproof assumes: it exits on SIGTERM at once (128+15).
const KillExitCode = 143

// epoch is the virtual clock's start; only offsets from it are shown.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Options configure a Timeline.
type Options struct {
	// Duration is how long the timeline runs, from the pod's AddPod.
	Duration time.Duration
	// StartDelay is the time from AddPod (the pod's first sync) to its
	// containers running. The workers' first doProbe at AddPod comes
	// first either way, as upstream's SyncPod adds the probes before the
	// runtime starts the containers.
	StartDelay time.Duration
	// Jitter is the fraction of its period, in [0, 1), each worker sleeps
	// before its first doProbe: upstream's start-up jitter, which applies
	// because nodeproof's kubelet starts with the pod. 0 is also a kubelet
	// that was running already.
	Jitter float64
	// PodIP is the pod's IP in its status: the host of probes that name
	// none ("" when no probe runs for real).
	PodIP string
}

// Kind is the kind of a timeline entry.
type Kind string

// The kinds of entries.
const (
	KindAdded     Kind = "added"     // AddPod created the workers
	KindStart     Kind = "start"     // a container started, with a new ID
	KindProbe     Kind = "probe"     // a probe ran (one try)
	KindResult    Kind = "result"    // a results cache published a change
	KindEvent     Kind = "event"     // a Kubernetes event the prober records
	KindKill      Kind = "kill"      // the kubelet killed the container
	KindBackOff   Kind = "backoff"   // the restart waits for the back-off
	KindReady     Kind = "ready"     // the container's Ready changed
	KindStarted   Kind = "started"   // the container's Started changed
	KindTriggered Kind = "triggered" // UpdatePodStatus triggered a readiness worker
	KindExit      Kind = "exit"      // a worker exited
)

// Entry is one thing that happened, At from AddPod. Type is the probe's,
// where the entry is about one. Age is the time since the container
// started (for probe and result entries). Value is the probe's outcome,
// the published result, or "true"/"false" for Ready and Started.
type Entry struct {
	At          time.Duration
	Container   string
	Kind        Kind
	Type        *prober.ProbeType
	ContainerID string
	Age         time.Duration
	Value       string
	Attempt     int
	Message     string
}

// Request is a probe the caller must run: at At, for the container whose
// ID Run.ContainerID is (started Age before At).
type Request struct {
	ID  int
	At  time.Duration
	Age time.Duration
	Run prober.ProbeRun
}

// container is the runtime's view of one container of the pod.
type container struct {
	spec        prober.Container
	sidecar     bool
	incarnation int
	id          string
	running     bool
	startedAt   time.Time
	exited      bool // the current instance exited (killed)
	finishedAt  time.Time
	restartAt   *time.Time
	restarts    int
	// The back-off of upstream's doBackOff: the previous exited instance's
	// finish, and the flowcontrol.Backoff entry (duration, last update).
	prevExited     bool
	prevFinishedAt time.Time
	backOff        time.Duration
	backOffUpdated time.Time
	ready, started bool
}

type completion struct {
	at      time.Time
	req     Request
	outcome prober.Outcome
}

// Timeline plays one pod through core/prober on a virtual clock: the
// containers start, the workers step, the caller answers the probes
// (Next, Done), the kubelet kills and restarts containers whose liveness
// or startup result turns Failure, and UpdatePodStatus sets Ready and
// Started after every change. It is deterministic.
type Timeline struct {
	opts       Options
	pod        prober.Pod
	m          *prober.Manager
	containers []*container // app containers, then sidecars
	initDone   []prober.ContainerStatus
	status     prober.PodStatus
	now        time.Time
	startAt    time.Time

	queue       []Request
	outstanding map[int]Request
	completions []completion
	nextID      int
	entries     []Entry
	ended       bool
}

// New defaults and validates the pod and adds it at time 0.
func New(pod prober.Pod, opts Options) (*Timeline, error) {
	if opts.Duration <= 0 || opts.Duration > MaxDuration {
		return nil, &prober.InputError{Field: "duration", Rule: fmt.Sprintf("must be more than 0 and at most %v, got %v", MaxDuration, opts.Duration)}
	}
	if opts.StartDelay < 0 || opts.StartDelay > opts.Duration {
		return nil, &prober.InputError{Field: "startDelay", Rule: fmt.Sprintf("must be at least 0 and at most the duration %v, got %v", opts.Duration, opts.StartDelay)}
	}
	if !(opts.Jitter >= 0 && opts.Jitter < 1) {
		return nil, &prober.InputError{Field: "jitter", Rule: fmt.Sprintf("must be in [0, 1), got %v", opts.Jitter)}
	}
	if len(pod.Containers)+len(pod.InitContainers) > MaxContainers {
		return nil, &prober.InputError{Field: "spec.containers", Rule: fmt.Sprintf("more than %d containers and init containers", MaxContainers)}
	}
	// The API server defaults, then validates.
	pod = pod.WithDefaults()
	if err := pod.Validate(); err != nil {
		return nil, err
	}
	if pod.UID == "" {
		pod.UID = pod.Namespace + "/" + pod.Name
	}
	m, err := prober.NewManager(prober.Options{KubeletStart: epoch})
	if err != nil {
		return nil, err
	}
	t := &Timeline{opts: opts, pod: pod, m: m, now: epoch, startAt: epoch.Add(opts.StartDelay), outstanding: map[int]Request{}}
	for _, c := range pod.Containers {
		t.containers = append(t.containers, &container{spec: c})
	}
	for i, c := range pod.InitContainers {
		if c.IsSidecar() {
			t.containers = append(t.containers, &container{spec: c, sidecar: true})
			continue
		}
		// A regular init container ran to completion before the others
		// started; nodeproof does not time it.
		t.initDone = append(t.initDone, prober.ContainerStatus{Name: c.Name,
			ContainerID: fmt.Sprintf("containerd://%s-init-%d", c.Name, i),
			State:       prober.ContainerState{Terminated: &prober.Terminated{ExitCode: 0}}})
	}
	added, err := m.AddPod(epoch, pod, func(prober.WorkerKey) float64 { return opts.Jitter })
	if err != nil {
		return nil, err
	}
	for _, k := range added.Added {
		typ := k.Type
		t.add(Entry{Container: k.ContainerName, Kind: KindAdded, Type: &typ, Message: "worker added"})
	}
	if err := t.sync(); err != nil {
		return nil, err
	}
	return t, nil
}

// Pod is the defaulted pod the timeline plays.
func (t *Timeline) Pod() prober.Pod { return t.pod }

// Entries returns what happened, in time order.
func (t *Timeline) Entries() []Entry {
	out := append([]Entry(nil), t.entries...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

// Restarts returns how many times each container restarted.
func (t *Timeline) Restarts() map[string]int {
	out := map[string]int{}
	for _, c := range t.containers {
		out[c.spec.Name] = c.restarts
	}
	return out
}

func (t *Timeline) add(e Entry) {
	e.At = t.now.Sub(epoch)
	t.entries = append(t.entries, e)
}

// Next plays the timeline up to the next probe the caller must run and
// returns it; false when the duration is over. Every request Next returned
// must be reported with Done first.
func (t *Timeline) Next() (Request, bool, error) {
	if len(t.outstanding) > 0 {
		for id := range t.outstanding {
			return Request{}, false, &prober.InputError{Field: fmt.Sprintf("request %d", id), Rule: "must be reported with Done before Next"}
		}
	}
	for {
		if len(t.queue) > 0 {
			r := t.queue[0]
			t.queue = t.queue[1:]
			t.outstanding[r.ID] = r
			return r, true, nil
		}
		if t.ended {
			return Request{}, false, nil
		}
		if len(t.entries) > MaxEntries {
			return Request{}, false, &prober.InputError{Field: "duration", Rule: fmt.Sprintf("%v makes more than %d timeline entries; choose a shorter one", t.opts.Duration, MaxEntries)}
		}
		if err := t.advance(); err != nil {
			return Request{}, false, err
		}
	}
}

// advance handles the earliest pending thing: at one instant, the probes
// that end first (a probe answered at once ends before anything else
// happens at its instant), then the workers due (in key order), then the
// runtime (containers starting).
func (t *Timeline) advance() error {
	end := epoch.Add(t.opts.Duration)
	key, due, workerDue := t.m.NextDue()
	if workerDue && due.Before(t.now) {
		due = t.now // a trigger taken while a probe ran late (live runs)
	}
	var compAt, runAt time.Time
	hasComp, hasRun := len(t.completions) > 0, false
	if hasComp {
		compAt = t.completions[0].at
	}
	for _, c := range t.containers {
		if at, ok := t.runtimeDue(c); ok && (!hasRun || at.Before(runAt)) {
			runAt, hasRun = at, true
		}
	}
	next, which := time.Time{}, ""
	for _, cand := range []struct {
		ok   bool
		at   time.Time
		name string
	}{{hasComp, compAt, "completion"}, {workerDue, due, "worker"}, {hasRun, runAt, "runtime"}} {
		if cand.ok && (which == "" || cand.at.Before(next)) {
			next, which = cand.at, cand.name
		}
	}
	if which == "" || next.After(end) {
		t.ended = true
		return nil
	}
	t.now = next
	switch which {
	case "worker":
		st, err := t.m.Step(key, next, &t.status)
		if err != nil {
			return err
		}
		return t.handleStep(key, st)
	case "completion":
		c := t.completions[0]
		t.completions = t.completions[1:]
		return t.complete(c)
	default:
		return t.runtime()
	}
}

// runtimeDue is when the runtime next starts the container: its first
// start, or a restart.
func (t *Timeline) runtimeDue(c *container) (time.Time, bool) {
	if c.incarnation == 0 {
		return t.startAt, true
	}
	if c.restartAt != nil {
		return *c.restartAt, true
	}
	return time.Time{}, false
}

// runtime starts every container due now, then syncs.
func (t *Timeline) runtime() error {
	for _, c := range t.containers {
		if at, ok := t.runtimeDue(c); ok && !at.After(t.now) {
			if c.incarnation > 0 {
				c.restarts++
			}
			c.incarnation++
			c.id = fmt.Sprintf("containerd://%s-%d", c.spec.Name, c.incarnation)
			c.running, c.exited, c.restartAt, c.startedAt = true, false, nil, t.now
			msg := "started"
			if c.restarts > 0 {
				msg = fmt.Sprintf("restarted (restart %d)", c.restarts)
			}
			t.add(Entry{Container: c.spec.Name, Kind: KindStart, ContainerID: c.id, Message: msg})
		}
	}
	return t.sync()
}

// Done reports the outcome of a request: the probe ended at end (not
// before the request's At). The timeline takes it when its clock gets
// there.
func (t *Timeline) Done(req Request, end time.Duration, out prober.Outcome) error {
	if _, ok := t.outstanding[req.ID]; !ok {
		return &prober.InputError{Field: fmt.Sprintf("request %d", req.ID), Rule: "is not outstanding"}
	}
	if end < req.At {
		return &prober.InputError{Field: fmt.Sprintf("request %d", req.ID), Rule: fmt.Sprintf("ends at %v, before it started at %v", end, req.At)}
	}
	delete(t.outstanding, req.ID)
	c := completion{at: epoch.Add(end), req: req, outcome: out}
	i := sort.Search(len(t.completions), func(i int) bool { return t.completions[i].at.After(c.at) })
	t.completions = append(t.completions, completion{})
	copy(t.completions[i+1:], t.completions[i:])
	t.completions[i] = c
	return nil
}

func (t *Timeline) complete(c completion) error {
	key := c.req.Run.Key
	typ := key.Type
	value := string(c.outcome.Result)
	msg := c.outcome.Output
	if c.outcome.Err != nil {
		value, msg = "error", c.outcome.Err.Error()
	}
	t.entries = append(t.entries, Entry{At: c.req.At, Container: key.ContainerName, Kind: KindProbe, Type: &typ,
		ContainerID: c.req.Run.ContainerID, Age: c.req.Age, Value: value, Attempt: c.req.Run.Attempt,
		Message: probeMessage(msg, c.at.Sub(epoch)-c.req.At)})
	st, err := t.m.ProbeDone(key, t.now, c.outcome)
	if err != nil {
		return err
	}
	return t.handleStep(key, st)
}

func probeMessage(output string, took time.Duration) string {
	if took > 0 {
		if output == "" {
			return fmt.Sprintf("took %v", took)
		}
		return fmt.Sprintf("took %v: %s", took, output)
	}
	return output
}

// handleStep records what a step did and acts on it as the kubelet does.
func (t *Timeline) handleStep(key prober.WorkerKey, st prober.Step) error {
	for _, ev := range st.Events {
		typ := key.Type
		t.add(Entry{Container: ev.ContainerName, Kind: KindEvent, Type: &typ, Value: ev.Reason, Message: ev.Type + " " + ev.Reason + ": " + ev.Message})
	}
	switch st.Kind {
	case prober.StepProbe:
		c := t.find(key.ContainerName)
		t.nextID++
		t.queue = append(t.queue, Request{ID: t.nextID, At: t.now.Sub(epoch), Age: t.now.Sub(c.startedAt), Run: st.Run})
	}
	if st.Kind == prober.StepExit {
		// After what the last doProbe published.
		typ := key.Type
		defer t.add(Entry{Container: key.ContainerName, Kind: KindExit, Type: &typ, Message: "worker exited"})
	}
	if len(st.Updates) == 0 {
		return nil
	}
	for _, u := range st.Updates {
		typ := u.Type
		e := Entry{Container: key.ContainerName, Kind: KindResult, Type: &typ, ContainerID: u.ContainerID, Value: u.Result.String()}
		if c := t.find(key.ContainerName); c.id == u.ContainerID {
			e.Age = t.now.Sub(c.startedAt)
		}
		t.add(e)
		if (u.Type == prober.Liveness || u.Type == prober.Startup) && u.Result == prober.Failure {
			t.kill(t.find(key.ContainerName), u)
		}
	}
	return t.sync()
}

func (t *Timeline) find(name string) *container {
	for _, c := range t.containers {
		if c.spec.Name == name {
			return c
		}
	}
	// Workers exist only for the timeline's containers.
	panic("timeline: no container " + name)
}

// kill is the runtime manager's answer to a liveness or startup Failure of
// the running container: kill it (it exits at once with KillExitCode) and,
// when its restart policy allows, start it again, at once or when the
// back-off allows (doBackOff).
func (t *Timeline) kill(c *container, u prober.Update) {
	if !c.running || c.id != u.ContainerID {
		return
	}
	restart := t.restarts(c)
	t.add(Entry{Container: c.spec.Name, Kind: KindKill, ContainerID: c.id, Value: "Killing",
		Message: "Normal Killing: " + prober.KillMessage(c.spec.Name, u.Type, restart)})
	c.running, c.exited, c.finishedAt = false, true, t.now
	if !restart {
		return
	}
	at := t.now
	// The sync that kills looks at the runtime's status from before the
	// kill: only an earlier exited instance can hold the start back.
	if c.prevExited {
		if t.inBackOff(c, c.prevFinishedAt) {
			// Held back; a later sync sees the killed instance exited and
			// starts the container once the back-off since then is over.
			at = t.now.Add(c.backOff)
			t.add(Entry{Container: c.spec.Name, Kind: KindBackOff, Value: c.backOff.String(),
				Message: fmt.Sprintf("back-off %v restarting failed container (its previous instance exited %v before); restart at %v", c.backOff, t.now.Sub(c.prevFinishedAt), at.Sub(epoch))})
			t.nextBackOff(c, t.now, at)
		} else {
			t.nextBackOff(c, c.prevFinishedAt, t.now)
		}
	}
	c.prevExited, c.prevFinishedAt = true, t.now
	c.restartAt = &at
}

// inBackOff is flowcontrol.Backoff.IsInBackOffSince(key, eventTime) at
// now: an entry that has not expired, and less than its back-off since
// eventTime.
func (t *Timeline) inBackOff(c *container, eventTime time.Time) bool {
	if c.backOff == 0 || eventTime.Sub(c.backOffUpdated) > 2*MaxBackOff {
		return false
	}
	return t.now.Sub(eventTime) < c.backOff
}

// nextBackOff is flowcontrol.Backoff.Next(key, eventTime) called at now
// with the kubelet's settings: the initial back-off for a new or expired
// entry (eventTime more than twice the maximum after its last update),
// else double, at most the maximum.
func (t *Timeline) nextBackOff(c *container, eventTime, now time.Time) {
	if c.backOff == 0 || eventTime.Sub(c.backOffUpdated) > 2*MaxBackOff {
		c.backOff = InitialBackOff
	} else {
		c.backOff = min(2*c.backOff, MaxBackOff)
	}
	c.backOffUpdated = now
}

// restarts says whether the kubelet starts a killed container again: a
// sidecar always; else the container's own policy, else the pod's (exit
// KillExitCode is a failure for OnFailure).
func (t *Timeline) restarts(c *container) bool {
	if c.sidecar {
		return true
	}
	policy := c.spec.RestartPolicy
	if policy == "" {
		policy = t.pod.RestartPolicy
	}
	return policy != prober.RestartNever
}

// sync is the pod worker's status update: the runtime's state through
// UpdatePodStatus into the status manager, with Ready and Started changes
// recorded.
func (t *Timeline) sync() error {
	gen := prober.PodStatus{Phase: prober.PodRunning, PodIP: t.opts.PodIP, InitContainerStatuses: append([]prober.ContainerStatus(nil), t.initDone...)}
	for _, c := range t.containers {
		s := prober.ContainerStatus{Name: c.spec.Name, ContainerID: c.id}
		switch {
		case c.running:
			s.State.Running = &prober.Running{StartedAt: c.startedAt}
		case c.exited:
			s.State.Terminated = &prober.Terminated{ExitCode: KillExitCode}
		}
		if c.sidecar {
			gen.InitContainerStatuses = append(gen.InitContainerStatuses, s)
		} else {
			gen.ContainerStatuses = append(gen.ContainerStatuses, s)
		}
	}
	res, err := t.m.UpdatePodStatus(t.now, t.pod, gen)
	if err != nil {
		return err
	}
	t.status = res.Status
	for _, k := range res.Triggered {
		typ := k.Type
		t.add(Entry{Container: k.ContainerName, Kind: KindTriggered, Type: &typ, Message: "UpdatePodStatus triggered the readiness worker"})
	}
	for _, c := range t.containers {
		s := t.statusOf(c)
		started := s.Started != nil && *s.Started
		if started != c.started {
			c.started = started
			t.add(Entry{Container: c.spec.Name, Kind: KindStarted, ContainerID: c.id, Value: fmt.Sprint(started)})
		}
		if s.Ready != c.ready {
			c.ready = s.Ready
			t.add(Entry{Container: c.spec.Name, Kind: KindReady, ContainerID: c.id, Value: fmt.Sprint(s.Ready)})
		}
	}
	return nil
}

func (t *Timeline) statusOf(c *container) prober.ContainerStatus {
	list := t.status.ContainerStatuses
	if c.sidecar {
		list = t.status.InitContainerStatuses
	}
	for _, s := range list {
		if s.Name == c.spec.Name {
			return s
		}
	}
	return prober.ContainerStatus{}
}

// WorstCaseDetection is the time the probe's settings allow before a
// target that stops answering is detected, as the Kubernetes probe
// documentation states it: initialDelaySeconds + periodSeconds ×
// failureThreshold + timeoutSeconds (of a defaulted probe).
func WorstCaseDetection(p prober.Probe) time.Duration {
	return time.Duration(p.InitialDelaySeconds)*time.Second + time.Duration(p.FailureThreshold)*p.Period() + p.Timeout()
}
