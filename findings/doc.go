// Package findings searches for the known kubelet findings (verify.Findings)
// and holds what the searches found: per finding and seed, whether the
// suite's generated search broke the finding's contract property, how long
// it took and how short rapid shrank the case. `nodeproof findings` runs
// the searches and writes them as a File; `nodeproof report` reads that
// File back (Load) for its "Findings in the kubelet" section.
//
// A search is properties.SearchFinding: the finding's suite at its default
// budget with that one contract property enforced. A finding is
// reproduced when a search from its own seed (or, in a sweep, from at
// least one seed) found it and no search failed on another invariant, a
// failure no known finding explains.
package findings
