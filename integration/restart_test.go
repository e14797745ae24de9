package integration

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/agent/deviceplugin"
	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
	"github.com/nodeproof/nodeproof/core/devicemanager"
)

// TestRestartWithRunningPod: after a restart the checkpoint brings back the
// running pod's devices, capacity is 0 until the plugin registers again,
// and no device is handed out twice.
func TestRestartWithRunningPod(t *testing.T) {
	e := newEnv(t, deviceplugin.Options{})
	p := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0", "d1")})
	e.waitCapacity(2, 2)
	e.admit(podWith("running", 1))
	p.Stop()
	e.agent.Stop()

	e.startAgent(deviceplugin.Options{Containers: []devicemanager.ContainerRef{{PodUID: "running", Container: "app", Running: true}}})
	if c := e.agent.Capacity(); c.Capacity[res] != 0 || c.Allocatable[res] != 0 {
		t.Errorf("before the plugin is back Capacity() = %+v, want %s at 0", c, res)
	}
	// The running pod is admitted again without an Allocate: its devices
	// are in the checkpoint, and so is the plugin's answer.
	e.admit(podWith("running", 1))
	opts, err := e.agent.StartContainer(context.Background(), podWith("running", 1), "app")
	if err != nil {
		t.Fatal(err)
	}
	if opts == nil || len(opts.Envs) != 1 || opts.Envs[0].Value != "d0" {
		t.Errorf("restored run options %+v, want TESTPLUGIN_DEVICES=d0 from the checkpoint", opts)
	}
	msg := e.admitFails(podWith("early", 1))
	if want := "no healthy devices present; cannot allocate unhealthy devices " + res; !strings.Contains(msg, want) {
		t.Errorf("admission before the plugin is back failed with %q, want %q", msg, want)
	}

	back := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0", "d1")})
	e.waitCapacity(2, 2)
	e.agent.SetSourcesReady()
	e.admit(podWith("new", 1))
	msg = e.admitFails(podWith("one-too-many", 1))
	if want := "requested number of devices unavailable for " + res + ". Requested: 1, Available: 0"; !strings.Contains(msg, want) {
		t.Errorf("third pod failed with %q, want %q", msg, want)
	}
	if got := allocated(back); len(got) != 1 || !slices.Equal(got[0], []string{"d1"}) {
		t.Errorf("Allocate calls after the restart %v, want one for d1 (d0 is the running pod's)", got)
	}
}

// TestPluginReRegistersWhenKubeletSockRecreated: a plugin that outlives the
// agent notices the new kubelet.sock, re-creates the socket the agent's start
// removed, and registers again.
func TestPluginReRegistersWhenKubeletSockRecreated(t *testing.T) {
	e := newEnv(t, deviceplugin.Options{})
	p := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0", "d1")})
	e.waitCapacity(2, 2)
	e.agent.Stop()

	e.startAgent(deviceplugin.Options{})
	e.waitCapacity(2, 2)
	// The agent may apply the snapshot before the plugin reads the answer
	// to its Register call.
	e.eventually(func() string { return fmt.Sprintf("the plugin to count 2 registrations (has %d)", p.Registrations()) },
		func() bool { return p.Registrations() == 2 })
	e.admit(podWith("pod1", 2))
	if got := allocated(p); len(got) != 1 || !slices.Equal(got[0], []string{"d0", "d1"}) {
		t.Errorf("Allocate calls %v, want one for d0 and d1 through the new connection", got)
	}
}

// TestUnloadableCheckpointKeptAside: a checkpoint the agent cannot load is
// logged, renamed aside instead of overwritten, and the agent starts empty.
func TestUnloadableCheckpointKeptAside(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content func(valid []byte) []byte
	}{
		{"not json", func([]byte) []byte { return []byte("{garbage") }},
		{"checksum mismatch", func(valid []byte) []byte {
			return []byte(strings.Replace(string(valid), `"d0"`, `"d9"`, 1))
		}},
		{"unreadable", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, deviceplugin.Options{})
			p := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0", "d1")})
			e.waitCapacity(2, 2)
			e.admit(podWith("pod1", 1))
			p.Stop()
			e.agent.Stop()

			path := filepath.Join(e.dir, devicemanager.CheckpointName)
			valid, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var bad []byte
			if tc.content != nil {
				bad = tc.content(valid)
				if err := os.WriteFile(path, bad, 0o600); err != nil {
					t.Fatal(err)
				}
			} else {
				// A directory in the file's place cannot be read as one,
				// whoever runs the test (root reads any mode).
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(path, 0o700); err != nil {
					t.Fatal(err)
				}
			}

			e.startAgent(deviceplugin.Options{})
			if !e.logs.has("Continue after failing to read checkpoint file") {
				t.Error("no error logged for the unloadable checkpoint")
			}
			if c := e.agent.Capacity(); len(c.Capacity) != 0 {
				t.Errorf("Capacity() = %+v, want an empty start", c)
			}
			aside, err := filepath.Glob(path + ".corrupt-*")
			if err != nil || len(aside) != 1 {
				t.Fatalf("kept-aside files %v, %v; want exactly one", aside, err)
			}
			if tc.content != nil {
				if got, err := os.ReadFile(aside[0]); err != nil || string(got) != string(bad) {
					t.Errorf("kept-aside file holds %q, %v; want the bad bytes", got, err)
				}
			}

			// The agent writes a fresh checkpoint and leaves the old one be.
			e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0", "d1")})
			e.waitCapacity(2, 2)
			e.admit(podWith("pod2", 2))
			if got := e.readCheckpoint().PodDeviceEntries; len(got) != 1 || got[0].PodUID != "pod2" {
				t.Errorf("fresh checkpoint entries %+v, want pod2's only", got)
			}
			if _, err := os.Stat(aside[0]); err != nil {
				t.Errorf("the kept-aside file is gone: %v", err)
			}
		})
	}
}

// TestStartRemovesStaleSockets: the sockets a crashed kubelet and its
// plugins left behind, kubelet.sock among them, are removed when the agent
// starts, so it can listen again; other files stay.
func TestStartRemovesStaleSockets(t *testing.T) {
	e := newEnv(t, deviceplugin.Options{})
	e.agent.Stop()
	for _, name := range []string{devicemanager.KubeletSocket, "p.sock"} {
		staleSocket(t, filepath.Join(e.dir, name))
	}
	notes := filepath.Join(e.dir, "notes")
	if err := os.WriteFile(notes, []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}

	e.startAgent(deviceplugin.Options{})
	if _, err := os.Lstat(filepath.Join(e.dir, "p.sock")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the stale plugin socket is still there after the start (lstat: %v)", err)
	}
	if b, err := os.ReadFile(notes); err != nil || string(b) != "kept" {
		t.Errorf("a file that is not a socket was not left alone: %q, %v", b, err)
	}
	e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0")})
	e.waitCapacity(1, 1)
}
