// Package admission is the deterministic core of the kubelet's admission of
// one pod to a node (Kubernetes v1.36): device allocation through
// core/devicemanager (the topology manager's admit handler runs before the
// predicates), the resource fit against the node's allocatable
// (pkg/kubelet/lifecycle/predicate.go and the scheduler's noderesources
// fit), critical pod preemption through core/preemption, and the admit or
// reject decision with upstream's reason and message.
//
// A Node holds allocatable and the active pods, so successive arrivals are
// judged against the node as earlier decisions left it: admitted pods run,
// preempted pods are gone, and a victim whose kill failed stays, terminating,
// until the caller removes it.
//
// The core never performs anything. Node.Begin starts an Attempt; its Next
// step names the work the caller must do (the Allocate RPCs of one
// container, the kills of the chosen victims) and the caller reports the
// outcome with Allocated or Killed, until Next reports the Result. Drive
// runs that loop with callbacks for callers that act synchronously.
//
// Deliberate differences from upstream are listed in docs/deviations.md.
package admission
