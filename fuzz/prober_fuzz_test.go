package fuzz

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/properties"
	_ "github.com/nodeproof/nodeproof/properties/suites"
)

// FuzzProberMachine lets the coverage-guided fuzzer choose the prober state
// machine's actions: the input bytes are rapid's choices, and every
// invariant of the suite is checked after every step.
func FuzzProberMachine(f *testing.F) {
	suite, ok := properties.Lookup("prober")
	if !ok {
		f.Fatal("the prober suite is not registered")
	}
	f.Fuzz(rapid.MakeFuzz(func(t *rapid.T) {
		suite.Property(t, properties.NewTally())
	}))
}
