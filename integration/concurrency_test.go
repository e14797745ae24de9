package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/agent/deviceplugin"
	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// other is a second resource, served by a plugin of its own.
const other = "example.com/other"

// waitAllocateCalls waits until a plugin has received n Allocate calls: the
// event that says the agent's admissions are in flight.
func (e *env) waitAllocateCalls(p *testplugin.Plugin, n int) {
	e.t.Helper()
	e.eventually(func() string {
		return fmt.Sprintf("%d Allocate calls (got %v)", n, allocated(p))
	}, func() bool { return len(p.Calls(testplugin.Allocate)) == n })
}

// TestNoLockAcrossAllocate: while one pod's Allocate RPC is in flight, the
// agent reports its capacity and admits a pod of another resource, because
// no lock is held across an RPC (DESIGN "Style").
func TestNoLockAcrossAllocate(t *testing.T) {
	e := newEnv(t, deviceplugin.Options{})
	slow := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0")})
	e.plugin(testplugin.Config{Endpoint: "q.sock", ResourceName: other, Devices: testplugin.Healthy("o0")})
	e.waitCapacity(1, 1)
	e.eventually(func() string { return other + " to have a device" }, func() bool {
		return e.agent.Capacity().Allocatable[other] == 1
	})
	release := make(chan struct{})
	slow.SetFault(testplugin.Allocate, testplugin.Fault{Block: release})

	slowDone := make(chan error, 1)
	go func() { slowDone <- e.agent.Admit(context.Background(), podWith("slow", 1)) }()
	e.waitAllocateCalls(slow, 1)

	otherPod := &pod.Pod{UID: "fast", Name: "fast", Namespace: "default", Containers: []pod.Container{
		{Name: "app", Limits: pod.ResourceList{other: 1}},
	}}
	fastDone := make(chan error, 1)
	go func() {
		e.agent.Capacity()
		fastDone <- e.agent.Admit(context.Background(), otherPod)
	}()
	// A correct agent answers at once; the limit only turns a lock held
	// across the RPC into a failure. Releasing the RPC afterwards lets a
	// broken agent unwind, so the test ends either way.
	select {
	case err := <-fastDone:
		assert.NoError(t, err, "admitting a pod of %s while %s's Allocate is in flight", other, res)
		close(release)
	case <-time.After(waitLimit):
		t.Errorf("Capacity and an admission of %s still wait after %v while %s's Allocate is in flight: a lock is held across the RPC", other, waitLimit, res)
		close(release)
		<-fastDone
	}
	assert.NoError(t, <-slowDone, "admitting the pod whose Allocate was held")
}

// TestConcurrentAdmissionsGetDistinctDevices: two admissions whose Allocate
// RPCs are in flight at once are handed different devices, and each pod's
// run options carry the answer for its own device. The reservation made
// with the plan must hold until the commit; an agent that chooses devices
// in one critical section and claims them in another hands one out twice.
func TestConcurrentAdmissionsGetDistinctDevices(t *testing.T) {
	e := newEnv(t, deviceplugin.Options{})
	p := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0", "d1")})
	e.waitCapacity(2, 2)
	release := make(chan struct{})
	p.SetFault(testplugin.Allocate, testplugin.Fault{Block: release})

	uids := []string{"pod1", "pod2"}
	errs := make(chan error, len(uids))
	for _, uid := range uids {
		go func() { errs <- e.agent.Admit(context.Background(), podWith(uid, 1)) }()
	}
	// Both plans are made and both RPCs are held: the commits come after.
	e.waitAllocateCalls(p, 2)
	got := allocated(p)
	assert.False(t, slices.Equal(got[0], got[1]), "two admissions in flight at once asked the plugin for the same devices: %v", got)
	close(release)
	for range uids {
		assert.NoError(t, <-errs, "admission")
	}

	var handed []string
	for _, uid := range uids {
		opts, err := e.agent.StartContainer(context.Background(), podWith(uid, 1), "app")
		require.NoError(t, err)
		require.NotNil(t, opts, "run options of %s: %+v, want the plugin's TESTPLUGIN_DEVICES", uid, opts)
		require.Len(t, opts.Envs, 1, "run options of %s: %+v, want the plugin's TESTPLUGIN_DEVICES", uid, opts)
		handed = append(handed, opts.Envs[0].Value)
	}
	slices.Sort(handed)
	assert.True(t, slices.Equal(handed, []string{"d0", "d1"}), "the two pods' run options name devices %v, want d0 and d1", handed)
}
