package conformance

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/pod"
)

// TestQOS compares core/pod's QoS class with the kubelet's GetPodQOS.
func TestQOS(t *testing.T) {
	Compare(t, Comparison[*corev1.Pod, string]{
		Name:   "pod.QOS",
		Gen:    genPod(),
		Ours:   func(p *corev1.Pod) string { return string(ourPod(p).QOS()) },
		Theirs: func(p *corev1.Pod) string { return string(qos.GetPodQOS(upstreamPod(p))) },
	})
}

// requestsInput is a pod and the options a caller passes.
type requestsInput struct {
	Pod             *corev1.Pod
	ExcludeOverhead bool
	SkipPodLevel    bool
}

func genRequestsInput() *rapid.Generator[requestsInput] {
	return rapid.Custom(func(t *rapid.T) requestsInput {
		return requestsInput{
			Pod:             genPod().Draw(t, "pod"),
			ExcludeOverhead: rapid.Bool().Draw(t, "excludeOverhead"),
			SkipPodLevel:    rapid.Bool().Draw(t, "skipPodLevelResources"),
		}
	})
}

func (in requestsInput) ours() pod.Options {
	return pod.Options{ExcludeOverhead: in.ExcludeOverhead, SkipPodLevelResources: in.SkipPodLevel}
}

func (in requestsInput) theirs() resourcehelper.PodResourcesOptions {
	return resourcehelper.PodResourcesOptions{ExcludeOverhead: in.ExcludeOverhead, SkipPodLevelResources: in.SkipPodLevel}
}

// TestEffectiveRequests compares EffectiveRequests with PodRequests.
func TestEffectiveRequests(t *testing.T) {
	Compare(t, Comparison[requestsInput, pod.ResourceList]{
		Name: "pod.EffectiveRequests",
		Gen:  genRequestsInput(),
		Ours: func(in requestsInput) pod.ResourceList { return ourPod(in.Pod).EffectiveRequests(in.ours()) },
		Theirs: func(in requestsInput) pod.ResourceList {
			return coreList(resourcehelper.PodRequests(upstreamPod(in.Pod), in.theirs()))
		},
		Equal: sameList,
	})
}

// TestEffectiveLimits compares EffectiveLimits with PodLimits.
func TestEffectiveLimits(t *testing.T) {
	Compare(t, Comparison[requestsInput, pod.ResourceList]{
		Name: "pod.EffectiveLimits",
		Gen:  genRequestsInput(),
		Ours: func(in requestsInput) pod.ResourceList { return ourPod(in.Pod).EffectiveLimits(in.ours()) },
		Theirs: func(in requestsInput) pod.ResourceList {
			return coreList(resourcehelper.PodLimits(upstreamPod(in.Pod), in.theirs()))
		},
		Equal: sameList,
	})
}
