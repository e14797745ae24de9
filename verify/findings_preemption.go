package verify

// preemptionFindings are the known findings in the preemption subsystem.
var preemptionFindings = []Finding{}
