// Package deviceagent is the sequential model the linearizability checks
// hold the device plugin agent to: what each operation a concurrent client
// can make (a plugin's device list changing, a plugin crashing or
// registering again, a pod admitted or removed, a capacity read) does to the
// node, and what it answers, when operations happen one at a time.
//
// It keeps what a client can observe: capacity and allocatable per
// resource, whether an admission succeeds or which kind of error refuses
// it, and which devices each admitted pod got. An admission is accepted only
// when its devices are healthy, held by no other pod or reservation, and as
// many as it asked for; the pod then holds exactly those, so a device handed
// out twice is illegal at once. Where no client saw the devices (the
// reservation of an admission whose Allocate failed) the model branches over
// every free choice and lets later operations rule choices out.
//
// An update whose plugin crashed right after it was sent is pending: it has
// no effect until a later step on its resource applies it, and the crash
// applies or drops it. It cannot take effect after the crash.
//
// States are values: Next never changes the state it is given, as porcupine
// requires. The package imports only the standard library and never core/.
package deviceagent
