// Package speed measures how close each decoder fuzz target comes to the
// fuzzing engine's ceiling, and where the rest goes (`make fuzz-speed`,
// docs/commands/fuzzspeed.md). In one measurement it fuzzes, for the same
// time and with the same flags, the lean ceiling (the empty target of
// fuzz/ceiling with the target's argument types), the same-binary ceiling
// (the empty target of those types in the target's own package, so in the
// target's test binary, with its coverage counters), the target, the
// same-binary ceiling again, the lean ceiling again, and so on, so load that
// drifts during the measurement hits all three. Its table gives each
// target's executions per second and its ratio to each ceiling (the mean of
// the runs before and after it): against the lean ceiling, what issue #17
// asks of it; against the same-binary ceiling, what its own body costs, the
// rest being the engine's cost of the counters the binary links.
//
// Every run is `go test -run '^$' -fuzz '^Name$' -fuzztime T -parallel 1
// -fuzzminimizetime 0` with a fuzz cache of its own. One worker makes the
// ratio per core. Minimization is off because the engine reports a
// minimization's executions only when it ends, and drops them when the run
// stops first: one of those in a short run would count seconds of
// executions as none. The fresh cache makes every run start from the
// checked-in seed corpus, and keeps the unminimized inputs out of the
// cache `make fuzz` uses.
//
// The package is a library so that the command (cli/fuzzspeed, built as
// cmd/fuzzspeed) only reads flags; the go command and the ELF reader it
// drives are behind Tools, which tests replace.
package speed
