package properties

import (
	"flag"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestSuites runs every registered suite at rapid's budget (-rapid.checks,
// -rapid.steps, -rapid.seed), exactly as `nodeproof report` runs them.
func TestSuites(t *testing.T) {
	suites := Suites()
	require.NotEmpty(t, suites, "no suites registered: the properties package checks nothing")
	for _, s := range suites {
		t.Run(s.Name, func(t *testing.T) {
			tally := NewTally()
			rapid.Check(t, func(rt *rapid.T) {
				tally.Case()
				s.Property(rt, tally)
			})
			// A declared invariant the suite never evaluates would appear in
			// the report as checked when it was not.
			for _, inv := range s.Invariants {
				assert.NotZero(t, tally.Checked[inv.ID], "%s: declared by suite %s but never checked in %d cases", inv.ID, s.Name, tally.Cases)
			}
		})
	}
}

// TestInvariantCatalogue checks what the report and the failure attribution
// rely on: every invariant has a unique ID and a statement.
// TestInvariantSources checks the sources.
func TestInvariantCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, inv := range Invariants() {
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
