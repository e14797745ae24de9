package kube

import (
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
)

// The bounds of one quantity in a manifest: the tightest of those the node
// subsystems' cores accept (core/cgroups bounds cpu to 2^32 millicores and
// everything else to 2^46, core/preemption and core/admission every
// quantity to 2^46), so that every command reading a manifest refuses the
// same quantities. Upstream has no such bound; these keep the cores' sums
// inside int64.
var (
	maxManifestMilliCPU = min(int64(cgroups.MaxMilliCPU), preemption.MaxQuantity)
	maxManifestQuantity = min(int64(cgroups.MaxQuantity), preemption.MaxQuantity)
)

// QuantityBound is the largest quantity of a resource Decode accepts, in
// the resource's own unit: "4294967296m" of cpu, "64Ti" of memory,
// ephemeral storage and hugepages, a count of anything else.
func QuantityBound(name pod.ResourceName) resource.Quantity {
	switch {
	case name == pod.CPU:
		return *resource.NewMilliQuantity(maxManifestMilliCPU, resource.DecimalSI)
	case name == pod.Memory || name == pod.EphemeralStorage || pod.IsHugePages(name):
		return *resource.NewQuantity(maxManifestQuantity, resource.BinarySI)
	}
	return *resource.NewQuantity(maxManifestQuantity, resource.DecimalSI)
}
