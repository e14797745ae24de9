// Package sweep is the summary of a sweep of generated scenarios against
// the real kubelet (realkubelet/scenario), as nodeproof node --json writes
// it and nodeproof report reads it (report/node.json). It is a package of
// its own, standard library only, so that the report reads the file
// without linking the harness.
package sweep
