// Package findings is `nodeproof findings`: it searches for each known
// kubelet finding (package findings) from its own seed or a sweep of
// seeds, prints each shrunk case with its replay line and writes the
// searches as JSON for the report.
package findings
