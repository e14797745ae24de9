//go:build !kubelet1.37 && !kubelet1.38

package conformance

// The kubelet API of v1.35 and v1.36 (the default build and -tags
// kubelet1.35) where v1.37 changed it; release_from_1_37_test.go is the
// other side of each function. The tests call these, not the API.

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	upstreamdm "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
)

// HandleAdmissionFailure records the reasons and hands them on. v1.37 added
// the operation argument ("Scheduler Preemption for In-Place Pod Resize
// (alpha)", kubernetes#140000).
func (r *reasonRecorder) HandleAdmissionFailure(ctx context.Context, p *corev1.Pod, reasons []lifecycle.PredicateFailureReason) ([]lifecycle.PredicateFailureReason, error) {
	r.reasons = reasons
	return r.AdmissionFailureHandler.HandleAdmissionFailure(ctx, p, reasons)
}

// handleAdmissionFailure is the critical pod handler's answer to a pod being
// added. v1.37 added the operation argument (kubernetes#140000).
func handleAdmissionFailure(ctx context.Context, h lifecycle.AdmissionFailureHandler, p *corev1.Pod, reasons []lifecycle.PredicateFailureReason) ([]lifecycle.PredicateFailureReason, error) {
	return h.HandleAdmissionFailure(ctx, p, reasons)
}

// admit runs an admit handler. v1.37 gave Admit a context (the kubelet's
// contextual logging migration, kubernetes#130069).
func admit(_ context.Context, h lifecycle.PodAdmitHandler, attrs *lifecycle.PodAdmitAttributes) lifecycle.PodAdmitResult {
	return h.Admit(attrs)
}

// jobGates are the feature gates the Job strategy reads on create. v1.37
// removed JobBackoffLimitPerIndex, JobPodReplacementPolicy and
// JobSuccessPolicy, GA since v1.33/v1.34 and locked on.
func jobGates() []featuregate.Feature {
	return []featuregate.Feature{
		kubefeatures.JobBackoffLimitPerIndex, kubefeatures.JobManagedBy,
		kubefeatures.JobPodReplacementPolicy, kubefeatures.JobSuccessPolicy,
	}
}

// newFakeTopologyManager is a topology manager that admits everything.
// v1.37 gave NewFakeManager a logger.
func newFakeTopologyManager(klog.Logger) topologymanager.Manager {
	return topologymanager.NewFakeManager()
}

// deviceCapacity is the device manager's capacity and allocatable. v1.37
// gave GetCapacity a logger.
func deviceCapacity(_ klog.Logger, m *upstreamdm.ManagerImpl) (capacity, allocatable corev1.ResourceList) {
	capacity, allocatable, _ = m.GetCapacity()
	return capacity, allocatable
}

// allocate allocates devices to a container of a pod being added. v1.37
// gave Allocate a context and the admission's operation.
func allocate(_ context.Context, m *upstreamdm.ManagerImpl, p *corev1.Pod, c *corev1.Container) error {
	return m.Allocate(p, c)
}

// withRequestInfo is the request context of a create as the API server's
// handler chain makes it, as far as the registry strategies read it:
// through v1.36 they read only the namespace. v1.37's strategies embed
// rest.DeclarativeValidation, which validates the version of the request's
// RequestInfo and is an internal error without one ("Configure strategies
// to auto-wire declarative validation", kubernetes#138323).
func withRequestInfo(ctx context.Context, _ schema.GroupVersionKind) context.Context {
	return ctx
}

// applyCreateDefaults applies the defaults the pod strategy's
// PrepareForCreate sets. Through v1.36 the API server defaults the pod-level
// resources in SetObjectDefaults_Pod and PrepareForCreate adds none the
// kubelet reads; v1.37 moved them to PrepareForCreate behind
// PodLevelResourcesFixDefaulting, on by default ("Plr defaulting fix",
// kubernetes#140514).
func applyCreateDefaults(*corev1.Pod) {}
