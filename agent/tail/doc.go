// Package tail keeps the end of a child process's output: a process
// nodeproof starts (a device plugin under plugin-check --exec, a fuzz
// binary of a campaign) may write without bound, and only its last words
// explain why it stopped.
package tail
