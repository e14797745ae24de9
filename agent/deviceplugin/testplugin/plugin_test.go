package testplugin

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

func TestPrefer(t *testing.T) {
	for _, tc := range []struct {
		available, must []string
		size            int
		want            []string
	}{
		{[]string{"d0", "d1", "d2"}, nil, 1, []string{"d2"}},
		{[]string{"d0", "d1", "d2"}, []string{"d0"}, 2, []string{"d0", "d2"}},
		{[]string{"d0", "d1"}, []string{"d1"}, 2, []string{"d1", "d0"}},
		{[]string{"d0"}, nil, 3, []string{"d0"}},
		// The upstream kubelet offers devices in map order: the answer
		// must not depend on it.
		{[]string{"d1", "d2", "d0"}, nil, 2, []string{"d2", "d1"}},
		{[]string{"d2", "d0", "d1"}, []string{"d1", "d0"}, 3, []string{"d0", "d1", "d2"}},
	} {
		got := prefer(tc.available, tc.must, tc.size)
		assert.Equal(t, tc.want, got, "prefer(%v, %v, %d) = %v, want %v", tc.available, tc.must, tc.size, got, tc.want)
	}
}

// TestAnswer: the answer lists the devices sorted, under TESTPLUGIN_DEVICES
// or under the configured key.
func TestAnswer(t *testing.T) {
	p := &Plugin{cfg: Config{ResourceName: "example.com/gpu"}}
	got := p.answer([]string{"d2", "d0", "d1"})
	assert.Equal(t, "d0,d1,d2", got.Envs["TESTPLUGIN_DEVICES"], "answer = %v", got)
	assert.Equal(t, "example.com/gpu", got.Annotations["testplugin/resource"], "answer = %v", got)
	p.cfg.AnswerKey = "GPU_A"
	got = p.answer([]string{"d1", "d0"})
	require.Len(t, got.Envs, 1, "answer with AnswerKey = %v", got)
	assert.Equal(t, "d0,d1", got.Envs["GPU_A"], "answer with AnswerKey = %v", got)
	assert.Equal(t, "example.com/gpu", got.Annotations["testplugin/gpu_a"], "answer with AnswerKey = %v", got)
}

// TestAnswerHostDevices: with IDsPerHostDevice, each device asked for
// brings its host device's spec and mount, so two devices of one host
// device repeat them; a device the plugin does not list brings none.
func TestAnswerHostDevices(t *testing.T) {
	p := &Plugin{cfg: Config{ResourceName: "example.com/gpu", IDsPerHostDevice: 2}, devices: Healthy("d0", "d1", "d2")}
	got := p.answer([]string{"d2", "d0", "d1", "unknown"})
	spec := func(host int) *v1beta1.DeviceSpec {
		return &v1beta1.DeviceSpec{ContainerPath: fmt.Sprintf("/dev/testplugin%d", host), HostPath: "/dev/null", Permissions: "rw"}
	}
	mount := func(host int) *v1beta1.Mount {
		return &v1beta1.Mount{ContainerPath: fmt.Sprintf("/var/run/testplugin%d", host), HostPath: "/dev/null", ReadOnly: true}
	}
	assert.Equal(t, []*v1beta1.DeviceSpec{spec(1), spec(0), spec(0)}, got.Devices)
	assert.Equal(t, []*v1beta1.Mount{mount(1), mount(0), mount(0)}, got.Mounts)
	p.cfg.IDsPerHostDevice = 0
	got = p.answer([]string{"d0"})
	assert.Empty(t, got.Devices)
	assert.Empty(t, got.Mounts)
}

// TestDirWatcher: wait returns when the named file appears, ignores other
// names, and returns an error once the watcher is closed.
func TestDirWatcher(t *testing.T) {
	dir := t.TempDir()
	w, err := watchDir(dir)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- w.wait("kubelet.sock") }()
	for _, name := range []string{"other", "kubelet.sock"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o600))
	}
	select {
	case err := <-done:
		require.NoError(t, err, "wait")
	case <-time.After(10 * time.Second):
		t.Fatal("wait did not return after kubelet.sock was created")
	}
	go func() { done <- w.wait("kubelet.sock") }()
	w.close()
	select {
	case err := <-done:
		require.Error(t, err, "wait on a closed watcher returned nil")
	case <-time.After(10 * time.Second):
		t.Fatal("close did not end a pending wait")
	}
}
