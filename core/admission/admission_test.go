package admission_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nodeproof/nodeproof/core/admission"
	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	mi  = int64(1 << 20)
	gpu = pod.ResourceName("example.com/gpu")
)

func prio(v int32) *int32 { return &v }

func mkPod(uid string, requests, limits pod.ResourceList) *pod.Pod {
	return &pod.Pod{UID: uid, Name: uid, Namespace: "default",
		Containers: []pod.Container{{Name: "c", Requests: requests, Limits: limits}}}
}

func critical(p *pod.Pod) *pod.Pod {
	p.Priority, p.PriorityClassName = prio(preemption.SystemNodeCriticalPriority), preemption.SystemNodeCritical
	return p
}

func newNode(t *testing.T, allocatable pod.ResourceList, devices *dm.Manager, running ...*pod.Pod) *admission.Node {
	t.Helper()
	n, err := admission.NewNode(allocatable, devices)
	require.NoError(t, err)
	for _, p := range running {
		require.NoError(t, n.AddRunning(p))
	}
	return n
}

// admit runs one admission with every kill succeeding, or failing with
// killErr when it is set.
func admit(t *testing.T, n *admission.Node, p *pod.Pod, opts admission.Options, killErr error) *admission.Result {
	t.Helper()
	a, err := n.Begin(p, opts)
	require.NoError(t, err)
	r, err := admission.Drive(a, nil, func(preemption.Eviction) error { return killErr })
	require.NoError(t, err)
	return r
}

func uids(n *admission.Node) []string {
	var out []string
	for _, a := range n.Active() {
		s := a.Pod.UID
		if a.Terminating {
			s += "(terminating)"
		}
		out = append(out, s)
	}
	return out
}

// TestSpecFitReasons checks the fit's reasons, their order and upstream's
// rejection reason and message, which name only the first reason.
func TestSpecFitReasons(t *testing.T) {
	alloc := pod.ResourceList{pod.Pods: 2, pod.CPU: 1000, pod.Memory: 1024 * mi, pod.EphemeralStorage: 100, gpu: 2, "hugepages-2Mi": 4 * mi}
	running := []*pod.Pod{
		mkPod("a", pod.ResourceList{pod.CPU: 600, pod.Memory: 512 * mi, gpu: 1}, pod.ResourceList{gpu: 1}),
		mkPod("b", pod.ResourceList{pod.CPU: 300, pod.EphemeralStorage: 50}, nil),
	}
	p := mkPod("p", pod.ResourceList{pod.CPU: 200, pod.Memory: 512 * mi, pod.EphemeralStorage: 60, gpu: 2, "hugepages-2Mi": 8 * mi, "vendor.io/missing": 3, "bare": 7}, nil)
	got := admission.Fit(alloc, running, p)
	want := []preemption.Reason{
		&preemption.InsufficientResource{ResourceName: pod.Pods, Requested: 1, Used: 2, Capacity: 2},
		&preemption.InsufficientResource{ResourceName: pod.CPU, Requested: 200, Used: 900, Capacity: 1000},
		// memory: 512Mi asked, exactly 512Mi free: it fits.
		&preemption.InsufficientResource{ResourceName: pod.EphemeralStorage, Requested: 60, Used: 50, Capacity: 100},
		&preemption.InsufficientResource{ResourceName: gpu, Requested: 2, Used: 1, Capacity: 2},
		&preemption.InsufficientResource{ResourceName: "hugepages-2Mi", Requested: 8 * mi, Used: 0, Capacity: 4 * mi},
		// vendor.io/missing: the node has none, so the kubelet leaves it
		// alone; "bare" is not a scalar resource name.
	}
	require.Equal(t, want, got, "Fit =")

	n := newNode(t, alloc, nil, running...)
	r := admit(t, n, p, admission.Options{}, nil)
	assert.False(t, r.Admitted, "result = %+v", r)
	assert.Equal(t, "OutOfpods", r.Reason, "result = %+v", r)
	assert.Equal(t, "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2", r.Message, "result = %+v", r)
	assert.Equal(t, want, r.FitReasons, "fit reasons %v, evicted %v", r.FitReasons, r.Evicted)
	assert.Empty(t, r.Evicted, "fit reasons %v, evicted %v", r.FitReasons, r.Evicted)
	for _, tc := range []struct {
		res    pod.ResourceName
		reason string
	}{{pod.CPU, "OutOfcpu"}, {pod.Memory, "OutOfmemory"}, {pod.EphemeralStorage, "OutOfephemeral-storage"}, {gpu, "OutOfexample.com/gpu"}} {
		n := newNode(t, pod.ResourceList{pod.Pods: 10, tc.res: 10}, nil)
		r := admit(t, n, mkPod("x", pod.ResourceList{tc.res: 11}, nil), admission.Options{}, nil)
		require.False(t, r.Admitted, "%s: reason %q, want %q", tc.res, r.Reason, tc.reason)
		assert.Equal(t, tc.reason, r.Reason, "%s: reason %q, want %q", tc.res, r.Reason, tc.reason)
	}
	// A predicate failure the caller found follows the resource reasons.
	n = newNode(t, pod.ResourceList{pod.Pods: 10, pod.CPU: 1000}, nil)
	affinity := &preemption.PredicateFailure{PredicateName: "NodeAffinity", PredicateDesc: "node(s) didn't match Pod's node affinity/selector"}
	r = admit(t, n, mkPod("y", pod.ResourceList{pod.CPU: 100}, nil), admission.Options{OtherReasons: []*preemption.PredicateFailure{affinity}}, nil)
	assert.False(t, r.Admitted, "result = %+v", r)
	assert.Equal(t, "NodeAffinity", r.Reason, "result = %+v", r)
	assert.Equal(t, "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector", r.Message, "result = %+v", r)
}

