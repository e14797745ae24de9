// Package admit is `nodeproof admit -f FILE`: it plays a node file
// through the kubelet's admission (agent/kube.PlayNode) and prints each
// decision, as text or as a JSON array.
package admit
