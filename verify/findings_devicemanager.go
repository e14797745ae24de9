package verify

// devicemanagerFindings are the known findings in the devicemanager subsystem.
var devicemanagerFindings = []Finding{}
