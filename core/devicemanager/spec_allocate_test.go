package devicemanager_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpecInitDevicesReusedByApp checks devicemanager.md §1.6 for a regular
// init container: its devices join devicesToReuse, and the app container
// after it takes them first (#56022 / PR #56818).
func TestSpecInitDevicesReusedByApp(t *testing.T) {
	m, _ := specReady(t, 4, dm.PluginOptions{})
	p := &pod.Pod{UID: "p1", InitContainers: []pod.Container{{Name: "init", Limits: specLimits(specRes, 2)}},
		Containers: []pod.Container{{Name: "app", Limits: specLimits(specRes, 2)}}}
	active := []string{"p1"}

	specEqual(t, "init devices", specAllocate(t, m, p, "init", active), map[string][]string{specRes: {"dev0", "dev1"}})
	specEqual(t, "app devices", specAllocate(t, m, p, "app", active), map[string][]string{specRes: {"dev0", "dev1"}})
	specEqual(t, "holdings", m.Holdings(), []dm.Holding{
		{PodUID: "p1", Container: "app", Resource: specRes, DeviceIDs: []string{"dev0", "dev1"}},
		{PodUID: "p1", Container: "init", Resource: specRes, DeviceIDs: []string{"dev0", "dev1"}},
	})
	specEqual(t, "allocated", m.Allocated(), map[string][]string{specRes: {"dev0", "dev1"}})
}

// TestSpecSidecarDevicesNotReused checks §1.6 for a restartable init
// container: it keeps its devices for the life of the pod, so the app
// container gets different ones (PR #120461).
func TestSpecSidecarDevicesNotReused(t *testing.T) {
	m, _ := specReady(t, 4, dm.PluginOptions{})
	p := &pod.Pod{UID: "p1",
		InitContainers: []pod.Container{{Name: "side", Limits: specLimits(specRes, 2), RestartPolicy: pod.RestartAlways}},
		Containers:     []pod.Container{{Name: "app", Limits: specLimits(specRes, 2)}}}
	active := []string{"p1"}

	specEqual(t, "sidecar devices", specAllocate(t, m, p, "side", active), map[string][]string{specRes: {"dev0", "dev1"}})
	specEqual(t, "app devices", specAllocate(t, m, p, "app", active), map[string][]string{specRes: {"dev2", "dev3"}})
}

// TestSpecReuseAcrossInitSidecarApp walks §1.6 through a regular init
// container, a sidecar and an app container: the sidecar also draws from
// devicesToReuse (allocateContainerResources gets it) but then removes what
// it took, so the app container reuses only the rest.
func TestSpecReuseAcrossInitSidecarApp(t *testing.T) {
	m, _ := specReady(t, 4, dm.PluginOptions{})
	p := &pod.Pod{UID: "p1",
		InitContainers: []pod.Container{
			{Name: "init", Limits: specLimits(specRes, 2)},
			{Name: "side", Limits: specLimits(specRes, 1), RestartPolicy: pod.RestartAlways},
		},
		Containers: []pod.Container{{Name: "app", Limits: specLimits(specRes, 2)}}}
	active := []string{"p1"}

	specEqual(t, "init", specAllocate(t, m, p, "init", active)[specRes], []string{"dev0", "dev1"})
	specEqual(t, "sidecar", specAllocate(t, m, p, "side", active)[specRes], []string{"dev0"})
	specEqual(t, "app", specAllocate(t, m, p, "app", active)[specRes], []string{"dev1", "dev2"})
}

// TestSpecReuseOnlyForThePodBeingAdmitted checks §1.6 "delete devicesToReuse
// entries of every OTHER pod": an init container's devices are not reused
// by another pod, which must take free ones.
func TestSpecReuseOnlyForThePodBeingAdmitted(t *testing.T) {
	m, _ := specReady(t, 4, dm.PluginOptions{})
	p1 := &pod.Pod{UID: "p1", InitContainers: []pod.Container{{Name: "init", Limits: specLimits(specRes, 2)}},
		Containers: []pod.Container{{Name: "app", Limits: specLimits(specRes, 1)}}}
	specAllocate(t, m, p1, "init", []string{"p1", "p2"})
	got := specAllocate(t, m, specPod("p2", 2), "app", []string{"p1", "p2"})
	specEqual(t, "other pod's devices", got[specRes], []string{"dev2", "dev3"})
}

