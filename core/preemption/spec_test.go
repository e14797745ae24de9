package preemption_test

import (
	"errors"
	"testing"

	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpecGetPodsToPreempt replays upstream's TestGetPodsToPreempt table
// (pkg/kubelet/preemption/preemption_test.go) through HandleAdmissionFailure.
// Upstream compares the victims as a multiset; the order is checked here too,
// because preemption.md §4.2 fixes it (BestEffort, Burstable, Guaranteed).
func TestSpecGetPodsToPreempt(t *testing.T) {
	all := upstreamPods()
	tests := []struct {
		name      string
		preemptor string
		running   []string
		reasons   []preemption.Reason
		wantErr   bool
		want      []string
	}{
		{"no requirements", "cluster-critical", nil, upstreamReasons(0, 0, 0), false, []string{}},
		{"no pods", "cluster-critical", nil, upstreamReasons(0, 0, 1), true, nil},
		{"equal pods and resources requirements", "cluster-critical", []string{"burstable"}, upstreamReasons(100, 100, 1), false, []string{"burstable"}},
		{"higher requirements than pod requests", "cluster-critical", []string{"burstable"}, upstreamReasons(200, 200, 2), true, nil},
		{"choose between bestEffort and burstable", "cluster-critical", []string{"burstable", "bestEffort"}, upstreamReasons(0, 0, 1), false, []string{"bestEffort"}},
		{"choose between burstable and guaranteed", "cluster-critical", []string{"burstable", "guaranteed"}, upstreamReasons(0, 0, 1), false, []string{"burstable"}},
		{"choose lower request burstable if it meets requirements", "cluster-critical",
			[]string{"bestEffort", "high-request-burstable", "burstable"}, upstreamReasons(100, 100, 0), false, []string{"burstable"}},
		{"choose higher request burstable if lower does not meet requirements", "cluster-critical",
			[]string{"bestEffort", "burstable", "high-request-burstable"}, upstreamReasons(150, 150, 0), false, []string{"high-request-burstable"}},
		{"multiple pods required", "cluster-critical",
			[]string{"bestEffort", "burstable", "high-request-burstable", "guaranteed", "high-request-guaranteed"},
			// Upstream lists {burstable, high-request-burstable} as a set; within
			// a class the order is the greedy's pick order, the closer pod first.
			upstreamReasons(350, 350, 0), false, []string{"high-request-burstable", "burstable"}},
		{"evict guaranteed when we have to, and dont evict the extra burstable", "cluster-critical",
			[]string{"bestEffort", "burstable", "high-request-burstable", "guaranteed", "high-request-guaranteed"},
			upstreamReasons(0, 550, 0), false, []string{"high-request-burstable", "high-request-guaranteed"}},
		{"evict cluster critical pod for node critical pod", "node-critical", []string{"cluster-critical"}, upstreamReasons(100, 0, 0), false, []string{"cluster-critical"}},
		{"can not evict node critical pod for cluster critical pod", "cluster-critical", []string{"node-critical"}, upstreamReasons(100, 0, 0), true, nil},
		// TestEvictPodsToFreeRequests adds two more.
		{"critical pods cannot be preempted", "cluster-critical", []string{"cluster-critical"}, upstreamReasons(0, 0, 1), true, nil},
		{"best effort pods are not preempted when attempting to free resources", "cluster-critical", []string{"bestEffort"}, upstreamReasons(0, 1, 0), true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var running []*pod.Pod
			for i, n := range tc.running {
				p := *all[n]
				// The same upstream pod may run twice under one name; UIDs must differ.
				p.UID = n + "-" + string(rune('a'+i))
				running = append(running, &p)
			}
			d, err := preemption.HandleAdmissionFailure(all[tc.preemptor], tc.reasons, running)
			require.NoError(t, err, "bad input")
			if tc.wantErr {
				require.Error(t, d.Err)
			} else {
				require.NoError(t, d.Err)
			}
			require.Empty(t, d.Reasons, "Reasons")
			if tc.wantErr {
				require.Empty(t, d.Victims, "victims %v chosen although preemption failed", names(d.Victims))
				return
			}
			assert.Equal(t, tc.want, names(d.Victims), "victims")
		})
	}
}

