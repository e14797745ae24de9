package cgroupfs

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/containerd/cgroups/v3/cgroup1"
	"github.com/containerd/cgroups/v3/cgroup2"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/nodeproof/nodeproof/core/cgroups"
)

// Manager applies hierarchies below one root. It is safe for concurrent
// use; Apply and Delete are serialised.
type Manager struct {
	root    string
	mount   string
	version cgroups.Version
	logger  *slog.Logger

	// available holds the managed controllers this host has; missing the
	// others, ascending.
	available map[string]bool
	missing   []string
	// subsystems are the cgroup1 controllers the manager creates cgroups in.
	subsystems []cgroup1.Subsystem

	mu sync.Mutex
	// applied holds the paths Apply has created or updated and not removed
	// since, so the next Apply knows which pods went away.
	applied map[string]bool
}

// New finds the cgroup filesystem and the controllers it offers. It writes
// nothing: the root is created by the first Apply.
func New(opts Options) (*Manager, error) {
	opts, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	m := &Manager{
		root:      opts.Root,
		mount:     opts.Mountpoint,
		version:   opts.Version,
		logger:    opts.Logger,
		available: map[string]bool{},
		applied:   map[string]bool{},
	}
	if m.version == cgroups.V1 {
		err = m.findV1()
	} else {
		err = m.findV2()
	}
	if err != nil {
		return nil, err
	}
	for _, c := range managedControllers {
		if !m.available[c] {
			m.missing = append(m.missing, c)
		}
	}
	sort.Strings(m.missing)
	if len(m.missing) > 0 {
		m.logger.Info("cgroup controllers not available; their limits are skipped",
			"version", int(m.version), "mount", m.mount, "missing", strings.Join(m.missing, ","))
	}
	return m, nil
}

// findV1 keeps the managed controllers that have a cgroup v1 mount of their
// own under the mountpoint (a co-mount like cpu,cpuacct is reached through
// its "cpu" symlink, as the library expects).
func (m *Manager) findV1() error {
	for _, name := range managedControllers {
		var st unix.Statfs_t
		if err := unix.Statfs(filepath.Join(m.mount, name), &st); err != nil || st.Type != unix.CGROUP_SUPER_MAGIC {
			continue
		}
		var s cgroup1.Subsystem
		switch name {
		case ctrlCPU:
			s = cgroup1.NewCpu(m.mount)
		case ctrlMemory:
			s = cgroup1.NewMemory(m.mount)
		case ctrlPids:
			s = cgroup1.NewPids(m.mount)
		case ctrlHugetlb:
			h, err := cgroup1.NewHugetlb(m.mount)
			if err != nil {
				// No /sys/kernel/mm/hugepages: the kernel has no huge pages.
				continue
			}
			s = h
		}
		m.subsystems = append(m.subsystems, s)
		m.available[name] = true
	}
	if len(m.subsystems) == 0 {
		return fmt.Errorf("cgroupfs: none of the controllers %s has a cgroup v1 mount under %s",
			strings.Join(managedControllers, ", "), m.mount)
	}
	return nil
}

// findV2 takes the controllers the host's root cgroup already delegates to
// its children (cgroup.subtree_control of the mount), not all it could
// (cgroup.controllers): enabling one there would change the whole host, and
// the manager changes nothing outside its own root. systemd delegates cpu,
// memory and pids on a unified host; a hybrid host's v2 mount delegates
// nothing.
func (m *Manager) findV2() error {
	var st unix.Statfs_t
	if err := unix.Statfs(m.mount, &st); err != nil {
		return fmt.Errorf("cgroupfs: cgroup v2 mountpoint: %w", err)
	}
	if st.Type != unix.CGROUP2_SUPER_MAGIC {
		return fmt.Errorf("cgroupfs: %s is not a cgroup v2 mount", m.mount)
	}
	b, err := os.ReadFile(filepath.Join(m.mount, "cgroup.subtree_control"))
	if err != nil {
		return fmt.Errorf("cgroupfs: %w", err)
	}
	for _, c := range strings.Fields(string(b)) {
		if _, ok := controllerOf(c + "."); ok {
			m.available[c] = true
		}
	}
	return nil
}

// Version is the cgroup version the manager writes.
func (m *Manager) Version() cgroups.Version { return m.version }

// Root is the manager's root, as given in Options.
func (m *Manager) Root() string { return m.root }

// Missing lists the controllers the manager would write (cpu, memory, pids,
// hugetlb) that this host does not offer, ascending.
func (m *Manager) Missing() []string { return append([]string(nil), m.missing...) }

