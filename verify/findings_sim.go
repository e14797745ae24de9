package verify

// simFindings are the known findings in the sim subsystem.
var simFindings = []Finding{}