// TestSpecDistance replays upstream's TestAdmissionRequirementsDistance.
func TestSpecDistance(t *testing.T) {
	all := upstreamPods()
	tests := []struct {
		name string
		reqs preemption.Requirements
		pod  string
		want float64
	}{
		{"no requirements", upstreamReqs(0, 0, 0), "burstable", 0},
		// The pod frees its pod slot, so only cpu and memory are missing: 1² + 1².
		{"no requests, some requirements", upstreamReqs(100, 100, 1), "bestEffort", 2},
		{"equal requests and requirements", upstreamReqs(100, 100, 1), "burstable", 0},
		{"higher requests than requirements", upstreamReqs(50, 50, 0), "burstable", 0},
		// (100-50)/100 = 0.5 missing of each: 0.25 + 0.25. A distance without
		// the square would give 1.
		{"half of two requirements", upstreamReqs(100, 100, 0), "tiny", (99.0/100)*(99.0/100) + (99.0/100)*(99.0/100)},
		{"half met", upstreamReqs(200, 200, 0), "burstable", 0.5},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, tc.reqs.Distance(all[tc.pod]), "%s: Distance", tc.name)
	}
}

// TestSpecSubtract replays upstream's TestAdmissionRequirementsSubtract.
func TestSpecSubtract(t *testing.T) {
	all := upstreamPods()
	tests := []struct {
		name    string
		initial preemption.Requirements
		pod     string
		want    preemption.Requirements
	}{
		{"subtract a pod from no requirements", upstreamReqs(0, 0, 0), "burstable", nil},
		{"subtract no requests from some requirements", upstreamReqs(100, 100, 1), "bestEffort", upstreamReqs(100, 100, 0)},
		{"equal requests and requirements", upstreamReqs(100, 100, 1), "burstable", nil},
		{"subtract higher requests than requirements", upstreamReqs(50, 50, 0), "burstable", nil},
		{"subtract lower requests than requirements", upstreamReqs(200, 200, 1), "burstable", upstreamReqs(100, 100, 0)},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, tc.initial.Subtract(all[tc.pod]), "%s: Subtract", tc.name)
	}
}

// TestSpecKillErrorSkipped is upstream's TestEvictPodsToFreeRequestsWithError
// (PR #78493, #78405): every kill fails, yet the critical pod is admitted
// and nothing counts as evicted.
func TestSpecKillErrorSkipped(t *testing.T) {
	all := upstreamPods()
	running := []*pod.Pod{all["cluster-critical"], all["bestEffort"], all["burstable"], all["high-request-burstable"], all["guaranteed"], all["high-request-guaranteed"]}
	d, err := preemption.HandleAdmissionFailure(all["cluster-critical"], upstreamReasons(0, 550, 0), running)
	require.NoError(t, err, "HandleAdmissionFailure: %v, %v", err, d.Err)
	require.NoError(t, d.Err, "HandleAdmissionFailure: %v, %v", err, d.Err)
	got, want := names(d.Victims), []string{"high-request-burstable", "high-request-guaranteed"}
	require.Equal(t, want, got, "victims")
	killErr := errors.New("problem killing pod")
	out, err := d.Complete([]error{killErr, killErr})
	require.NoError(t, err)
	require.True(t, out.Admit, "a failed kill must not fail the admission: Admit=%t Err=%v", out.Admit, out.Err)
	assert.NoError(t, out.Err, "a failed kill must not fail the admission: Admit=%t Err=%v", out.Admit, out.Err)
	require.Empty(t, out.Evicted, "outcome = %+v, want two kill failures, nothing evicted or counted", out)
	require.Len(t, out.KillFailed, 2, "outcome = %+v, want two kill failures, nothing evicted or counted", out)
	assert.Empty(t, out.Preemptions, "outcome = %+v, want two kill failures, nothing evicted or counted", out)
	// With the kills succeeding, each victim counts once under the signal
	// of the first requirement.
	out, _ = d.Complete([]error{nil, nil})
	require.True(t, out.Admit, "outcome = %+v, want both evicted and kubelet_preemptions{preemption_signal=\"memory\"} = 2", out)
	require.Len(t, out.Evicted, 2, "outcome = %+v, want both evicted and kubelet_preemptions{preemption_signal=\"memory\"} = 2", out)
	assert.Equal(t, 2, out.Preemptions["memory"], "outcome = %+v, want both evicted and kubelet_preemptions{preemption_signal=\"memory\"} = 2", out)
	assert.Len(t, out.Preemptions, 1, "outcome = %+v, want both evicted and kubelet_preemptions{preemption_signal=\"memory\"} = 2", out)
	_, err = d.Complete([]error{nil})
	assert.EqualError(t, err, "killErrs: 1 results for 2 victims", "Complete with too few results")
}