// TestSpecDeviceChoiceOrder checks the documented deterministic order that
// replaces upstream's set iteration (§1.7 note; package doc): reusable
// devices, then the plugin's preferred devices in its order — only when the
// options advertise GetPreferredAllocationAvailable, and only those still
// free — then ascending ID.
func TestSpecDeviceChoiceOrder(t *testing.T) {
	t.Run("preference ignored without the option", func(t *testing.T) {
		m, _ := specReady(t, 6, dm.PluginOptions{})
		plan, err := m.PlanContainer(dm.PlanInput{Pod: specPod("p1", 2), Container: "app", ActivePods: []string{"p1"},
			Preferred: map[string]dm.Preference{specRes: {DeviceIDs: []string{"dev4", "dev5"}}}})
		require.NoError(t, err)
		specEqual(t, "chosen", specChosen(plan)[specRes], []string{"dev0", "dev1"})
	})
	t.Run("preferred first, unknown and taken IDs skipped, then ascending", func(t *testing.T) {
		m, _ := specReady(t, 6, dm.PluginOptions{GetPreferredAllocationAvailable: true})
		active := []string{"p0", "p1"}
		specEqual(t, "p0", specAllocate(t, m, specPod("p0", 1), "app", active)[specRes], []string{"dev0"})
		plan, err := m.PlanContainer(dm.PlanInput{Pod: specPod("p1", 3), Container: "app", ActivePods: active,
			Preferred: map[string]dm.Preference{specRes: {DeviceIDs: []string{"dev5", "nope", "dev0", "dev3"}}}})
		require.NoError(t, err)
		specEqual(t, "chosen", specChosen(plan)[specRes], []string{"dev5", "dev3", "dev1"})
	})
	t.Run("reusable before preferred", func(t *testing.T) {
		m, _ := specReady(t, 6, dm.PluginOptions{GetPreferredAllocationAvailable: true})
		p := &pod.Pod{UID: "p1", InitContainers: []pod.Container{{Name: "init", Limits: specLimits(specRes, 2)}},
			Containers: []pod.Container{{Name: "app", Limits: specLimits(specRes, 3)}}}
		specAllocate(t, m, p, "init", []string{"p1"})
		plan, err := m.PlanContainer(dm.PlanInput{Pod: p, Container: "app", ActivePods: []string{"p1"},
			Preferred: map[string]dm.Preference{specRes: {DeviceIDs: []string{"dev5", "dev4"}}}})
		require.NoError(t, err)
		specEqual(t, "chosen", specChosen(plan)[specRes], []string{"dev0", "dev1", "dev5"})
	})
	t.Run("preferred allocation RPC error", func(t *testing.T) {
		// §1.7 callGetPreferredAllocationIfAvailable: "RPC error → device
		// plugin GetPreferredAllocation rpc failed with err: %v".
		m, _ := specReady(t, 2, dm.PluginOptions{GetPreferredAllocationAvailable: true})
		cause := errors.New("rpc error: code = Unavailable desc = connection refused")
		_, err := m.PlanContainer(dm.PlanInput{Pod: specPod("p1", 1), Container: "app", ActivePods: []string{"p1"},
			Preferred: map[string]dm.Preference{specRes: {Err: cause}}})
		specWantErr(t, err, dm.KindPreferredAllocationFailed,
			"device plugin GetPreferredAllocation rpc failed with err: rpc error: code = Unavailable desc = connection refused")
		assert.True(t, errors.Is(err, cause), "errors.Is(err, plugin error) = false, want the plugin's error wrapped")
		specEqual(t, "nothing reserved", specAllocatedOf(m, specRes), []string{})
		specEqual(t, "pending", m.PendingPlans(), []dm.PlanID{})
	})
}

