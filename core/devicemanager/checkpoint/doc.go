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
// Reading follows the kubelet rather than the encoder: Read and Decode parse
// with encoding/json, as the kubelet's UnmarshalCheckpoint does, and Decode
// verifies the checksum over the decoded content, as VerifyChecksum does. So
// they accept what the kubelet accepts, reindented or reordered files
// included; File.Canonical tells whether the bytes are the ones Encode (and
// the kubelet) would write for that content.
package checkpoint