// TestSpecErrorText checks upstream's error strings and toString format.
func TestSpecErrorText(t *testing.T) {
	all := upstreamPods()
	d, err := preemption.HandleAdmissionFailure(all["cluster-critical"], upstreamReasons(200, 200, 2), []*pod.Pod{all["burstable"]})
	require.NoError(t, err)
	want := "preemption: error finding a set of pods to preempt: no set of running pods found to reclaim resources: " +
		"[(res: cpu, q: 100), (res: memory, q: 104857600), (res: pods, q: 1), ]"
	require.Error(t, d.Err, "Err = %v\nwant %s", d.Err, want)
	assert.Equal(t, want, d.Err.Error(), "Err = %v\nwant %s", d.Err, want)
	assert.Equal(t, "[]", preemption.Requirements(nil).String(), "empty toString")
	r := &preemption.InsufficientResource{ResourceName: "cpu", Requested: 500, Used: 800, Capacity: 1000}
	assert.Equal(t, "Node didn't have enough resource: cpu, requested: 500, used: 800, capacity: 1000", r.Error(), "InsufficientResource.Error()")
	assert.Equal(t, "Insufficient cpu", r.GetReason(), "GetReason()")
	assert.Equal(t, int64(300), r.InsufficientAmount(), "InsufficientAmount()")
	pf := &preemption.PredicateFailure{PredicateName: "NodeAffinity", PredicateDesc: "node(s) didn't match Pod's node affinity/selector"}
	assert.Equal(t, "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector", pf.Error(), "PredicateFailure.Error()")
	assert.Equal(t, pf.PredicateDesc, pf.GetReason(), "PredicateFailure.GetReason()")
}

// TestSpecNotCritical checks §4.2 "not critical → return reasons unchanged":
// the same reasons in the same order, nothing evicted, no error.
func TestSpecNotCritical(t *testing.T) {
	all := upstreamPods()
	reasons := append(upstreamReasons(100, 0, 1), &preemption.PredicateFailure{PredicateName: "NodePorts", PredicateDesc: "node(s) didn't have free ports for the requested pod ports"})
	d, err := preemption.HandleAdmissionFailure(all["burstable"], reasons, []*pod.Pod{all["bestEffort"], all["guaranteed"]})
	require.NoError(t, err)
	assert.Equal(t, reasons, d.Reasons, "decision = %+v, want the reasons unchanged and nothing else", d)
	require.NoError(t, d.Err, "decision = %+v, want the reasons unchanged and nothing else", d)
	require.Empty(t, d.Victims, "decision = %+v, want the reasons unchanged and nothing else", d)
	assert.Empty(t, d.Requirements, "decision = %+v, want the reasons unchanged and nothing else", d)
	out, _ := d.Complete(nil)
	assert.False(t, out.Admit, "a non-critical pod short of resources was admitted")
}

