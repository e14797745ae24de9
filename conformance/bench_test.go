package conformance

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	upstreamcp "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/checkpoint"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	"github.com/nodeproof/nodeproof/core/pod"
)

// benchInputs is how many generated inputs each benchmark cycles through,
// the same ones for both sides; conversion and defaulting happen before the
// timer starts, so each side is timed on its function alone.
const benchInputs = 256

type benchPods struct {
	ours   []*pod.Pod
	theirs []*corev1.Pod
}

func makeBenchPods() benchPods {
	var bp benchPods
	g := genPod()
	for i := 0; i < benchInputs; i++ {
		p := g.Example(i)
		bp.ours = append(bp.ours, ourPod(p))
		bp.theirs = append(bp.theirs, upstreamPod(p))
	}
	return bp
}

func BenchmarkQOS(b *testing.B) {
	bp := makeBenchPods()
	b.Run("nodeproof", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_ = bp.ours[i%benchInputs].ComputeQOS()
		}
	})
	b.Run("upstream", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_ = qos.ComputePodQOS(bp.theirs[i%benchInputs])
		}
	})
}

func BenchmarkEffectiveRequests(b *testing.B) {
	bp := makeBenchPods()
	b.Run("nodeproof", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_ = bp.ours[i%benchInputs].EffectiveRequests(pod.Options{})
		}
	})
	b.Run("upstream", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_ = resourcehelper.PodRequests(bp.theirs[i%benchInputs], resourcehelper.PodResourcesOptions{})
		}
	})
}

func BenchmarkResourceConfigForPod(b *testing.B) {
	bp := makeBenchPods()
	opts := cgroups.PodOptions{EnforceCPULimits: true, CPUPeriodUS: 100_000, CustomPeriodGate: true, PodLevelResources: true}
	b.Run("nodeproof", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := cgroups.ResourceConfigForPod(bp.ours[i%benchInputs], opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("upstream", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_ = resourceConfigForPod(bp.theirs[i%benchInputs], true, 100_000, false, memoryPolicyNone)
		}
	})
}

func BenchmarkMilliCPUToShares(b *testing.B) {
	in := make([]int64, benchInputs)
	for i := range in {
		in[i] = genMilliCPU().Example(i)
	}
	b.Run("nodeproof", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_ = cgroups.MilliCPUToShares(in[i%benchInputs])
		}
	})
	b.Run("upstream", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_ = cm.MilliCPUToShares(in[i%benchInputs])
		}
	})
}

func BenchmarkHugePageLimits(b *testing.B) {
	var ours []pod.ResourceList
	var theirs []corev1.ResourceList
	for i := 0; i < benchInputs; i++ {
		l := genHugePageList().Example(i)
		ours, theirs = append(ours, coreList(l)), append(theirs, l)
	}
	b.Run("nodeproof", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := cgroups.HugePageLimits(ours[i%benchInputs]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("upstream", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_ = cm.HugePageLimits(theirs[i%benchInputs])
		}
	})
}

func BenchmarkCheckpointEncode(b *testing.B) {
	var ours []checkpoint.Data
	var theirs []upstreamcp.DeviceManagerCheckpoint
	for i := 0; i < benchInputs; i++ {
		d := genCheckpoint().Example(i)
		ours, theirs = append(ours, d), append(theirs, toUpstream(d))
	}
	b.Run("nodeproof", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := checkpoint.Encode(ours[i%benchInputs]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("upstream", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := theirs[i%benchInputs].MarshalCheckpoint(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRegistrationScenario times one generated registration scenario
// end to end with nodeproof's test plugin: a fresh kubelet side, two plugins
// registering over real sockets, the steps, the checkpoint read and the
// teardown. Most of it is waiting on sockets and on the kernel (closing an
// inotify instance), which both sides share.
func BenchmarkRegistrationScenario(b *testing.B) {
	const scenarios = 16
	var in []regScenario
	g := genScenario()
	for i := range scenarios {
		in = append(in, g.Example(i))
	}
	b.Run("nodeproof", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_ = runScenario(in[i%scenarios], "agent", startAgent, startTestPlugin)
		}
	})
	b.Run("upstream", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_ = runScenario(in[i%scenarios], "manager", startUpstream, startTestPlugin)
		}
	})
}
