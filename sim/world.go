package sim

import (
	"time"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/prober"
)

// simStart is the fixed instant every run starts at, so that times in
// traces and checkpoints are the same on every replay.
var simStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// podPhase is the sim's own record of where a pod is. It is written by the
// world (arrivals, deletions) and by the outcomes the kubelet reports to
// the API server (admitted, rejected, preempted, terminated); the
// invariants compare the cores against it, never against the glue's
// bookkeeping.
type podPhase int

const (
	// phasePending: the pod is bound to the node and awaits admission.
	phasePending podPhase = iota
	// phaseAdmitting: the kubelet is admitting it.
	phaseAdmitting
	// phaseRunning: admitted; its containers pull, start and run.
	phaseRunning
	// phaseTerminating: deleted, in its grace period, or a preemption
	// victim whose kill failed.
	phaseTerminating
	// phaseDead: rejected, preempted or terminated.
	phaseDead
)

func (p podPhase) String() string {
	return [...]string{"pending", "admitting", "running", "terminating", "dead"}[p]
}

// simPod is the world's record of one pod.
type simPod struct {
	spec *pod.Pod
	// probes is the pod as the prober reads it, defaulted.
	probes     prober.Pod
	phase      podPhase
	critical   bool
	rejected   bool
	preempted  bool
	killFailed bool
	lifetime   time.Duration
	grace      time.Duration
	containers []*simContainer
	// granted is what the device plugins answered for the pod's
	// containers when it was admitted: container -> resource -> IDs.
	granted map[string]map[string][]string
	// apiReady is the API pod's Ready condition, which survives a
	// kubelet restart in the API server.
	apiReady bool
	// mustRelease: a device admission (whose garbage collection frees the
	// devices of pods that are not active) began after this pod stopped
	// being active, so the device manager must no longer hold its devices.
	mustRelease bool
	deadAt      time.Time
	// unreported are the extended resources the pod requests that the
	// node's allocatable did not list when its admission's fit ran: v1.36's
	// predicate drops them from the pod's requests
	// (removeMissingExtendedResources), so the pod runs without them.
	unreported map[pod.ResourceName]bool
	// survivedRestart: the pod ran, with every container started at least
	// the prober's restart grace before the latest kubelet restart;
	// readyAtRestart was its Ready condition then, and readinessProbed says
	// whether a readiness probe of it has run, or a container of it
	// restarted, since: either may rightly change its readiness.
	survivedRestart bool
	readyAtRestart  bool
	readinessProbed bool
	// runningAtRestart: every container of the pod ran at the latest
	// kubelet restart, however recently it started (SIM-C-RESTART-READY).
	runningAtRestart bool
	// reason and message are a rejected pod's status reason and message.
	reason, message string
}

func (p *simPod) live() bool { return p.phase == phaseRunning || p.phase == phaseTerminating }

// simContainer is one container of a pod and its current instance in the
// runtime.
type simContainer struct {
	name, image string
	// id is the current instance's runtime ID, "" before the first start;
	// startSeq numbers the instance among every start on the node, so that
	// two starts at the same simulated instant still have an order.
	id        string
	startSeq  int
	running   bool
	startedAt time.Time
	// The probe target's behaviour and what it answered the current
	// instance: startupFailFirst startup probes fail before one succeeds;
	// an unhealthy instance fails every liveness probe after
	// livenessSickAfter of them.
	startupFailFirst  int
	livenessSickAfter int // 0: never sick
	startupProbes     int
	livenessProbes    int
	startupOK         bool
	livenessFails     int
	// apiStarted is the container's started flag as last published.
	apiStarted bool
	// imageRemovedInWindow: image GC removed this instance's image after it
	// started but after the pass's detection (#123631).
	imageRemovedInWindow bool
	restarts             int
}

// imageSpec is one image of the node's pool.
type imageSpec struct {
	id        string
	sizeBytes int64
}

// cgroupfs is the node's simulated cgroup filesystem: path -> the files
// last written there. It lives on the host, so it survives kubelet restarts.
type cgroupfs struct {
	dirs map[string][]cgroups.File
	// writes counts changes, so a check can tell the tree did not change.
	writes int
}

func (fs *cgroupfs) write(path string, files []cgroups.File) {
	fs.dirs[path] = files
	fs.writes++
}

func (fs *cgroupfs) remove(path string) {
	if _, ok := fs.dirs[path]; ok {
		delete(fs.dirs, path)
		fs.writes++
	}
}

// Node sizing. Devices are scarce (a few per resource) so that holdings
// exist most of the time and allocations contend; memory and CPU are sized
// so that a full node turns pods away and critical pods must preempt.
const (
	nodeCPUMilli       = 8000
	nodeMemoryBytes    = 16 << 30
	defaultNodeMaxPods = 110
	imageFsBytes       = 40 << 30
	gpuResource        = "example.com/gpu"
	fpgaResource       = "example.com/fpga"
	probeRestartGrace  = 10 * time.Second // the prober's kubelet-restart grace
	allocateDeadline   = 30 * time.Second
	pluginTickPeriod   = 2 * time.Minute
	deadRecordLifetime = 10 * time.Minute
)

func (s *Sim) nodeCapacity() pod.ResourceList {
	return pod.ResourceList{pod.CPU: nodeCPUMilli, pod.Memory: nodeMemoryBytes, pod.Pods: s.cfg.nodeMaxPods()}
}

func imagePool() []imageSpec {
	const mi = 1 << 20
	sizes := []int64{120, 250, 400, 600, 800, 1000, 1300, 1600, 2000, 2400, 2800, 3200}
	out := make([]imageSpec, len(sizes))
	for i, s := range sizes {
		out[i] = imageSpec{id: "sha256:img" + itoa2(i), sizeBytes: s * mi}
	}
	return out
}

func itoa2(i int) string {
	return string([]byte{byte('0' + i/10), byte('0' + i%10)})
}
