// Package mutants is `nodeproof mutants`: it applies each seeded bug in
// mutants/ to a scratch copy of the module, runs the tests its header
// names (package mutants) and fails unless every one is killed, writing
// the kill matrix the report shows.
package mutants