// TestSpecNonResourceReasons checks §4.2 "any other reason → return only
// the non-resource reasons, nil error (no preemption)".
func TestSpecNonResourceReasons(t *testing.T) {
	all := upstreamPods()
	affinity := &preemption.PredicateFailure{PredicateName: "NodeAffinity", PredicateDesc: "node(s) didn't match Pod's node affinity/selector"}
	taint := &preemption.PredicateFailure{PredicateName: "TaintToleration", PredicateDesc: "node(s) had untolerated taint(s)"}
	reasons := []preemption.Reason{upstreamReasons(100, 0, 0)[0], affinity, upstreamReasons(0, 0, 1)[0], taint}
	d, err := preemption.HandleAdmissionFailure(all["cluster-critical"], reasons, []*pod.Pod{all["burstable"]})
	require.NoError(t, err)
	assert.Equal(t, []preemption.Reason{affinity, taint}, d.Reasons, "Reasons")
	require.Empty(t, d.Victims, "decision = %+v, want no preemption", d)
	assert.NoError(t, d.Err, "decision = %+v, want no preemption", d)
}

// TestSpecPreemptable checks §4.1's table.
func TestSpecPreemptable(t *testing.T) {
	mk := func(name string, priority *int32, annotations map[string]string) *pod.Pod {
		p := testPod(name, nil, nil)
		p.Priority = priority
		for k, v := range annotations {
			p.Annotations[k] = v
		}
		return p
	}
	static := map[string]string{pod.ConfigSourceAnnotation: preemption.FileSource}
	mirror := map[string]string{pod.ConfigMirrorAnnotation: "hash"}
	tests := []struct {
		name              string
		preemptor, victim *pod.Pod
		want              bool
	}{
		{"critical beats non-critical without priorities", mk("c", prio(pod.SystemCriticalPriority), nil), mk("v", nil, nil), true},
		{"static beats non-critical", mk("s", nil, static), mk("v", prio(5), nil), true},
		{"mirror beats non-critical", mk("m", nil, mirror), mk("v", nil, nil), true},
		// #65372 / PR #65561: node-critical may preempt cluster-critical.
		{"node-critical beats cluster-critical", mk("n", prio(preemption.SystemNodeCriticalPriority), nil), mk("c", prio(preemption.SystemClusterCriticalPriority), nil), true},
		{"cluster-critical does not beat node-critical", mk("c", prio(preemption.SystemClusterCriticalPriority), nil), mk("n", prio(preemption.SystemNodeCriticalPriority), nil), false},
		{"equal critical priorities", mk("a", prio(pod.SystemCriticalPriority), nil), mk("b", prio(pod.SystemCriticalPriority), nil), false},
		{"static without priority does not beat critical", mk("s", nil, static), mk("c", prio(pod.SystemCriticalPriority), nil), false},
		{"static with higher priority beats static", mk("s", prio(10), static), mk("t", prio(5), static), true},
		{"non-critical higher priority beats lower", mk("a", prio(100), nil), mk("b", prio(1), nil), true},
		{"non-critical without priority", mk("a", nil, nil), mk("b", prio(1), nil), false},
		{"victim without priority", mk("a", prio(100), nil), mk("b", nil, nil), false},
		{"config source api is not static", mk("a", nil, map[string]string{pod.ConfigSourceAnnotation: "api"}), mk("b", nil, nil), false},
		{"empty config source is static", mk("a", nil, map[string]string{pod.ConfigSourceAnnotation: ""}), mk("b", nil, nil), true},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, preemption.Preemptable(tc.preemptor, tc.victim), "%s: Preemptable", tc.name)
	}
}

