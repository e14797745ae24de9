// Package score turns the JSON report of gremlins (go-gremlins/gremlins), the
// mutation tool `make mutation` runs over core/, into nodeproof's mutation
// score, and holds docs/mutation.md to account for every surviving mutant.
//
// gremlins reports each mutant's status; its own "efficacy" is killed over
// killed plus lived. nodeproof's score is the same ratio with the survivors
// docs/mutation.md shows to be equivalent (no test can tell them from the
// original) left out, since no test could kill them; not-covered and
// timed-out mutants are counted and shown apart, never folded into it.
//
// The survivors table is the claim a reviewer reads, so a survivor it does
// not list, a row that says "fixed" for a mutant that still lives, and a
// row about a mutant that no longer lives are all reported: the table stays
// true only if a stale one fails the run.
package score
