// Package preemption is the deterministic core of the kubelet's critical pod
// admission preemption (pkg/kubelet/preemption, Kubernetes v1.36): when the
// node's resource fit turns a critical pod down only for insufficient
// resources, running pods of lower importance are chosen and killed so that
// the critical pod is admitted after all.
//
// The core decides and never performs. HandleAdmissionFailure returns a
// Decision naming the pods to kill, in upstream's order; the caller kills
// them (the kubelet's pod workers, agent/, or a test) and reports each kill's
// outcome to Decision.Complete. As upstream since PR #78493 (#78405), a kill
// that fails is skipped: the critical pod is admitted anyway and the pod that
// could not be killed stays on the node, terminating, until a retry succeeds.
//
// Pod classification (static, mirror, critical, QoS class) and the request
// arithmetic reuse core/pod. Every list is walked in its given order, so the
// same inputs always give the same victims; upstream has no map iteration on
// this path. Upstream's error strings are reproduced exactly.
package preemption
