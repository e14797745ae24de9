package cgroupfs

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/nodeproof/nodeproof/core/cgroups"
)

// Read reads interface files of the cgroup at path (relative to the root)
// and returns their contents without the trailing newline. On cgroup v1 each
// file is read from its controller's hierarchy by its prefix: cpu.* from
// cpu, memory.* from memory, pids.* from pids, hugetlb.* from hugetlb; other
// prefixes are an *InputError there. Files of a controller this host lacks
// are left out of the map and reported together in an *UnsupportedError,
// returned with the values that could be read. Any other failure is a
// *FileError and ends the read.
func (m *Manager) Read(path string, files []string) (map[string]string, error) {
	if err := checkPath("path", path); err != nil {
		return nil, err
	}
	values := make(map[string]string, len(files))
	var unsupported []string
	missing := map[string]bool{}
	// Every name is checked before any file is read, so bad input fails
	// the same way whatever the filesystem holds.
	for i, f := range files {
		if err := checkFileName(fmt.Sprintf("files[%d]", i), f); err != nil {
			return nil, err
		}
		if _, managed := controllerOf(f); m.version == cgroups.V1 && !managed {
			return nil, &InputError{Field: fmt.Sprintf("files[%d]", i), Value: f,
				Rule: "on cgroup v1 a file must belong to a controller the manager handles (cpu.*, memory.*, pids.*, hugetlb.*)"}
		}
	}
	for _, f := range files {
		ctrl, managed := controllerOf(f)
		if managed && !m.available[ctrl] {
			unsupported = append(unsupported, f)
			missing[ctrl] = true
			continue
		}
		b, err := os.ReadFile(filepath.Join(m.dir(ctrl, path), f))
		if err != nil {
			return nil, &FileError{Op: "read", Path: path, File: f, Err: err}
		}
		values[f] = strings.TrimSpace(string(b))
	}
	if len(unsupported) > 0 {
		sort.Strings(unsupported)
		ctrls := make([]string, 0, len(missing))
		for c := range missing {
			ctrls = append(ctrls, c)
		}
		sort.Strings(ctrls)
		return values, &UnsupportedError{Path: path, Files: unsupported, Controllers: ctrls, Version: int(m.version)}
	}
	return values, nil
}

// Verify reads back every file of want, the writes a cgroup should have
// seen (core/cgroups Values), and compares each value with what the kernel
// reports after such a write: memory limits rounded down to whole pages,
// hugetlb limits to whole huge pages, cpu.shares clamped to [2, 262144], a
// negative quota read as -1, cpu.max with the current period when the write
// named none. Where a file appears more than once the last write counts. It
// returns nil when all match; otherwise a *MismatchError, an
// *UnsupportedError for files of missing controllers, or both joined (use
// errors.As); or the *FileError or *InputError that stopped the read, such
// as a missing cgroup directory.
func (m *Manager) Verify(path string, want []cgroups.File) error {
	// A cgroup the config sets nothing for must still exist, in every
	// hierarchy the manager writes.
	dirs, err := m.Dirs(path)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			return &FileError{Op: "stat", Path: path, Err: err}
		}
	}
	last := map[string]string{}
	var names []string
	for _, f := range want {
		if _, seen := last[f.Name]; !seen {
			names = append(names, f.Name)
		}
		last[f.Name] = f.Value
	}
	got, err := m.Read(path, names)
	var unsupported *UnsupportedError
	if err != nil && !errors.As(err, &unsupported) {
		return err
	}
	mismatch := &MismatchError{Path: path}
	for _, name := range names {
		g, ok := got[name]
		if !ok {
			continue // unsupported
		}
		written := last[name]
		expected := ReadBack(m.version, cgroups.File{Name: name, Value: written}, os.Getpagesize())
		if !sameValue(name, expected, g) {
			mismatch.Mismatches = append(mismatch.Mismatches, Mismatch{File: name, Written: written, Want: expected, Got: g})
		}
	}
	var errs []error
	if len(mismatch.Mismatches) > 0 {
		errs = append(errs, mismatch)
	}
	if unsupported != nil {
		errs = append(errs, unsupported)
	}
	return errors.Join(errs...)
}

