//go:build kubelet1.35

package conformance

// The kubelet API of v1.35 (-tags kubelet1.35) where v1.36 changed it;
// release_from_1_36_test.go is the other side of each.

import (
	"unsafe" // for go:linkname to the QoS container manager's unexported setMemoryQoS

	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
)

// memoryReservationPolicy stands for the kubelet configuration's
// memoryReservationPolicy, which v1.36 added ("KEP-2570: Add
// MemoryReservationPolicy to kubeletconfig for MemoryQoS feature",
// kubernetes#137584; tiered memory.min/memory.low by QoS class,
// kubernetes#137719). v1.35 has one Memory QoS behaviour: memory.min of the
// memory request for every pod with one.
type memoryReservationPolicy string

// tieredMemoryQoS says whether the release has the memory reservation
// policies (memory.low for Burstable pods) CG-F2 is about: v1.35 has not.
const tieredMemoryQoS = false

const (
	memoryPolicyNone   memoryReservationPolicy = "None"
	memoryPolicyTiered memoryReservationPolicy = "TieredReservation"
	// cgroup2MemoryLow is the cgroup v2 file v1.36 writes for a Burstable
	// pod (cm.Cgroup2MemoryLow there); v1.35 never writes it.
	cgroup2MemoryLow = "memory.low"
)

// resourceConfigForPod is cm.ResourceConfigForPod. v1.35 has no
// reservation policy: None is its Memory QoS off, TieredReservation on.
func resourceConfigForPod(p *corev1.Pod, enforceCPULimits bool, cpuPeriod uint64, enforceMemoryQoS bool, policy memoryReservationPolicy) *cm.ResourceConfig {
	return cm.ResourceConfigForPod(p, enforceCPULimits, cpuPeriod, enforceMemoryQoS && policy != memoryPolicyNone)
}

// qosNodeConfig is the node configuration of a QoS container manager with
// the cgroups per QoS class; v1.35's NodeConfig has no reservation policy.
func qosNodeConfig(memoryReservationPolicy) cm.NodeConfig {
	return cm.NodeConfig{CgroupsPerQOS: true}
}

// addAttributes are the admit attributes of a pod being added: v1.35's
// have no operation (v1.36 added lifecycle.PodAdmitAttributes.Operation for
// the allocation manager's resize admission).
func addAttributes(p *corev1.Pod, others []*corev1.Pod) *lifecycle.PodAdmitAttributes {
	return &lifecycle.PodAdmitAttributes{Pod: p, OtherPods: others}
}

// setMemoryQoS is v1.35.4's (*qosContainerManagerImpl).setMemoryQoS, whose
// signature (pkg/kubelet/cm/qos_container_manager_linux.go) has no logger:
// v1.36 added it with the cm package's contextual logging.
//
//go:linkname setMemoryQoS k8s.io/kubernetes/pkg/kubelet/cm.(*qosContainerManagerImpl).setMemoryQoS
func setMemoryQoS(m unsafe.Pointer, configs map[corev1.PodQOSClass]*cm.CgroupConfig)

// upstreamSetMemoryQoS: see release_from_1_36_test.go.
func upstreamSetMemoryQoS(m unsafe.Pointer, _ klog.Logger, configs map[corev1.PodQOSClass]*cm.CgroupConfig) {
	setMemoryQoS(m, configs)
}

// podLevelDependents are the feature gates that depend on
// PodLevelResources and are on by default: none in v1.35, where
// InPlacePodLevelResourcesVerticalScaling is alpha, off, and depends on
// NodeDeclaredFeatures, off too (v1.36 made it beta, on).
func podLevelDependents() []featuregate.Feature {
	return nil
}

// releaseVersion is the release releases/v1.35.4.mod pins.
const releaseVersion = "v1.35.4"
