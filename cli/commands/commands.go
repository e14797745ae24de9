package commands

import (
	"time"

	"github.com/spf13/cobra"

	agentprobe "github.com/nodeproof/nodeproof/agent/probe"
	"github.com/nodeproof/nodeproof/campaign"
	"github.com/nodeproof/nodeproof/cli/admit"
	campaigncmd "github.com/nodeproof/nodeproof/cli/campaign"
	"github.com/nodeproof/nodeproof/cli/cgroups"
	"github.com/nodeproof/nodeproof/cli/checkpoint"
	"github.com/nodeproof/nodeproof/cli/findings"
	"github.com/nodeproof/nodeproof/cli/imagegc"
	"github.com/nodeproof/nodeproof/cli/mutants"
	"github.com/nodeproof/nodeproof/cli/node"
	"github.com/nodeproof/nodeproof/cli/plugincheck"
	"github.com/nodeproof/nodeproof/cli/probe"
	"github.com/nodeproof/nodeproof/cli/replay"
	"github.com/nodeproof/nodeproof/cli/report"
	clisim "github.com/nodeproof/nodeproof/cli/sim"
	upstreamcmd "github.com/nodeproof/nodeproof/cli/upstream"
	"github.com/nodeproof/nodeproof/properties"

	// Every suite, registered for properties.Suites and Lookup.
	_ "github.com/nodeproof/nodeproof/properties/suites"
	"github.com/nodeproof/nodeproof/reportview"
	"github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/verify"
)

// All are nodeproof's commands, each from its package under cli/, given
// what it runs in production.
func All() []*cobra.Command {
	return []*cobra.Command{
		admit.NewCommand(),
		campaigncmd.NewCommand(campaigncmd.Deps{Suites: properties.Suites(), ListFuzz: campaign.ListFuzzTargets, Fuzz: campaign.RunFuzz,
			NewRecorder: NewShardRecorder(sim.Run, properties.Run, properties.Suites())}),
		cgroups.NewCommand(),
		findings.NewCommand(properties.SearchFinding),
		checkpoint.NewCommand(),
		imagegc.NewCommand(time.Now),
		mutants.NewCommand(),
		node.NewCommand(node.Production()),
		plugincheck.NewCommand(),
		probe.NewCommand(agentprobe.WallClock{}),
		replay.NewCommand(properties.Lookup, properties.Suites()),
		report.NewCommand(properties.Suites(), verify.Findings(), reportview.MergeShards),
		clisim.NewCommand(sim.Run),
		upstreamcmd.NewCommand(upstreamcmd.Production()),
	}
}
