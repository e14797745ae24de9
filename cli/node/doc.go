// Package node is `nodeproof node`: generated scenarios played against the
// real kubelet (package realkubelet/scenario) from a seed or a sweep of
// seeds, each scenario's steps, the checks and any violation's shrunk steps
// and replay lines printed, and the sweep's summary written as JSON with
// --json for nodeproof report's "Real kubelet" section.
package node
