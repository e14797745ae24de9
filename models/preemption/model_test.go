package preemption

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func p32(v int32) *int32 { return &v }

func burstable(name string, cpu, mem int64) Pod {
	return Pod{Name: name, App: []Container{{Requests: map[string]int64{CPU: cpu, Memory: mem}}}}
}

func guaranteed(name string, cpu, mem int64) Pod {
	l := map[string]int64{CPU: cpu, Memory: mem}
	return Pod{Name: name, App: []Container{{Requests: l, Limits: l}}}
}

// TestGreedyUpstreamExamples checks the model on upstream's
// TestGetPodsToPreempt cases that need more than one class.
func TestGreedyUpstreamExamples(t *testing.T) {
	const mi = 1 << 20
	critical := Pod{Name: "cc", Priority: p32(criticalPriority)}
	running := []Pod{
		{Name: "bestEffort", App: []Container{{}}},
		burstable("burstable", 100, 100*mi),
		burstable("high-request-burstable", 300, 300*mi),
		guaranteed("guaranteed", 100, 100*mi),
		guaranteed("high-request-guaranteed", 300, 300*mi),
	}
	tests := []struct {
		needs []Need
		want  []string
	}{
		{[]Need{{CPU, 350}, {Memory, 350 * mi}}, []string{"high-request-burstable", "burstable"}},
		{[]Need{{Memory, 550 * mi}}, []string{"high-request-burstable", "high-request-guaranteed"}},
		{[]Need{{Pods, 1}}, []string{"bestEffort"}},
	}
	for _, tc := range tests {
		r := Greedy(critical, running, tc.needs)
		var got []string
		for _, i := range r.Victims {
			got = append(got, running[i].Name)
		}
		assert.Empty(t, r.Err, "needs %v", tc.needs)
		assert.Equal(t, tc.want, got, "needs %v", tc.needs)
	}
	r := Greedy(critical, running[:2], []Need{{CPU, 200}, {Pods, 3}})
	assert.Equal(t, "preemption: error finding a set of pods to preempt: no set of running pods found to reclaim resources: [(res: cpu, q: 100), (res: pods, q: 1), ]", r.Err)
}

// TestBruteForce checks the optimum on a case where the greedy choice is
// not the fewest victims: the greedy first takes a, the pod closest to both
// needs, and then needs b and c as well, which alone would have sufficed.
func TestBruteForce(t *testing.T) {
	critical := Pod{Name: "cc", Priority: p32(criticalPriority)}
	running := []Pod{burstable("a", 90, 90), burstable("b", 100, 0), burstable("c", 0, 100)}
	needs := []Need{{CPU, 100}, {Memory, 100}}
	g := Greedy(critical, running, needs)
	require.Equal(t, "[a b c]", Names(running, g.Victims), "greedy")
	opt := BruteForce(critical, running, needs)
	require.True(t, opt.Searched, "optimum = %+v, want two victims (b, c) at cost 2", opt)
	require.True(t, opt.Feasible, "optimum = %+v, want two victims (b, c) at cost 2", opt)
	assert.Equal(t, 2, opt.FewestVictims, "optimum = %+v, want two victims (b, c) at cost 2", opt)
	assert.Equal(t, float64(2), opt.LeastCost, "optimum = %+v, want two victims (b, c) at cost 2", opt)
	var victims []Pod
	for _, i := range g.Victims {
		victims = append(victims, running[i])
	}
	assert.Equal(t, 3.8, Cost(needs, victims), "greedy cost")
	opt = BruteForce(critical, running, []Need{{CPU, 1000}})
	require.True(t, opt.Searched, "optimum = %+v, want infeasible", opt)
	assert.False(t, opt.Feasible, "optimum = %+v, want infeasible", opt)
}

// TestQoSAndRequests checks the model's own classification and request
// rules on the cases that differ between the fit and preemption.
func TestQoSAndRequests(t *testing.T) {
	side := Container{Requests: map[string]int64{CPU: 100}, Sidecar: true}
	p := Pod{Init: []Container{side, {Requests: map[string]int64{CPU: 300}}}, App: []Container{{Requests: map[string]int64{CPU: 50}}},
		Overhead: map[string]int64{CPU: 10, Memory: 7}}
	assert.Equal(t, int64(410), FitRequest(p, CPU), "FitRequest cpu")
	assert.Equal(t, int64(0), PreemptionRequest(p, Memory), "PreemptionRequest memory")
	assert.Equal(t, int64(7), FitRequest(p, Memory), "FitRequest memory")
	level := Pod{Level: &PodLevel{Limits: map[string]int64{CPU: 100, Memory: 100}, Requests: map[string]int64{CPU: 100, Memory: 100}},
		App: []Container{{Requests: map[string]int64{EphemeralStorage: 5}}}}
	assert.Equal(t, Guaranteed, QoS(level), "pod-level: QoS %s, preemption %d, fit %d", QoS(level), PreemptionRequest(level, EphemeralStorage), FitRequest(level, EphemeralStorage))
	assert.Equal(t, int64(0), PreemptionRequest(level, EphemeralStorage), "pod-level: QoS %s, preemption %d, fit %d", QoS(level), PreemptionRequest(level, EphemeralStorage), FitRequest(level, EphemeralStorage))
	assert.Equal(t, int64(5), FitRequest(level, EphemeralStorage), "pod-level: QoS %s, preemption %d, fit %d", QoS(level), PreemptionRequest(level, EphemeralStorage), FitRequest(level, EphemeralStorage))
	assert.Equal(t, BestEffort, QoS(Pod{App: []Container{{}}}), "container-level classes")
	assert.Equal(t, Burstable, QoS(burstable("b", 1, 1)), "container-level classes")
	assert.Equal(t, Guaranteed, QoS(guaranteed("g", 1, 1)), "container-level classes")
}

// TestFitScalarResources: of the scalar resources the node has none of,
// only an extended resource allocatable does not list is dropped, and only
// from the containers (docs/deviations.md N6, fixed); one listed at 0 and a
// huge page size not listed are short.
func TestFitScalarResources(t *testing.T) {
	p := Pod{App: []Container{{Requests: map[string]int64{"example.com/missing": 4, "example.com/zero": 1, "hugepages-2Mi": 2}}},
		Overhead: map[string]int64{"example.com/missing": 1}}
	got := Fit(map[string]int64{Pods: 1, "example.com/zero": 0}, nil, p)
	assert.Equal(t, []Shortfall{{"example.com/missing", 1, 0, 0}, {"example.com/zero", 1, 0, 0}, {"hugepages-2Mi", 2, 0, 0}}, got,
		"the missing extended resource's overhead stays; the one at 0 and the huge pages are short")
	p.Overhead = nil
	got = Fit(map[string]int64{Pods: 1, "example.com/zero": 1, "hugepages-2Mi": 2}, nil, p)
	assert.Empty(t, got, "an extended resource allocatable does not list is not checked")
}
