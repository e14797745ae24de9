//go:build !kubelet1.35 && !kubelet1.37 && !kubelet1.38

package conformance

import (
	"k8s.io/component-base/featuregate"
	kubefeatures "k8s.io/kubernetes/pkg/features"
)

// podLevelDependents are the feature gates that depend on PodLevelResources
// and are on by default. None of the functions compared here reads
// InPlacePodLevelResourcesVerticalScaling; v1.37 adds
// PodLevelResourcesFixDefaulting and PodLevelResourcesFixKubeletQOSClass
// (release_from_1_37_test.go), v1.35 has none (release_1_35_test.go).
func podLevelDependents() []featuregate.Feature {
	return []featuregate.Feature{kubefeatures.InPlacePodLevelResourcesVerticalScaling}
}

// releaseVersion is the release go.mod pins, the one nodeproof models.
const releaseVersion = "v1.36.3"
