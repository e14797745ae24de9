// Package checkpoint mirrors the kubelet device manager's checkpoint types so
// tests can render them with the real go-spew and encoding/json.
//
// go-spew prints package and type names, and the kubelet's checksum covers
// that output, so the mirror must be a package named checkpoint with an
// unexported type named checkpointData, exactly like
// k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/checkpoint. It exists only
// to cross-check core/devicemanager/checkpoint, which renders the same bytes
// by hand.
package checkpoint
