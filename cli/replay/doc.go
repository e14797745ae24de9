// Package replay is `nodeproof replay`: it re-runs one case of a property
// suite, from the seed a report printed or from a fail file rapid wrote,
// and prints its shrunk steps, with the exit status of the run it repeats.
package replay
