package preemption

import (
	"fmt"

	"github.com/nodeproof/nodeproof/core/pod"
)

// Priorities of the built-in priority classes (pkg/apis/scheduling).
const (
	// HighestUserDefinablePriority is the largest priority a user's
	// PriorityClass may have; anything above it is reserved for the system.
	HighestUserDefinablePriority int32 = 1_000_000_000
	// SystemClusterCriticalPriority is system-cluster-critical's value, the
	// lowest critical priority (pod.SystemCriticalPriority).
	SystemClusterCriticalPriority = pod.SystemCriticalPriority
	// SystemNodeCriticalPriority is system-node-critical's value. It is above
	// cluster-critical, so a node-critical pod may preempt a
	// cluster-critical one (#65372).
	SystemNodeCriticalPriority = pod.SystemCriticalPriority + 1000

	// SystemClusterCritical and SystemNodeCritical are the class names.
	SystemClusterCritical = "system-cluster-critical"
	SystemNodeCritical    = "system-node-critical"
)

// Config sources a pod's kubernetes.io/config.source annotation names
// (pkg/kubelet/types). Any value other than ApiserverSource makes the pod
// static, even an empty or unknown one.
const (
	FileSource      = "file"
	HTTPSource      = "http"
	ApiserverSource = pod.ConfigSourceAPI
	AllSource       = "*"
)

// ConfigSource returns the pod's config source annotation (upstream
// GetPodSource), or upstream's error when the annotation is missing.
func ConfigSource(p *pod.Pod) (string, error) {
	if src, ok := p.Annotations[pod.ConfigSourceAnnotation]; ok {
		return src, nil
	}
	return "", fmt.Errorf("cannot get source of pod %q", p.UID)
}

// IsNodeCritical reports whether a critical pod asks for the
// system-node-critical class by name (upstream IsNodeCriticalPod).
func IsNodeCritical(p *pod.Pod) bool {
	return p.IsCritical() && p.PriorityClassName == SystemNodeCritical
}

// Preemptable reports whether preemptor may preempt victim (upstream
// kubetypes.Preemptable): a critical pod may preempt any non-critical pod;
// otherwise, when both pods have a priority, only a strictly higher one
// wins. A pod without a priority can neither win nor lose on priority, so a
// critical pod without one (a static pod, say) never preempts another
// critical pod.
func Preemptable(preemptor, victim *pod.Pod) bool {
	if preemptor.IsCritical() && !victim.IsCritical() {
		return true
	}
	if preemptor.Priority != nil && victim.Priority != nil {
		return *preemptor.Priority > *victim.Priority
	}
	return false
}
