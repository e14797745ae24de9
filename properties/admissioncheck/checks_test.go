package admissioncheck

import (
	"errors"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/core/admission"
	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testPod(uid string, requests, limits pod.ResourceList) *pod.Pod {
	return &pod.Pod{UID: uid, Name: uid, Containers: []pod.Container{{Name: "c", Requests: requests, Limits: limits}}}
}

// upstreamCase is upstream's "evict guaranteed when we have to" example:
// 550Mi short, victims high-request-burstable then high-request-guaranteed.
func upstreamCase(t *testing.T, kill error) *PreemptionCase {
	t.Helper()
	cm := func(c, m int64) pod.ResourceList { return pod.ResourceList{pod.CPU: c, pod.Memory: m * mi} }
	critical := testPod("critical", cm(100, 100), nil)
	critical.Priority = p32(preemption.SystemClusterCriticalPriority)
	active := []*pod.Pod{
		testPod("be", nil, nil), testPod("bu", cm(100, 100), nil), testPod("bu-high", cm(300, 300), nil),
		testPod("gu", cm(100, 100), cm(100, 100)), testPod("gu-high", cm(300, 300), cm(300, 300)),
	}
	reasons := []preemption.Reason{&preemption.InsufficientResource{ResourceName: pod.Memory, Requested: 550 * mi}}
	c, err := RunPreemption(critical, active, reasons, func(int) error { return kill })
	require.NoError(t, err)
	require.Equal(t, "[bu-high gu-high]", uidList(c.Victims), "victims")
	return c
}

func runChecks(c *PreemptionCase) map[string]error {
	out := map[string]error{}
	for _, chk := range PreemptionChecks {
		if chk.Applies(c) {
			out[chk.ID] = chk.Holds(c)
		}
	}
	return out
}

// TestPreemptionChecksPass: an untampered case passes every check, and every
// check but PR-NONRESOURCE (no non-resource reason here) applies.
func TestPreemptionChecksPass(t *testing.T) {
	for _, kill := range []error{nil, errors.New("kill failed")} {
		c := upstreamCase(t, kill)
		res := runChecks(c)
		for _, chk := range PreemptionChecks {
			err, applied := res[chk.ID]
			if chk.ID != PRNonResource {
				assert.True(t, applied, "%s did not apply", chk.ID)
			}
			assert.NoError(t, err, "%s", chk.ID)
		}
	}
}

// TestPreemptionChecksCanFail tampers with a real decision and expects the
// check named to say so: every check can fail.
func TestPreemptionChecksCanFail(t *testing.T) {
	tests := []struct {
		id     string
		tamper func(c *PreemptionCase)
	}{
		{PRVictims, func(c *PreemptionCase) { c.Victims = append(c.Victims, c.Victims[0]) }},
		{PRNonCritical, func(c *PreemptionCase) { c.Core.Decision.Reasons = c.Reasons; c.Victims = nil }},
		{PRPreemptable, func(c *PreemptionCase) {
			c.Active[4].Priority = p32(preemption.SystemNodeCriticalPriority)
			c.mActive = ModelPods(c.Active)
		}},
		{PRFrees, func(c *PreemptionCase) { c.Victims = c.Victims[:1] }},
		{PRErrorIff, func(c *PreemptionCase) { c.Err = errors.New("no set of running pods") }},
		{PRQoSOrder, func(c *PreemptionCase) {
			c.Victims[0], c.Victims[1] = c.Victims[1], c.Victims[0]
		}},
		{PRQoSLowest, func(c *PreemptionCase) {
			c.Victims = []*pod.Pod{c.Active[2], c.Active[1], c.Active[3]}
			c.needs[0].Quantity = 400 * mi
		}},
		{PR135857, func(c *PreemptionCase) { c.Victims = []*pod.Pod{c.Active[1], c.Active[2], c.Active[4]} }},
		{PRKillSkipped, func(c *PreemptionCase) { c.Core.Outcome.Admit = false }},
		{PRModel, func(c *PreemptionCase) { c.Victims = []*pod.Pod{c.Active[2], c.Active[3], c.Active[4]} }},
		{PRDeterministic, func(c *PreemptionCase) { c.Core.Twin.Victims = nil }},
		// gu-high, a victim, becomes a static pod marked as critical.
		{PRCStaticCritical, func(c *PreemptionCase) {
			c.Active[4].Annotations = map[string]string{sourceAnnotation: "file"}
			c.Active[4].Priority = p32(preemption.SystemClusterCriticalPriority)
		}},
		// The victim gu-high gets the preemptor's own priority.
		{PRCLowerPriority, func(c *PreemptionCase) { c.Active[4].Priority = p32(preemption.SystemClusterCriticalPriority) }},
		// The victim gu-high gets priority 5 and the need shrinks to 500Mi:
		// bu, bu-high and gu, all below gu-high, free it without gu-high.
		{PRCGuaranteedLowest, func(c *PreemptionCase) {
			c.Active[4].Priority = p32(5)
			c.needs[0].Quantity = 500 * mi
		}},
	}
	for _, tc := range tests {
		c := upstreamCase(t, nil)
		tc.tamper(c)
		var check verify.Check[*PreemptionCase]
		for _, chk := range PreemptionChecks {
			if chk.ID == tc.id {
				check = chk
			}
		}
		assert.Error(t, check.Holds(c), "%s: passed a tampered case", tc.id)
	}
	// PR-NONRESOURCE needs a non-resource reason. (PR-VICTIM-STATUS reads
	// the statuses core/preemption makes; only a changed core can fail it.)
	c := upstreamCase(t, nil)
	nr := &preemption.PredicateFailure{PredicateName: "NodeName", PredicateDesc: "node(s) didn't match the requested node name"}
	c.Reasons = append(c.Reasons, nr)
	c.model()
	assert.Error(t, checkNonResource(c), "%s: victims chosen despite a non-resource reason passed", PRNonResource)
}

// admitCase admits a Burstable pod of 600m on a node of 1000m running 500m.
func admitCase(t *testing.T) *AdmissionCase {
	t.Helper()
	node, _ := admission.NewNode(pod.ResourceList{pod.Pods: 5, pod.CPU: 1000}, nil)
	twin, _ := admission.NewNode(pod.ResourceList{pod.Pods: 5, pod.CPU: 1000}, nil)
	for _, n := range []*admission.Node{node, twin} {
		require.NoError(t, n.AddRunning(testPod("a", pod.ResourceList{pod.CPU: 500}, nil)))
	}
	c, err := Admit(node, twin, nil, nil, 0, Arrival{Pod: testPod("b", pod.ResourceList{pod.CPU: 600}, nil)})
	require.NoError(t, err)
	require.False(t, c.Result.Admitted, "result %+v", c.Result)
	require.Equal(t, "OutOfcpu", c.Result.Reason, "result %+v", c.Result)
	return c
}

// TestAdmissionChecksCanFail checks that the untampered case passes and
// that each admission check rejects a tampered one.
func TestAdmissionChecksCanFail(t *testing.T) {
	c := admitCase(t)
	for _, chk := range AdmissionChecks {
		if chk.Applies(c) {
			assert.NoError(t, chk.Holds(c), "%s", chk.ID)
		}
	}
	tests := []struct {
		id     string
		check  func(*AdmissionCase) error
		tamper func(c *AdmissionCase)
	}{
		{ADDevices, checkDevices, func(c *AdmissionCase) {
			c.Result.Message = "Allocate failed due to x, which is unexpected"
			c.Result.Reason = "UnexpectedAdmissionError"
		}},
		{ADFit, checkFit, func(c *AdmissionCase) { c.Result.FitReasons = nil }},
		{ADModel, checkAdmissionModel, func(c *AdmissionCase) { c.Result.FitReasons[0].(*preemption.InsufficientResource).Used-- }},
		{ADModel, checkAdmissionModel, func(c *AdmissionCase) { c.Result.Message = "" }},
		{ADDecision, checkDecision, func(c *AdmissionCase) { c.Result.Admitted = true }},
		{ADNode, checkNode, func(c *AdmissionCase) { c.After = append(c.After, admission.ActivePod{Pod: c.Pod}) }},
		{ADNoOvercommit, checkNoOvercommit, func(c *AdmissionCase) { c.Allocatable = pod.ResourceList{pod.Pods: 5, pod.CPU: 100} }},
		{ADPreemption, checkAdmissionPreemption, func(c *AdmissionCase) {
			c.Pod.Priority = p32(preemption.SystemClusterCriticalPriority)
			c.Result.Requirements = preemption.Requirements{{Resource: pod.CPU, Quantity: 100}}
		}},
		{ADDeterministic, checkAdmissionDeterministic, func(c *AdmissionCase) { c.TwinRender = strings.Replace(c.TwinRender, "OutOfcpu", "OutOfmemory", 1) }},
	}
	for _, tc := range tests {
		c := admitCase(t)
		tc.tamper(c)
		assert.Error(t, tc.check(c), "%s: passed a tampered case", tc.id)
	}
}

// TestNoOvercommitBoundsZeroAllocatable: a node with no ephemeral storage
// to give admits no pod that asks for some. The check once skipped every
// resource of allocatable 0, so this overcommit passed. A scalar resource
// the node does not list at all stays unchecked, as the kubelet drops such
// requests before the fit, but for huge pages, of which the node then has
// none.
func TestNoOvercommitBoundsZeroAllocatable(t *testing.T) {
	asks := func(r pod.ResourceName, n int64) admission.ActivePod {
		return admission.ActivePod{Pod: testPod("p", pod.ResourceList{r: n}, nil)}
	}
	node := pod.ResourceList{pod.Pods: 10, pod.CPU: 1000, pod.Memory: 1 << 30, pod.EphemeralStorage: 0}

	err := checkNoOvercommit(&AdmissionCase{Allocatable: node, After: []admission.ActivePod{asks(pod.EphemeralStorage, 1)}})
	require.EqualError(t, err, "pods not terminating ask for 1 ephemeral-storage, allocatable is 0")

	assert.NoError(t, checkNoOvercommit(&AdmissionCase{Allocatable: node, After: []admission.ActivePod{asks(GPU, 2)}}),
		"a GPU request on a node that lists no GPUs")
	withGPUs := node.Clone()
	withGPUs[GPU] = 0
	assert.EqualError(t, checkNoOvercommit(&AdmissionCase{Allocatable: withGPUs, After: []admission.ActivePod{asks(GPU, 2)}}),
		"pods not terminating ask for 2 example.com/gpu, allocatable is 0")
	assert.EqualError(t, checkNoOvercommit(&AdmissionCase{Allocatable: node, After: []admission.ActivePod{asks(HugePages, 2*mi)}}),
		"pods not terminating ask for 2097152 hugepages-2Mi, allocatable is 0", "huge pages on a node that lists none")
}

// TestDevicesNotShared: a device held by two running pods, or by two
// containers of one pod that run side by side, breaks the promise; a
// regular init container handing its device on to an app container, or a
// rejected pod's stale record, does not.
func TestDevicesNotShared(t *testing.T) {
	gpu := func(uid, container string, ids ...string) dm.Holding {
		return dm.Holding{PodUID: uid, Container: container, Resource: string(GPU), DeviceIDs: ids}
	}
	withInit := &pod.Pod{UID: "b", InitContainers: []pod.Container{{Name: "side", RestartPolicy: pod.RestartAlways}, {Name: "init"}},
		Containers: []pod.Container{{Name: "app"}, {Name: "app2"}}}
	running := []admission.ActivePod{{Pod: testPod("a", nil, nil)}, {Pod: withInit}}
	tests := []struct {
		name     string
		holdings []dm.Holding
		fails    bool
	}{
		{"two pods", []dm.Holding{gpu("a", "c", "gpu0"), gpu("b", "app", "gpu0")}, true},
		{"two app containers", []dm.Holding{gpu("b", "app", "gpu1"), gpu("b", "app2", "gpu1")}, true},
		{"a sidecar and the init container after it", []dm.Holding{gpu("b", "side", "gpu1"), gpu("b", "init", "gpu1")}, true},
		{"an init container handing on to an app container", []dm.Holding{gpu("b", "init", "gpu1"), gpu("b", "app", "gpu1")}, false},
		{"a rejected pod's record", []dm.Holding{gpu("a", "c", "gpu0"), gpu("gone", "c", "gpu0")}, false},
		{"more devices than the node has", []dm.Holding{gpu("a", "c", "gpu0", "gpu1", "gpu2", "gpu3")}, true},
	}
	for _, tc := range tests {
		c := &AdmissionCase{GPUs: 3, After: running, Holdings: tc.holdings}
		err := checkDevicesNotShared(c)
		if tc.fails {
			assert.Error(t, err, tc.name)
		} else {
			assert.NoError(t, err, tc.name)
		}
	}
}

// TestDevicesAvailable: a pod rejected for want of devices the node's
// running pods leave free breaks the promise; one that asks for more does
// not.
func TestDevicesAvailable(t *testing.T) {
	asking := func(n int64) *pod.Pod {
		return testPod("p", pod.ResourceList{GPU: n}, pod.ResourceList{GPU: n})
	}
	holder := admission.ActivePod{Pod: asking(2), Terminating: true}
	unavailable := &admission.Result{Reason: "UnexpectedAdmissionError", Message: "Allocate failed due to requested number of devices unavailable for example.com/gpu. Requested: 1, Available: 0, which is unexpected"}
	c := &AdmissionCase{GPUs: 3, Before: []admission.ActivePod{holder}, Pod: asking(1), Result: unavailable}
	assert.Error(t, checkDevicesAvailable(c), "1 of 1 free device refused")
	c.Pod = asking(2)
	assert.NoError(t, checkDevicesAvailable(c), "2 asked, 1 free")
}

// TestPreemptionCaseOfAnotherPreempter: a case another system under test
// decided, with core's victims but no CoreRecord, is judged by the contract
// checks alone, as the core case is, and they can still fail on it.
func TestPreemptionCaseOfAnotherPreempter(t *testing.T) {
	contract := PreemptionContractChecks()
	var ids []string
	for _, chk := range contract {
		ids = append(ids, chk.ID)
	}
	require.Equal(t, []string{PRCStaticCritical, PRCGuaranteedLowest, PRCLowerPriority}, ids)

	core := upstreamCase(t, nil)
	other := func() *PreemptionCase {
		return NewPreemptionCase(core.Preemptor, core.Active, core.Reasons, core.Victims, []error{nil, errors.New("kill failed")}, nil)
	}
	c := other()
	assert.Equal(t, []*pod.Pod{core.Victims[0]}, c.Evicted, "only the victim whose kill succeeded is evicted")
	res := runChecks(c)
	for _, chk := range PreemptionChecks {
		_, applied := res[chk.ID]
		if chk.Kind != verify.Contract {
			assert.False(t, applied, "%s applies to a case without a CoreRecord", chk.ID)
			continue
		}
		assert.Equal(t, chk.Applies(core), applied, "%s applies to the other case as to core's", chk.ID)
		assert.NoError(t, res[chk.ID], "%s", chk.ID)
	}

	c = other()
	c.Active[4].Annotations = map[string]string{sourceAnnotation: "file"}
	c.Active[4].Priority = p32(preemption.SystemClusterCriticalPriority)
	assert.Error(t, contract[0].Holds(c), "%s passed a static pod marked as critical among the victims", PRCStaticCritical)
}
