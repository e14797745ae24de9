package devicemanager_test

import (
	"testing"
	"time"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpecCapacityLifecycle follows one resource from registration to
// deletion: devicemanager.md §1.3 (Connected sets only the endpoint), §1.4
// (a snapshot replaces the state; any health but "Healthy" is unhealthy) and
// §1.5 (disconnect keeps capacity with allocatable 0; GetCapacity deletes
// strictly after the 5 minute grace period and reports the deletion once).
func TestSpecCapacityLifecycle(t *testing.T) {
	m := specManager()
	id := specConnect(t, m, specRes, dm.PluginOptions{})

	// §1.3: registration alone creates no device state, so no entry.
	c := m.GetCapacity(specT0)
	specCapacity(t, c, specRes, false, 0, false, 0)
	specEqual(t, "Deleted after registration", c.Deleted, []string(nil))

	// §1.4: "any non-"Healthy" string counts as unhealthy", the lowercase
	// spelling and the empty string included.
	specUpdate(t, m, specRes, []dm.Device{
		{ID: "dev0", Health: dm.Healthy},
		{ID: "dev1", Health: dm.Unhealthy},
		{ID: "dev2", Health: "healthy"},
		{ID: "dev3", Health: ""},
	})
	specCapacity(t, m.GetCapacity(specT0), specRes, true, 4, true, 1)
	assert.True(t, m.CheckpointDue(), "CheckpointDue() = false after a snapshot, want true (§1.4 writeCheckpoint on every update)")

	// §1.4: "Devices missing from the new list simply disappear".
	specUpdate(t, m, specRes, append(specHealthy("dev0", "dev4"), dm.Device{ID: "dev1", Health: dm.Unhealthy}))
	specCapacity(t, m.GetCapacity(specT0), specRes, true, 3, true, 2)

	// §1.5: disconnect moves every healthy device to unhealthy.
	stop := specT0.Add(time.Minute)
	require.True(t, m.Disconnected(specRes, id, stop), "Disconnected(current connection) = false, want true")
	specCapacity(t, m.GetCapacity(stop), specRes, true, 3, true, 0)

	// §1.2: stopGracePeriodExpired is strict: at exactly stop+5m nothing goes.
	atGrace := stop.Add(dm.EndpointStopGracePeriod)
	view := m.CapacityView(atGrace)
	c = m.GetCapacity(atGrace)
	specEqual(t, "Deleted at stop+5m", c.Deleted, []string(nil))
	specEqual(t, "CapacityView at stop+5m", view, c)
	specCapacity(t, c, specRes, true, 3, true, 0)

	// One nanosecond later the resource is deleted and reported once.
	after := atGrace.Add(time.Nanosecond)
	view = m.CapacityView(after)
	specEqual(t, "CapacityView.Deleted at stop+5m+1ns", view.Deleted, []string{specRes})
	m.CheckpointDue() // clear the flag so the deletion's own write is seen
	c = m.GetCapacity(after)
	specEqual(t, "Deleted at stop+5m+1ns", c.Deleted, []string{specRes})
	specCapacity(t, c, specRes, false, 0, false, 0)
	assert.True(t, m.CheckpointDue(), "CheckpointDue() = false after a deletion, want true (§1.5 writeCheckpoint when deleted is non-empty)")
	c = m.GetCapacity(after.Add(time.Hour))
	specEqual(t, "Deleted on the next call", c.Deleted, []string(nil))
	specCapacity(t, c, specRes, false, 0, false, 0)
}

// TestSpecCapacityViewDeletesNothing checks that the read-only view reports
// what GetCapacity would delete without deleting it.
func TestSpecCapacityViewDeletesNothing(t *testing.T) {
	m, id := specReady(t, 2, dm.PluginOptions{})
	m.Disconnected(specRes, id, specT0)
	late := specT0.Add(time.Hour)
	for i := 0; i < 2; i++ {
		specEqual(t, "CapacityView.Deleted", m.CapacityView(late).Deleted, []string{specRes})
	}
	specEqual(t, "GetCapacity.Deleted", m.GetCapacity(late).Deleted, []string{specRes})
}

// TestSpecReRegistrationAfterDisconnect checks §1.3: a new registration
// overwrites the endpoint and "devices are NOT copied" — nor cleared: the old
// devices stay, all unhealthy after the disconnect, until the new plugin's
// first snapshot replaces them (§1.4). The new endpoint is live, so the old
// stop time no longer deletes the resource.
func TestSpecReRegistrationAfterDisconnect(t *testing.T) {
	m, oldID := specReady(t, 2, dm.PluginOptions{})
	m.Disconnected(specRes, oldID, specT0)

	newID := specConnect(t, m, specRes, dm.PluginOptions{})
	require.NotEqual(t, oldID, newID, "re-registration kept endpoint ID")
	late := specT0.Add(10 * time.Minute)
	c := m.GetCapacity(late)
	specEqual(t, "Deleted with a live endpoint", c.Deleted, []string(nil))
	specCapacity(t, c, specRes, true, 2, true, 0)

	specUpdate(t, m, specRes, specHealthy("devA", "devB", "devC"))
	specCapacity(t, m.GetCapacity(late), specRes, true, 3, true, 3)
}

// TestSpecReRegistrationWhileConnected checks that a re-registration while
// the old plugin is still connected keeps the devices as they are (healthy
// ones stay allocatable), and that the old connection's late disconnect does
// not touch the new registration: the package docs say the core follows the
// master fix (PR #135437) for the re-registration race of #127803/#121994.
func TestSpecReRegistrationWhileConnected(t *testing.T) {
	m, oldID := specReady(t, 2, dm.PluginOptions{})
	newID := specConnect(t, m, specRes, dm.PluginOptions{})
	specCapacity(t, m.GetCapacity(specT0), specRes, true, 2, true, 2)

	assert.False(t, m.Disconnected(specRes, oldID, specT0), "Disconnected(superseded connection) = true, want false")
	// Far past any grace period: the late disconnect must not have started one.
	c := m.GetCapacity(specT0.Add(time.Hour))
	specEqual(t, "Deleted after a superseded disconnect", c.Deleted, []string(nil))
	specCapacity(t, c, specRes, true, 2, true, 2)

	assert.True(t, m.Disconnected(specRes, newID, specT0), "Disconnected(current connection) = false, want true")
	specCapacity(t, m.GetCapacity(specT0), specRes, true, 2, true, 0)
	// A second disconnect of the same connection changes nothing.
	assert.False(t, m.Disconnected(specRes, newID, specT0.Add(time.Minute)), "second Disconnected of a stopped connection = true, want false")
}

// TestSpecDisconnectBeforeSnapshot checks §1.5 markResourceUnhealthy on a
// resource without device state: it creates an empty unhealthy set but no
// healthy one, so capacity shows 0 and there is no allocatable entry; the
// resource is still deleted after the grace period.
func TestSpecDisconnectBeforeSnapshot(t *testing.T) {
	m := specManager()
	id := specConnect(t, m, specRes, dm.PluginOptions{})
	require.True(t, m.Disconnected(specRes, id, specT0), "Disconnected = false, want true")
	specCapacity(t, m.GetCapacity(specT0), specRes, true, 0, false, 0)

	c := m.GetCapacity(specT0.Add(dm.EndpointStopGracePeriod + time.Nanosecond))
	specEqual(t, "Deleted", c.Deleted, []string{specRes})
	specCapacity(t, c, specRes, false, 0, false, 0)
}

// TestSpecDisconnectUnknown checks that a disconnect for a resource that
// never registered changes nothing.
func TestSpecDisconnectUnknown(t *testing.T) {
	m := specManager()
	assert.False(t, m.Disconnected("other.com/res", 1, specT0), "Disconnected(unknown resource) = true, want false")
	c := m.GetCapacity(specT0)
	require.Empty(t, c.Capacity, "GetCapacity after an unknown disconnect = %+v, want empty", c)
	require.Empty(t, c.Allocatable, "GetCapacity after an unknown disconnect = %+v, want empty", c)
	assert.Empty(t, c.Deleted, "GetCapacity after an unknown disconnect = %+v, want empty", c)
}

// TestSpecCapacityWithoutEndpoint checks §1.5 "!ok → deleted": device state
// for a resource with no endpoint (the "out of sync" case) is deleted by the
// next GetCapacity, grace period or not, and a later registration starts
// with no entry until its snapshot: v1.35+ deletes both device maps (#133724).
func TestSpecCapacityWithoutEndpoint(t *testing.T) {
	m := specManager()
	specUpdate(t, m, specRes, append(specHealthy("dev0"), dm.Device{ID: "dev1", Health: dm.Unhealthy}))
	c := m.GetCapacity(specT0)
	specEqual(t, "Deleted", c.Deleted, []string{specRes})
	specCapacity(t, c, specRes, false, 0, false, 0)

	specConnect(t, m, specRes, dm.PluginOptions{})
	specCapacity(t, m.GetCapacity(specT0), specRes, false, 0, false, 0)
}

// TestCapacityViewIntoReusesNothingStale: filling a Capacity that holds an
// earlier view, with other resources and deletions, gives exactly what a
// fresh CapacityView gives; nothing of the earlier view survives.
func TestCapacityViewIntoReusesNothingStale(t *testing.T) {
	m := specManager()
	id := specConnect(t, m, specRes, dm.PluginOptions{})
	specUpdate(t, m, specRes, append(specHealthy("dev0", "dev1"), dm.Device{ID: "dev2", Health: dm.Unhealthy}))
	other := "domain2.com/resource2"
	otherID := specConnect(t, m, other, dm.PluginOptions{})
	specUpdate(t, m, other, specHealthy("dev0"))
	require.True(t, m.Disconnected(other, otherID, specT0))

	var c dm.Capacity
	m.CapacityViewInto(&c, specT0)
	require.Equal(t, map[string]int64{specRes: 3, other: 1}, c.Capacity)
	require.Equal(t, map[string]int64{specRes: 2, other: 0}, c.Allocatable)

	late := specT0.Add(dm.EndpointStopGracePeriod + time.Second)
	m.CapacityViewInto(&c, late)
	assert.Equal(t, m.CapacityView(late), c)
	assert.Equal(t, dm.Capacity{Capacity: map[string]int64{specRes: 3}, Allocatable: map[string]int64{specRes: 2}, Deleted: []string{other}}, c)

	m.GetCapacity(late)
	require.True(t, m.Disconnected(specRes, id, late))
	m.CapacityViewInto(&c, late)
	assert.Equal(t, m.CapacityView(late), c)
	assert.Equal(t, dm.Capacity{Capacity: map[string]int64{specRes: 3}, Allocatable: map[string]int64{specRes: 0}}, c)
}