// sameValue compares a value read back with the expected one. A cpu.max
// write of the quota alone keeps the current period, so only the quota is
// compared then.
func sameValue(name, want, got string) bool {
	if name == "cpu.max" && !strings.Contains(want, " ") {
		q, _, _ := strings.Cut(got, " ")
		return q == want
	}
	return want == got
}

// ReadBack returns what the kernel reports in an interface file after f's
// value is written to it on the given cgroup version, with pageSize the
// host's page size. It knows the kernel's normalisations of the files the
// kubelet writes (mm/memcontrol.c, mm/hugetlb_cgroup.c, kernel/sched/core.c);
// any other value comes back as written.
func ReadBack(version cgroups.Version, f cgroups.File, pageSize int) string {
	value := strings.TrimSpace(f.Value)
	ps := int64(pageSize)
	// PAGE_COUNTER_MAX in pages: the kernel's "no limit".
	maxPages := int64(math.MaxInt64) / ps
	if version == cgroups.V1 {
		switch {
		case f.Name == "cpu.shares":
			if n, err := strconv.ParseUint(value, 10, 64); err == nil {
				return strconv.FormatUint(min(max(n, 2), 262144), 10)
			}
		case f.Name == "cpu.cfs_quota_us":
			if n, err := strconv.ParseInt(value, 10, 64); err == nil && n < 0 {
				return "-1"
			}
		case f.Name == "memory.limit_in_bytes" || f.Name == "memory.soft_limit_in_bytes" ||
			f.Name == "memory.memsw.limit_in_bytes":
			if n, err := strconv.ParseInt(value, 10, 64); err == nil {
				pages := maxPages
				if n >= 0 {
					pages = min(n/ps, maxPages)
				}
				return strconv.FormatInt(pages*ps, 10)
			}
		case strings.HasPrefix(f.Name, "hugetlb.") && strings.HasSuffix(f.Name, ".limit_in_bytes"):
			if hp, ok := hugePageSizeOf(f.Name); ok {
				if n, err := strconv.ParseInt(value, 10, 64); err == nil {
					pages := maxPages
					if n >= 0 {
						pages = min(n/ps, maxPages)
					}
					per := hp / ps
					return strconv.FormatInt(pages/per*per*ps, 10)
				}
			}
		}
		return value
	}
	switch {
	case f.Name == "memory.max" || f.Name == "memory.min" || f.Name == "memory.low" ||
		f.Name == "memory.high" || f.Name == "memory.swap.max":
		if n, err := strconv.ParseInt(value, 10, 64); err == nil && n >= 0 {
			pages := min(n/ps, maxPages)
			if pages == maxPages {
				return "max"
			}
			return strconv.FormatInt(pages*ps, 10)
		}
	case strings.HasPrefix(f.Name, "hugetlb.") && strings.HasSuffix(f.Name, ".max"):
		if hp, ok := hugePageSizeOf(f.Name); ok {
			per := hp / ps
			limit := maxPages / per * per // the kernel prints "max" for this
			pages := limit
			if n, err := strconv.ParseInt(value, 10, 64); err == nil && n >= 0 {
				pages = min(n/ps, maxPages) / per * per
			} else if value != "max" {
				return value
			}
			if pages == limit {
				return "max"
			}
			return strconv.FormatInt(pages*ps, 10)
		}
	}
	return value
}

// hugePageSizeOf parses the page size out of "hugetlb.2MB.limit_in_bytes".
func hugePageSizeOf(name string) (int64, bool) {
	parts := strings.Split(name, ".")
	if len(parts) != 3 || len(parts[1]) < 3 {
		return 0, false
	}
	size := parts[1]
	n, err := strconv.ParseInt(size[:len(size)-2], 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	switch size[len(size)-2:] {
	case "KB":
		return n << 10, true
	case "MB":
		return n << 20, true
	case "GB":
		return n << 30, true
	}
	return 0, false
}