// TestSpecDevicesToAllocateErrorOrder checks the exact order of §1.7:
// changed request → (restart skip) → unregistered → no healthy → previously
// allocated unhealthy → nothing needed → unavailable, each with upstream's
// text. Each case builds the state that triggers its step while the later
// steps would also fail, so a reordering shows.
func TestSpecDevicesToAllocateErrorOrder(t *testing.T) {
	active := []string{"p1", "p2", "p3"}
	tests := []struct {
		name string
		// setup returns the manager and the pod/container to plan.
		setup func(t *testing.T) (*dm.Manager, *pod.Pod)
		kind  dm.Kind // 0: no error
		msg   string
	}{
		{"changed request beats unhealthy", func(t *testing.T) (*dm.Manager, *pod.Pod) {
			m, id := specReady(t, 4, dm.PluginOptions{})
			specAllocate(t, m, specPod("p1", 2), "app", active)
			m.Disconnected(specRes, id, specT0) // no healthy device left
			return m, specPod("p1", 3)
		}, dm.KindRequestChanged, `pod "p1" container "app" changed request for resource "domain1.com/resource1" from 2 to 3`},

		{"unregistered: device state deleted, pods still hold devices", func(t *testing.T) (*dm.Manager, *pod.Pod) {
			m, id := specReady(t, 4, dm.PluginOptions{})
			specAllocate(t, m, specPod("p1", 2), "app", active)
			m.Disconnected(specRes, id, specT0)
			m.GetCapacity(specT0.Add(dm.EndpointStopGracePeriod + time.Nanosecond))
			return m, specPod("p2", 1)
		}, dm.KindUnregistered, "cannot allocate unregistered device domain1.com/resource1"},

		// The health checks come before needed==0 (#109595): a limit of 0
		// on a resource that is still a device plugin resource errors.
		{"unregistered with a limit of 0", func(t *testing.T) (*dm.Manager, *pod.Pod) {
			m, id := specReady(t, 4, dm.PluginOptions{})
			specAllocate(t, m, specPod("p1", 2), "app", active)
			m.Disconnected(specRes, id, specT0)
			m.GetCapacity(specT0.Add(dm.EndpointStopGracePeriod + time.Nanosecond))
			return m, specPod("p2", 0)
		}, dm.KindUnregistered, "cannot allocate unregistered device domain1.com/resource1"},

		{"no healthy device", func(t *testing.T) (*dm.Manager, *pod.Pod) {
			m := specManager()
			specConnect(t, m, specRes, dm.PluginOptions{})
			specUpdate(t, m, specRes, []dm.Device{{ID: "dev0", Health: dm.Unhealthy}})
			return m, specPod("p1", 1)
		}, dm.KindNoHealthy, "no healthy devices present; cannot allocate unhealthy devices domain1.com/resource1"},

		{"no healthy beats previously allocated unhealthy", func(t *testing.T) (*dm.Manager, *pod.Pod) {
			m, _ := specReady(t, 2, dm.PluginOptions{})
			specAllocate(t, m, specPod("p1", 2), "app", active)
			specUpdate(t, m, specRes, []dm.Device{{ID: "dev0", Health: dm.Unhealthy}, {ID: "dev1", Health: dm.Unhealthy}})
			return m, specPod("p1", 2)
		}, dm.KindNoHealthy, "no healthy devices present; cannot allocate unhealthy devices domain1.com/resource1"},

		{"previously allocated device unhealthy, nothing needed", func(t *testing.T) (*dm.Manager, *pod.Pod) {
			m, _ := specReady(t, 3, dm.PluginOptions{})
			specAllocate(t, m, specPod("p1", 2), "app", active)
			specUpdate(t, m, specRes, append(specHealthy("dev1", "dev2"), dm.Device{ID: "dev0", Health: dm.Unhealthy}))
			return m, specPod("p1", 2)
		}, dm.KindPreviouslyAllocatedUnhealthy, "previously allocated devices are no longer healthy; cannot allocate unhealthy devices domain1.com/resource1"},

		{"nothing needed: same request, devices healthy", func(t *testing.T) (*dm.Manager, *pod.Pod) {
			m, _ := specReady(t, 2, dm.PluginOptions{})
			specAllocate(t, m, specPod("p1", 2), "app", active)
			return m, specPod("p1", 2)
		}, 0, ""},

		{"unavailable", func(t *testing.T) (*dm.Manager, *pod.Pod) {
			m, _ := specReady(t, 2, dm.PluginOptions{})
			specAllocate(t, m, specPod("p1", 1), "app", active)
			return m, specPod("p2", 2)
		}, dm.KindUnavailable, "requested number of devices unavailable for domain1.com/resource1. Requested: 2, Available: 1"},

		// "Requested" is what is still needed after the reusable devices.
		{"unavailable after reuse counts the remainder", func(t *testing.T) (*dm.Manager, *pod.Pod) {
			m, _ := specReady(t, 3, dm.PluginOptions{})
			specAllocate(t, m, specPod("p1", 1), "app", active) // dev0
			p := &pod.Pod{UID: "p2", InitContainers: []pod.Container{{Name: "init", Limits: specLimits(specRes, 1)}},
				Containers: []pod.Container{{Name: "app", Limits: specLimits(specRes, 3)}}}
			specAllocate(t, m, p, "init", active) // dev1, reusable by app
			return m, p
		}, dm.KindUnavailable, "requested number of devices unavailable for domain1.com/resource1. Requested: 2, Available: 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, p := tc.setup(t)
			before := m.Holdings()
			plan, err := m.PlanContainer(dm.PlanInput{Pod: p, Container: "app", ActivePods: active})
			if tc.kind == 0 {
				require.NoError(t, err, "PlanContainer")
				assert.Empty(t, plan.Requests, "plan requests (nothing needed)")
				require.NoError(t, m.Commit(plan.ID, nil), "Commit of an empty plan")
			} else {
				specWantErr(t, err, tc.kind, tc.msg)
				assert.Nil(t, plan, "plan: on error, want nil")
			}
			// A failed or empty plan records nothing.
			specEqual(t, "holdings", m.Holdings(), before)
		})
	}
}

