// Package prober is the rapid suite of core/prober, the kubelet's liveness,
// readiness and startup probe workers: pods and their containers come, run,
// exit and go, the kubelet restarts, and the clock moves to the workers' due
// times; every worker step runs on the core and on a twin manager and is
// held against the reference model in models/prober, the invariants and the
// documentation's promises (contract.go). The suite registers itself with
// properties as "prober". NewContractSuite runs the same actions on another
// prober manager (other.go: the conformance module's is upstream's) and holds
// it to the promises alone.
package prober
