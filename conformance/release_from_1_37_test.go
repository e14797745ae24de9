//go:build kubelet1.37 || kubelet1.38

package conformance

// The kubelet API of v1.37 and later (-tags kubelet1.37, kubelet1.38) where
// it differs from v1.36's; release_upto_1_36_test.go has each function's
// v1.36 side and says what changed.

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	apiv1 "k8s.io/kubernetes/pkg/apis/core/v1"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	upstreamdm "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
)

// HandleAdmissionFailure records the reasons and hands them on with the
// admission's operation.
func (r *reasonRecorder) HandleAdmissionFailure(ctx context.Context, p *corev1.Pod, reasons []lifecycle.PredicateFailureReason, op lifecycle.Operation) ([]lifecycle.PredicateFailureReason, error) {
	r.reasons = reasons
	return r.AdmissionFailureHandler.HandleAdmissionFailure(ctx, p, reasons, op)
}

// handleAdmissionFailure is the critical pod handler's answer to a pod being
// added: AddOperation, since upstream defers a resize to the scheduler.
func handleAdmissionFailure(ctx context.Context, h lifecycle.AdmissionFailureHandler, p *corev1.Pod, reasons []lifecycle.PredicateFailureReason) ([]lifecycle.PredicateFailureReason, error) {
	return h.HandleAdmissionFailure(ctx, p, reasons, lifecycle.AddOperation)
}

func admit(ctx context.Context, h lifecycle.PodAdmitHandler, attrs *lifecycle.PodAdmitAttributes) lifecycle.PodAdmitResult {
	return h.Admit(ctx, attrs)
}

func newFakeTopologyManager(logger klog.Logger) topologymanager.Manager {
	return topologymanager.NewFakeManager(logger)
}

func deviceCapacity(logger klog.Logger, m *upstreamdm.ManagerImpl) (capacity, allocatable corev1.ResourceList) {
	capacity, allocatable, _ = m.GetCapacity(logger)
	return capacity, allocatable
}

func allocate(ctx context.Context, m *upstreamdm.ManagerImpl, p *corev1.Pod, c *corev1.Container) error {
	return m.Allocate(ctx, p, c, lifecycle.AddOperation)
}

func podLevelDependents() []featuregate.Feature {
	return []featuregate.Feature{
		kubefeatures.InPlacePodLevelResourcesVerticalScaling,
		kubefeatures.PodLevelResourcesFixDefaulting, kubefeatures.PodLevelResourcesFixKubeletQOSClass,
	}
}

func withRequestInfo(ctx context.Context, gvk schema.GroupVersionKind) context.Context {
	return genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: "create", APIGroup: gvk.Group, APIVersion: gvk.Version,
		Namespace: campaignNamespace,
	})
}

func applyCreateDefaults(p *corev1.Pod) {
	var internal core.Pod
	if err := apiv1.Convert_v1_Pod_To_core_Pod(p, &internal, nil); err != nil {
		panic(err)
	}
	podutil.DefaultPodLevelResources(&internal)
	if err := apiv1.Convert_core_Pod_To_v1_Pod(&internal, p, nil); err != nil {
		panic(err)
	}
}