// TestSpecMissingScalarResources checks which scalar resources of which
// the node has none the fit checks (docs/deviations.md N6, fixed): only an
// extended resource allocatable does not list at all is dropped, and only
// from the containers' requests (removeMissingExtendedResources); one
// listed at 0, a huge page size, attachable volumes and a kubernetes.io
// resource, listed at 0 or not at all, are short whenever asked for, and
// so is an extended resource the pod's overhead asks for.
func TestSpecMissingScalarResources(t *testing.T) {
	alloc := pod.ResourceList{pod.Pods: 10, pod.CPU: 1000, "hugepages-2Mi": 0, "vendor.io/zero": 0}
	short := func(res pod.ResourceName, q int64) preemption.Reason {
		return &preemption.InsufficientResource{ResourceName: res, Requested: q, Capacity: alloc[res]}
	}
	for _, tc := range []struct {
		name string
		p    *pod.Pod
		want []preemption.Reason
	}{
		{"huge pages listed at 0", mkPod("p", pod.ResourceList{"hugepages-2Mi": 2 * mi}, nil), []preemption.Reason{short("hugepages-2Mi", 2*mi)}},
		{"huge page size not listed", mkPod("p", pod.ResourceList{"hugepages-1Gi": 1 << 30}, nil), []preemption.Reason{short("hugepages-1Gi", 1<<30)}},
		{"extended resource listed at 0", mkPod("p", pod.ResourceList{"vendor.io/zero": 1}, nil), []preemption.Reason{short("vendor.io/zero", 1)}},
		{"extended resource not listed", mkPod("p", pod.ResourceList{"vendor.io/missing": 1}, nil), nil},
		{"attachable volumes not listed", mkPod("p", pod.ResourceList{"attachable-volumes-csi-x": 1}, nil), []preemption.Reason{short("attachable-volumes-csi-x", 1)}},
		{"kubernetes.io resource not listed", mkPod("p", pod.ResourceList{"example.kubernetes.io/thing": 1}, nil), []preemption.Reason{short("example.kubernetes.io/thing", 1)}},
		{"extended resource not listed, in the overhead", func() *pod.Pod {
			p := mkPod("p", pod.ResourceList{"vendor.io/missing": 5}, nil)
			p.Overhead = pod.ResourceList{"vendor.io/missing": 1}
			return p
		}(), []preemption.Reason{short("vendor.io/missing", 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, admission.Fit(alloc, nil, tc.p), "Fit =")
			r := admit(t, newNode(t, alloc, nil), tc.p, admission.Options{}, nil)
			assert.Equal(t, len(tc.want) == 0, r.Admitted, "result = %+v", r)
			assert.Equal(t, tc.want, r.FitReasons, "fit reasons")
		})
	}
	// The dropped request is the arriving pod's only: the pod itself is
	// left as it came.
	p := mkPod("p", pod.ResourceList{"vendor.io/missing": 1}, nil)
	admission.Fit(alloc, nil, p)
	assert.Equal(t, pod.ResourceList{"vendor.io/missing": 1}, p.Containers[0].Requests, "the pod's requests after the fit")
}