// TestSpecNonDevicePluginResourceSkipped checks §1.6: limits that are not
// device plugin resources (no healthy or allocated entry) are skipped, so a
// pod asking for a resource nobody registered is admitted without devices.
func TestSpecNonDevicePluginResourceSkipped(t *testing.T) {
	m, _ := specReady(t, 1, dm.PluginOptions{})
	p := &pod.Pod{UID: "p1", Containers: []pod.Container{{Name: "app", Limits: specLimits("other.com/fpga", 1, "cpu", 1000)}}}
	plan, err := m.PlanContainer(dm.PlanInput{Pod: p, Container: "app", ActivePods: []string{"p1"}})
	require.NoError(t, err, "PlanContainer")
	specEqual(t, "requests", len(plan.Requests), 0)
}

// TestSpecAbortReleases checks §1.6: an Allocate RPC error resets the
// allocated cache from podDevices and is returned as is, so the devices go
// back to the pool and the admission fails with the plugin's text.
func TestSpecAbortReleases(t *testing.T) {
	m, _ := specReady(t, 2, dm.PluginOptions{})
	active := []string{"p1", "p2"}
	plan, err := m.PlanContainer(dm.PlanInput{Pod: specPod("p1", 2), Container: "app", ActivePods: active})
	require.NoError(t, err)
	specEqual(t, "reserved while pending", specAllocatedOf(m, specRes), []string{"dev0", "dev1"})

	cause := errors.New("rpc error: code = Internal desc = device busy")
	err = m.Abort(plan.ID, cause)
	specWantErr(t, err, dm.KindAllocateFailed, "rpc error: code = Internal desc = device busy")
	assert.True(t, errors.Is(err, cause), "errors.Is(err, plugin error) = false, want the plugin's error wrapped")
	specEqual(t, "allocated after Abort", specAllocatedOf(m, specRes), []string{})
	specEqual(t, "holdings after Abort", m.Holdings(), []dm.Holding(nil))
	specEqual(t, "next pod gets them", specAllocate(t, m, specPod("p2", 2), "app", active)[specRes], []string{"dev0", "dev1"})

	specWantErr(t, m.Abort(plan.ID, cause), dm.KindInvalidInput, fmt.Sprintf("allocate: plan %d is not pending", plan.ID))
}

// TestSpecCommitEmptyContainerResponses checks §1.6 "Empty ContainerResponses
// → no containers return in allocation response %v" and deviation D4 of
// docs/deviations.md (the core then holds and reserves nothing). The
// AllocateResponse is formatted with %v; k8s.io/kubelet v0.36.3 is generated
// by protoc-gen-go, whose String() of a message without container responses
// is "", so a v1.36 kubelet ends the message with a bare space.
func TestSpecCommitEmptyContainerResponses(t *testing.T) {
	m, _ := specReady(t, 2, dm.PluginOptions{})
	active := []string{"p1", "p2"}
	plan, err := m.PlanContainer(dm.PlanInput{Pod: specPod("p1", 1), Container: "app", ActivePods: active})
	require.NoError(t, err)
	err = m.Commit(plan.ID, [][]allocresp.ContainerAllocateResponse{{}})
	specWantErr(t, err, dm.KindNoContainerResponses,
		"no containers return in allocation response ")
	specEqual(t, "holdings", m.Holdings(), []dm.Holding(nil))
	specEqual(t, "allocated", specAllocatedOf(m, specRes), []string{})
	specEqual(t, "pending", m.PendingPlans(), []dm.PlanID{})
	specEqual(t, "next pod", specAllocate(t, m, specPod("p2", 1), "app", active)[specRes], []string{"dev0"})
}

