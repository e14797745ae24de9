package scenario

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/realkubelet"
)

// Resource is the extended resource of the scenario's device plugin.
const Resource = "nodeproof.io/dev"

// Each container's cpu and memory, by QoS class: a Guaranteed pod's
// containers ask for containerCPU and containerMemory as requests and
// limits, a Burstable pod's ask for half as requests and the same limits,
// a BestEffort pod's ask for nothing.
const (
	containerCPU    = "50m"
	containerMemory = "16Mi"
	halfCPU         = "25m"
	halfMemory      = "8Mi"
)

// criticalPriority is system-node-critical's value, which a static pod
// states itself: no API server resolves its class.
const criticalPriority = int32(2000001000)

// PodSpec is what the scenario draws for one static pod: its QoS class,
// whether it is critical, and how many devices each of its containers
// asks for. Init and Sidecar say whether the pod has a regular init
// container (which exits at once) and a sidecar (a restartable init
// container, declared after it); their device counts are then drawn too.
// Liveness and Readiness, when set, are the target the app container's
// liveness and readiness probes ask; LivenessThreshold is the liveness
// probe's failureThreshold.
type PodSpec struct {
	Name              string
	QOS               corev1.PodQOSClass
	Critical          bool
	MainDevices       int
	Init              bool
	InitDevices       int
	Sidecar           bool
	SidecarDevice     int
	Liveness          *Target
	LivenessThreshold int
	Readiness         *Target
}

// DrawPodSpec draws a pod named name; target is what its probes, if it
// draws any, ask.
func DrawPodSpec(t *rapid.T, name string, target *Target) PodSpec {
	s := PodSpec{
		Name:        name,
		QOS:         rapid.SampledFrom([]corev1.PodQOSClass{corev1.PodQOSGuaranteed, corev1.PodQOSBurstable, corev1.PodQOSBestEffort}).Draw(t, name+".qos"),
		Critical:    rapid.Bool().Draw(t, name+".critical"),
		MainDevices: rapid.IntRange(0, 3).Draw(t, name+".main.devices"),
		Init:        rapid.Bool().Draw(t, name+".init"),
		Sidecar:     rapid.Bool().Draw(t, name+".sidecar"),
	}
	if s.Init {
		s.InitDevices = rapid.IntRange(0, 3).Draw(t, name+".init.devices")
	}
	if s.Sidecar {
		s.SidecarDevice = rapid.IntRange(0, 2).Draw(t, name+".sidecar.devices")
	}
	if rapid.Bool().Draw(t, name+".liveness") {
		s.Liveness = target
		s.LivenessThreshold = rapid.IntRange(1, 3).Draw(t, name+".liveness.threshold")
	}
	if rapid.Bool().Draw(t, name+".readiness") {
		s.Readiness = target
	}
	return s
}

func (s PodSpec) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s main:%d", s.Name, s.QOS, s.MainDevices)
	if s.Init {
		fmt.Fprintf(&b, " init:%d", s.InitDevices)
	}
	if s.Sidecar {
		fmt.Fprintf(&b, " sidecar:%d", s.SidecarDevice)
	}
	if s.Liveness != nil {
		fmt.Fprintf(&b, " liveness:%d", s.FailureThreshold())
	}
	if s.Readiness != nil {
		b.WriteString(" readiness")
	}
	if s.Critical {
		b.WriteString(" system-node-critical")
	}
	return b.String()
}

// Need is how many free devices the pod needs to be admitted: the device
// manager allocates its containers in order, the init container's devices
// going back to the pod for reuse and the sidecar's staying held beside
// the app container's, so it needs the larger of the init container's
// request and the sidecar's and app container's sum.
func (s PodSpec) Need() int {
	return max(s.InitDevices, s.SidecarDevice+s.MainDevices)
}

// FailureThreshold is the liveness probe's failureThreshold as the
// kubelet takes it: 0 is the API's default, 3.
func (s PodSpec) FailureThreshold() int {
	if s.LivenessThreshold == 0 {
		return 3
	}
	return s.LivenessThreshold
}

