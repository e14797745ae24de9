package preemption

import (
	"reflect"
	"testing"
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
		if r.Err != "" || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("needs %v: got %v %q, want %v", tc.needs, got, r.Err, tc.want)
		}
	}
	r := Greedy(critical, running[:2], []Need{{CPU, 200}, {Pods, 3}})
	if want := "preemption: error finding a set of pods to preempt: no set of running pods found to reclaim resources: [(res: cpu, q: 100), (res: pods, q: 1), ]"; r.Err != want {
		t.Errorf("error = %q, want %q", r.Err, want)
	}
}

// TestBruteForce checks the optimum on a case where the greedy choice is
// not the fewest victims: the greedy first takes a, the pod closest to both
// needs, and then needs b and c as well, which alone would have sufficed.
func TestBruteForce(t *testing.T) {
	critical := Pod{Name: "cc", Priority: p32(criticalPriority)}
	running := []Pod{burstable("a", 90, 90), burstable("b", 100, 0), burstable("c", 0, 100)}
	needs := []Need{{CPU, 100}, {Memory, 100}}
	g := Greedy(critical, running, needs)
	if got := Names(running, g.Victims); got != "[a b c]" {
		t.Fatalf("greedy = %s, want [a b c]", got)
	}
	opt := BruteForce(critical, running, needs)
	if !opt.Searched || !opt.Feasible || opt.FewestVictims != 2 || opt.LeastCost != 2 {
		t.Errorf("optimum = %+v, want two victims (b, c) at cost 2", opt)
	}
	var victims []Pod
	for _, i := range g.Victims {
		victims = append(victims, running[i])
	}
	if c := Cost(needs, victims); c != 3.8 {
		t.Errorf("greedy cost = %v, want 1.9 + 1.9", c)
	}
	if opt := BruteForce(critical, running, []Need{{CPU, 1000}}); !opt.Searched || opt.Feasible {
		t.Errorf("optimum = %+v, want infeasible", opt)
	}
}

// TestQoSAndRequests checks the model's own classification and request
// rules on the cases that differ between the fit and preemption.
func TestQoSAndRequests(t *testing.T) {
	side := Container{Requests: map[string]int64{CPU: 100}, Sidecar: true}
	p := Pod{Init: []Container{side, {Requests: map[string]int64{CPU: 300}}}, App: []Container{{Requests: map[string]int64{CPU: 50}}},
		Overhead: map[string]int64{CPU: 10, Memory: 7}}
	if got := FitRequest(p, CPU); got != 410 {
		t.Errorf("FitRequest cpu = %d, want max(150, 400) + 10", got)
	}
	if got := PreemptionRequest(p, Memory); got != 0 {
		t.Errorf("PreemptionRequest memory = %d, want 0: no overhead on a zero request", got)
	}
	if got := FitRequest(p, Memory); got != 7 {
		t.Errorf("FitRequest memory = %d, want the overhead 7", got)
	}
	level := Pod{Level: &PodLevel{Limits: map[string]int64{CPU: 100, Memory: 100}, Requests: map[string]int64{CPU: 100, Memory: 100}},
		App: []Container{{Requests: map[string]int64{EphemeralStorage: 5}}}}
	if QoS(level) != Guaranteed || PreemptionRequest(level, EphemeralStorage) != 0 || FitRequest(level, EphemeralStorage) != 5 {
		t.Errorf("pod-level: QoS %s, preemption %d, fit %d", QoS(level), PreemptionRequest(level, EphemeralStorage), FitRequest(level, EphemeralStorage))
	}
	if QoS(Pod{App: []Container{{}}}) != BestEffort || QoS(burstable("b", 1, 1)) != Burstable || QoS(guaranteed("g", 1, 1)) != Guaranteed {
		t.Error("container-level classes")
	}
}
