//go:build kubelet1.38

package conformance

import "k8s.io/component-base/featuregate"

// jobGates: v1.38 removed JobManagedBy, the last Job gate, GA and locked on
// since v1.35.
func jobGates() []featuregate.Feature {
	return nil
}

// releaseVersion is the release releases/v1.38.0-beta.0.mod pins.
const releaseVersion = "v1.38.0-beta.0"
