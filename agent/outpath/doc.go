// Package outpath checks an output path before the work that writes to it:
// every command that writes a results file or a report directory proves
// the path writable first, so a bad path fails at once rather than after
// minutes of work, and leaves no part of itself behind when it fails.
package outpath
