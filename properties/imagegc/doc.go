// Package imagegc is the rapid suite of core/imagegc, the kubelet's image
// garbage collection: images are pulled and removed, containers start, stop
// and go, the clock ticks through GC periods and the kubelet restarts; every
// detection and collection pass runs on the core and is held against the
// reference model in models/imagegc, the invariants and the documentation's
// promises. The suite registers itself with properties as "imagegc".
package imagegc
