package sim

import (
	"container/heap"
	"fmt"
	"time"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/verify"
)

// Sim is one simulated node: the world (pods, plugins, runtime, cgroupfs,
// the API server's records, the checkpoint file) and the kubelet that runs
// on it. Step runs one event; Check evaluates the invariants.
type Sim struct {
	cfg Config
	src Source
	// slowSrc draws the allocate-slow fault and its delays (AllocateSlow).
	slowSrc Source
	end     time.Time
	now     time.Time

	queue    eventQueue
	queueSeq uint64

	// The world.
	pods     map[string]*simPod
	podOrder []string // UIDs in arrival order, which is also sorted order
	// forgotten are the pods whose records were dropped; a checkpoint may
	// still bring their devices back after a restart.
	forgotten map[string]bool
	nextPod   int
	images    []imageSpec
	runtime   *runtime
	plugins   []*plugin // sorted by resource
	fs        *cgroupfs
	// disk holds the device manager's checkpoint file as last written.
	disk []byte
	// liveGen counts changes to the set of live pods in the sim's record,
	// the key of the cached expected cgroup tree.
	liveGen int
	cgCfg   cgroups.Config

	kubelet    *kubelet
	kubeletGen int
	// refusedAgain says, at a kubelet restart, whether a refused pod is
	// admitted again: a static pod whose manifest is still there, on a
	// scripted node. Nil in a drawn simulation, whose pods' refusals the
	// API server keeps.
	refusedAgain func(uid string) bool

	// Facts an event produced that the next Check judges.
	livenessBad []string
	gcBad       []string
	coreErrs    []string
	// restartStopped are the pods the latest restart stopped although
	// their containers ran (SIM-C-RESTART-RUNS).
	restartStopped []string

	// routine: the running event called nothingHappened; faultFired: a
	// fault fired during it. Together they make Event.Routine.
	routine    bool
	faultFired bool

	stats Stats
	trace []Event
	last  Event

	expected cachedTree
}

// New builds the node and schedules its first events.
func New(cfg Config, src Source) (*Sim, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if src == nil {
		return nil, fmt.Errorf("source: must not be nil")
	}
	s := newNode(cfg, src)
	s.plugins = []*plugin{newPlugin(fpgaResource, 2), newPlugin(gpuResource, 4)}
	s.startKubelet()
	for _, p := range s.plugins {
		s.schedule(&queued{at: s.now.Add(time.Duration(1+s.src.Intn(5)) * time.Second), kind: evPluginRegister, name: p.resource})
		s.schedule(&queued{at: s.now.Add(pluginTickPeriod), kind: evPluginTick, name: p.resource})
	}
	s.schedule(&queued{at: s.now, kind: evPodArrive})
	return s, nil
}

// newNode is the node before its plugins and kubelet: the world's empty
// records, the cgroup configuration and the images it was provisioned
// with. It draws nothing but the split of src.
func newNode(cfg Config, src Source) *Sim {
	s := &Sim{
		cfg: cfg, src: src, slowSrc: src.Split(), now: simStart, end: simStart.Add(cfg.Duration),
		pods: map[string]*simPod{}, forgotten: map[string]bool{},
		images:  imagePool(),
		runtime: newRuntime(),
		fs:      &cgroupfs{dirs: map[string][]cgroups.File{}},
		stats: Stats{ByKind: map[string]int{}, Faults: map[Fault]int{}, Checks: verify.Counts{},
			Observed: map[string]int{}, Explained: map[string]int{}},
	}
	s.cgCfg = cgroups.DefaultConfig()
	s.cgCfg.Capacity = pod.ResourceList{pod.CPU: nodeCPUMilli, pod.Memory: nodeMemoryBytes + (1 << 30), cgroups.PIDs: 1 << 20}
	// Images the node was provisioned with: the first half of the pool.
	for _, img := range s.images[:len(s.images)/2] {
		s.runtime.images[img.id] = img.sizeBytes
	}
	return s
}

// fault draws whether kind fires at this opportunity and counts it.
func (s *Sim) fault(kind Fault) bool { return s.faultFrom(s.src, kind) }

