// Package sim simulates one whole node: a kubelet composed of the five
// deterministic cores (core/admission with core/preemption, core/devicemanager,
// core/cgroups, core/prober and core/imagegc), with simulated device plugins,
// a simulated container runtime (images, pulls, containers that start, exit
// and restart, an image filesystem that fills) and simulated probe targets.
//
// Everything runs in one thread on a virtual clock from an event queue, and
// every choice the world makes (a pod arriving, a plugin crashing, a probe
// timing out, the kubelet restarting between an Allocate answer and its
// checkpoint write) is drawn from a Source. A Source built from a seed makes
// a run a pure function of (Config, seed): the same seed replays the same
// events, byte for byte. The properties suite "sim" drives the same node from
// rapid's draws instead, so that a failure shrinks to a handful of events.
//
// After every event, Check evaluates the cross-subsystem invariants
// (Invariants): the ones that hold only when the subsystems agree with each
// other, such as "the devices held are exactly those of the admitted,
// non-terminated pods" across plugin crashes and kubelet restarts.
//
// The package is under the determinism contract of core/ (the dependency-rule
// test covers it): no wall clock, goroutines, locks, I/O or ambient
// randomness. It may import only the standard library, core/ and sim/.
package sim