// LivenessPath and ReadinessPath are the paths the pod's probes ask of
// the target.
func (s PodSpec) LivenessPath() string  { return "/" + s.Name + "/live" }
func (s PodSpec) ReadinessPath() string { return "/" + s.Name + "/ready" }

// The probes' settings: asked every second; one success makes a container
// ready again, and one failure makes it not ready, so that a step need not
// wait long for either. The liveness probe's failureThreshold is drawn.
const (
	probePeriod    = 1
	probeThreshold = 1
)

// HoldsDevices says whether any container of the pod asks for a device.
func (s PodSpec) HoldsDevices() bool {
	return s.MainDevices+s.InitDevices+s.SidecarDevice > 0
}

// LimitedContainers is how many containers count towards the pod cgroup's
// limits: the app container and the sidecar, which run together (the init
// container runs alone and asks no more than either).
func (s PodSpec) LimitedContainers() int {
	if s.Sidecar {
		return 2
	}
	return 1
}

// Pod is the static pod's manifest: busybox on the host network (there is
// no CNI), killed at once when it goes (busybox ignores SIGTERM).
func (s PodSpec) Pod() *corev1.Pod {
	zero := int64(0)
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: "default"},
		Spec: corev1.PodSpec{
			HostNetwork:                   true,
			TerminationGracePeriodSeconds: &zero,
			Containers:                    []corev1.Container{s.container("main", s.MainDevices, "/bin/sleep", "3600")},
		},
	}
	if s.Liveness != nil {
		pod.Spec.Containers[0].LivenessProbe = probe(s.Liveness, s.LivenessPath(), s.FailureThreshold())
	}
	if s.Readiness != nil {
		pod.Spec.Containers[0].ReadinessProbe = probe(s.Readiness, s.ReadinessPath(), probeThreshold)
	}
	if s.Init {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, s.container("init", s.InitDevices, "/bin/sh", "-c", "exit 0"))
	}
	if s.Sidecar {
		sidecar := s.container("sidecar", s.SidecarDevice, "/bin/sleep", "3600")
		sidecar.RestartPolicy = &always
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, sidecar)
	}
	if s.Critical {
		priority := criticalPriority
		pod.Spec.PriorityClassName = "system-node-critical"
		pod.Spec.Priority = &priority
	}
	return pod
}

func probe(target *Target, path string, failureThreshold int) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:     corev1.ProbeHandler{HTTPGet: target.Get(path)},
		PeriodSeconds:    probePeriod,
		TimeoutSeconds:   1,
		SuccessThreshold: probeThreshold,
		FailureThreshold: int32(failureThreshold),
	}
}

func (s PodSpec) container(name string, devices int, command ...string) corev1.Container {
	var res corev1.ResourceRequirements
	switch s.QOS {
	case corev1.PodQOSGuaranteed:
		res.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(containerCPU), corev1.ResourceMemory: resource.MustParse(containerMemory)}
		res.Requests = res.Limits.DeepCopy()
	case corev1.PodQOSBurstable:
		res.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(containerCPU), corev1.ResourceMemory: resource.MustParse(containerMemory)}
		res.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(halfCPU), corev1.ResourceMemory: resource.MustParse(halfMemory)}
	}
	if devices > 0 {
		// An extended resource is asked for with its limit; the request
		// must equal it.
		if res.Limits == nil {
			res.Limits, res.Requests = corev1.ResourceList{}, corev1.ResourceList{}
		}
		res.Limits[Resource] = *resource.NewQuantity(int64(devices), resource.DecimalSI)
		res.Requests[Resource] = *resource.NewQuantity(int64(devices), resource.DecimalSI)
	}
	return corev1.Container{
		Name:            name,
		Image:           realkubelet.BusyboxImageName,
		ImagePullPolicy: corev1.PullNever,
		Command:         command,
		Resources:       res,
	}
}
