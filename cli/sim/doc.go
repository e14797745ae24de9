// Package sim is `nodeproof sim`: the node simulation (package sim) run
// from a seed or a sweep of seeds, each seed's line and the total printed as
// simreport writes them, and the summary written as JSON with --json.
package sim
