// Package seedrange reads the inclusive ranges of seeds A..B that
// nodeproof's sweeps take: sim --seeds, findings --seeds and a campaign
// plan's seeds. One reader, so that every sweep accepts the same ranges and
// refuses a bad one with the same words. It is pure: no I/O, usable from any
// layer.
package seedrange
