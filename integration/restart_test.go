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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	c := e.agent.Capacity()
	assert.Equal(t, int64(0), c.Capacity[res], "before the plugin is back Capacity() = %+v, want %s at 0", c, res)
	assert.Equal(t, int64(0), c.Allocatable[res], "before the plugin is back Capacity() = %+v, want %s at 0", c, res)
	// The running pod is admitted again without an Allocate: its devices
	// are in the checkpoint, and so is the plugin's answer.
	e.admit(podWith("running", 1))
	opts, err := e.agent.StartContainer(context.Background(), podWith("running", 1), "app")
	require.NoError(t, err)
	require.NotNil(t, opts, "restored run options %+v, want TESTPLUGIN_DEVICES=d0 from the checkpoint", opts)
	require.Len(t, opts.Envs, 1, "restored run options %+v, want TESTPLUGIN_DEVICES=d0 from the checkpoint", opts)
	assert.Equal(t, "d0", opts.Envs[0].Value, "restored run options %+v, want TESTPLUGIN_DEVICES=d0 from the checkpoint", opts)
	msg := e.admitFails(podWith("early", 1))
	want := "no healthy devices present; cannot allocate unhealthy devices " + res
	assert.Contains(t, msg, want, "admission before the plugin is back failed with %q, want %q", msg, want)

	back := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0", "d1")})
	e.waitCapacity(2, 2)
	e.agent.SetSourcesReady()
	e.admit(podWith("new", 1))
	msg = e.admitFails(podWith("one-too-many", 1))
	want = "requested number of devices unavailable for " + res + ". Requested: 1, Available: 0"
	assert.Contains(t, msg, want, "third pod failed with %q, want %q", msg, want)
	got := allocated(back)
	require.Len(t, got, 1, "Allocate calls after the restart %v, want one for d1 (d0 is the running pod's)", got)
	assert.True(t, slices.Equal(got[0], []string{"d1"}), "Allocate calls after the restart %v, want one for d1 (d0 is the running pod's)", got)
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
	got := allocated(p)
	require.Len(t, got, 1, "Allocate calls %v, want one for d0 and d1 through the new connection", got)
	assert.True(t, slices.Equal(got[0], []string{"d0", "d1"}), "Allocate calls %v, want one for d0 and d1 through the new connection", got)
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
			require.NoError(t, err)
			var bad []byte
			if tc.content != nil {
				bad = tc.content(valid)
				require.NoError(t, os.WriteFile(path, bad, 0o600))
			} else {
				// A directory in the file's place cannot be read as one,
				// whoever runs the test (root reads any mode).
				require.NoError(t, os.Remove(path))
				require.NoError(t, os.Mkdir(path, 0o700))
			}

			e.startAgent(deviceplugin.Options{})
			assert.True(t, e.logs.has("Continue after failing to read checkpoint file"), "no error logged for the unloadable checkpoint")
			c := e.agent.Capacity()
			assert.Empty(t, c.Capacity, "Capacity() = %+v, want an empty start", c)
			aside, err := filepath.Glob(path + ".corrupt-*")
			require.NoError(t, err, "kept-aside files %v, %v; want exactly one", aside, err)
			require.Len(t, aside, 1, "kept-aside files %v, %v; want exactly one", aside, err)
			if tc.content != nil {
				got, err := os.ReadFile(aside[0])
				require.NoError(t, err, "kept-aside file holds %q, %v; want the bad bytes", got, err)
				assert.Equal(t, string(bad), string(got), "kept-aside file holds %q, %v; want the bad bytes", got, err)
			}

			// The agent writes a fresh checkpoint and leaves the old one be.
			e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0", "d1")})
			e.waitCapacity(2, 2)
			e.admit(podWith("pod2", 2))
			got := e.readCheckpoint().PodDeviceEntries
			require.Len(t, got, 1, "fresh checkpoint entries %+v, want pod2's only", got)
			assert.Equal(t, "pod2", got[0].PodUID, "fresh checkpoint entries %+v, want pod2's only", got)
			_, err = os.Stat(aside[0])
			assert.NoError(t, err, "the kept-aside file is gone")
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
	require.NoError(t, os.WriteFile(notes, []byte("kept"), 0o600))

	e.startAgent(deviceplugin.Options{})
	_, err := os.Lstat(filepath.Join(e.dir, "p.sock"))
	assert.True(t, errors.Is(err, fs.ErrNotExist), "the stale plugin socket is still there after the start (lstat: %v)", err)
	b, err := os.ReadFile(notes)
	require.NoError(t, err, "a file that is not a socket was not left alone: %q, %v", b, err)
	assert.Equal(t, "kept", string(b), "a file that is not a socket was not left alone: %q, %v", b, err)
	e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0")})
	e.waitCapacity(1, 1)
}
