package propertiestest

import (
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// CounterSuite is a throwaway suite: a counter that rapid drives up and
// down, failing TEST-LIMIT when it reaches limit > 0. source is the test
// file that uses it, which its invariant cites.
func CounterSuite(name string, limit int, source string) properties.Suite {
	return properties.Suite{
		Name:      name,
		Subsystem: "test",
		Invariants: []verify.Property{
			{ID: "TEST-LIMIT", Subsystem: "test", Statement: "The counter stays below the limit.", Sources: []cite.Source{cite.Doc(source, "")}, Kind: verify.Fidelity},
		},
		Property: func(t *rapid.T, tally *properties.Tally) {
			n, step := 0, 0
			t.Repeat(map[string]func(*rapid.T){
				"inc": func(t *rapid.T) {
					step++
					t.Logf("step %d: inc", step)
					tally.Action("inc")
					n++
				},
				"reset": func(t *rapid.T) {
					step++
					t.Logf("step %d: reset", step)
					tally.Action("reset")
					n = 0
				},
				"": func(t *rapid.T) {
					// It says something once the counter is off zero.
					tally.Check("TEST-LIMIT", n > 0)
					if limit > 0 && n >= limit {
						t.Fatalf("TEST-LIMIT: counter is %d, limit %d", n, limit)
					}
				},
			})
		},
	}
}
