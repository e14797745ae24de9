package prober_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/core/prober"
	"github.com/stretchr/testify/require"
)

// BenchmarkWorkerSteps: 600 workers (upstream's stress size; here 300
// containers with a liveness and a readiness probe) stepped in NextDue
// order for 100 s of probe time (10 periods each), every probe answered at
// once, a failure in every 7th answer. steps/s is the figure BENCHMARKS.md
// records: doProbe steps (a Step with its ProbeDone, and the NextDue that
// picked it, a scan of all workers) per second.
func BenchmarkWorkerSteps(b *testing.B) {
	const pods = 300
	statuses := map[string]*prober.PodStatus{}
	var podList []prober.Pod
	for i := range pods {
		uid := fmt.Sprintf("pod-%03d", i)
		podList = append(podList, prober.Pod{UID: uid, Containers: []prober.Container{{Name: "c", LivenessProbe: execProbe(thresholds(1, 3)), ReadinessProbe: execProbe()}}})
		statuses[uid] = &prober.PodStatus{Phase: prober.PodRunning, ContainerStatuses: []prober.ContainerStatus{{
			Name: "c", ContainerID: "containerd://" + uid, State: prober.ContainerState{Running: &prober.Running{StartedAt: later}}, Started: boolPtr(true)}}}
	}
	steps := 0
	for b.Loop() {
		m, err := prober.NewManager(prober.Options{KubeletStart: kubeletStart})
		require.NoError(b, err)
		for i, p := range podList {
			_, err := m.AddPod(later.Add(time.Duration(i)*time.Millisecond), p, nil)
			require.NoError(b, err)
		}
		end := later.Add(100 * time.Second)
		for n := 0; ; n++ {
			k, due, ok := m.NextDue()
			if !ok || due.After(end) {
				break
			}
			step, err := m.Step(k, due, statuses[k.PodUID])
			require.NoError(b, err)
			if step.Kind == prober.StepProbe {
				out := success
				if n%7 == 0 {
					out = failure
				}
				_, err = m.ProbeDone(k, due, out)
				require.NoError(b, err)
			}
			steps++
		}
	}
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
}
