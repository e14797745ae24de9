package devicemanager_test

import (
	"testing"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpecRunContainerOptionsMerge checks devicemanager.md §1.9: the Allocate
// answers of a container's resources are merged with the first writer
// winning for env names, mount and device container paths and annotation
// names; CDI devices are de-duplicated by name; a mount is named by its
// container path. Upstream merges in map order; the core in resource name
// order, so "a.com/r" writes first.
func TestSpecRunContainerOptionsMerge(t *testing.T) {
	m := specManager()
	for _, r := range []string{"a.com/r", "b.com/r"} {
		specConnect(t, m, r, dm.PluginOptions{})
		specUpdate(t, m, r, specHealthy("d0"))
	}
	p := &pod.Pod{UID: "p1", Containers: []pod.Container{{Name: "app", Limits: specLimits("b.com/r", 1, "a.com/r", 1)}}}
	plan, err := m.PlanContainer(dm.PlanInput{Pod: p, Container: "app", ActivePods: []string{"p1"}})
	require.NoError(t, err)
	require.Len(t, plan.Requests, 2, "plan requests = %+v, want a.com/r then b.com/r", plan.Requests)
	require.Equal(t, "a.com/r", plan.Requests[0].Resource, "plan requests = %+v, want a.com/r then b.com/r", plan.Requests)
	require.Equal(t, "b.com/r", plan.Requests[1].Resource, "plan requests = %+v, want a.com/r then b.com/r", plan.Requests)
	answerA := allocresp.ContainerAllocateResponse{
		Envs:        map[string]string{"SHARED": "from-a", "A_ONLY": "1"},
		Mounts:      []allocresp.Mount{{ContainerPath: "/mnt/dev", HostPath: "/host/a", ReadOnly: true}},
		Devices:     []allocresp.DeviceSpec{{ContainerPath: "/dev/x", HostPath: "/dev/a0", Permissions: "rw"}},
		Annotations: map[string]string{"ann": "from-a"},
		CDIDevices:  []allocresp.CDIDevice{{Name: "vendor.com/dev=a"}, {Name: "vendor.com/dev=shared"}},
	}
	answerB := allocresp.ContainerAllocateResponse{
		Envs: map[string]string{"SHARED": "from-b", "B_ONLY": "2"},
		Mounts: []allocresp.Mount{
			{ContainerPath: "/mnt/dev", HostPath: "/host/b"},
			{ContainerPath: "/mnt/b", HostPath: "/host/b2"},
		},
		Devices:     []allocresp.DeviceSpec{{ContainerPath: "/dev/x", HostPath: "/dev/b0", Permissions: "r"}},
		Annotations: map[string]string{"ann": "from-b", "b-ann": "2"},
		CDIDevices:  []allocresp.CDIDevice{{Name: "vendor.com/dev=shared"}, {Name: "vendor.com/dev=b"}},
	}
	require.NoError(t, m.Commit(plan.ID, [][]allocresp.ContainerAllocateResponse{{answerA}, {answerB}}))
	specEqual(t, "run options", m.RunContainerOptions("p1", "app"), &dm.RunContainerOptions{
		Envs: []dm.KeyValue{{Name: "A_ONLY", Value: "1"}, {Name: "SHARED", Value: "from-a"}, {Name: "B_ONLY", Value: "2"}},
		Mounts: []dm.Mount{
			{Name: "/mnt/dev", ContainerPath: "/mnt/dev", HostPath: "/host/a", ReadOnly: true},
			{Name: "/mnt/b", ContainerPath: "/mnt/b", HostPath: "/host/b2"},
		},
		Devices:     []dm.DeviceNode{{PathOnHost: "/dev/a0", PathInContainer: "/dev/x", Permissions: "rw"}},
		Annotations: []dm.KeyValue{{Name: "ann", Value: "from-a"}, {Name: "b-ann", Value: "2"}},
		CDIDevices:  []string{"vendor.com/dev=a", "vendor.com/dev=shared", "vendor.com/dev=b"},
	})

	// §1.9: "nil when pod/container unknown".
	assert.Nil(t, m.RunContainerOptions("p1", "other"), "RunContainerOptions(unknown container)")
	assert.Nil(t, m.RunContainerOptions("nope", "app"), "RunContainerOptions(unknown pod)")
}

// TestSpecPreStartCalls checks §1.9 callPreStartContainerIfNeeded and the
// re-allocation test of GetDeviceRunContainerOptions: a PreStartContainer
// call only for plugins with PreStartRequired, carrying the container's
// devices; an error when such a plugin's container has no devices recorded;
// needsAllocate only for an active pod whose container lacks devices of a
// device plugin resource; limits of 0 skipped.
func TestSpecPreStartCalls(t *testing.T) {
	const pre, plain = "a.com/prestart", "b.com/plain"
	m := specManager()
	preID := specConnect(t, m, pre, dm.PluginOptions{PreStartRequired: true})
	specUpdate(t, m, pre, specHealthy("p0", "p1", "p2"))
	specConnect(t, m, plain, dm.PluginOptions{})
	specUpdate(t, m, plain, specHealthy("q0"))

	withBoth := &pod.Pod{UID: "u1", Containers: []pod.Container{{Name: "app", Limits: specLimits(pre, 2, plain, 1)}}}
	specAllocate(t, m, withBoth, "app", []string{"u1"})
	calls, needsAllocate, err := m.PreStartCalls(withBoth, "app", true)
	require.NoError(t, err)
	specEqual(t, "calls", calls, []dm.PreStartCall{{Resource: pre, Endpoint: preID, DeviceIDs: []string{"p0", "p1"}}})
	specEqual(t, "needsAllocate with devices recorded", needsAllocate, false)

	// A plain plugin's resource without recorded devices asks for a new
	// allocation, but only while the pod is active.
	plainOnly := &pod.Pod{UID: "u2", Containers: []pod.Container{{Name: "app", Limits: specLimits(plain, 1)}}}
	calls, needsAllocate, err = m.PreStartCalls(plainOnly, "app", true)
	require.NoError(t, err, "PreStartCalls(active, no devices) = %v, %v, %v; want no calls, needsAllocate, no error", calls, needsAllocate, err)
	require.Empty(t, calls, "PreStartCalls(active, no devices) = %v, %v, %v; want no calls, needsAllocate, no error", calls, needsAllocate, err)
	assert.True(t, needsAllocate, "PreStartCalls(active, no devices) = %v, %v, %v; want no calls, needsAllocate, no error", calls, needsAllocate, err)
	calls, needsAllocate, err = m.PreStartCalls(plainOnly, "app", false)
	require.NoError(t, err, "PreStartCalls(inactive, no devices) = %v, %v, %v; want nothing", calls, needsAllocate, err)
	require.Empty(t, calls, "PreStartCalls(inactive, no devices) = %v, %v, %v; want nothing", calls, needsAllocate, err)
	assert.False(t, needsAllocate, "PreStartCalls(inactive, no devices) = %v, %v, %v; want nothing", calls, needsAllocate, err)

	// PreStartRequired without recorded devices fails before the activity test.
	preOnly := &pod.Pod{UID: "u3", Containers: []pod.Container{{Name: "app", Limits: specLimits(pre, 1)}}}
	for _, active := range []bool{true, false} {
		_, _, err = m.PreStartCalls(preOnly, "app", active)
		specWantErr(t, err, dm.KindPreStartNoDevices, "no devices found allocated in local cache for pod u3, container app, resource a.com/prestart")
	}

	// A limit of 0 is skipped altogether, so no error.
	zero := &pod.Pod{UID: "u4", Containers: []pod.Container{{Name: "app", Limits: specLimits(pre, 0)}}}
	calls, needsAllocate, err = m.PreStartCalls(zero, "app", true)
	require.NoError(t, err, "PreStartCalls(limit 0) = %v, %v, %v; want nothing", calls, needsAllocate, err)
	require.Empty(t, calls, "PreStartCalls(limit 0) = %v, %v, %v; want nothing", calls, needsAllocate, err)
	assert.False(t, needsAllocate, "PreStartCalls(limit 0) = %v, %v, %v; want nothing", calls, needsAllocate, err)

	_, _, err = m.PreStartCalls(withBoth, "nope", true)
	specWantErr(t, err, dm.KindInvalidInput, `prestart: pod "u1" has no container "nope"`)
}

// TestSpecPreStartEndpointGone checks §1.9 "endpoint missing → endpoint not
// found in cache for a registered resource: %s": the resource's state was
// deleted after the grace period while a pod still holds devices of it.
func TestSpecPreStartEndpointGone(t *testing.T) {
	m, id := specReady(t, 1, dm.PluginOptions{PreStartRequired: true})
	p := specPod("p1", 1)
	specAllocate(t, m, p, "app", []string{"p1"})
	m.Disconnected(specRes, id, specT0)
	m.GetCapacity(specT0.Add(dm.EndpointStopGracePeriod + 1))
	_, _, err := m.PreStartCalls(p, "app", true)
	specWantErr(t, err, dm.KindEndpointNotFound, "endpoint not found in cache for a registered resource: domain1.com/resource1")
}

// TestSpecPreStartFailed checks the wrapper of the PreStartContainer RPC
// error (§1.9 "device plugin PreStartContainer rpc failed with err: %v").
func TestSpecPreStartFailed(t *testing.T) {
	cause := errTimeout{}
	err := dm.PreStartFailed(cause)
	specWantErr(t, err, dm.KindPreStartFailed, "device plugin PreStartContainer rpc failed with err: context deadline exceeded")
}

// errTimeout stands for the error of a PreStartContainer call that hit its
// 30 s deadline.
type errTimeout struct{}

func (errTimeout) Error() string { return "context deadline exceeded" }
