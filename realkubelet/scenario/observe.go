package scenario

import (
	"context"
	"errors"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	"github.com/nodeproof/nodeproof/realkubelet"
)

// Observation is what the node shows from outside at one moment.
type Observation struct {
	// Pods are the static pods /pods lists, by their manifest's name.
	Pods map[string]corev1.Pod
	// Held are the devices of Resource that PodResources List shows each
	// container holding, by pod (manifest name) and container, sorted.
	Held map[string]map[string][]string
	// Allocatable are GetAllocatableResources' devices of Resource, sorted.
	Allocatable []string
	// Checkpoint is the device manager's checkpoint, decoded; its entries
	// of Resource only.
	Checkpoint []checkpoint.PodDevicesEntry
	// Cgroups are the pod cgroups of the running pods, by manifest name.
	Cgroups map[string]PodCgroup
}

// PodCgroup is what the cgroupfs holds for one pod: the directory its QoS
// class puts it in, and the limits the kubelet wrote (empty when the file
// could not be read; Err says why).
type PodCgroup struct {
	Path        string
	MemoryLimit string
	CPUQuota    string
	Err         error
}

// Observe reads the node: /pods, PodResources List and
// GetAllocatableResources, the checkpoint, and the pod cgroups of the
// pods /pods shows running. An error is one of the observers failing.
func Observe(ctx context.Context, n *realkubelet.Node) (*Observation, error) {
	pods, err := n.Pods(ctx)
	if err != nil {
		return nil, err
	}
	o := &Observation{Pods: map[string]corev1.Pod{}, Held: map[string]map[string][]string{}, Cgroups: map[string]PodCgroup{}}
	for _, p := range pods {
		name, ok := strings.CutSuffix(p.Name, "-"+realkubelet.NodeName)
		if !ok {
			continue
		}
		o.Pods[name] = p
		if p.Status.Phase == corev1.PodRunning {
			o.Cgroups[name] = readCgroup(n, p)
		}
	}
	resources, err := n.PodResources(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range resources {
		name, _ := strings.CutSuffix(p.GetName(), "-"+realkubelet.NodeName)
		for _, c := range p.GetContainers() {
			for _, d := range c.GetDevices() {
				if d.GetResourceName() != Resource {
					continue
				}
				if o.Held[name] == nil {
					o.Held[name] = map[string][]string{}
				}
				o.Held[name][c.GetName()] = append(o.Held[name][c.GetName()], d.GetDeviceIds()...)
			}
		}
	}
	for _, containers := range o.Held {
		for _, ids := range containers {
			slices.Sort(ids)
		}
	}
	alloc, err := n.Allocatable(ctx)
	if err != nil {
		return nil, err
	}
	o.Allocatable = alloc[Resource]
	cp, err := n.Checkpoint()
	if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return nil, err
	}
	for _, e := range cp.PodDeviceEntries {
		if e.ResourceName == Resource {
			o.Checkpoint = append(o.Checkpoint, e)
		}
	}
	return o, nil
}

func readCgroup(n *realkubelet.Node, p corev1.Pod) PodCgroup {
	c := PodCgroup{Path: realkubelet.PodCgroup(p)}
	var memErr, cpuErr error
	c.MemoryLimit, memErr = n.CgroupValue("memory", c.Path, "memory.limit_in_bytes")
	c.CPUQuota, cpuErr = n.CgroupValue("cpu", c.Path, "cpu.cfs_quota_us")
	c.Err = errors.Join(memErr, cpuErr)
	return c
}

// running says whether the pod runs as its spec means: phase Running, the
// app container and any sidecar running, any regular init container done.
// Whether it is ready is another matter (ready): a readiness probe that
// fails leaves it running.
func running(p corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running == nil {
			return false
		}
	}
	for _, c := range p.Status.InitContainerStatuses {
		done := c.State.Terminated != nil && c.State.Terminated.ExitCode == 0
		if !done && c.State.Running == nil {
			return false
		}
	}
	return true
}

// ready says whether /pods shows every app container and sidecar of the
// pod ready (a regular init container that is done does not count).
func ready(p corev1.Pod) bool {
	for _, c := range p.Status.ContainerStatuses {
		if !c.Ready {
			return false
		}
	}
	for _, c := range p.Status.InitContainerStatuses {
		if done := c.State.Terminated != nil && c.State.Terminated.ExitCode == 0; !done && !c.Ready {
			return false
		}
	}
	return len(p.Status.ContainerStatuses) > 0
}

// podReady is the pod's Ready condition as /pods shows it.
func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ended says whether the pod has reached a terminal phase. A pod that is
// merely not Running has not: just after a restart the kubelet lists a
// static pod with an empty status until it has admitted the pod again.
func ended(p corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded
}

// refused says whether the device manager refused the pod at admission.
func refused(p corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed && p.Status.Reason == "UnexpectedAdmissionError"
}

// restarts sums the pod's containers' restart counts, init containers'
// (and so sidecars') included.
func restarts(p corev1.Pod) int32 {
	var n int32
	for _, c := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
		n += c.RestartCount
	}
	return n
}

// flatten lists a checkpoint entry's devices over every NUMA node, sorted.
func flatten(d checkpoint.DevicesPerNUMA) []string {
	var ids []string
	for _, list := range d {
		ids = append(ids, list...)
	}
	slices.Sort(ids)
	return ids
}
