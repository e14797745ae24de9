package realkubelet

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDiffSeesChanges shows the host check can fail: each kind of change
// the harness could leave is reported.
func TestDiffSeesChanges(t *testing.T) {
	before := HostState{
		Mounts:      []string{"/ ext4 /dev/vda"},
		Cgroups:     []string{"/sys/fs/cgroup/memory"},
		Paths:       map[string]bool{"/var/lib/kubelet": false},
		KernelFlags: map[string]string{"kernel/panic": "1"},
	}
	after := HostState{
		Mounts:      []string{"/ ext4 /dev/vda", "/tmp/npnode1/root tmpfs tmpfs", filepath.Join(os.TempDir(), "npctrd9/root") + " tmpfs tmpfs"},
		Cgroups:     []string{"/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory/nodeproof-kubelet-x", "/sys/fs/cgroup/memory/nodeproof-test-y"},
		Paths:       map[string]bool{"/var/lib/kubelet": true},
		KernelFlags: map[string]string{"kernel/panic": "10"},
		Listening:   []int{HealthzPort},
	}
	assert.Equal(t, []string{
		"mount added: /tmp/npnode1/root tmpfs tmpfs",
		"cgroup added: /sys/fs/cgroup/memory/nodeproof-kubelet-x",
		"path /var/lib/kubelet: existed false, now true",
		"kernel flag kernel/panic: was 1, now 10",
		"listening on 127.0.0.1 added: 10248",
	}, Diff(before, after, ""))
}

// The kubelet release is named in three places that must agree: Version,
// the Makefile that builds it, and the build module that pins it.
func TestVersionAgrees(t *testing.T) {
	makefile, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`(?m)^KUBELET_VERSION := `+regexp.QuoteMeta(Version)+`$`), string(makefile))
	goMod, err := os.ReadFile("build/go.mod")
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`(?m)^require k8s\.io/kubernetes `+regexp.QuoteMeta(Version)+`$`), string(goMod))
}

// TestDiffLeavesOutOthersLiveCgroups keeps a false alarm seen on a busy
// machine: another program made a cgroup for a process of its own while
// the node ran, and the host check took it for the node's. A new cgroup
// that holds a process, with no name of the node's, is another
// program's; an empty one, or one named like the node's, is reported.
func TestDiffLeavesOutOthersLiveCgroups(t *testing.T) {
	before := HostState{Cgroups: []string{"/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory/jobs"}}
	after := HostState{
		Cgroups: []string{
			"/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory/jobs",
			"/sys/fs/cgroup/memory/jobs/829d130d", "/sys/fs/cgroup/memory/jobs/empty",
			"/sys/fs/cgroup/memory/kubepods", "/sys/fs/cgroup/memory/nodeproof-kubelet-x/kubepods",
		},
		Occupied: map[string]bool{
			"/sys/fs/cgroup/memory/jobs/829d130d": true, "/sys/fs/cgroup/memory/kubepods": true,
			"/sys/fs/cgroup/memory/nodeproof-kubelet-x/kubepods": true,
		},
	}
	assert.Equal(t, []string{
		"cgroup added: /sys/fs/cgroup/memory/jobs/empty",
		"cgroup added: /sys/fs/cgroup/memory/kubepods",
		"cgroup added: /sys/fs/cgroup/memory/nodeproof-kubelet-x/kubepods",
	}, Diff(before, after, ""))
}
