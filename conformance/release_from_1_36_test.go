//go:build !kubelet1.35

package conformance

// The kubelet API of v1.36 and later where it differs from v1.35's;
// release_1_35_test.go has each function's v1.35 side and says what
// changed.

import (
	"unsafe" // for go:linkname to the QoS container manager's unexported setMemoryQoS

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
)

type memoryReservationPolicy = kubeletconfig.MemoryReservationPolicy

const (
	memoryPolicyNone   = kubeletconfig.NoneMemoryReservationPolicy
	memoryPolicyTiered = kubeletconfig.TieredReservationMemoryReservationPolicy
	cgroup2MemoryLow   = cm.Cgroup2MemoryLow
)

func resourceConfigForPod(p *corev1.Pod, enforceCPULimits bool, cpuPeriod uint64, enforceMemoryQoS bool, policy memoryReservationPolicy) *cm.ResourceConfig {
	return cm.ResourceConfigForPod(p, enforceCPULimits, cpuPeriod, enforceMemoryQoS, policy)
}

func qosNodeConfig(policy memoryReservationPolicy) cm.NodeConfig {
	return cm.NodeConfig{CgroupsPerQOS: true, MemoryReservationPolicy: policy}
}

func addAttributes(p *corev1.Pod, others []*corev1.Pod) *lifecycle.PodAdmitAttributes {
	return &lifecycle.PodAdmitAttributes{Pod: p, OtherPods: others, Operation: lifecycle.AddOperation}
}

// upstreamSetMemoryQoS is the QoS container manager's Memory QoS step of
// UpdateCgroups, which upstream runs only on a cgroup v2 host with the
// MemoryQoS gate on; calling it directly makes the test independent of the
// host's cgroup version. m is the *qosContainerManagerImpl. The signature
// is the one in v1.36.3's, v1.37.2's and v1.38.0-beta.0's
// pkg/kubelet/cm/qos_container_manager_linux.go.
//
//go:linkname upstreamSetMemoryQoS k8s.io/kubernetes/pkg/kubelet/cm.(*qosContainerManagerImpl).setMemoryQoS
func upstreamSetMemoryQoS(m unsafe.Pointer, logger klog.Logger, configs map[corev1.PodQOSClass]*cm.CgroupConfig)

// tieredMemoryQoS says whether the release has the memory reservation
// policies (memory.low for Burstable pods) CG-F2 is about: from v1.36.
const tieredMemoryQoS = true
