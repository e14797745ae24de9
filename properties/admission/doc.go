// Package admission is the rapid suite of core/admission: a node with a GPU
// device plugin, pods arriving one after the other (critical or not,
// sometimes failing another predicate, sometimes with a failing Allocate
// RPC or kills), pods leaving, and terminating victims finally going; a
// twin node gets the same arrivals and answers. It drives the preemption
// code through a node where package properties/preemption calls it
// directly. The suite registers itself with properties as "admission"; its
// invariants, case and generators live in properties/admissioncheck.
package admission
