package containerd

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// shimSocketDir is where containerd's runc shims put their sockets whatever
// the config says: the host's state directory, shared by every containerd
// on the machine, so another test's containerd (go test runs packages in
// parallel) has its sockets there too. The shims remove their sockets on
// exit; the teardown removes the directories if Start created them.
const shimSocketDir = "/run/containerd/s"

// criNamespace is the containerd namespace the CRI plugin works in.
const criNamespace = "k8s.io"

// ShimSocket is the socket the runc shim of a sandbox listens on while the
// sandbox runs: in shimSocketDir, named by the hex SHA-256 of containerd's address, the namespace and
// the sandbox ID joined as a path (the shim groups a pod's containers under
// the sandbox's ID; containerd 1.6 and 1.7 name it alike). It tells this
// containerd's sockets from another's.
func (c *Containerd) ShimSocket(sandboxID string) string {
	return filepath.Join(shimSocketDir, fmt.Sprintf("%x", sha256.Sum256([]byte(filepath.Join(c.Socket, criNamespace, sandboxID)))))
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// ownShimSockets lists the sockets of this containerd's shims that are in
// shimSocketDir.
func (c *Containerd) ownShimSockets() []string {
	var own []string
	for _, id := range c.sandboxIDs {
		if path := c.ShimSocket(id); exists(path) {
			own = append(own, path)
		}
	}
	return own
}

// listDir returns the names in dir, or nil if it does not exist.
func listDir(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	names := []string{}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func mountTmpfs(dir string, sizeBytes int64) error {
	return unix.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", sizeBytes))
}

// Stop stops and removes everything Start started: the sandboxes and
// containers left in the runtime, containerd, its shims, the mounts, the
// cgroups below CgroupParent and Dir. It goes on after an error and
// returns them all, then what it failed to remove (Leftovers), so that a
// nil error means nothing is left.
func (c *Containerd) Stop() error {
	errs := c.teardown()
	if err := os.RemoveAll(c.Dir); err != nil {
		errs = append(errs, fmt.Errorf("removing %s: %w", c.Dir, err))
	}
	for _, left := range c.Leftovers() {
		errs = append(errs, errors.New("left behind: "+left))
	}
	return errors.Join(errs...)
}

// teardown stops everything Start started, in an order that lets each part
// exit cleanly: the sandboxes (and so their containers and shims) through
// CRI, then containerd, then whatever still runs, then the mounts and the
// cgroups. It goes on after an error and returns them all.
func (c *Containerd) teardown() []error {
	var errs []error
	if c.cmd != nil && c.cmd.Process != nil {
		errs = append(errs, c.removeSandboxes()...)
		if err := c.stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.CRI != nil {
		c.CRI.Close()
	}
	errs = append(errs, c.killStragglers()...)
	// A killed shim leaves its socket behind.
	for _, path := range c.ownShimSockets() {
		os.Remove(path)
	}
	errs = append(errs, c.unmountAll()...)
	errs = append(errs, c.removeCgroups()...)
	if c.shimSocketsBefore == nil {
		// Only empty directories go: another containerd's sockets stay.
		os.Remove(shimSocketDir)
		os.Remove(filepath.Dir(shimSocketDir))
	}
	return errs
}

// removeSandboxes stops and removes every sandbox containerd holds; removing
// a sandbox removes its containers.
func (c *Containerd) removeSandboxes() []error {
	select {
	case <-c.exited:
		return []error{fmt.Errorf("%w before teardown: %v", errExited, c.cmd.ProcessState)}
	default:
	}
	ctx := context.Background()
	sandboxes, err := c.CRI.ListPodSandbox(ctx)
	if err != nil {
		return []error{err}
	}
	var errs []error
	for _, sb := range sandboxes {
		c.sandboxIDs = append(c.sandboxIDs, sb.ID)
		if err := c.CRI.StopPodSandbox(ctx, sb.ID); err != nil {
			errs = append(errs, err)
		}
		if err := c.CRI.RemovePodSandbox(ctx, sb.ID); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// stop sends containerd SIGTERM and waits for it, then SIGKILL.
func (c *Containerd) stop() error {
	select {
	case <-c.exited:
		return nil
	default:
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("signalling containerd: %w", err)
	}
	timer := time.NewTimer(stopLimit)
	defer timer.Stop()
	select {
	case <-c.exited:
		return nil
	case <-timer.C:
	}
	c.cmd.Process.Kill()
	<-c.exited
	return fmt.Errorf("containerd ignored SIGTERM for %v; killed", stopLimit)
}

// ownProcesses lists the processes of this containerd that are not the
// daemon: shims (their command line names Dir) and container processes
// (their cgroup is below CgroupParent).
func (c *Containerd) ownProcesses() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || isZombie(pid) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		cgroup, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if strings.Contains(string(cmdline), c.Dir) || strings.Contains(string(cgroup), c.CgroupParent+"/") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// isZombie says whether pid has exited and waits only to be reaped (by
// init, once its shim is gone).
func isZombie(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true // gone
	}
	// The state follows the command name, which is in parentheses.
	_, after, ok := strings.Cut(string(stat), ") ")
	return ok && strings.HasPrefix(after, "Z")
}

// killStragglers kills what outlived containerd and waits for each to exit
// (pidfd poll, bounded). A straggler is an error: a clean teardown has none.
func (c *Containerd) killStragglers() []error {
	var errs []error
	for _, pid := range c.ownProcesses() {
		errs = append(errs, fmt.Errorf("process %d outlived containerd; killing it", pid))
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue // gone already
		}
		unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, int(stopLimit/time.Millisecond)); err != nil || n == 0 {
			errs = append(errs, fmt.Errorf("process %d still alive %v after SIGKILL", pid, stopLimit))
		}
		unix.Close(fd)
	}
	return errs
}

// mountsUnder lists the mountpoints at or below dir, deepest first.
func mountsUnder(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var mounts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := fields[4]
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			mounts = append(mounts, mp)
		}
	}
	slices.SortFunc(mounts, func(a, b string) int { return len(b) - len(a) })
	return mounts
}

