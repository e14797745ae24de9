// Package devicemanager is the deterministic core of the kubelet's device
// plugin manager (pkg/kubelet/cm/devicemanager, Kubernetes v1.36): plugin
// registration and health, node capacity, device allocation for init,
// sidecar and app containers, garbage collection of terminated pods, and the
// kubelet_internal_checkpoint state.
//
// The core does no I/O and never blocks. Where upstream makes a decision
// around an RPC, the core splits it: PlanContainer reserves devices, the
// caller (agent/deviceplugin, or a test) calls the plugin's Allocate, then
// Commit records the plugin's answer or Abort releases the reservation. Time
// is an argument. Where upstream iterates a Go map, the core iterates in
// sorted order, and where upstream picks devices from a set, the core takes
// reusable devices first, then the plugin's preferred devices in the
// plugin's order, then the remaining healthy devices in ascending ID order.
//
// Deliberate differences from upstream are listed in docs/deviations.md.
// NUMA topology alignment and DRA are out of scope: devices keep their NUMA
// nodes for the checkpoint, but no topology hint is applied.
package devicemanager
