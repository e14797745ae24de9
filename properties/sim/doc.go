// Package sim is the rapid suite of the node simulation (package sim at the
// module root, imported here as simulation): every core together on one
// node, with rapid answering the simulation's choices (rapidSource), so that
// rapid generates the world and shrinks it towards fewer events, first
// choices and no faults. Each step is the next event that changes
// something; every invariant of simulation.Invariants is checked after
// every event. The suite registers itself with properties as "sim".
package sim
