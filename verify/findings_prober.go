package verify

// proberFindings are the known findings in the prober subsystem.
var proberFindings = []Finding{}
