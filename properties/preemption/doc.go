// Package preemption is the rapid suite of core/preemption, the kubelet's
// critical-pod admission preemption, called directly: pods come and go, and
// pods (critical or not) arrive with generated failure reasons, including
// non-resource ones and amounts no fit would produce, so that every branch
// of HandleAdmissionFailure is reached. The suite registers itself with
// properties as "preemption"; its invariants, case and generators live in
// properties/admissioncheck, which the admission suite and the fuzz targets
// share.
package preemption
