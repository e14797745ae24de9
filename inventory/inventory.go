package inventory

// Subsystem is one row of the coverage matrix: a top-level package of core/
// (or the agent, the imperative shell around them all, or the node
// simulation that composes them) and what verifies it.
// Every list is sorted; an empty list is a layer not built for it.
type Subsystem struct {
	// Name is the core/ directory (for example "devicemanager"), "agent"
	// for everything under agent/, or "sim" for the node simulation (sim/),
	// which composes every core.
	Name string
	// CorePackages are the module-relative directories of its core packages.
	CorePackages []string
	// Models are the reference models under models/ that stand for it.
	Models []string
	// Suites are the names of its state-machine suites in properties/.
	Suites []string
	// FuzzTargets are "dir.FuzzX": native fuzz targets that exercise it.
	FuzzTargets []string
	// IntegrationTests are the tests in integration/ that exercise it
	// against real sockets or a real cgroup filesystem.
	IntegrationTests []string
	// Linearizability are the tests in linearizability/ that record
	// histories checked against its model.
	Linearizability []string
	// Conformance are the names of the comparisons against upstream's code
	// in conformance/ (the "function" of conformance.json).
	Conformance []string
	// Mutants are the IDs of the seeded bugs in mutants/ that patch it.
	Mutants []string
}

// Subsystems returns every subsystem in name order. The caller may modify
// the result.
func Subsystems() []Subsystem {
	out := make([]Subsystem, len(subsystems))
	for i, s := range subsystems {
		out[i] = s
		for _, list := range []*[]string{&out[i].CorePackages, &out[i].Models, &out[i].Suites, &out[i].FuzzTargets,
			&out[i].IntegrationTests, &out[i].Linearizability, &out[i].Conformance, &out[i].Mutants} {
			*list = append([]string(nil), (*list)...)
		}
	}
	return out
}

// OfMutant returns the subsystem a mutant patches, "" for an unknown ID.
func OfMutant(id string) string {
	return find(func(s Subsystem) []string { return s.Mutants }, id)
}

// OfConformance returns the subsystem of a conformance comparison, "" for
// an unknown name.
func OfConformance(function string) string {
	return find(func(s Subsystem) []string { return s.Conformance }, function)
}

func find(list func(Subsystem) []string, name string) string {
	for _, s := range subsystems {
		for _, n := range list(s) {
			if n == name {
				return s.Name
			}
		}
	}
	return ""
}
