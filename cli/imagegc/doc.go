// Package imagegc is `nodeproof imagegc`: what the kubelet's image garbage
// collection would remove now from a live CRI runtime, removing nothing.
// agent/cri makes the prediction (PredictGC); this package reads the flags
// and prints it as text or JSON.
package imagegc