// TestSpecOverheadAndSidecarsCount checks that the fit asks for the
// effective requests: sidecars run next to the app containers and the
// overhead is added.
func TestSpecOverheadAndSidecarsCount(t *testing.T) {
	p := mkPod("p", pod.ResourceList{pod.CPU: 500}, nil)
	p.InitContainers = []pod.Container{{Name: "side", Requests: pod.ResourceList{pod.CPU: 300}, RestartPolicy: pod.RestartAlways}}
	p.Overhead = pod.ResourceList{pod.CPU: 200}
	n := newNode(t, pod.ResourceList{pod.Pods: 10, pod.CPU: 999}, nil)
	r := admit(t, n, p, admission.Options{}, nil)
	assert.False(t, r.Admitted, "result = %+v", r)
	assert.Equal(t, "Node didn't have enough resource: cpu, requested: 1000, used: 0, capacity: 999", r.Message, "result = %+v", r)
}

// TestSpecCriticalPreempts admits a critical pod by preempting, removes the
// victims from the node and counts the preemptions.
func TestSpecCriticalPreempts(t *testing.T) {
	be := mkPod("be", nil, nil)
	bu := mkPod("bu", pod.ResourceList{pod.CPU: 400}, nil)
	gu := mkPod("gu", pod.ResourceList{pod.CPU: 400, pod.Memory: mi}, pod.ResourceList{pod.CPU: 400, pod.Memory: mi})
	n := newNode(t, pod.ResourceList{pod.Pods: 3, pod.CPU: 1000, pod.Memory: 10 * mi}, nil, gu, be, bu)
	c := critical(mkPod("critical", pod.ResourceList{pod.CPU: 500}, nil))
	r := admit(t, n, c, admission.Options{}, nil)
	require.True(t, r.Admitted, "result = %+v", r)
	require.Equal(t, "", r.Reason, "result = %+v", r)
	// Short of one pod slot and 300m cpu: the Burstable pod frees both, so
	// no Guaranteed pod goes and the BestEffort pod, which frees only the
	// slot, is not needed.
	assert.Equal(t, []string{"bu"}, names(r.Evicted), "evicted")
	assert.Equal(t, (preemption.Requirements{{Resource: pod.Pods, Quantity: 1}, {Resource: pod.CPU, Quantity: 300}}), r.Requirements, "requirements")
	assert.Equal(t, 1, r.Preemptions["pods"], "preemptions %v, want pods: 1", r.Preemptions)
	assert.Equal(t, []string{"gu", "be", "critical"}, uids(n), "active")
}

// TestSpecKillFailureStillAdmits is #78405 / PR #78493 at node level: the
// kill fails, the critical pod is admitted all the same, and the victim
// stays active, terminating, holding its resources until it is removed.
func TestSpecKillFailureStillAdmits(t *testing.T) {
	bu := mkPod("bu", pod.ResourceList{pod.CPU: 600}, nil)
	n := newNode(t, pod.ResourceList{pod.Pods: 10, pod.CPU: 1000}, nil, bu)
	c := critical(mkPod("static", pod.ResourceList{pod.CPU: 500}, nil))
	c.Priority = nil
	c.Annotations = map[string]string{pod.ConfigSourceAnnotation: preemption.FileSource}
	r := admit(t, n, c, admission.Options{}, errors.New("timed out waiting for the pod to stop"))
	require.True(t, r.Admitted, "result = %+v", r)
	require.Empty(t, r.Evicted, "result = %+v", r)
	require.Len(t, r.KillFailed, 1, "result = %+v", r)
	require.Empty(t, r.Preemptions, "result = %+v", r)
	assert.Equal(t, []string{"bu(terminating)", "static"}, uids(n), "active")
	used := n.Used()[pod.CPU]
	assert.Equal(t, int64(1100), used, "used cpu: the terminating victim still counts")
	// The next pod is judged against the node with the victim still on it.
	r = admit(t, n, mkPod("late", pod.ResourceList{pod.CPU: 1}, nil), admission.Options{}, nil)
	assert.False(t, r.Admitted, "result = %+v", r)
	assert.Equal(t, "Node didn't have enough resource: cpu, requested: 1, used: 1100, capacity: 1000", r.Message, "result = %+v", r)
	require.NoError(t, n.Remove("bu"))
	r = admit(t, n, mkPod("late", pod.ResourceList{pod.CPU: 1}, nil), admission.Options{}, nil)
	assert.True(t, r.Admitted, "result = %+v after the victim is gone", r)
}

