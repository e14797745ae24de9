package sim

import (
	"github.com/nodeproof/nodeproof/properties"
	simulation "github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/verify"
)

// contracts are the simulation's contract invariants, by ID: their
// violations go through Tally.Breach.
var contracts = map[string]bool{}

func init() {
	// The simulation's invariants carry their kind and cited sources.
	invariants := simulation.Invariants()
	for _, inv := range invariants {
		if inv.Kind == verify.Contract {
			contracts[inv.ID] = true
		}
	}
	properties.Register(properties.Suite{
		Name:       "sim",
		Subsystem:  subsystem,
		Invariants: invariants,
		Property:   property,
	})
}
