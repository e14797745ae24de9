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
// # Layout
//
// The world, which outlives the kubelet process, is the sim's own record:
// pods and their phases (world.go, pods.go), the device plugins and what
// they granted (plugins.go), the runtime's images, containers and image
// filesystem (runtime.go), the cgroupfs, the API server's Ready condition
// and the checkpoint file. The kubelet (kubelet.go) is the glue around the
// cores, in upstream's order: admission with device allocation and
// preemption (admit.go), pod start, probes and termination (lifecycle.go),
// image GC passes (gc.go), and the restart that drops all of it and
// rebuilds it from the checkpoint, the runtime and the API server
// (restart.go). The invariants (invariants.go) compare the cores and the
// cgroupfs with the world's record, never with the glue's bookkeeping, so
// a glue bug is caught. Faults are documented in faults.go. A scripted node
// (scripted.go) drives the same world and kubelet from outside, one step at
// a time, with nothing drawn: realkubelet/scenario plays a real node's
// steps on it and compares what it predicts with what the node shows.
//
// Deliberate simplifications: a probe answers at the instant it runs; a
// pod whose containers run at a restart is admitted again at once, before
// the pod sources are ready, as upstream's HandlePodAdditions does, with
// any Allocate call it needs answered at once, while one admitted but not
// started yet is admitted again from scratch once the plugins had time to
// register again; a preemption kill stops the victim at once.
//
// The package is under the determinism contract of core/ (the dependency-rule
// test covers it): no wall clock, goroutines, locks, I/O or ambient
// randomness. It may import only the standard library, core/ and sim/.
package sim
