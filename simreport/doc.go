// Package simreport sums up runs of the node simulation (package sim): the
// lines `nodeproof sim` prints for each seed and for a sweep, and the JSON
// summary it writes with --json, which is also the "sim" section of the
// invariant report and of a campaign's merge. It is pure, as sim is: the
// wall time of a run comes in as an argument, the caller writes the files.
package simreport