// TestSpecConfigSource checks GetPodSource and IsNodeCriticalPod.
func TestSpecConfigSource(t *testing.T) {
	p := testPod("p", nil, nil)
	_, err := preemption.ConfigSource(p)
	assert.EqualError(t, err, `cannot get source of pod "p"`, "ConfigSource without the annotation")
	p.Annotations[pod.ConfigSourceAnnotation] = preemption.HTTPSource
	src, err := preemption.ConfigSource(p)
	assert.NoError(t, err, "ConfigSource = %q, %v", src, err)
	assert.Equal(t, "http", src, "ConfigSource = %q, %v", src, err)
	n := testPod("n", nil, nil)
	n.Priority, n.PriorityClassName = prio(preemption.SystemNodeCriticalPriority), preemption.SystemNodeCritical
	assert.True(t, preemption.IsNodeCritical(n), "a critical pod of class system-node-critical is node-critical")
	n.Priority = prio(5)
	assert.False(t, preemption.IsNodeCritical(n), "the class name alone does not make a pod node-critical: it must be critical too")
}

// TestSpecEvictionStatus checks the status, condition and event a victim
// gets, and the kill's isEvicted (true) and gracePeriodOverride (nil).
func TestSpecEvictionStatus(t *testing.T) {
	all := upstreamPods()
	d, _ := preemption.HandleAdmissionFailure(all["cluster-critical"], upstreamReasons(0, 0, 1), []*pod.Pod{all["bestEffort"]})
	ev := d.Evictions()
	require.Len(t, ev, 1, "evictions = %+v", ev)
	require.Equal(t, all["bestEffort"], ev[0].Pod, "evictions = %+v", ev)
	require.True(t, ev[0].Evict, "kill arguments: evict %v, grace period override %v; want true, nil", ev[0].Evict, ev[0].GracePeriodOverride)
	assert.Nil(t, ev[0].GracePeriodOverride, "kill arguments: evict %v, grace period override %v; want true, nil", ev[0].Evict, ev[0].GracePeriodOverride)
	want := preemption.Status{
		Phase: pod.Failed, Reason: "Preempting", Message: "Preempted in order to admit critical pod",
		Conditions: []preemption.Condition{{Type: "DisruptionTarget", Status: "True", Reason: "TerminationByKubelet",
			Message: "Pod was preempted by Kubelet to accommodate a critical pod."}},
	}
	assert.Equal(t, want, ev[0].Status, "status")
	assert.Equal(t, (preemption.Event{Type: "Warning", Reason: "Preempting", Message: "Preempted in order to admit critical pod"}), ev[0].Event, "event")
}

