// Package checkpoint is the kubelet device manager's checkpoint file
// (kubelet_internal_checkpoint) as pure functions from data to bytes and back.
//
// The file must stay byte-compatible with the kubelet of Kubernetes v1.36 in
// both directions: a node upgraded to or from nodeproof's agent has to read
// the other's file, and the checksum in it has to verify. The kubelet
// computes that checksum as FNV-32a over a go-spew rendering of the data and
// writes the file with encoding/json. This package reproduces both renderings
// by hand, with the standard library only, because core/ may not import
// go-spew and because the agent writes a checkpoint on many state changes,
// where reflection-based encoding would dominate the cost. The fuzz package
// cross-checks both renderings against go-spew and encoding/json.
//
// Decode is stricter than the kubelet: it accepts only the exact bytes Encode
// produces for the decoded data, so every accepted file has one meaning and
// re-encodes to itself.
package checkpoint