// TestSpecCriticalRejections checks the two ways a critical pod is still
// rejected: a non-resource reason (no preemption at all) and no set of pods
// that frees enough (UnexpectedAdmissionError).
func TestSpecCriticalRejections(t *testing.T) {
	bu := mkPod("bu", pod.ResourceList{pod.CPU: 600}, nil)
	n := newNode(t, pod.ResourceList{pod.Pods: 10, pod.CPU: 1000}, nil, bu)
	taint := &preemption.PredicateFailure{PredicateName: "TaintToleration", PredicateDesc: "node(s) had untolerated taint(s)"}
	r := admit(t, n, critical(mkPod("c1", pod.ResourceList{pod.CPU: 500}, nil)), admission.Options{OtherReasons: []*preemption.PredicateFailure{taint}}, nil)
	assert.False(t, r.Admitted, "result = %+v, active %v", r, uids(n))
	assert.Equal(t, "TaintToleration", r.Reason, "result = %+v, active %v", r, uids(n))
	require.Empty(t, r.Evicted, "result = %+v, active %v", r, uids(n))
	assert.Len(t, n.Active(), 1, "result = %+v, active %v", r, uids(n))
	r = admit(t, n, critical(mkPod("c2", pod.ResourceList{pod.CPU: 2000}, nil)), admission.Options{}, nil)
	want := "Unexpected error while attempting to recover from admission failure: preemption: error finding a set of pods to preempt: no set of running pods found to reclaim resources: [(res: cpu, q: 1000), ]"
	assert.False(t, r.Admitted, "result = %+v\nwant message %s", r, want)
	assert.Equal(t, "UnexpectedAdmissionError", r.Reason, "result = %+v\nwant message %s", r, want)
	assert.Equal(t, want, r.Message, "result = %+v\nwant message %s", r, want)
}

// deviceNode is a node with one GPU plugin of two healthy devices.
func deviceNode(t *testing.T) (*admission.Node, *dm.Manager) {
	t.Helper()
	m := dm.New(dm.DefaultLimits())
	m.SetSourcesReady()
	_, err := m.Connected(string(gpu), "gpu.sock", dm.PluginOptions{})
	require.NoError(t, err)
	require.NoError(t, m.Update(string(gpu), []dm.Device{{ID: "g0", Health: dm.Healthy}, {ID: "g1", Health: dm.Healthy}}))
	return newNode(t, pod.ResourceList{pod.Pods: 10, pod.CPU: 1000, gpu: 2}, m), m
}

func answer(p *dm.Plan) ([][]allocresp.ContainerAllocateResponse, error) {
	out := make([][]allocresp.ContainerAllocateResponse, len(p.Requests))
	for i := range p.Requests {
		out[i] = []allocresp.ContainerAllocateResponse{{Envs: map[string]string{"GPU": "yes"}}}
	}
	return out, nil
}

