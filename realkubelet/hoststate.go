package realkubelet

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// HostState is what a node could change on the host, as seen from the
// host's mount namespace: taken before Start and after Stop, the two must
// be equal (Diff).
type HostState struct {
	// Mounts are the host namespace's mounts, "mountpoint fstype source".
	Mounts []string
	// Cgroups are the cgroup directories of every hierarchy, as paths
	// under /sys/fs/cgroup; Occupied those of them holding a process.
	Cgroups  []string
	Occupied map[string]bool
	// Paths says, for each of the kubelet's fixed host paths, whether it
	// exists.
	Paths map[string]bool
	// KernelFlags are the values of the flags the kubelet rewrites.
	KernelFlags map[string]string
	// Listening are the kubelet's ports that accept connections on
	// 127.0.0.1.
	Listening []int
}

// fixedPaths are the host paths the kubelet writes whatever its flags say.
var fixedPaths = []string{"/var/lib/kubelet", DevicePluginPath, "/var/log/containers", "/var/log/pods", "/usr/libexec/kubernetes"}

// CaptureHost reads the host's state.
func CaptureHost() (HostState, error) {
	s := HostState{Occupied: map[string]bool{}, Paths: map[string]bool{}, KernelFlags: map[string]string{}}
	var err error
	if s.Mounts, err = mounts(); err != nil {
		return s, err
	}
	filepath.WalkDir("/sys/fs/cgroup", func(path string, d fs.DirEntry, err error) error {
		// A cgroup removed during the walk is not an error of the walk.
		if err == nil && d.IsDir() {
			s.Cgroups = append(s.Cgroups, path)
			procs, _ := os.ReadFile(filepath.Join(path, "cgroup.procs"))
			s.Occupied[path] = len(strings.TrimSpace(string(procs))) > 0
		}
		return nil
	})
	for _, p := range fixedPaths {
		_, err := os.Lstat(p)
		s.Paths[p] = err == nil
	}
	for _, f := range KernelFlags {
		b, err := os.ReadFile(filepath.Join("/proc/sys", f.Path))
		if err != nil {
			return s, err
		}
		s.KernelFlags[f.Path] = strings.TrimSpace(string(b))
	}
	for _, port := range []int{HealthzPort, ServerPort} {
		if listening(port) {
			s.Listening = append(s.Listening, port)
		}
	}
	return s, nil
}

// mounts lists this namespace's mounts from /proc/self/mountinfo, sorted.
func mounts() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var list []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if len(fields) < 5 || sep < 0 || sep+2 >= len(fields) {
			continue
		}
		list = append(list, fields[4]+" "+fields[sep+1]+" "+fields[sep+2])
	}
	slices.Sort(list)
	return list, sc.Err()
}

// Diff lists the differences from before to after, one line each, leaving
// out what belongs to other programs that may run beside the node: another
// harness's (go test runs packages in parallel) containerd directory and
// mounts (agent/containerd's, under $TMPDIR/npctrd*, other than the node's
// own) and its cgroups (/nodeproof-test-*), and a new cgroup holding a
// process whose path names nothing of a node's (no nodeproof, kubepods or
// k8s.io): a busy host's other programs make such cgroups for processes
// of their own. A node's process left running is Stop's to report (it
// finds them by their command lines), and its empty cgroups are still
// reported here. ownContainerdDir is the node's containerd's directory.
func Diff(before, after HostState, ownContainerdDir string) []string {
	foreign := func(entry string) bool {
		if strings.Contains(entry, "/nodeproof-test-") {
			return true
		}
		other := filepath.Join(os.TempDir(), "npctrd")
		return strings.Contains(entry, other) && (ownContainerdDir == "" || !strings.Contains(entry, ownContainerdDir))
	}
	othersCgroup := func(path string) bool {
		if foreign(path) {
			return true
		}
		nodes := strings.Contains(path, "nodeproof") || strings.Contains(path, "kubepods") || strings.Contains(path, "k8s.io")
		return after.Occupied[path] && !slices.Contains(before.Cgroups, path) && !nodes
	}
	var diffs []string
	diffs = append(diffs, diffLists("mount", before.Mounts, after.Mounts, foreign)...)
	diffs = append(diffs, diffLists("cgroup", before.Cgroups, after.Cgroups, othersCgroup)...)
	for _, p := range fixedPaths {
		if before.Paths[p] != after.Paths[p] {
			diffs = append(diffs, fmt.Sprintf("path %s: existed %v, now %v", p, before.Paths[p], after.Paths[p]))
		}
	}
	for _, f := range KernelFlags {
		if b, a := before.KernelFlags[f.Path], after.KernelFlags[f.Path]; b != a {
			diffs = append(diffs, fmt.Sprintf("kernel flag %s: was %s, now %s", f.Path, b, a))
		}
	}
	diffs = append(diffs, diffLists("listening on 127.0.0.1", ports(before.Listening), ports(after.Listening), func(string) bool { return false })...)
	return diffs
}

func ports(list []int) []string {
	s := make([]string, len(list))
	for i, p := range list {
		s[i] = strconv.Itoa(p)
	}
	return s
}

// diffLists says which entries are new in after and which are gone, of
// those foreign does not claim.
func diffLists(kind string, before, after []string, foreign func(string) bool) []string {
	var diffs []string
	for _, e := range after {
		if !slices.Contains(before, e) && !foreign(e) {
			diffs = append(diffs, fmt.Sprintf("%s added: %s", kind, e))
		}
	}
	for _, e := range before {
		if !slices.Contains(after, e) && !foreign(e) {
			diffs = append(diffs, fmt.Sprintf("%s removed: %s", kind, e))
		}
	}
	return diffs
}

// leftovers says what of the node is on the host: after Stop, what it
// failed to remove.
func (n *Node) leftovers() []string {
	var left []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(string(cmdline), n.Dir) {
			left = append(left, fmt.Sprintf("process %d (%s)", pid, strings.ReplaceAll(string(cmdline), "\x00", " ")))
		}
	}
	list, _ := mounts()
	for _, m := range list {
		if mp, _, _ := strings.Cut(m, " "); mp == n.Dir || strings.HasPrefix(mp, n.Dir+"/") {
			left = append(left, "mount "+mp)
		}
	}
	if _, err := os.Lstat(n.Dir); err == nil {
		left = append(left, "directory "+n.Dir)
	}
	hierarchies, _ := cgroupV1Mounts()
	for _, h := range hierarchies {
		if d := filepath.Join(h, n.CgroupRoot); exists(d) {
			left = append(left, "cgroup "+d)
		}
	}
	return left
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
