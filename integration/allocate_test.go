package integration

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/agent/deviceplugin"
	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAllocateFaults: whatever goes wrong with the Allocate RPC, the pod is
// refused with upstream's reason, nothing stays reserved (the next pod gets
// every device) and the checkpoint records nothing for the refused pod.
func TestAllocateFaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault testplugin.Fault
		want  string
	}{
		{"error", testplugin.Fault{Err: errors.New("device busy")},
			"Allocate failed due to rpc error: code = Unknown desc = device busy, which is unexpected"},
		{"hang past the deadline", testplugin.Fault{Hang: true}, "code = DeadlineExceeded"},
		{"delay past the deadline", testplugin.Fault{Delay: time.Minute}, "code = DeadlineExceeded"},
		{"crash mid-RPC", testplugin.Fault{Crash: true}, "code = Unavailable"},
		{"no container responses", testplugin.Fault{Malformed: testplugin.NoContainerResponses},
			"Allocate failed due to no containers return in allocation response , which is unexpected"},
		{"extra container responses", testplugin.Fault{Malformed: testplugin.ExtraContainerResponses},
			"answered Allocate with 2 container responses for 1 container request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, deviceplugin.Options{AllocateTimeout: 200 * time.Millisecond})
			p := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0", "d1")})
			e.waitCapacity(2, 2)
			p.SetFault(testplugin.Allocate, tc.fault)

			msg := e.admitFails(podWith("refused", 1))
			assert.Contains(t, msg, tc.want, "admission failed with %q, want it to contain %q", msg, tc.want)
			if tc.fault.Crash {
				// The plugin is gone for good; a new instance takes over.
				e.waitPlugins(0)
				p = e.plugin(testplugin.Config{Endpoint: "p2.sock", Devices: testplugin.Healthy("d0", "d1")})
				e.waitCapacity(2, 2)
			}
			p.SetFault(testplugin.Allocate, testplugin.Fault{})
			e.admit(podWith("next", 2))
			got := allocated(p)
			assert.True(t, slices.Equal(got[len(got)-1], []string{"d0", "d1"}), "Allocate calls %v, want the last for d0 and d1", got)
			for _, entry := range e.readCheckpoint().PodDeviceEntries {
				assert.NotEqual(t, "refused", entry.PodUID, "the checkpoint records the refused pod: %+v", entry)
			}
		})
	}
}

func TestAllocateDelayWithinDeadline(t *testing.T) {
	e := newEnv(t, deviceplugin.Options{})
	p := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0")})
	e.waitCapacity(1, 1)
	p.SetFault(testplugin.Allocate, testplugin.Fault{Delay: 20 * time.Millisecond})
	e.admit(podWith("pod1", 1))
	opts, err := e.agent.StartContainer(context.Background(), podWith("pod1", 1), "app")
	require.NoError(t, err)
	require.NotNil(t, opts, "run options %+v, want the plugin's TESTPLUGIN_DEVICES=d0", opts)
	require.Len(t, opts.Envs, 1, "run options %+v, want the plugin's TESTPLUGIN_DEVICES=d0", opts)
	assert.Equal(t, "d0", opts.Envs[0].Value, "run options %+v, want the plugin's TESTPLUGIN_DEVICES=d0", opts)
}

func TestPreferredAllocation(t *testing.T) {
	e := newEnv(t, deviceplugin.Options{})
	p := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0", "d1", "d2", "d3"), GetPreferredAllocationAvailable: true})
	e.waitCapacity(4, 4)

	// The plugin prefers the last devices offered; the agent follows it.
	e.admit(podWith("pod1", 1))
	calls := p.Calls(testplugin.GetPreferredAllocation)
	require.Len(t, calls, 1, "GetPreferredAllocation calls %+v, want one offering d0..d3 for 1 device", calls)
	require.True(t, slices.Equal(calls[0].DeviceIDs, []string{"d0", "d1", "d2", "d3"}), "GetPreferredAllocation calls %+v, want one offering d0..d3 for 1 device", calls)
	assert.Equal(t, 1, calls[0].Size, "GetPreferredAllocation calls %+v, want one offering d0..d3 for 1 device", calls)
	// IDs the plugin never had are ignored: the default order applies.
	p.SetFault(testplugin.GetPreferredAllocation, testplugin.Fault{Malformed: testplugin.UnknownDeviceIDs})
	e.admit(podWith("pod2", 1))
	got := allocated(p)
	require.Len(t, got, 2, "Allocate calls %v, want d3 (preferred) then d0 (preference unusable)", got)
	assert.Equal(t, "d3", got[0][0], "Allocate calls %v, want d3 (preferred) then d0 (preference unusable)", got)
	assert.Equal(t, "d0", got[1][0], "Allocate calls %v, want d3 (preferred) then d0 (preference unusable)", got)
	// A failed GetPreferredAllocation fails the admission, as upstream.
	p.SetFault(testplugin.GetPreferredAllocation, testplugin.Fault{Err: errors.New("no opinion")})
	msg := e.admitFails(podWith("pod3", 1))
	want := "device plugin GetPreferredAllocation rpc failed with err: rpc error: code = Unknown desc = no opinion"
	assert.Contains(t, msg, want, "admission failed with %q, want %q", msg, want)
}