// unmountAll unmounts container rootfs and the tmpfs; a busy mount is
// detached so that the directory can still go.
func (c *Containerd) unmountAll() []error {
	var errs []error
	for _, mp := range mountsUnder(c.Dir) {
		if err := unix.Unmount(mp, 0); err != nil {
			if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil {
				errs = append(errs, fmt.Errorf("unmounting %s: %w", mp, err))
			}
		}
	}
	return errs
}

// cgroupDirs are CgroupParent's directories under every cgroup mount (one
// per v1 controller, or the unified one).
func (c *Containerd) cgroupDirs() []string {
	const mount = "/sys/fs/cgroup"
	dirs := []string{filepath.Join(mount, c.CgroupParent)}
	entries, _ := os.ReadDir(mount)
	for _, e := range entries {
		dirs = append(dirs, filepath.Join(mount, e.Name(), c.CgroupParent))
	}
	return dirs
}

// removeCgroups removes CgroupParent and the empty cgroups runc may have
// left below it, deepest first.
func (c *Containerd) removeCgroups() []error {
	var errs []error
	for _, dir := range c.cgroupDirs() {
		var subdirs []string
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				subdirs = append(subdirs, p)
			}
			return nil
		})
		slices.Reverse(subdirs)
		for _, d := range subdirs {
			if err := unix.Rmdir(d); err != nil && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
			}
		}
	}
	return errs
}

// Leftovers says what of this containerd is on the host: after Stop,
// what it failed to remove.
func (c *Containerd) Leftovers() []string {
	var left []string
	for _, pid := range c.ownProcesses() {
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		left = append(left, fmt.Sprintf("process %d (%s)", pid, strings.ReplaceAll(string(cmdline), "\x00", " ")))
	}
	for _, mp := range mountsUnder(c.Dir) {
		left = append(left, "mount "+mp)
	}
	for _, path := range c.ownShimSockets() {
		left = append(left, "shim socket "+path)
	}
	if _, err := os.Lstat(c.Dir); err == nil {
		left = append(left, "directory "+c.Dir)
	}
	for _, d := range c.cgroupDirs() {
		if _, err := os.Lstat(d); err == nil {
			left = append(left, "cgroup "+d)
		}
	}
	return left
}
