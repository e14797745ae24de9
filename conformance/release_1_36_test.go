//go:build !kubelet1.35 && !kubelet1.37 && !kubelet1.38

package conformance

// releaseVersion is the release go.mod pins, the one nodeproof models.
const releaseVersion = "v1.36.3"
