package devicemanager_test

import (
	"strings"
	"testing"
	"time"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpecRestartFromCheckpoint plays a kubelet restart: devicemanager.md
// §1.10 "On successful read" (podDevices restored, every registered resource
// gets empty device sets and a stopped endpoint, so capacity/allocatable 0
// and new pods get "no healthy devices present…"), §1.7 isContainerAlreadyRunning
// (PR #118635: a running container is not re-allocated before sources are
// ready), and the re-registration that follows (restored devices stay taken).
func TestSpecRestartFromCheckpoint(t *testing.T) {
	before, _ := specReady(t, 4, dm.PluginOptions{})
	active := []string{"running", "exited"}
	specAllocate(t, before, specPod("running", 2), "app", active) // dev0, dev1
	specAllocate(t, before, specPod("exited", 1), "app", active)  // dev2
	cp := before.Checkpoint()

	restart := specT0.Add(time.Hour)
	m := specManager()
	report, err := m.Restore(cp, restart, []dm.ContainerRef{
		{PodUID: "running", Container: "app", Running: true},
		{PodUID: "exited", Container: "app", Running: false},
	})
	require.NoError(t, err, "Restore")
	specEqual(t, "skipped entries", report.Skipped, []string(nil))
	specEqual(t, "holdings", m.Holdings(), before.Holdings())
	specEqual(t, "allocated", m.Allocated(), before.Allocated())
	specCapacity(t, m.GetCapacity(restart), specRes, true, 0, true, 0)

	// A new pod: the resource is still a device plugin resource, so it is
	// refused rather than admitted without devices.
	_, err = m.PlanContainer(dm.PlanInput{Pod: specPod("new", 1), Container: "app", ActivePods: []string{"running", "exited", "new"}})
	specWantErr(t, err, dm.KindNoHealthy, "no healthy devices present; cannot allocate unhealthy devices domain1.com/resource1")

	// The running container keeps its devices without a new allocation.
	plan, err := m.PlanContainer(dm.PlanInput{Pod: specPod("running", 2), Container: "app", ActivePods: active})
	require.NoError(t, err, "PlanContainer(running container before sources ready)")
	specEqual(t, "requests for the running container", len(plan.Requests), 0)
	require.NoError(t, m.Commit(plan.ID, nil))
	// A container that is not running gets the health checks (#109595).
	_, err = m.PlanContainer(dm.PlanInput{Pod: specPod("exited", 1), Container: "app", ActivePods: active})
	specWantErr(t, err, dm.KindNoHealthy, "no healthy devices present; cannot allocate unhealthy devices domain1.com/resource1")

	// The plugin comes back with all four devices: only dev3 is free.
	specConnect(t, m, specRes, dm.PluginOptions{})
	specUpdate(t, m, specRes, specHealthy("dev0", "dev1", "dev2", "dev3"))
	specCapacity(t, m.GetCapacity(restart), specRes, true, 4, true, 4)
	all := []string{"running", "exited", "new", "late"}
	specEqual(t, "new pod after re-registration", specAllocate(t, m, specPod("new", 1), "app", all)[specRes], []string{"dev3"})
	_, err = m.PlanContainer(dm.PlanInput{Pod: specPod("late", 1), Container: "app", ActivePods: all})
	specWantErr(t, err, dm.KindUnavailable, "requested number of devices unavailable for domain1.com/resource1. Requested: 1, Available: 0")
}

// TestSpecRestartWithoutReRegistration checks §1.10: the restored stopped
// endpoint starts its grace period at the restart time, so the resource is
// dropped 5 minutes later if no plugin registers.
func TestSpecRestartWithoutReRegistration(t *testing.T) {
	before, _ := specReady(t, 2, dm.PluginOptions{})
	m := specManager()
	_, err := m.Restore(before.Checkpoint(), specT0, nil)
	require.NoError(t, err)
	specEqual(t, "Deleted at restart+5m", m.GetCapacity(specT0.Add(dm.EndpointStopGracePeriod)).Deleted, []string(nil))
	specEqual(t, "Deleted at restart+5m+1ns", m.GetCapacity(specT0.Add(dm.EndpointStopGracePeriod+time.Nanosecond)).Deleted, []string{specRes})
}

// TestSpecCheckpointRegisteredDevices checks §1.10 "RegisteredDevices =
// healthyDevices only (unhealthy IDs are not saved), one key per resource
// present in healthyDevices; an empty healthy set is written as []": a
// resource that only ever had an unhealthy entry (disconnect before any
// snapshot) is not in the checkpoint.
func TestSpecCheckpointRegisteredDevices(t *testing.T) {
	m := specManager()
	specConnect(t, m, "a.com/mixed", dm.PluginOptions{})
	specUpdate(t, m, "a.com/mixed", []dm.Device{{ID: "u1", Health: dm.Unhealthy}, {ID: "h2", Health: dm.Healthy}, {ID: "h1", Health: dm.Healthy}})
	specConnect(t, m, "b.com/allbad", dm.PluginOptions{})
	specUpdate(t, m, "b.com/allbad", []dm.Device{{ID: "u1", Health: "Unknown"}})
	id := specConnect(t, m, "c.com/nosnapshot", dm.PluginOptions{})
	m.Disconnected("c.com/nosnapshot", id, specT0)

	got := m.Checkpoint().RegisteredDevices
	specEqual(t, "RegisteredDevices", got, map[string][]string{
		"a.com/mixed":  {"h1", "h2"},
		"b.com/allbad": {},
	})
	assert.NotNil(t, got["b.com/allbad"], `RegisteredDevices["b.com/allbad"] is nil, want a non-nil empty list (written as [], not null)`)

	// After the restore only the checkpointed resources come back.
	restored := specManager()
	_, err := restored.Restore(m.Checkpoint(), specT0, nil)
	require.NoError(t, err)
	c := restored.GetCapacity(specT0)
	specEqual(t, "restored capacity", c.Capacity, map[string]int64{"a.com/mixed": 0, "b.com/allbad": 0})
	specEqual(t, "restored allocatable", c.Allocatable, map[string]int64{"a.com/mixed": 0, "b.com/allbad": 0})
}

// TestSpecCheckpointRoundTripInitAndApp checks that reuse survives a
// checkpoint: an init and an app container sharing devices are both restored.
func TestSpecCheckpointRoundTripInitAndApp(t *testing.T) {
	before, _ := specReady(t, 2, dm.PluginOptions{})
	p := &pod.Pod{UID: "p1", InitContainers: []pod.Container{{Name: "init", Limits: specLimits(specRes, 1)}},
		Containers: []pod.Container{{Name: "app", Limits: specLimits(specRes, 1)}}}
	specAllocate(t, before, p, "init", []string{"p1"})
	specAllocate(t, before, p, "app", []string{"p1"})
	m := specManager()
	_, err := m.Restore(before.Checkpoint(), specT0, nil)
	require.NoError(t, err)
	specEqual(t, "holdings", m.Holdings(), []dm.Holding{
		{PodUID: "p1", Container: "app", Resource: specRes, DeviceIDs: []string{"dev0"}},
		{PodUID: "p1", Container: "init", Resource: specRes, DeviceIDs: []string{"dev0"}},
	})
	specEqual(t, "checkpoint of the restored manager", m.Checkpoint().PodDeviceEntries, before.Checkpoint().PodDeviceEntries)
}

// TestSpecRestoreIntoManagerWithState checks that Restore, which stands for
// the read at Start, refuses a manager that already has state.
func TestSpecRestoreIntoManagerWithState(t *testing.T) {
	m, _ := specReady(t, 1, dm.PluginOptions{})
	cp := m.Checkpoint()
	_, err := m.Restore(cp, specT0, nil)
	specWantErr(t, err, dm.KindInvalidInput, "restore: the manager already has state; restore into a new manager")

	onlyEndpoint := specManager()
	specConnect(t, onlyEndpoint, specRes, dm.PluginOptions{})
	_, err = onlyEndpoint.Restore(cp, specT0, nil)
	specWantErr(t, err, dm.KindInvalidInput, "restore: the manager already has state; restore into a new manager")
}

// TestSpecRestartRunningContainerEdges checks the edges of §1.7's restart
// path: the changed-request check comes before it; a container listed both
// exited and running counts as running ("ANY containerID … is in
// containerRunningSet"); and once sources are ready the skip ends, so the
// health checks apply again (#125579: plugin not yet back).
func TestSpecRestartRunningContainerEdges(t *testing.T) {
	before, _ := specReady(t, 2, dm.PluginOptions{})
	specAllocate(t, before, specPod("p1", 2), "app", []string{"p1"})
	m := specManager()
	_, err := m.Restore(before.Checkpoint(), specT0, []dm.ContainerRef{
		{PodUID: "p1", Container: "app", Running: false},
		{PodUID: "p1", Container: "app", Running: true},
		{PodUID: "p1", Container: "app", Running: false},
	})
	require.NoError(t, err)
	active := []string{"p1"}

	_, err = m.PlanContainer(dm.PlanInput{Pod: specPod("p1", 3), Container: "app", ActivePods: active})
	specWantErr(t, err, dm.KindRequestChanged, `pod "p1" container "app" changed request for resource "domain1.com/resource1" from 2 to 3`)

	plan, err := m.PlanContainer(dm.PlanInput{Pod: specPod("p1", 2), Container: "app", ActivePods: active})
	require.NoError(t, err, "PlanContainer(running container)")
	require.NoError(t, m.Commit(plan.ID, nil))

	m.SetSourcesReady()
	_, err = m.PlanContainer(dm.PlanInput{Pod: specPod("p1", 2), Container: "app", ActivePods: active})
	specWantErr(t, err, dm.KindNoHealthy, "no healthy devices present; cannot allocate unhealthy devices domain1.com/resource1")
	specEqual(t, "holdings kept", m.Holdings(), before.Holdings())
}

// TestSpecCheckpointDevicesPerNUMA checks §1.6 "Build DevicesPerNUMA
// (devices with no topology → key -1; multi-NUMA device listed under each
// node)" as it appears in the checkpoint entry.
func TestSpecCheckpointDevicesPerNUMA(t *testing.T) {
	m := specManager()
	specConnect(t, m, specRes, dm.PluginOptions{})
	specUpdate(t, m, specRes, []dm.Device{
		{ID: "dev0", Health: dm.Healthy, NUMANodes: []int64{0}},
		{ID: "dev1", Health: dm.Healthy, NUMANodes: []int64{0, 1}},
		{ID: "dev2", Health: dm.Healthy},
	})
	specAllocate(t, m, specPod("p1", 3), "app", []string{"p1"})
	cp := m.Checkpoint()
	// The multi-NUMA device makes the ID lists longer than the devices
	// held, so Checkpoint's pool of IDs grows while it copies them.
	specEqual(t, "RegisteredDevices", cp.RegisteredDevices, map[string][]string{specRes: {"dev0", "dev1", "dev2"}})
	entries := cp.PodDeviceEntries
	require.Len(t, entries, 1, "PodDeviceEntries")
	e := entries[0]
	specEqual(t, "entry key", [3]string{e.PodUID, e.ContainerName, e.ResourceName}, [3]string{"p1", "app", specRes})
	specEqual(t, "DeviceIDs", map[int64][]string(e.DeviceIDs), map[int64][]string{0: {"dev0", "dev1"}, 1: {"dev1"}, -1: {"dev2"}})
	// An empty container response marshals to zero bytes (§1.10).
	specEqual(t, "AllocResp", e.AllocResp, []byte{})
}

// TestRestoreResourcesBound checks Limits.Resources at exactly its value: a
// checkpoint with that many registered resources restores, one more is
// KindBoundExceeded.
func TestRestoreResourcesBound(t *testing.T) {
	limits := dm.DefaultLimits()
	limits.Resources = 2
	data := checkpoint.Data{RegisteredDevices: map[string][]string{"example.com/a": nil, "example.com/b": nil}}
	_, err := dm.New(limits).Restore(data, specT0, nil)
	require.NoError(t, err, "%d resources", limits.Resources)
	data.RegisteredDevices["example.com/c"] = nil
	_, err = dm.New(limits).Restore(data, specT0, nil)
	specWantErr(t, err, dm.KindBoundExceeded, "restore: RegisteredDevices: 3 resources exceed the bound of 2")
}

// TestRestorePodsBound checks Limits.Pods, Limits.DevicesPerResource and
// Limits.NameLength at exactly their value when a checkpoint is restored.
func TestRestorePodsBound(t *testing.T) {
	limits := dm.DefaultLimits()
	limits.Pods, limits.DevicesPerResource = 1, 2
	entry := func(podUID string) checkpoint.PodDevicesEntry {
		return checkpoint.PodDevicesEntry{PodUID: podUID, ContainerName: "app", ResourceName: specRes,
			DeviceIDs: checkpoint.DevicesPerNUMA{0: {"dev0", "dev1"}}}
	}
	data := checkpoint.Data{PodDeviceEntries: []checkpoint.PodDevicesEntry{entry("p1")}}
	_, err := dm.New(limits).Restore(data, specT0, nil)
	require.NoError(t, err, "one pod holding two devices")
	data.PodDeviceEntries = append(data.PodDeviceEntries, entry("p2"))
	_, err = dm.New(limits).Restore(data, specT0, nil)
	specWantErr(t, err, dm.KindBoundExceeded, "restore: PodDeviceEntries: more than 1 pods")

	// Names of exactly Limits.NameLength bytes.
	limits = dm.DefaultLimits()
	limits.NameLength = len(specRes)
	long := checkpoint.PodDevicesEntry{PodUID: strings.Repeat("p", len(specRes)), ContainerName: strings.Repeat("c", len(specRes)), ResourceName: specRes}
	_, err = dm.New(limits).Restore(checkpoint.Data{PodDeviceEntries: []checkpoint.PodDevicesEntry{long}}, specT0, nil)
	require.NoError(t, err, "names of %d bytes", limits.NameLength)
}
