package deviceplugin

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
)

func TestCheckpointWriteThenRead(t *testing.T) {
	dir := shortTempDir(t)
	if _, err := readCheckpoint(dir); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("readCheckpoint of an empty directory = %v, want ErrNotFound", err)
	}
	want := checkpoint.Data{
		PodDeviceEntries: []checkpoint.PodDevicesEntry{{
			PodUID: "pod1", ContainerName: "app", ResourceName: "example.com/dev",
			DeviceIDs: checkpoint.DevicesPerNUMA{-1: {"d0"}}, AllocResp: []byte{},
		}},
		RegisteredDevices: map[string][]string{"example.com/dev": {"d0", "d1"}},
	}
	for range 2 { // the second write replaces the first
		if err := writeCheckpoint(dir, want); err != nil {
			t.Fatal(err)
		}
	}
	got, err := readCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v, want %+v", got, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != devicemanager.CheckpointName {
		t.Errorf("directory holds %v, want only the checkpoint (no temporary file left)", entries)
	}
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
	if err := writeCheckpoint(dir, first); err != nil {
		t.Fatal(err)
	}
	firstBytes, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "old")
	if err := os.Link(path, old); err != nil {
		t.Fatal(err)
	}
	if err := writeCheckpoint(dir, second); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(old); err != nil || string(b) != string(firstBytes) {
		t.Errorf("the file the first write made now holds %q, %v; want it untouched: %q", b, err, firstBytes)
	}
	if got, err := readCheckpoint(dir); err != nil || !reflect.DeepEqual(got, second) {
		t.Errorf("after the second write the checkpoint reads %+v, %v; want %+v", got, err, second)
	}
}

func TestKeepAsideNeverOverwrites(t *testing.T) {
	dir := shortTempDir(t)
	path := filepath.Join(dir, devicemanager.CheckpointName)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var aside []string
	for _, content := range []string{"first", "second"} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		name, err := keepAside(dir, now)
		if err != nil {
			t.Fatal(err)
		}
		aside = append(aside, name)
		if b, err := os.ReadFile(name); err != nil || string(b) != content {
			t.Fatalf("kept aside %s holds %q, %v; want %q", name, b, err, content)
		}
	}
	if aside[0] == aside[1] || !strings.HasSuffix(aside[1], "-1") {
		t.Errorf("two files kept aside at the same instant got names %v; want distinct names, the second with -1", aside)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the checkpoint is still in place after keepAside: %v", err)
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{Dir: "x", Limits: devicemanager.Limits{Pods: 3}}.withDefaults()
	want := devicemanager.DefaultLimits()
	want.Pods = 3
	if o.Limits != want {
		t.Errorf("Limits = %+v, want the defaults with Pods kept at 3: %+v", o.Limits, want)
	}
	if o.AllocateTimeout != DefaultAllocateTimeout || o.DialTimeout != DefaultDialTimeout || o.Clock == nil || o.Logger == nil {
		t.Errorf("zero fields not defaulted: %+v", o)
	}
}