// TestSpecRequest checks GetResourceRequest's rules (§4.2 request(pod,res)).
func TestSpecRequest(t *testing.T) {
	sidecar := pod.Container{Name: "side", Requests: pod.ResourceList{pod.CPU: 100}, RestartPolicy: pod.RestartAlways}
	tests := []struct {
		name string
		pod  pod.Pod
		res  pod.ResourceName
		want int64
	}{
		{"pods is always 1", pod.Pod{}, pod.Pods, 1},
		{"app containers summed", pod.Pod{Containers: []pod.Container{{Requests: pod.ResourceList{pod.CPU: 100}}, {Requests: pod.ResourceList{pod.CPU: 50}}}}, pod.CPU, 150},
		{"regular init container is a peak", pod.Pod{
			InitContainers: []pod.Container{{Name: "i", Requests: pod.ResourceList{pod.CPU: 500}}},
			Containers:     []pod.Container{{Requests: pod.ResourceList{pod.CPU: 100}}}}, pod.CPU, 500},
		{"sidecar adds to the app containers", pod.Pod{
			InitContainers: []pod.Container{sidecar},
			Containers:     []pod.Container{{Requests: pod.ResourceList{pod.CPU: 100}}}}, pod.CPU, 200},
		{"overhead added to a non-zero total", pod.Pod{
			Containers: []pod.Container{{Requests: pod.ResourceList{pod.CPU: 100}}},
			Overhead:   pod.ResourceList{pod.CPU: 10, pod.Memory: 5}}, pod.CPU, 110},
		{"overhead not added to a zero total", pod.Pod{
			Containers: []pod.Container{{Requests: pod.ResourceList{pod.CPU: 100}}},
			Overhead:   pod.ResourceList{pod.CPU: 10, pod.Memory: 5}}, pod.Memory, 0},
		{"pod-level requests replace the containers'", pod.Pod{
			Resources:  &pod.Resources{Requests: pod.ResourceList{pod.CPU: 300}, Limits: pod.ResourceList{pod.CPU: 300}},
			Containers: []pod.Container{{Requests: pod.ResourceList{pod.CPU: 100}}}}, pod.CPU, 300},
		{"pod-level resources skip the containers' other resources", pod.Pod{
			Resources:  &pod.Resources{Requests: pod.ResourceList{pod.CPU: 300}},
			Containers: []pod.Container{{Requests: pod.ResourceList{pod.CPU: 100, pod.EphemeralStorage: 1 << 30}}}}, pod.EphemeralStorage, 0},
		{"pod-level limits alone skip the containers", pod.Pod{
			Resources:  &pod.Resources{Limits: pod.ResourceList{pod.Memory: 1 << 30}},
			Containers: []pod.Container{{Requests: pod.ResourceList{pod.CPU: 100}}}}, pod.CPU, 0},
		{"unsupported pod-level resources do not count as set", pod.Pod{
			Resources:  &pod.Resources{Requests: pod.ResourceList{pod.EphemeralStorage: 1}},
			Containers: []pod.Container{{Requests: pod.ResourceList{pod.CPU: 100}}}}, pod.CPU, 100},
		{"pod-level with overhead", pod.Pod{
			Resources: &pod.Resources{Requests: pod.ResourceList{pod.Memory: 1000}},
			Overhead:  pod.ResourceList{pod.Memory: 24}}, pod.Memory, 1024},
	}
	for _, tc := range tests {
		p := tc.pod
		assert.Equal(t, tc.want, preemption.Request(&p, tc.res), "%s: Request(%s)", tc.name, tc.res)
	}
}

// TestSpecTieBreak checks smallerResourceRequest and the swap-remove scan
// order: among pods at the same distance the smaller memory request wins,
// then the smaller cpu request; among equal pods the last one scanned wins,
// and taking a pod moves the last pod into its slot.
func TestSpecTieBreak(t *testing.T) {
	critical := upstreamPods()["cluster-critical"]
	mk := func(name string, cpu, memMi int64) *pod.Pod { return testPod(name, cpuMem(cpu, memMi), nil) }
	memReq := func(m int64) []preemption.Reason {
		return []preemption.Reason{&preemption.InsufficientResource{ResourceName: pod.Memory, Requested: m * mi}}
	}
	tests := []struct {
		name    string
		running []*pod.Pod
		reasons []preemption.Reason
		want    []string
	}{
		{"smaller memory wins among pods that each suffice", []*pod.Pod{mk("big", 10, 300), mk("small", 10, 200), mk("mid", 10, 250)}, memReq(100), []string{"small"}},
		{"then smaller cpu", []*pod.Pod{mk("a", 30, 200), mk("b", 10, 200), mk("c", 20, 200)}, memReq(100), []string{"b"}},
		{"among equals the last scanned wins", []*pod.Pod{mk("a", 10, 200), mk("b", 10, 200), mk("c", 10, 200)}, memReq(100), []string{"c"}},
		// Round one takes b (closest to 200Mi) and moves d into its slot, so
		// round two scans a, d, c and takes c, the last of three equals.
		// Removing b in place would scan a, c, d and take d.
		{"swap-remove decides the next round's tie", []*pod.Pod{mk("a", 10, 50), mk("b", 10, 150), mk("c", 10, 50), mk("d", 10, 50)}, memReq(200), []string{"b", "c"}},
	}
	for _, tc := range tests {
		d, err := preemption.HandleAdmissionFailure(critical, tc.reasons, tc.running)
		require.NoError(t, err, "%s: %v %v", tc.name, err, d.Err)
		require.NoError(t, d.Err, "%s: %v %v", tc.name, err, d.Err)
		assert.Equal(t, tc.want, names(d.Victims), "%s: victims", tc.name)
	}
}
