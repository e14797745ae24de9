package suites

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/properties/cgroups"
)

// TestSuites runs every registered suite at rapid's budget (-rapid.checks,
// -rapid.steps, -rapid.seed), exactly as `nodeproof report` runs them.
func TestSuites(t *testing.T) {
	suites := properties.Suites()
	require.NotEmpty(t, suites, "no suites registered: the properties package checks nothing")
	for _, s := range suites {
		t.Run(s.Name, func(t *testing.T) {
			tally := properties.NewTally()
			rapid.Check(t, func(rt *rapid.T) {
				tally.Case()
				s.Property(rt, tally)
			})
			// A declared invariant the suite never evaluates would appear in
			// the report as checked when it was not.
			for _, inv := range s.Invariants {
				assert.NotZero(t, tally.Checked[inv.ID], "%s: declared by suite %s but never checked in %d cases", inv.ID, s.Name, tally.Cases)
			}
			t.Run("applications", func(t *testing.T) { checkApplicationFloor(t, s, tally) })
		})
	}
}

// applicationFloor is how often every invariant must apply (have something
// to compare) at the default budget: a statement put to the test fewer
// times is not truly exercised, however often its check ran. The suites'
// generators are tuned to reach it with a margin, for any seed.
const applicationFloor = 1000

// fixedExamples are the invariants that check one worked example rather
// than generated input. Repeating a fixed input exercises nothing new, so
// instead of the floor they must apply exactly once per case.
var fixedExamples = map[string]string{
	cgroups.Seed: "checks the seed's one worked example, built at the start of each case",
}

// checkApplicationFloor holds every invariant of a suite that just ran to
// the floor. The floor is a claim about the default budget, so a run whose
// budget was lowered skips it, saying so.
func checkApplicationFloor(t *testing.T, s properties.Suite, tally *properties.Tally) {
	for _, inv := range s.Invariants {
		t.Logf("%-28s checked %6d applied %6d", inv.ID, tally.Checked[inv.ID], tally.Applied[inv.ID])
	}
	if reason := budgetBelowDefault(); reason != "" {
		t.Skipf("the floor of %d applications per invariant holds at the default budget only: %s", applicationFloor, reason)
	}
	for _, inv := range s.Invariants {
		if why, fixed := fixedExamples[inv.ID]; fixed {
			assert.Equal(t, tally.Cases, tally.Applied[inv.ID], "%s %s, so it must apply once in every case", inv.ID, why)
			continue
		}
		assert.GreaterOrEqual(t, tally.Applied[inv.ID], applicationFloor,
			"%s: applied %d times in %d evaluations (%d cases, %d steps); its generators must exercise it at least %d times",
			inv.ID, tally.Applied[inv.ID], tally.Checked[inv.ID], tally.Cases, tally.Steps, applicationFloor)
	}
}

// budgetBelowDefault says how this run's rapid budget falls short of the
// default one, or "" when it does not.
func budgetBelowDefault() string {
	if testing.Short() {
		return "-short divides rapid's cases by 5 and steps by 2"
	}
	var lowered []string
	for _, name := range []string{"rapid.checks", "rapid.steps"} {
		d := defaultBudget[name]
		want, err := strconv.Atoi(d.value)
		if err != nil {
			panic(err)
		}
		got, err := strconv.Atoi(flag.Lookup(name).Value.String())
		if err != nil {
			panic(err)
		}
		if got < want {
			lowered = append(lowered, fmt.Sprintf("-%s (or %s) is %d, below the default %d", name, d.env, got, want))
		}
	}
	return strings.Join(lowered, "; ")
}

// TestInvariantCatalogue checks what the report and the failure attribution
// rely on: every invariant has a unique ID and a statement.
// TestInvariantSources checks the sources.
func TestInvariantCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, inv := range properties.Invariants() {
		switch {
		case inv.ID == "":
			t.Errorf("invariant with statement %q has no ID", inv.Statement)
		case seen[inv.ID]:
			t.Errorf("%s: declared twice", inv.ID)
		case inv.Statement == "":
			t.Errorf("%s: needs a statement", inv.ID)
		}
		seen[inv.ID] = true
	}
}

// The default budget of `go test ./...` is the report's, so every seeded
// mutant must be killed by what CI runs; -rapid.checks and -rapid.steps (or
// RAPID_CHECKS and RAPID_STEPS) still override it. It is decided in TestMain,
// before any test runs: the Run tests set rapid's flags themselves, after
// which flag.Visit can no longer tell what the user asked for.
var defaultBudget = map[string]struct{ value, env string }{
	"rapid.checks": {"300", "RAPID_CHECKS"},
	"rapid.steps":  {"100", "RAPID_STEPS"},
}

func TestMain(m *testing.M) {
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for name, d := range defaultBudget {
		if _, inEnv := os.LookupEnv(d.env); set[name] || inEnv {
			continue
		}
		if err := flag.Set(name, d.value); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
