package verify

// cgroupsFindings are the known findings in the cgroups subsystem.
var cgroupsFindings = []Finding{}
