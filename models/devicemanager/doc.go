// Package devicemanager is the reference model of the kubelet's device
// plugin manager: the same observable behaviour as core/devicemanager
// (capacity, allocatable, deleted resources, which devices each container
// gets, which error an allocation fails with, what survives a restart),
// written as plainly as possible with slices and linear scans, so a reader
// can check it against spec/devicemanager.md line by line.
//
// It never imports core/. The properties suite runs both on the same
// actions and compares them after every step.
package devicemanager
