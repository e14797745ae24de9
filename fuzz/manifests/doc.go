// Package manifests fuzzes agent/kube's manifest decoder, the entry of pod
// manifests from outside. Its oracle: Decode never panics, fails only with
// an *kube.Error that names a document, returns pods that keep the rules it
// enforces, and a pod rendered back into a manifest decodes to itself.
package manifests
