// Package scenario plays generated scenarios against one real kubelet
// (package realkubelet): rapid draws the steps (static pods coming and
// going, with devices on app, init and sidecar containers, critical pods
// and each QoS class, some with liveness and readiness probes; kill -9 of the kubelet;
// a crash and restart of the device plugin; a device's health flipping; a
// container killed through CRI; a probe target's answer flipping), so
// that a failing scenario shrinks to a few steps and replays from its seed
// or fail file. The probes ask an HTTP server of the scenario's own
// (Target), which counts every answer it gives.
//
// After every step the scenario waits, with a bound, until the node has
// settled (each pod running or refused, each removed pod gone, each
// container instance the step killed replaced, the plugin's healthy
// devices listed), then observes it from outside, through
// the kubelet's real interfaces only (/pods, the PodResources API, the
// device manager's checkpoint, the cgroupfs), and evaluates the properties
// in Checks on what it saw: the promises of the Kubernetes documentation a
// node can show, and the agreements between what the kubelet says in
// different places. Each property is a verify.Check, counted checked and
// applied, so a sweep says how often each was put to the test.
//
// The same steps are played on nodeproof's simulated node too (a
// sim.Scripted, predict.go), and Predicts compares what it predicts with
// what the real node shows; a divergence is either one of the harness's
// known limits, by a stated rule, or a fidelity bug of the simulation.
package scenario
