package deviceplugin

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckpointWriteThenRead(t *testing.T) {
	dir := shortTempDir(t)
	_, err := readCheckpoint(dir)
	require.True(t, errors.Is(err, checkpoint.ErrNotFound), "readCheckpoint of an empty directory = %v, want ErrNotFound", err)
	want := checkpoint.Data{
		PodDeviceEntries: []checkpoint.PodDevicesEntry{{
			PodUID: "pod1", ContainerName: "app", ResourceName: "example.com/dev",
			DeviceIDs: checkpoint.DevicesPerNUMA{-1: {"d0"}}, AllocResp: []byte{},
		}},
		RegisteredDevices: map[string][]string{"example.com/dev": {"d0", "d1"}},
	}
	for range 2 { // the second write replaces the first
		require.NoError(t, writeCheckpoint(dir, want))
	}
	got, err := readCheckpoint(dir)
	require.NoError(t, err)
	assert.Equal(t, want, got, "read back")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "directory holds %v, want only the checkpoint (no temporary file left)", entries)
	assert.Equal(t, devicemanager.CheckpointName, entries[0].Name(), "directory holds %v, want only the checkpoint (no temporary file left)", entries)
}

// TestCheckpointWriteReplacesFile: a write goes to a new file renamed over
// the checkpoint, never into the old file, so a crash mid-write leaves the
// old checkpoint whole. A hard link to the old file shows it: its content
// survives the next write, which a write in place would have truncated.
func TestCheckpointWriteReplacesFile(t *testing.T) {
	dir := shortTempDir(t)
	path := filepath.Join(dir, devicemanager.CheckpointName)
	first := checkpoint.Data{RegisteredDevices: map[string][]string{"example.com/dev": {"d0"}}}
	second := checkpoint.Data{RegisteredDevices: map[string][]string{"example.com/dev": {"d0", "d1"}}}
	require.NoError(t, writeCheckpoint(dir, first))
	firstBytes, err := os.ReadFile(path)
	require.NoError(t, err)
	old := filepath.Join(dir, "old")
	require.NoError(t, os.Link(path, old))
	require.NoError(t, writeCheckpoint(dir, second))
	b, err := os.ReadFile(old)
	require.NoError(t, err, "the file the first write made now holds %q, %v; want it untouched: %q", b, err, firstBytes)
	assert.Equal(t, string(firstBytes), string(b), "the file the first write made now holds %q, %v; want it untouched: %q", b, err, firstBytes)
	got, err := readCheckpoint(dir)
	require.NoError(t, err, "after the second write the checkpoint reads %+v, %v; want %+v", got, err, second)
	assert.Equal(t, second, got, "after the second write the checkpoint reads %+v, %v; want %+v", got, err, second)
}

func TestKeepAsideNeverOverwrites(t *testing.T) {
	dir := shortTempDir(t)
	path := filepath.Join(dir, devicemanager.CheckpointName)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var aside []string
	for _, content := range []string{"first", "second"} {
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		name, err := keepAside(dir, now)
		require.NoError(t, err)
		aside = append(aside, name)
		b, err := os.ReadFile(name)
		require.NoError(t, err, "kept aside %s holds %q, %v; want %q", name, b, err, content)
		require.Equal(t, content, string(b), "kept aside %s holds %q, %v; want %q", name, b, err, content)
	}
	assert.NotEqual(t, aside[1], aside[0], "two files kept aside at the same instant got names %v; want distinct names, the second with -1", aside)
	assert.True(t, strings.HasSuffix(aside[1], "-1"), "two files kept aside at the same instant got names %v; want distinct names, the second with -1", aside)
	_, err := os.Stat(path)
	assert.True(t, errors.Is(err, os.ErrNotExist), "the checkpoint is still in place after keepAside: %v", err)
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{Dir: "x", Limits: devicemanager.Limits{Pods: 3}}.withDefaults()
	want := devicemanager.DefaultLimits()
	want.Pods = 3
	assert.Equal(t, want, o.Limits, "Limits")
	assert.Equal(t, DefaultAllocateTimeout, o.AllocateTimeout, "zero fields not defaulted: %+v", o)
	assert.Equal(t, DefaultDialTimeout, o.DialTimeout, "zero fields not defaulted: %+v", o)
	require.NotNil(t, o.Clock, "zero fields not defaulted: %+v", o)
	assert.NotNil(t, o.Logger, "zero fields not defaulted: %+v", o)
}
