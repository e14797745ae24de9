package realkubelet

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// cgroupV1Mounts lists the mountpoints of the cgroup v1 hierarchies, from
// the mount table (a hierarchy of several controllers is one mount).
func cgroupV1Mounts() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var mounts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// mountinfo: ID parent major:minor root mountpoint options
		// [optional fields] - fstype source super-options.
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if sep < 0 || sep+1 >= len(fields) || len(fields) < 5 {
			continue
		}
		if fields[sep+1] == "cgroup" {
			mounts = append(mounts, fields[4])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	slices.Sort(mounts)
	return mounts, nil
}

// makeCgroupRoot makes the node's cgroupRoot in every v1 hierarchy: the
// kubelet refuses a cgroupRoot missing from one. In the cpuset hierarchy a
// new cgroup has no CPUs and no memory nodes until given its parent's, and
// a cgroup without them takes no process, so they are copied.
func makeCgroupRoot(root string) error {
	mounts, err := cgroupV1Mounts()
	if err != nil {
		return err
	}
	if len(mounts) == 0 {
		return errors.New("realkubelet: no cgroup v1 hierarchy mounted (the harness runs the kubelet on cgroup v1)")
	}
	for _, m := range mounts {
		dir := filepath.Join(m, root)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("realkubelet: making cgroupRoot: %w", err)
		}
		for _, file := range []string{"cpuset.cpus", "cpuset.mems"} {
			value, err := os.ReadFile(filepath.Join(m, file))
			if errors.Is(err, os.ErrNotExist) {
				break // not the cpuset hierarchy
			}
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, file), value, 0o644); err != nil {
				return fmt.Errorf("realkubelet: copying %s into %s: %w", file, dir, err)
			}
		}
	}
	return nil
}
