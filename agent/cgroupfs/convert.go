package cgroupfs

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nodeproof/nodeproof/core/cgroups"
)

// The controllers a ResourceConfig can set, the only ones the manager
// creates cgroups in.
const (
	ctrlCPU     = "cpu"
	ctrlMemory  = "memory"
	ctrlPids    = "pids"
	ctrlHugetlb = "hugetlb"
)

var managedControllers = []string{ctrlCPU, ctrlMemory, ctrlPids, ctrlHugetlb}

// plan is what Apply does to one cgroup: the writes core renders for its
// config (ResourceConfig.Values), in core's order, less the files of
// controllers this host lacks, which skipped names.
type plan struct {
	writes  []cgroups.File
	skipped []string // ascending
}

// planFor renders c for version v and drops the files of missing
// controllers. Every value the manager writes comes from core: the weight
// formula (linear for the kubelet's cgroups, quadratic for containers, as
// c.Weight says), cpu.max, "max" for unlimited, the hugetlb file names. A
// config core refuses is an *InputError naming the field of hierarchy[i].
func planFor(i int, c cgroups.ResourceConfig, v cgroups.Version, available map[string]bool) (plan, error) {
	files, err := c.Values(v)
	if err != nil {
		field := fmt.Sprintf("hierarchy[%d].Config", i)
		var fe *cgroups.FieldError
		if errors.As(err, &fe) {
			// Core's message starts with its field name; the rule follows.
			return plan{}, &InputError{Field: field + "." + fe.Field, Rule: strings.TrimPrefix(fe.Error(), fe.Field+": ")}
		}
		return plan{}, &InputError{Field: field, Rule: err.Error()}
	}
	var p plan
	for _, f := range files {
		if ctrl, managed := controllerOf(f.Name); managed && !available[ctrl] {
			if !slices.Contains(p.skipped, ctrl) {
				p.skipped = append(p.skipped, ctrl)
			}
			continue
		}
		p.writes = append(p.writes, f)
	}
	slices.Sort(p.skipped)
	return p, nil
}

// controllerOf maps an interface file to the controller that owns it by its
// prefix ("cpu.shares" → cpu), for the controllers the manager handles.
func controllerOf(file string) (string, bool) {
	prefix, _, ok := strings.Cut(file, ".")
	if !ok {
		return "", false
	}
	for _, c := range managedControllers {
		if c == prefix {
			return c, true
		}
	}
	return "", false
}
