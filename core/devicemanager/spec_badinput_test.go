package devicemanager_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpecUpdateRejectsBadDeviceLists checks the design's bad-input rule on
// ListAndWatch snapshots: upstream would silently mangle these (a duplicate
// ID lands in both sets, §1.4), so the core rejects the snapshot whole, with
// an error naming the field, and keeps the previous state.
func TestSpecUpdateRejectsBadDeviceLists(t *testing.T) {
	limits := dm.DefaultLimits()
	limits.DevicesPerResource = 3
	tests := []struct {
		name    string
		devices []dm.Device
		kind    dm.Kind
		field   string // a part of the message that names the offending field
	}{
		{"empty ID", []dm.Device{{ID: "x", Health: dm.Healthy}, {ID: "", Health: dm.Healthy}}, dm.KindInvalidDeviceList, "devices[1].ID"},
		{"duplicate ID", []dm.Device{{ID: "x", Health: dm.Healthy}, {ID: "x", Health: dm.Unhealthy}}, dm.KindInvalidDeviceList, "devices[1].ID"},
		{"negative NUMA node", []dm.Device{{ID: "x", Health: dm.Healthy, NUMANodes: []int64{0, -2}}}, dm.KindInvalidDeviceList, "devices[0].Topology.Nodes[1].ID"},
		{"more devices than the bound", specHealthy("a", "b", "c", "d"), dm.KindBoundExceeded, "exceed the bound of 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := dm.New(limits)
			specConnect(t, m, specRes, dm.PluginOptions{})
			specUpdate(t, m, specRes, []dm.Device{{ID: "dev0", Health: dm.Healthy}, {ID: "dev1", Health: dm.Unhealthy}})
			m.CheckpointDue()
			beforeCap := m.CapacityView(specT0)
			beforeHealthy := m.HealthyDevices()

			err := m.Update(specRes, tc.devices)
			require.Error(t, err, "Update accepted a bad snapshot")
			specCheckKind(t, err)
			k, _ := dm.KindOf(err)
			assert.Equal(t, tc.kind, k, "kind")
			assert.Contains(t, err.Error(), tc.field, "error %q does not name %q and the resource", err, tc.field)
			assert.Contains(t, err.Error(), specRes, "error %q does not name %q and the resource", err, tc.field)
			specEqual(t, "capacity after a rejected snapshot", m.CapacityView(specT0), beforeCap)
			specEqual(t, "healthy devices after a rejected snapshot", m.HealthyDevices(), beforeHealthy)
			assert.False(t, m.CheckpointDue(), "a rejected snapshot asked for a checkpoint write")
		})
	}
}

// TestSpecPlanCommitAbortBadInput checks that malformed calls are refused as
// KindInvalidInput and change nothing.
func TestSpecPlanCommitAbortBadInput(t *testing.T) {
	m, _ := specReady(t, 2, dm.PluginOptions{})

	_, err := m.PlanContainer(dm.PlanInput{Pod: specPod("p1", 1), Container: "nope", ActivePods: []string{"p1"}})
	specWantErr(t, err, dm.KindInvalidInput, `allocate: pod "p1" has no container "nope"`)
	_, err = m.PlanContainer(dm.PlanInput{Container: "app"})
	specWantErr(t, err, dm.KindInvalidInput, "allocate: pod must not be nil")

	specWantErr(t, m.Commit(42, nil), dm.KindInvalidInput, "allocate: plan 42 is not pending")
	specWantErr(t, m.Abort(42, errors.New("x")), dm.KindInvalidInput, "allocate: plan 42 is not pending")

	// A committed plan is no longer pending.
	plan, err := m.PlanContainer(dm.PlanInput{Pod: specPod("p1", 1), Container: "app", ActivePods: []string{"p1"}})
	require.NoError(t, err)
	require.NoError(t, m.Commit(plan.ID, specEmptyAnswers(plan)))
	msg := fmt.Sprintf("allocate: plan %d is not pending", plan.ID)
	specWantErr(t, m.Commit(plan.ID, specEmptyAnswers(plan)), dm.KindInvalidInput, msg)
	specWantErr(t, m.Abort(plan.ID, nil), dm.KindInvalidInput, msg)
	specEqual(t, "holdings", m.Holdings(), []dm.Holding{{PodUID: "p1", Container: "app", Resource: specRes, DeviceIDs: []string{"dev0"}}})
	specEqual(t, "allocated", specAllocatedOf(m, specRes), []string{"dev0"})
}

// TestSpecKinds checks the error-kind contract of errors.go: Kinds() lists
// distinct, named kinds, and KindOf recognises core errors (also wrapped)
// and only them.
func TestSpecKinds(t *testing.T) {
	seen := map[dm.Kind]bool{}
	for _, k := range dm.Kinds() {
		assert.False(t, seen[k], "kind %d listed twice", int(k))
		seen[k] = true
		name := k.String()
		assert.False(t, strings.HasPrefix(name, "Kind("), "kind %d has no name", int(k))
	}
	require.NotEmpty(t, seen, "Kinds() is empty")
	_, ok := dm.KindOf(errors.New("plain"))
	assert.False(t, ok, "KindOf(plain error) reported a kind")
	_, ok = dm.KindOf(nil)
	assert.False(t, ok, "KindOf(nil) reported a kind")
	_, err := specManager().PlanContainer(dm.PlanInput{Pod: &pod.Pod{UID: "x"}, Container: "none"})
	k, ok := dm.KindOf(fmt.Errorf("admission: %w", err))
	require.True(t, ok, "KindOf(wrapped) = %s, %v; want %s, true", k, ok, dm.KindInvalidInput)
	assert.Equal(t, dm.KindInvalidInput, k, "KindOf(wrapped) = %s, %v; want %s, true", k, ok, dm.KindInvalidInput)
}