// TestSpecCommitUsesFirstContainerResponse checks §1.6: podDevices.insert
// gets resp.ContainerResponses[0]; the rest are ignored.
func TestSpecCommitUsesFirstContainerResponse(t *testing.T) {
	m, _ := specReady(t, 1, dm.PluginOptions{})
	plan, err := m.PlanContainer(dm.PlanInput{Pod: specPod("p1", 1), Container: "app", ActivePods: []string{"p1"}})
	require.NoError(t, err)
	err = m.Commit(plan.ID, [][]allocresp.ContainerAllocateResponse{{
		{Envs: map[string]string{"FIRST": "1"}},
		{Envs: map[string]string{"SECOND": "2"}},
	}})
	require.NoError(t, err)
	specEqual(t, "envs", m.RunContainerOptions("p1", "app").Envs, []dm.KeyValue{{Name: "FIRST", Value: "1"}})
}

// TestSpecGarbageCollection checks §1.8: UpdateAllocatedDevices returns
// before sources are ready, and afterwards drops the pods that are not
// active and rebuilds the allocated cache; the GC also runs inside
// allocation before the first device resource (§1.6).
func TestSpecGarbageCollection(t *testing.T) {
	m, _ := specReady(t, 2, dm.PluginOptions{})
	specAllocate(t, m, specPod("p1", 2), "app", []string{"p1"})

	m.UpdateAllocatedDevices(nil)
	specEqual(t, "holdings before sources ready", len(m.Holdings()), 1)
	_, err := m.PlanContainer(dm.PlanInput{Pod: specPod("p2", 1), Container: "app", ActivePods: []string{"p2"}})
	specWantErr(t, err, dm.KindUnavailable, "requested number of devices unavailable for domain1.com/resource1. Requested: 1, Available: 0")

	m.SetSourcesReady()
	// §1.6 runs the GC only before the first device resource: a container
	// without one leaves inactive pods alone.
	noDevices := &pod.Pod{UID: "p3", Containers: []pod.Container{{Name: "app", Limits: specLimits("cpu", 100)}}}
	plan, err := m.PlanContainer(dm.PlanInput{Pod: noDevices, Container: "app", ActivePods: []string{"p3"}})
	require.NoError(t, err)
	require.NoError(t, m.Commit(plan.ID, nil))
	specEqual(t, "holdings after a plan without device resources", len(m.Holdings()), 1)
	// The GC in PlanContainer frees p1's devices for p2.
	specEqual(t, "p2 after GC", specAllocate(t, m, specPod("p2", 1), "app", []string{"p2"})[specRes], []string{"dev0"})
	specEqual(t, "holdings", m.Holdings(), []dm.Holding{{PodUID: "p2", Container: "app", Resource: specRes, DeviceIDs: []string{"dev0"}}})
	assert.Nil(t, m.RunContainerOptions("p1", "app"), "RunContainerOptions of a collected pod")

	m.UpdateAllocatedDevices([]string{})
	specEqual(t, "holdings after explicit GC", m.Holdings(), []dm.Holding(nil))
	specEqual(t, "allocated after explicit GC", specAllocatedOf(m, specRes), []string{})
}

// TestSpecAdmissionFailureMessage checks §1.11: the topology admit handler
// fails the pod with Reason UnexpectedAdmissionError and this message.
func TestSpecAdmissionFailureMessage(t *testing.T) {
	m, _ := specReady(t, 1, dm.PluginOptions{})
	specAllocate(t, m, specPod("p1", 1), "app", []string{"p1", "p2"})
	_, err := m.PlanContainer(dm.PlanInput{Pod: specPod("p2", 1), Container: "app", ActivePods: []string{"p1", "p2"}})
	specCheckKind(t, err)
	specEqual(t, "reason", dm.AdmissionFailureReason, "UnexpectedAdmissionError")
	specEqual(t, "message", dm.AdmissionFailureMessage(err),
		"Allocate failed due to requested number of devices unavailable for domain1.com/resource1. Requested: 1, Available: 0, which is unexpected")
}

