// Package admission fuzzes the node's admission and critical pod
// preemption: the fuzzer's bytes choose a node, the pods on it and the pods
// that arrive, and every decision must satisfy the invariants of
// properties/admissioncheck, the same checks the property suites run. It
// is a lean package of its own for the reason given in fuzz/checkpointdecode.
package admission
