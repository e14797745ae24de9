package preemption

import "strings"

// Resource names the model treats specially.
const (
	CPU              = "cpu"
	Memory           = "memory"
	Pods             = "pods"
	EphemeralStorage = "ephemeral-storage"
)

// QoS classes.
const (
	BestEffort = "BestEffort"
	Burstable  = "Burstable"
	Guaranteed = "Guaranteed"
)

// criticalPriority is system-cluster-critical, 2 * 10^9.
const criticalPriority = 2_000_000_000

// Container is one init or app container: requests and limits in whole
// units (millicores, bytes, counts). Sidecar marks an init container that
// keeps running (restartPolicy Always).
type Container struct {
	Requests map[string]int64
	Limits   map[string]int64
	Sidecar  bool
}

// PodLevel is spec.resources.
type PodLevel struct {
	Requests map[string]int64
	Limits   map[string]int64
}

// Pod is what the model reads of a pod.
type Pod struct {
	Name string
	// Priority is nil when the pod has none.
	Priority *int32
	// Source is the kubernetes.io/config.source annotation; HasSource says
	// whether it is present at all.
	Source    string
	HasSource bool
	// Mirror says the kubernetes.io/config.mirror annotation is present.
	Mirror   bool
	Init     []Container
	App      []Container
	Overhead map[string]int64
	// Level is spec.resources, nil when unset.
	Level *PodLevel
	// QOSStatus is status.qosClass; empty when not computed yet.
	QOSStatus string
}

// Critical: a static pod (any config source but "api"), a mirror pod, or a
// priority of at least system-cluster-critical.
func Critical(p Pod) bool {
	static := p.HasSource && p.Source != "api"
	return static || p.Mirror || (p.Priority != nil && *p.Priority >= criticalPriority)
}

// MayPreempt says whether a may preempt b: a critical pod may preempt any
// pod that is not critical, and otherwise only a strictly higher priority
// may preempt a lower one, when both pods have one.
func MayPreempt(a, b Pod) bool {
	switch {
	case Critical(a) && !Critical(b):
		return true
	case a.Priority == nil || b.Priority == nil:
		return false
	default:
		return *a.Priority > *b.Priority
	}
}

func podLevelSupported(name string) bool {
	return name == CPU || name == Memory || strings.HasPrefix(name, "hugepages-")
}

// levelSet says spec.resources requests or limits a supported resource.
func (p Pod) levelSet() bool {
	if p.Level == nil {
		return false
	}
	for _, m := range []map[string]int64{p.Level.Requests, p.Level.Limits} {
		for name := range m {
			if podLevelSupported(name) {
				return true
			}
		}
	}
	return false
}

// containerRequest is the containers' request of one resource: the app
// containers and sidecars run together; each regular init container runs
// with the sidecars declared before it, and the pod needs the larger of the
// two.
func (p Pod) containerRequest(res string) int64 {
	var running int64
	for _, c := range p.App {
		running += c.Requests[res]
	}
	var sidecars, peak int64
	for _, c := range p.Init {
		if c.Sidecar {
			sidecars += c.Requests[res]
			running += c.Requests[res]
			peak = max(peak, sidecars)
		} else {
			peak = max(peak, sidecars+c.Requests[res])
		}
	}
	return max(running, peak)
}

// FitRequest is what the pod asks the node for (the fit's PodRequests):
// the containers' request, replaced by spec.resources' request of a
// supported resource when it sets one, plus the overhead.
func FitRequest(p Pod, res string) int64 {
	q := p.containerRequest(res)
	if p.Level != nil && podLevelSupported(res) {
		if v, ok := p.Level.Requests[res]; ok {
			q = v
		}
	}
	return q + p.Overhead[res]
}

// PreemptionRequest is what evicting the pod frees in preemption's
// accounting: 1 pod slot; otherwise only spec.resources' requests when it
// sets a supported resource (containers ignored), else the containers'
// request; the overhead is added only to a non-zero amount.
func PreemptionRequest(p Pod, res string) int64 {
	if res == Pods {
		return 1
	}
	var q int64
	if p.levelSet() {
		if podLevelSupported(res) {
			q = p.Level.Requests[res]
		}
	} else {
		q = p.containerRequest(res)
	}
	if q == 0 {
		return 0
	}
	return q + p.Overhead[res]
}

// QoS is status.qosClass when set, else the summed classification: only
// positive cpu and memory count; no requests and no limits is BestEffort;
// Guaranteed needs every container (or spec.resources, when set) to limit
// both, and the summed requests to equal the summed limits.
func QoS(p Pod) string {
	if p.QOSStatus != "" {
		return p.QOSStatus
	}
	req, lim := map[string]int64{}, map[string]int64{}
	allLimited := true
	add := func(requests, limits map[string]int64, mustLimit bool) {
		for _, r := range []string{CPU, Memory} {
			if v := requests[r]; v > 0 {
				req[r] += v
			}
		}
		limited := 0
		for _, r := range []string{CPU, Memory} {
			if v := limits[r]; v > 0 {
				lim[r] += v
				limited++
			}
		}
		if mustLimit && limited < 2 {
			allLimited = false
		}
	}
	if p.Level != nil {
		add(p.Level.Requests, p.Level.Limits, len(p.Level.Limits) > 0)
	} else {
		for _, c := range append(append([]Container(nil), p.Init...), p.App...) {
			add(c.Requests, c.Limits, true)
		}
	}
	if len(req) == 0 && len(lim) == 0 {
		return BestEffort
	}
	if !allLimited || len(req) != len(lim) {
		return Burstable
	}
	for r, v := range req {
		if lim[r] != v {
			return Burstable
		}
	}
	return Guaranteed
}
