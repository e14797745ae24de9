package verify

// ExplainedIn lists the properties of suite that a known finding is about,
// in the findings' order: a run of the suite (the node simulation's, say)
// counts their breaches, the known broken promises of upstream's kubelet,
// and goes on.
func ExplainedIn(suite string) []string {
	var ids []string
	for _, f := range Findings() {
		if f.Suite == suite {
			ids = append(ids, f.Property)
		}
	}
	return ids
}