// TestSpecDevices checks that devices are allocated before the fit (the
// topology manager's handler runs first) and that a failed allocation
// rejects the pod with UnexpectedAdmissionError.
func TestSpecDevices(t *testing.T) {
	n, m := deviceNode(t)
	one := mkPod("one", pod.ResourceList{gpu: 1}, pod.ResourceList{gpu: 1})
	a, err := n.Begin(one, admission.Options{})
	require.NoError(t, err)
	step := a.Next()
	require.Equal(t, admission.StepAllocate, step.Kind, "step = %+v", step)
	require.Len(t, step.Plan.Requests, 1, "step = %+v", step)
	require.Equal(t, []string{"g0"}, step.Plan.Requests[0].DeviceIDs, "step = %+v", step)
	assert.Equal(t, step.Plan, a.Next().Plan, "Next before answering must repeat the step")
	_, err = n.Begin(mkPod("other", nil, nil), admission.Options{})
	assert.Error(t, err, "a second admission began while one is in progress")
	answers, _ := answer(step.Plan)
	require.NoError(t, a.Allocated(answers, nil))
	step = a.Next()
	require.Equal(t, admission.StepDone, step.Kind, "step = %+v", step)
	require.True(t, step.Result.Admitted, "step = %+v", step)
	assert.Equal(t, map[string][]string{string(gpu): {"g0"}}, m.ContainerDevices("one", "c"), "devices")

	// Two GPUs asked, one free: the device manager fails before the fit
	// would have found the node short of example.com/gpu.
	a, _ = n.Begin(mkPod("two", pod.ResourceList{gpu: 2}, pod.ResourceList{gpu: 2}), admission.Options{})
	r, err := admission.Drive(a, answer, nil)
	require.NoError(t, err)
	want := "Allocate failed due to requested number of devices unavailable for example.com/gpu. Requested: 2, Available: 1, which is unexpected"
	assert.False(t, r.Admitted, "result = %+v", r)
	assert.Equal(t, "UnexpectedAdmissionError", r.Reason, "result = %+v", r)
	assert.Equal(t, want, r.Message, "result = %+v", r)
	assert.Empty(t, r.FitReasons, "result = %+v", r)

	// The plugin's Allocate RPC fails.
	a, _ = n.Begin(mkPod("rpc", pod.ResourceList{gpu: 1}, pod.ResourceList{gpu: 1}), admission.Options{})
	r, err = admission.Drive(a, func(*dm.Plan) ([][]allocresp.ContainerAllocateResponse, error) {
		return nil, errors.New("rpc error: code = Unavailable desc = connection refused")
	}, nil)
	require.NoError(t, err)
	assert.False(t, r.Admitted, "result = %+v", r)
	assert.Equal(t, "Allocate failed due to rpc error: code = Unavailable desc = connection refused, which is unexpected", r.Message, "result = %+v", r)
	free := len(m.Allocated()[string(gpu)])
	assert.Equal(t, 1, free, "(the first pod's)")
}

// TestBadInput checks the errors that name the field and the rule.
func TestBadInput(t *testing.T) {
	_, err := admission.NewNode(pod.ResourceList{pod.CPU: -1}, nil)
	assert.EqualError(t, err, "allocatable[cpu]: -1 must not be negative", "NewNode")
	n := newNode(t, pod.ResourceList{pod.Pods: 10}, nil, mkPod("a", nil, nil))
	for _, tc := range []struct {
		p    *pod.Pod
		opts admission.Options
		want string
	}{
		{nil, admission.Options{}, "pod: must not be nil"},
		{mkPod("a", nil, nil), admission.Options{}, `pod.uid: "a" is already active on the node`},
		{mkPod("b", pod.ResourceList{pod.CPU: -3}, nil), admission.Options{}, "pod.containers[0].requests[cpu]: -3 must not be negative"},
		{mkPod("b", nil, nil), admission.Options{OtherReasons: []*preemption.PredicateFailure{nil}}, "otherReasons[0]: must not be nil"},
	} {
		_, err := n.Begin(tc.p, tc.opts)
		assert.EqualError(t, err, tc.want, "Begin: %v, want %q", err, tc.want)
	}
	err = n.Remove("zzz")
	assert.EqualError(t, err, `pod "zzz": not active on the node`, "Remove")
	a, _ := n.Begin(mkPod("b", nil, nil), admission.Options{})
	err = a.Killed(nil)
	assert.EqualError(t, err, `pod "b": no kill is pending`, "Killed")
	err = a.Allocated(nil, nil)
	assert.EqualError(t, err, `pod "b": no allocation is pending`, "Allocated")
}

