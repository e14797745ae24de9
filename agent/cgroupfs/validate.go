package cgroupfs

import (
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strings"

	"github.com/nodeproof/nodeproof/core/cgroups"
)

// checkPath enforces the rules every cgroup path (and the root) follows:
// relative, slash separated, no empty, "." or ".." elements. A path that
// broke them could reach outside the manager's root, or name the same
// directory twice under different spellings.
func checkPath(field, p string) error {
	bad := func(rule string) error { return &InputError{Field: field, Value: p, Rule: rule} }
	switch {
	case p == "":
		return bad("must not be empty")
	case strings.HasPrefix(p, "/"):
		return bad("must be relative to the root (no leading slash)")
	case strings.ContainsRune(p, 0):
		return bad("must not contain a NUL byte")
	}
	for _, elem := range strings.Split(p, "/") {
		switch elem {
		case "":
			return bad("must not contain empty elements (\"//\" or a trailing slash)")
		case ".", "..":
			return bad(`must not contain "." or ".." elements`)
		}
	}
	return nil
}

// checkFileName enforces that an interface file name is one plain name
// inside the cgroup's directory.
func checkFileName(field, name string) error {
	bad := func(rule string) error { return &InputError{Field: field, Value: name, Rule: rule} }
	switch {
	case name == "":
		return bad("must not be empty")
	case name == "." || name == "..":
		return bad(`must not be "." or ".."`)
	case strings.ContainsAny(name, "/\x00"):
		return bad("must be a file name (no slash or NUL byte)")
	}
	return nil
}

// parent returns the parent of a validated path, "" for a top-level cgroup.
func parent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}

// checkHierarchy validates the whole hierarchy and renders every config
// through core before anything is written, so bad input never leaves a
// half-applied tree behind. It returns one plan per cgroup.
func checkHierarchy(h []cgroups.Cgroup, version cgroups.Version, available map[string]bool) ([]plan, error) {
	seen := make(map[string]int, len(h))
	plans := make([]plan, 0, len(h))
	for i, cg := range h {
		field := fmt.Sprintf("hierarchy[%d].Path", i)
		if err := checkPath(field, cg.Path); err != nil {
			return nil, err
		}
		if j, dup := seen[cg.Path]; dup {
			return nil, &InputError{Field: field, Value: cg.Path, Rule: fmt.Sprintf("duplicate of hierarchy[%d]", j)}
		}
		// Parents come first: Apply creates in order, and Delete removes a
		// cgroup only after its children, which it can do only if every
		// directory it made is one it was asked for.
		if p := parent(cg.Path); p != "" {
			if _, ok := seen[p]; !ok {
				return nil, &InputError{Field: field, Value: cg.Path,
					Rule: fmt.Sprintf("parent %q must come earlier in the hierarchy", p)}
			}
		}
		seen[cg.Path] = i
		if err := checkConfig(fmt.Sprintf("hierarchy[%d].Config", i), cg.Config, version); err != nil {
			return nil, err
		}
		p, err := planFor(i, cg.Config, version, available)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// checkConfig holds the manager's own rules, beyond the values core
// refuses to render (shares, quota and period bounds, negative memory and
// hugetlb limits, bad Unified file names): no value that runc would treat
// as unset or refuse, and only files that exist on this version.
func checkConfig(field string, c cgroups.ResourceConfig, version cgroups.Version) error {
	if c.PidsLimit != nil && (*c.PidsLimit == 0 || *c.PidsLimit < -1) {
		return &InputError{Field: field + ".PidsLimit", Value: fmt.Sprint(*c.PidsLimit),
			Rule: "must be -1 (unlimited) or positive"}
	}
	for _, size := range slices.Sorted(maps.Keys(c.HugePageLimit)) {
		// The kernel has hugetlb files only for the sizes it supports, all
		// powers of two; core would name a size such as 3KB.
		if size < 1024 || bits.OnesCount64(uint64(size)) != 1 {
			return &InputError{Field: fmt.Sprintf("%s.HugePageLimit[%d]", field, size), Value: fmt.Sprint(size),
				Rule: "page size must be a power of two of at least 1024 bytes"}
		}
	}
	if len(c.Unified) > 0 && version == cgroups.V1 {
		// runc refuses the same: the files exist only on cgroup v2.
		return &InputError{Field: field + ".Unified", Value: strings.Join(slices.Sorted(maps.Keys(c.Unified)), ","),
			Rule: "cgroup v2 files cannot be written on cgroup v1"}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Unified)) {
		if strings.HasPrefix(name, "cgroup.") {
			return &InputError{Field: field + ".Unified", Value: name,
				Rule: "must not write the cgroup core files (cgroup.*): they move processes and controllers, not limits"}
		}
	}
	return nil
}
