package admissioncheck

import (
	"github.com/nodeproof/nodeproof/core/pod"
	model "github.com/nodeproof/nodeproof/models/preemption"
)

// The annotation keys, written out here rather than taken from core/pod so
// that the model's view of a pod does not follow a change to the core's.
const (
	sourceAnnotation = "kubernetes.io/config.source"
	mirrorAnnotation = "kubernetes.io/config.mirror"
)

// ModelPod copies what the model reads of a core pod into the model's
// types. It copies; it decides nothing, so the model works out the pod's
// class, requests and criticality itself.
func ModelPod(p *pod.Pod) model.Pod {
	m := model.Pod{Name: p.UID, QOSStatus: string(p.QOSClass), Overhead: plain(p.Overhead)}
	if p.Priority != nil {
		v := *p.Priority
		m.Priority = &v
	}
	m.Source, m.HasSource = p.Annotations[sourceAnnotation]
	_, m.Mirror = p.Annotations[mirrorAnnotation]
	for _, c := range p.InitContainers {
		m.Init = append(m.Init, model.Container{Requests: plain(c.Requests), Limits: plain(c.Limits), Sidecar: c.RestartPolicy == "Always"})
	}
	for _, c := range p.Containers {
		m.App = append(m.App, model.Container{Requests: plain(c.Requests), Limits: plain(c.Limits)})
	}
	if p.Resources != nil {
		m.Level = &model.PodLevel{Requests: plain(p.Resources.Requests), Limits: plain(p.Resources.Limits)}
	}
	return m
}

// ModelPods converts a list of pods.
func ModelPods(pods []*pod.Pod) []model.Pod {
	out := make([]model.Pod, len(pods))
	for i, p := range pods {
		out[i] = ModelPod(p)
	}
	return out
}

func plain(l pod.ResourceList) map[string]int64 {
	if l == nil {
		return nil
	}
	m := make(map[string]int64, len(l))
	for k, v := range l {
		m[string(k)] = v
	}
	return m
}

// ClonePod deep-copies a pod, so a twin run cannot share state with the
// first.
func ClonePod(p *pod.Pod) *pod.Pod {
	if p == nil {
		return nil
	}
	c := *p
	if p.Priority != nil {
		v := *p.Priority
		c.Priority = &v
	}
	if p.Annotations != nil {
		c.Annotations = make(map[string]string, len(p.Annotations))
		for k, v := range p.Annotations {
			c.Annotations[k] = v
		}
	}
	cloneContainers := func(cs []pod.Container) []pod.Container {
		if cs == nil {
			return nil
		}
		out := make([]pod.Container, len(cs))
		for i, ct := range cs {
			ct.Requests, ct.Limits = ct.Requests.Clone(), ct.Limits.Clone()
			out[i] = ct
		}
		return out
	}
	c.InitContainers = cloneContainers(p.InitContainers)
	c.Containers = cloneContainers(p.Containers)
	c.Overhead = p.Overhead.Clone()
	if p.Resources != nil {
		c.Resources = &pod.Resources{Requests: p.Resources.Requests.Clone(), Limits: p.Resources.Limits.Clone()}
	}
	return &c
}