// Controllers lists the controllers the manager writes on this host,
// ascending.
func (m *Manager) Controllers() []string {
	var out []string
	for _, c := range managedControllers {
		if m.available[c] {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// RootDirs returns the absolute directories of the root: one per available
// controller on v1, one on v2.
func (m *Manager) RootDirs() []string { return m.dirsOf(m.root) }

// Dirs returns the absolute directories of one cgroup, as RootDirs does.
func (m *Manager) Dirs(path string) ([]string, error) {
	if err := checkPath("path", path); err != nil {
		return nil, err
	}
	return m.dirsOf(m.root + "/" + path), nil
}

// dirsOf maps a path below the mountpoint to its directories.
func (m *Manager) dirsOf(rel string) []string {
	if m.version == cgroups.V2 {
		return []string{filepath.Join(m.mount, rel)}
	}
	var out []string
	for _, c := range m.Controllers() {
		out = append(out, filepath.Join(m.mount, c, rel))
	}
	return out
}

// dir is the directory that holds a controller's files of a cgroup.
func (m *Manager) dir(controller, path string) string {
	if m.version == cgroups.V2 {
		return filepath.Join(m.mount, m.root, path)
	}
	return filepath.Join(m.mount, controller, m.root, path)
}

func (m *Manager) hierarchy() ([]cgroup1.Subsystem, error) { return m.subsystems, nil }

// Apply makes the filesystem hold h: it creates each cgroup below the root,
// parents first, or updates it in place, writing the files core renders for
// its config (ResourceConfig.Values) in core's order and leaving the others
// as they are; then it removes, children first, the cgroups an earlier
// Apply created that h no longer lists (pods come and go). h is validated
// and rendered whole before anything is written; files of missing
// controllers are skipped and logged. A kernel refusal stops Apply with a
// *FileError naming the cgroup and file; the cgroups applied before it stay.
func (m *Manager) Apply(h []cgroups.Cgroup) error {
	plans, err := checkHierarchy(h, m.version, m.available)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	skipped := map[string]int{}
	wanted := make(map[string]bool, len(h))
	for i, cg := range h {
		wanted[cg.Path] = true
		if err := m.applyOne(cg.Path, plans[i]); err != nil {
			return err
		}
		m.applied[cg.Path] = true
		for _, c := range plans[i].skipped {
			skipped[c]++
		}
	}
	for _, c := range slices.Sorted(maps.Keys(skipped)) {
		m.logger.Info("skipped limits of a missing controller", "controller", c, "cgroups", skipped[c])
	}
	var stale []string
	for p := range m.applied {
		if !wanted[p] {
			stale = append(stale, p)
		}
	}
	sortChildrenFirst(stale)
	var errs []error
	var kept []string // stale cgroups that could not go; their ancestors stay too
	for _, p := range stale {
		if slices.ContainsFunc(kept, func(k string) bool { return strings.HasPrefix(k, p+"/") }) {
			kept = append(kept, p)
			continue
		}
		if err := m.removeOne(p); err != nil {
			errs = append(errs, err)
			kept = append(kept, p)
			continue
		}
		delete(m.applied, p)
		m.logger.Debug("removed cgroup", "path", p)
	}
	return errors.Join(errs...)
}

// applyOne creates the cgroup if it is missing, in every hierarchy the
// manager writes, and then writes p's files.
func (m *Manager) applyOne(path string, p plan) error {
	group := "/" + m.root + "/" + path
	if m.version == cgroups.V1 {
		// With no resources cgroup1.New only creates the directory in each
		// subsystem, and leaves an existing one as it is.
		if _, err := cgroup1.New(cgroup1.StaticPath(group), &specs.LinuxResources{}, cgroup1.WithHierarchy(m.hierarchy)); err != nil {
			return wrapLibrary(path, err)
		}
	} else {
		// Not cgroup2.NewManager: it removes the directory when a write
		// fails, which would delete an existing pod cgroup on a bad update.
		if err := os.MkdirAll(filepath.Join(m.mount, group), 0o755); err != nil {
			return wrapLibrary(path, err)
		}
		cg, err := cgroup2.Load(group, cgroup2.WithMountpoint(m.mount))
		if err != nil {
			return wrapLibrary(path, err)
		}
		// Every available controller is enabled down to the cgroup, with or
		// without limits, so that every cgroup of the tree has the same
		// interface files, as runc does for the kubelet.
		if enable := m.Controllers(); len(enable) > 0 {
			if err := cg.ToggleControllers(enable, cgroup2.Enable); err != nil {
				return wrapLibrary(path, err)
			}
		}
	}
	if err := m.write(path, p.writes); err != nil {
		return err
	}
	m.logger.Debug("applied cgroup", "path", path)
	return nil
}

// write writes files to the cgroup at path, in order. On v1 a new period
// can meet the old quota: when the period shrinks, old quota / new period
// may exceed the parent's share and the kernel refuses the period with
// EINVAL. runc (opencontainers/cgroups fs, cpu.go) then writes the quota
// first and the period again, and so does the manager.
func (m *Manager) write(path string, files []cgroups.File) error {
	var refusedPeriod *cgroups.File
	for i, f := range files {
		err := m.writeOne(path, f)
		if err != nil && f.Name == "cpu.cfs_period_us" && errors.Is(err, unix.EINVAL) &&
			slices.ContainsFunc(files[i+1:], func(f cgroups.File) bool { return f.Name == "cpu.cfs_quota_us" }) {
			refusedPeriod = &files[i]
			continue
		}
		if err != nil {
			return err
		}
		if f.Name == "cpu.cfs_quota_us" && refusedPeriod != nil {
			if err := m.writeOne(path, *refusedPeriod); err != nil {
				return err
			}
			refusedPeriod = nil
		}
	}
	return nil
}

func (m *Manager) writeOne(path string, f cgroups.File) error {
	ctrl, _ := controllerOf(f.Name)
	if err := writeFile(filepath.Join(m.dir(ctrl, path), f.Name), f.Value); err != nil {
		return &FileError{Op: "write", Path: path, File: f.Name, Err: err}
	}
	return nil
}

// writeFile writes an existing interface file; it never creates one, so a
// mistyped name fails instead of leaving a stray file.
func writeFile(name, value string) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// wrapLibrary turns the library's error into a *FileError naming the cgroup
// and, where the library's *fs.PathError tells it, the file.
func wrapLibrary(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if pe.Op == "mkdir" {
			return &FileError{Op: "mkdir", Path: path, Err: err}
		}
		return &FileError{Op: "write", Path: path, File: filepath.Base(pe.Path), Err: err}
	}
	return &FileError{Op: "apply", Path: path, Err: err}
}

// removeOne removes one cgroup's directories; one already gone is fine.
func (m *Manager) removeOne(path string) error {
	for _, d := range m.dirsOf(m.root + "/" + path) {
		if err := unix.Rmdir(d); err != nil && !errors.Is(err, unix.ENOENT) {
			return &FileError{Op: "rmdir", Path: path, Err: &fs.PathError{Op: "rmdir", Path: d, Err: err}}
		}
	}
	return nil
}

// Delete removes the root and every cgroup below it, children first,
// whether this manager created them or an earlier run left them behind. It
// is idempotent. A cgroup that still holds processes stays and is named in
// the returned error (EBUSY), together with its ancestors.
func (m *Manager) Delete() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for _, base := range m.RootDirs() {
		var dirs []string
		err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		if err != nil {
			errs = append(errs, &FileError{Op: "walk", Err: err})
			continue
		}
		sortChildrenFirst(dirs)
		for _, d := range dirs {
			if err := unix.Rmdir(d); err != nil && !errors.Is(err, unix.ENOENT) {
				rel, _ := filepath.Rel(base, d)
				if rel == "." {
					rel = ""
				}
				errs = append(errs, &FileError{Op: "rmdir", Path: filepath.ToSlash(rel),
					Err: &fs.PathError{Op: "rmdir", Path: d, Err: err}})
			}
		}
	}
	if len(errs) == 0 {
		clear(m.applied)
	}
	return errors.Join(errs...)
}

// AddProc moves a process into a cgroup: into every available controller's
// cgroup on v1, into the one cgroup on v2.
func (m *Manager) AddProc(path string, pid int) error {
	if err := checkPath("path", path); err != nil {
		return err
	}
	if pid <= 0 {
		return &InputError{Field: "pid", Value: fmt.Sprint(pid), Rule: "must be positive"}
	}
	group := "/" + m.root + "/" + path
	var err error
	if m.version == cgroups.V1 {
		var cg cgroup1.Cgroup
		if cg, err = cgroup1.Load(cgroup1.StaticPath(group), cgroup1.WithHierarchy(m.hierarchy)); err == nil {
			err = cg.AddProc(uint64(pid))
		}
	} else {
		var cg *cgroup2.Manager
		if cg, err = cgroup2.Load(group, cgroup2.WithMountpoint(m.mount)); err == nil {
			err = cg.AddProc(uint64(pid))
		}
	}
	if err != nil {
		return &FileError{Op: "write", Path: path, File: "cgroup.procs", Err: err}
	}
	return nil
}

// sortChildrenFirst orders paths so that every path comes before its
// ancestors: deepest first, then descending, a decided order.
func sortChildrenFirst(paths []string) {
	sort.Slice(paths, func(i, j int) bool {
		di, dj := strings.Count(paths[i], "/"), strings.Count(paths[j], "/")
		if di != dj {
			return di > dj
		}
		return paths[i] > paths[j]
	})
}
