// Package preemption is the reference model of the kubelet's critical pod
// admission: which pod requests what, which QoS class a pod is in, which
// resources a pod is short of on a node, which running pods a critical pod
// may preempt, the greedy choice of victims upstream makes
// (pkg/kubelet/preemption, v1.36), and a brute-force search for the best
// choice possible over small pod sets.
//
// It has its own small types and never imports core/. Greedy restates the
// algorithm of spec/preemption.md §4.2 as a plain sequential program over
// indices, so that the properties suite can compare it with
// core/preemption; BruteForce tries every subset of the preemptable pods to
// measure how far the greedy choice is from the fewest victims and from the
// least evicted requests.
package preemption