func names(pods []*pod.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// TestInputAtTheBoundsIsAccepted checks the other side of each bound Begin
// enforces: exactly the bound is valid input, one more is not.
func TestInputAtTheBoundsIsAccepted(t *testing.T) {
	n := newNode(t, pod.ResourceList{pod.Pods: 10}, nil)
	reasons := func(count int) []*preemption.PredicateFailure {
		out := make([]*preemption.PredicateFailure, count)
		for i := range out {
			out[i] = &preemption.PredicateFailure{PredicateName: "NodeAffinity"}
		}
		return out
	}
	a, err := n.Begin(mkPod("b", nil, nil), admission.Options{OtherReasons: reasons(preemption.MaxReasons)})
	require.NoError(t, err, "%d other reasons are within the bound", preemption.MaxReasons)
	require.NotNil(t, a)
	n = newNode(t, pod.ResourceList{pod.Pods: 10}, nil)
	_, err = n.Begin(mkPod("b", nil, nil), admission.Options{OtherReasons: reasons(preemption.MaxReasons + 1)})
	assert.EqualError(t, err, "otherReasons: 65 reasons exceed the bound of 64")
}

// TestSpecDevicesNeverLowerAllocatable checks UpdatePluginResources' rule:
// for a pod holding devices, allocatable of a device resource is raised to
// the devices allocated, never lowered to them. Here a running pod's GPU
// request is on the node but not in the device manager, so one device is
// allocated while the node's two are both requested.
func TestSpecDevicesNeverLowerAllocatable(t *testing.T) {
	n, _ := deviceNode(t)
	require.NoError(t, n.AddRunning(mkPod("running", pod.ResourceList{gpu: 1}, pod.ResourceList{gpu: 1})))
	a, err := n.Begin(mkPod("one", pod.ResourceList{gpu: 1}, pod.ResourceList{gpu: 1}), admission.Options{})
	require.NoError(t, err)
	r, err := admission.Drive(a, answer, nil)
	require.NoError(t, err)
	assert.True(t, r.Admitted, "result = %+v", r)
}

// TestNoKillStepWithoutVictims checks that a failed fit with nothing to
// preempt (the pod is not critical) ends the admission at once: the caller
// is never handed a kill step with no evictions.
func TestNoKillStepWithoutVictims(t *testing.T) {
	n := newNode(t, pod.ResourceList{pod.Pods: 10, pod.CPU: 100}, nil)
	a, err := n.Begin(mkPod("big", pod.ResourceList{pod.CPU: 500}, nil), admission.Options{})
	require.NoError(t, err)
	step := a.Next()
	require.Equal(t, admission.StepDone, step.Kind, "step = %+v", step)
	assert.False(t, step.Result.Admitted, "result = %+v", step.Result)
	assert.Equal(t, "OutOfcpu", step.Result.Reason, "result = %+v", step.Result)
}

// TestRemoveDuringAnAdmission checks that an open admission blocks the
// removal of its own pod only: another pod may still leave the node.
func TestRemoveDuringAnAdmission(t *testing.T) {
	n := newNode(t, pod.ResourceList{pod.Pods: 10}, nil, mkPod("a", nil, nil))
	_, err := n.Begin(mkPod("b", nil, nil), admission.Options{})
	require.NoError(t, err)
	assert.EqualError(t, n.Remove("b"), `pod "b": its admission is in progress`)
	assert.NoError(t, n.Remove("a"))
	// The errors of the calls an open admission blocks name both pods.
	assert.EqualError(t, n.AddRunning(mkPod("c", nil, nil)), `pod "c": the admission of pod "b" is in progress`)
	_, err = n.Begin(nil, admission.Options{})
	assert.EqualError(t, err, `pod "": the admission of pod "b" is in progress`)
}

// TestMaxPodsIsTheBound checks that a node holds exactly MaxPods active
// pods: the last one fits, one more is rejected.
func TestMaxPodsIsTheBound(t *testing.T) {
	n := newNode(t, pod.ResourceList{pod.Pods: admission.MaxPods + 1}, nil)
	for i := range admission.MaxPods {
		require.NoError(t, n.AddRunning(mkPod(fmt.Sprintf("p%d", i), nil, nil)))
	}
	err := n.AddRunning(mkPod("over", nil, nil))
	assert.EqualError(t, err, fmt.Sprintf("pod: the node already has %d active pods, the bound", admission.MaxPods))
}

// TestSpecDevicesRaiseAllocatable checks the purpose of UpdatePluginResources:
// a node whose allocatable lags behind the device plugin (one GPU reported,
// two healthy) still admits a pod the device manager just gave both.
func TestSpecDevicesRaiseAllocatable(t *testing.T) {
	_, m := deviceNode(t)
	n := newNode(t, pod.ResourceList{pod.Pods: 10, gpu: 1}, m)
	a, err := n.Begin(mkPod("two", pod.ResourceList{gpu: 2}, pod.ResourceList{gpu: 2}), admission.Options{})
	require.NoError(t, err)
	r, err := admission.Drive(a, answer, nil)
	require.NoError(t, err)
	assert.True(t, r.Admitted, "result = %+v", r)
}
