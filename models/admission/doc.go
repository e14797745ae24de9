// Package admission is the reference model of the kubelet's resource-fit
// admission (Kubernetes v1.36, pkg/kubelet/lifecycle's predicate admit
// handler and the scheduler's noderesources fit it calls): for a node's
// allocatable, the pods it runs and an arriving pod, Node.Admit decides
// admit or reject, and for a rejected pod gives the status reason
// ("OutOfcpu", "OutOfpods", "OutOfexample.com/gpu"), upstream's message
// ("Node didn't have enough resource: cpu, requested: 1001, used: 3000,
// capacity: 4000") and every resource the node lacks.
//
// It has its own small types and never imports core/. It models a node
// without device plugins whose pods are not critical, so a rejected pod is
// rejected (core/admission then hands the shortfalls to critical pod
// preemption, which models/preemption restates), and it takes each pod by
// what it requests of the node: the effective requests of its containers,
// init containers, pod-level resources and overhead are core/pod's to work
// out, and models/preemption restates them. Where core/admission sums the
// running pods' requests anew for each resource it checks and keeps its
// pods as entries of a node, the model sums every resource once and keeps
// a plain list, so a shared mistake is unlikely.
package admission
