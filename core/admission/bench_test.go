package admission_test

import (
	"strconv"
	"testing"

	"github.com/nodeproof/nodeproof/core/admission"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
	"github.com/stretchr/testify/require"
)

// BenchmarkAdmit110Pods measures admission decisions on a full node of the
// kubelet's default maxPods (110): each iteration admits a critical pod,
// which preempts a victim, then removes it and admits a pod shaped like the
// victim in its place, so the node looks the same at every iteration. The
// decisions/s metric counts both admissions.
func BenchmarkAdmit110Pods(b *testing.B) {
	n, err := admission.NewNode(pod.ResourceList{pod.Pods: 110, pod.CPU: 110_000, pod.Memory: 440 << 30, pod.EphemeralStorage: 1 << 40}, nil)
	require.NoError(b, err)
	for i := 0; i < 110; i++ {
		var p *pod.Pod
		switch i % 3 {
		case 0:
			p = mkPod("", nil, nil)
		case 1:
			p = mkPod("", pod.ResourceList{pod.CPU: int64(100 + i*7), pod.Memory: int64(64+i) << 20}, nil)
		default:
			l := pod.ResourceList{pod.CPU: int64(200 + i*5), pod.Memory: int64(128+i) << 20}
			p = mkPod("", l, l)
		}
		p.UID = "running-" + strconv.Itoa(i)
		require.NoError(b, n.AddRunning(p))
	}
	kill := func(preemption.Eviction) error { return nil }
	decisions := 0
	i := 0
	for b.Loop() {
		i++
		c := critical(mkPod("critical-"+strconv.Itoa(i), pod.ResourceList{pod.CPU: 500, pod.Memory: 256 << 20}, nil))
		a, err := n.Begin(c, admission.Options{})
		require.NoError(b, err)
		r, err := admission.Drive(a, nil, kill)
		require.NoError(b, err, "critical pod: %+v %v", r, err)
		require.True(b, r.Admitted, "critical pod: %+v %v", r, err)
		require.NotEmpty(b, r.Evicted, "critical pod: %+v %v", r, err)
		require.NoError(b, n.Remove(c.UID))
		for _, v := range r.Evicted {
			back := *v
			back.UID = v.UID + "+"
			a, err := n.Begin(&back, admission.Options{})
			require.NoError(b, err)
			r, err := admission.Drive(a, nil, kill)
			require.NoError(b, err, "replacement: %+v %v", r, err)
			require.True(b, r.Admitted, "replacement: %+v %v", r, err)
			decisions++
		}
		decisions++
	}
	b.ReportMetric(float64(decisions)/b.Elapsed().Seconds(), "decisions/s")
}
