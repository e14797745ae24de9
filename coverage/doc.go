// Package coverage lays out the report's coverage matrix (one row per
// subsystem of the inventory, one cell per layer of verification) and the
// list of what the report did not run, with the command that runs each.
//
// Build derives both from one reading of the results: a cell that says
// "not run" names its entries of the list, a section the report lacks has
// its entry, and nothing else does. The renderers word every entry with
// NotRun.Words and the verdict counts the list, so the count, the list and
// the page cannot disagree.
package coverage