// TestInitContainersFirst: containers are allocated init containers first;
// an app container reuses what a finished init container held.
func TestInitContainersFirst(t *testing.T) {
	e := newEnv(t, deviceplugin.Options{})
	p := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0", "d1", "d2")})
	e.waitCapacity(3, 3)
	e.admit(&pod.Pod{UID: "pod1", Name: "pod1", Namespace: "default",
		InitContainers: []pod.Container{{Name: "init", Limits: pod.ResourceList{res: 1}}},
		Containers:     []pod.Container{{Name: "app", Limits: pod.ResourceList{res: 2}}},
	})
	got := allocated(p)
	require.Len(t, got, 2, "Allocate calls %v, want [d0] for the init container, then [d0 d1] for the app container", got)
	require.True(t, slices.Equal(got[0], []string{"d0"}), "Allocate calls %v, want [d0] for the init container, then [d0 d1] for the app container", got)
	assert.True(t, slices.Equal(got[1], []string{"d0", "d1"}), "Allocate calls %v, want [d0] for the init container, then [d0 d1] for the app container", got)
}

func TestPreStartContainer(t *testing.T) {
	e := newEnv(t, deviceplugin.Options{})
	required := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0", "d1"), PreStartRequired: true})
	other := e.plugin(testplugin.Config{Endpoint: "q.sock", ResourceName: "example.com/other", Devices: testplugin.Healthy("o0")})
	e.waitCapacity(2, 2)
	e.eventually(func() string { return "example.com/other to have a device" }, func() bool {
		return e.agent.Capacity().Allocatable["example.com/other"] == 1
	})
	both := &pod.Pod{UID: "pod1", Name: "pod1", Namespace: "default", Containers: []pod.Container{
		{Name: "app", Limits: pod.ResourceList{res: 1, "example.com/other": 1}},
	}}
	e.admit(both)
	_, err := e.agent.StartContainer(context.Background(), both, "app")
	require.NoError(t, err)
	got := required.Calls(testplugin.PreStartContainer)
	require.Len(t, got, 1, "PreStartContainer calls %+v, want one for d0", got)
	assert.True(t, slices.Equal(got[0].DeviceIDs, []string{"d0"}), "PreStartContainer calls %+v, want one for d0", got)
	assert.Empty(t, other.Calls(testplugin.PreStartContainer), "a plugin that does not require PreStartContainer")

	required.SetFault(testplugin.PreStartContainer, testplugin.Fault{Err: errors.New("not ready")})
	_, err = e.agent.StartContainer(context.Background(), both, "app")
	want := "device plugin PreStartContainer rpc failed with err: rpc error: code = Unknown desc = not ready"
	assert.EqualError(t, err, want, "StartContainer with a failing PreStartContainer returned %v, want %q", err, want)
}

// TestStopEndsHungAdmission: Stop closes every plugin connection, so an
// admission waiting on a hung Allocate returns, and no goroutine is left.
func TestStopEndsHungAdmission(t *testing.T) {
	e := newEnv(t, deviceplugin.Options{AllocateTimeout: time.Hour})
	p := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0")})
	e.waitCapacity(1, 1)
	p.SetFault(testplugin.Allocate, testplugin.Fault{Hang: true})

	// The admission's context ends the hung call only if Stop does not, so
	// an agent whose Stop waits for the admission fails instead of hanging.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.agent.Admit(ctx, podWith("pod1", 1)) }()
	e.eventually(func() string { return "the plugin to receive the Allocate call" }, func() bool {
		return len(p.Calls(testplugin.Allocate)) == 1
	})
	stopped := make(chan struct{})
	go func() {
		e.agent.Stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(waitLimit):
		t.Errorf("Stop still waits after %v for an admission whose Allocate hangs", waitLimit)
		cancel()
		<-stopped
	}
	e.agent.Stop() // idempotent
	select {
	case err := <-done:
		var ae *deviceplugin.AdmissionError
		assert.True(t, errors.As(err, &ae), "the hung admission returned %v, want an *AdmissionError", err)
	case <-time.After(waitLimit):
		t.Fatal("the admission still hangs after Stop")
	}
	p.Stop()
	p.Stop()
}
