package cgroupfs

import (
	"fmt"
	"strings"
)

// InputError is bad input from the caller: it names the field, the value and
// the rule it breaks. Nothing has been written when Apply returns one.
type InputError struct {
	Field string // e.g. "hierarchy[2].Path", "Options.Root"
	Value string // the offending value as the caller gave it; empty when Rule quotes it
	Rule  string // e.g. `must not contain ".." elements`
}

func (e *InputError) Error() string {
	if e.Value == "" {
		// Core's rules already quote the value they refuse.
		return fmt.Sprintf("cgroupfs: %s: %s", e.Field, e.Rule)
	}
	return fmt.Sprintf("cgroupfs: %s %q: %s", e.Field, e.Value, e.Rule)
}

// FileError is a failure of the kernel or the filesystem on one cgroup
// directory or interface file, such as EINVAL for a quota below 1ms or EBUSY
// when removing a cgroup that still holds processes.
type FileError struct {
	Op   string // "mkdir", "write", "read", "rmdir"
	Path string // the cgroup's path relative to the manager's root; "" is the root
	File string // the interface file; empty for directory operations
	Err  error  // the underlying error, naming the absolute path
}

func (e *FileError) Error() string {
	where := e.Path
	if where == "" {
		where = "(root)"
	}
	if e.File != "" {
		return fmt.Sprintf("cgroupfs: %s %s %s: %v", e.Op, where, e.File, e.Err)
	}
	return fmt.Sprintf("cgroupfs: %s %s: %v", e.Op, where, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// UnsupportedError says that files of one cgroup could not be read or
// checked because their controller is not available on this host, for
// example hugetlb files where no v1 hugetlb hierarchy is mounted.
type UnsupportedError struct {
	Path        string
	Files       []string // ascending
	Controllers []string // the missing controllers, ascending
	Version     int      // 1 or 2
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("cgroupfs: %s: %s not supported: controller %s not available on this host (cgroup v%d)",
		e.Path, strings.Join(e.Files, ", "), strings.Join(e.Controllers, ", "), e.Version)
}

// Mismatch is one interface file whose value read back differs from what
// the kernel reports after the write.
type Mismatch struct {
	File    string
	Written string // the value the caller expected to be written
	Want    string // what the kernel reports after that write (page rounding, clamping)
	Got     string // what was read back
}

// MismatchError lists the files of one cgroup whose values differ.
type MismatchError struct {
	Path       string
	Mismatches []Mismatch
}

func (e *MismatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cgroupfs: %s: %d file(s) differ:", e.Path, len(e.Mismatches))
	for _, m := range e.Mismatches {
		fmt.Fprintf(&b, " %s: wrote %q, want %q, got %q;", m.File, m.Written, m.Want, m.Got)
	}
	return strings.TrimSuffix(b.String(), ";")
}
