// Package devicemanager is the rapid suite of core/devicemanager, the
// kubelet's device plugin manager: plugins register, report devices,
// disconnect and come back, pods are admitted, scheduled, readmitted and
// terminated, the clock passes the grace period and the kubelet restarts;
// every step runs on the core, on a twin manager and on the reference model
// in models/devicemanager, and the checks after it read the holdings once
// and hold them to every invariant (checks.go) and to the documentation's
// promises (contract.go). The suite registers itself with properties as
// "devicemanager".
package devicemanager