// TestSpecStoppedEndpoint checks §1.6/§1.7 when device state is healthy but
// the endpoint is stopped (a late snapshot from the old stream, which §1.3
// says still replaces the state): Allocate fails with errEndpointStopped,
// or, for a plugin that offers preferred allocations, the preferred call
// fails first. The endpoint's printed form is the core's own (package doc).
func TestSpecStoppedEndpoint(t *testing.T) {
	for _, preferred := range []bool{false, true} {
		t.Run(fmt.Sprintf("GetPreferredAllocationAvailable=%v", preferred), func(t *testing.T) {
			m, id := specReady(t, 2, dm.PluginOptions{GetPreferredAllocationAvailable: preferred})
			m.Disconnected(specRes, id, specT0)
			specUpdate(t, m, specRes, specHealthy("dev0", "dev1"))
			_, err := m.PlanContainer(dm.PlanInput{Pod: specPod("p1", 1), Container: "app", ActivePods: []string{"p1"}})
			stopped := "endpoint &{resourceName:domain1.com/resource1 socket:/var/lib/kubelet/device-plugins/domain1.com/resource1.sock} has been stopped"
			if preferred {
				specWantErr(t, err, dm.KindPreferredAllocationFailed, "device plugin GetPreferredAllocation rpc failed with err: "+stopped)
			} else {
				specWantErr(t, err, dm.KindEndpointStopped, stopped)
			}
			specEqual(t, "allocated", specAllocatedOf(m, specRes), []string{})
		})
	}
}

// TestSpecOnlyHealthyDevicesChosen checks §1.7 "available =
// healthyDevices[r] \ allocatedDevices[r]": unhealthy devices, even with the
// lowest IDs, are never handed out and do not count as available.
func TestSpecOnlyHealthyDevicesChosen(t *testing.T) {
	m := specManager()
	specConnect(t, m, specRes, dm.PluginOptions{})
	specUpdate(t, m, specRes, append([]dm.Device{{ID: "dev0", Health: dm.Unhealthy}}, specHealthy("dev1", "dev2")...))
	active := []string{"p1", "p2"}
	specEqual(t, "p1", specAllocate(t, m, specPod("p1", 2), "app", active)[specRes], []string{"dev1", "dev2"})
	_, err := m.PlanContainer(dm.PlanInput{Pod: specPod("p2", 1), Container: "app", ActivePods: active})
	specWantErr(t, err, dm.KindUnavailable, "requested number of devices unavailable for domain1.com/resource1. Requested: 1, Available: 0")
}

// TestSpecAllocationBounds checks two bounds of Limits at exactly their
// value: PendingPlans plans may await Commit or Abort at once, and Pods pods
// may hold devices; one more of either is KindBoundExceeded.
func TestSpecAllocationBounds(t *testing.T) {
	ready := func(t *testing.T, limits dm.Limits) *dm.Manager {
		m := dm.New(limits)
		specConnect(t, m, specRes, dm.PluginOptions{})
		specUpdate(t, m, specRes, specHealthy("dev0", "dev1", "dev2"))
		return m
	}
	active := []string{"p0", "p1", "p2"}
	t.Run("pending plans", func(t *testing.T) {
		limits := dm.DefaultLimits()
		limits.PendingPlans = 2
		m := ready(t, limits)
		for _, uid := range []string{"p0", "p1"} {
			_, err := m.PlanContainer(dm.PlanInput{Pod: specPod(uid, 1), Container: "app", ActivePods: active})
			require.NoError(t, err, "plan of %s", uid)
		}
		_, err := m.PlanContainer(dm.PlanInput{Pod: specPod("p2", 1), Container: "app", ActivePods: active})
		specWantErr(t, err, dm.KindBoundExceeded, "allocate: 2 allocations already pending")
	})
	t.Run("pods holding devices", func(t *testing.T) {
		limits := dm.DefaultLimits()
		limits.Pods = 1
		m := ready(t, limits)
		specAllocate(t, m, specPod("p0", 1), "app", active)
		_, err := m.PlanContainer(dm.PlanInput{Pod: specPod("p1", 1), Container: "app", ActivePods: active})
		specWantErr(t, err, dm.KindBoundExceeded, "allocate: 1 pods already hold devices")
	})
}

// TestSpecCheckpointDueAfterAnAllocation checks when a commit makes the
// checkpoint due: after devices were allocated (upstream writes it at the
// end of allocateContainerResources), not after a container that asked for
// none.
func TestSpecCheckpointDueAfterAnAllocation(t *testing.T) {
	m, _ := specReady(t, 2, dm.PluginOptions{})
	m.CheckpointDue() // clears what the registration and the snapshot set
	specAllocate(t, m, specPod("p1", 1), "app", []string{"p1"})
	assert.True(t, m.CheckpointDue(), "after committing a device")
	none := &pod.Pod{UID: "p2", Name: "p2", Namespace: "default", Containers: []pod.Container{{Name: "app"}}}
	specAllocate(t, m, none, "app", []string{"p1", "p2"})
	assert.False(t, m.CheckpointDue(), "after committing a container without devices")
}
