package suites

import (
	// Every suite registers itself with properties from init.
	_ "github.com/nodeproof/nodeproof/properties"
	_ "github.com/nodeproof/nodeproof/properties/admission"
	_ "github.com/nodeproof/nodeproof/properties/cgroups"
	_ "github.com/nodeproof/nodeproof/properties/devicemanager"
	_ "github.com/nodeproof/nodeproof/properties/imagegc"
	_ "github.com/nodeproof/nodeproof/properties/preemption"
	_ "github.com/nodeproof/nodeproof/properties/prober"
	_ "github.com/nodeproof/nodeproof/properties/sim"
)
