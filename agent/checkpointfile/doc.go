// Package checkpointfile examines a device manager checkpoint file found on
// a node (kubelet_internal_checkpoint) the way the kubelet would read it:
// whether it loads (it decodes and its checksum verifies), whether its bytes
// are what the kubelet writes, and which invariants of the kubelet's
// allocation state its content breaks (a device held by two pods, an entry
// repeated, an allocate response that does not decode).
//
// core/devicemanager/checkpoint owns the format and its decoding; this
// package is the diagnosis of one file someone hands in, for `nodeproof
// checkpoint`, with its text and JSON forms rendered from one Report so
// that they cannot disagree. The caller reads the file.
package checkpointfile
