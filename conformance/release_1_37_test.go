//go:build kubelet1.37

package conformance

import (
	"k8s.io/component-base/featuregate"
	kubefeatures "k8s.io/kubernetes/pkg/features"
)

// jobGates: of the four gates v1.36 has, v1.37 keeps only JobManagedBy; the
// other three were GA and locked on (see release_upto_1_36_test.go).
func jobGates() []featuregate.Feature {
	return []featuregate.Feature{kubefeatures.JobManagedBy}
}

// releaseVersion is the release releases/v1.37.2.mod pins.
const releaseVersion = "v1.37.2"
