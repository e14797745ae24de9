// Package httpprobe fuzzes agent/probe's handling of an HTTP probe's
// answer: a raw TCP server on loopback writes a fuzzed status line, header
// block and body to each probe connection, and the probe must never panic,
// must give one of upstream's verdicts consistent with the status code it
// was sent, and must never return more than 10 KiB of body. It is a lean
// package of its own for the reason given in fuzz/doc.go.
package httpprobe
