package admissioncheck

import "github.com/nodeproof/nodeproof/verify/cite"

// Where the preemption and admission invariants come from: the v1.36.3
// files of the kubelet's admit handlers, critical pod preemption and the
// scheduler's resource fit it reuses, and the seed article on preemption.
const (
	kubeletMain       = "pkg/kubelet/kubelet.go"
	predicateHandler  = "pkg/kubelet/lifecycle/predicate.go"
	kubeletPreemption = "pkg/kubelet/preemption/preemption.go"
	podUpdate         = "pkg/kubelet/types/pod_update.go"
	deviceManager     = "pkg/kubelet/cm/devicemanager/manager.go"
	cmAdmission       = "pkg/kubelet/cm/admission/errors.go"
	schedulerFit      = "pkg/scheduler/framework/plugins/noderesources/fit.go"

	prSeedPerClass = "Computing the pods to preempt in each QoS class"
)

func preemptionSeed(section string) cite.Source {
	return cite.Seed("the kubelet's critical pod preemption", section)
}