// faultFrom is fault drawn from src.
func (s *Sim) faultFrom(src Source, kind Fault) bool {
	if src.Chance(s.cfg.Faults[kind]) {
		s.faultFired = true
		s.stats.Faults[kind]++
		return true
	}
	return false
}

// Step runs the next event: the earliest of the queue and the prober's next
// due worker. It returns false, and runs nothing, once simulated time
// reaches the configured duration.
func (s *Sim) Step() (Event, bool) {
	for {
		var top *queued
		if len(s.queue) > 0 {
			top = s.queue[0]
		}
		key, due, probeDue := s.kubelet.prober.NextDue()
		useProbe := probeDue && (top == nil || due.Before(top.at))
		var at time.Time
		switch {
		case useProbe:
			at = due
		case top != nil:
			at = top.at
		default:
			at = s.end
		}
		if !at.Before(s.end) {
			s.now = s.end
			s.stats.Simulated = s.cfg.Duration
			return Event{}, false
		}
		s.now = at
		s.routine, s.faultFired = false, false
		var kind eventKind
		var detail string
		if useProbe {
			kind, detail = evProbe, s.probe(key)
		} else {
			heap.Pop(&s.queue)
			if top.kubelet != 0 && top.kubelet != s.kubeletGen {
				// Work of a kubelet that has since restarted: it died
				// with that process.
				continue
			}
			kind = top.kind
			detail = s.run(top)
		}
		routine := s.routine && !s.faultFired
		if kind != evRestart && s.fault(KubeletRestart) {
			s.schedule(&queued{at: s.now, kind: evRestart})
		}
		s.stats.Events++
		s.stats.Simulated = s.now.Sub(simStart)
		s.stats.ByKind[string(kind)]++
		ev := Event{Seq: s.stats.Events, At: s.stats.Simulated, Kind: string(kind), Detail: detail, Routine: routine}
		s.record(ev)
		return ev, true
	}
}

func (s *Sim) run(e *queued) string {
	switch e.kind {
	case evPodArrive:
		return s.podArrive()
	case evAdmit:
		return s.admitNext()
	case evAllocateAnswer:
		return s.allocateAnswer(e.answers)
	case evPullDone:
		return s.pullDone(e.name)
	case evPodDelete:
		return s.podDelete(e.podUID)
	case evPodTerminated:
		return s.podTerminated(e.podUID)
	case evKillRetry:
		return s.killRetry(e.podUID)
	case evPluginRegister:
		return s.pluginRegister(e.name)
	case evPluginTick:
		return s.pluginTick(e.name)
	case evGC:
		return s.gcStart()
	case evGCStep:
		return s.gcStep()
	case evRestart:
		return s.restartKubelet("at an event")
	}
	return "unknown event"
}

// nothingHappened marks the running event routine (Event.Routine), unless
// a fault fires during it, and returns detail.
func (s *Sim) nothingHappened(detail string) string {
	s.routine = true
	return detail
}

// record keeps the event in the trace ring.
func (s *Sim) record(ev Event) {
	s.last = ev
	n := s.cfg.traceLen()
	if len(s.trace) < n {
		s.trace = append(s.trace, ev)
		return
	}
	copy(s.trace, s.trace[1:])
	s.trace[n-1] = ev
}

// Trace returns the last TraceLen events, oldest first.
func (s *Sim) Trace() []Event { return append([]Event(nil), s.trace...) }

// Stats returns a copy of what the run has done so far.
func (s *Sim) Stats() Stats {
	out := s.stats
	out.ByKind = copyMap(s.stats.ByKind)
	out.Faults = copyMap(s.stats.Faults)
	out.Checks = copyMap(s.stats.Checks)
	out.Observed = copyMap(s.stats.Observed)
	out.Explained = copyMap(s.stats.Explained)
	return out
}

func copyMap[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// coreErr records a core refusing what the glue handed it: a glue bug the
// SIM-CORES-ACCEPT invariant reports.
func (s *Sim) coreErr(what string, err error) {
	if err != nil {
		s.coreErrs = append(s.coreErrs, what+": "+err.Error())
	}
}

// livePods are the sim's live pods in arrival order.
func (s *Sim) livePods() []*simPod {
	var out []*simPod
	for _, uid := range s.podOrder {
		if p := s.pods[uid]; p.live() {
			out = append(out, p)
		}
	}
	return out
}
