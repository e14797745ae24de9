package mutants

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// BaselinePlan is one go test on the unpatched tree: Packages with the
// Tests pattern ("" runs every test), which the mutants selecting them
// need to pass before a failure with a patch can count as a kill.
type BaselinePlan struct {
	Packages []string
	Tests    string
	// Within is set when every package also runs whole in the baseline
	// without a pattern: that run covers this one, which need not run.
	Within bool
}

// Label names the run: its packages, and its -run pattern when it has one.
func (b BaselinePlan) Label() string { return Label(b.Packages, b.Tests) }

// Label names the tests a mutant or a baseline runs: its packages, and its
// -run pattern when it has one.
func Label(packages []string, tests string) string {
	label := strings.Join(packages, " ")
	if tests != "" {
		label += " -run=" + tests
	}
	return label
}

// Baselines plans the runs on the unpatched tree of every test some
// selected mutant runs. A mutant is judged against the tests of its own
// selection (its packages and Tests pattern): they must pass without the
// patch, and tests it does not run need not be paid for. Each package's
// tests run in a binary of their own, so a selection passes when each of
// its packages passes with its pattern: one go test per Tests pattern,
// over every package the mutants with that pattern name, covers them all,
// and runs a package shared by many selections (the integration tests)
// once rather than once per package set. A pattern's packages that all run
// whole anyway need no run of their own (Within).
//
// The baseline without a pattern comes first ("" sorts first): every test
// of its packages passing, a pattern's tests of those packages pass too
// (rapid starts each property from the same base seed, whatever ran
// before), so a pattern's baseline over them only repeats it.
func Baselines(selected []Mutant) []BaselinePlan {
	packagesByTests := map[string][]string{}
	for _, m := range selected {
		packagesByTests[m.Tests] = append(packagesByTests[m.Tests], m.Packages...)
	}
	whole := packagesByTests[""]
	var plans []BaselinePlan
	for _, tests := range slices.Sorted(maps.Keys(packagesByTests)) {
		packages := slices.Compact(slices.Sorted(slices.Values(packagesByTests[tests])))
		within := tests != "" && !slices.ContainsFunc(packages, func(p string) bool { return !slices.Contains(whole, p) })
		plans = append(plans, BaselinePlan{Packages: packages, Tests: tests, Within: within})
	}
	return plans
}

// ModuleRoot walks up from the working directory to the directory holding
// go.mod: the module whose mutants run.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod in the working directory or above it; run from inside the nodeproof module")
		}
		dir = parent
	}
}
