// Package deviceagent is the sequential model the linearizability checks
// hold the device plugin agent to: what each operation a concurrent client
// can make (a plugin's device list changing, a plugin crashing or
// registering again, a pod admitted or removed, a capacity read) does to the
// node, and what it answers, when operations happen one at a time.
//
// It keeps only what a client can observe deterministically: capacity and
// allocatable per resource, and whether an admission succeeds or which kind
// of error refuses it. Which devices a pod holds is tracked because it
// decides later admissions; the model chooses the lowest free IDs, as the
// core does for plugins without a preferred allocation.
//
// States are values: Next never changes the state it is given, as porcupine
// requires. The package imports only the standard library and never core/.
package deviceagent
