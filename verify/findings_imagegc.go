package verify

// imagegcFindings are the known findings in the imagegc subsystem.
var imagegcFindings = []Finding{}
