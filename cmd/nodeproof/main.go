// Command nodeproof runs nodeproof's verification jobs outside `go test`:
// the invariant report, replays of failures, the mutant runner, the
// checkpoint inspector, the cgroup tree of Pod manifests, the admission
// of pods to a node, the image GC prediction for a live runtime and the
// timeline of a pod's probes, the simulation of a whole node from one seed,
// one shard of a campaign across many machines, and the check of a device
// plugin against the v1beta1 API.
//
// The command line follows the Kubernetes tools (kubectl, kubeadm): spf13/cobra
// commands with pflag's --long flags, help for every command on stdout, shell
// completion, and one exit status per outcome (exit.go).
package main

import (
	"os"
	"time"

	clisim "github.com/nodeproof/nodeproof/cli/sim"

	"github.com/spf13/cobra"

	agentprobe "github.com/nodeproof/nodeproof/agent/probe"
	"github.com/nodeproof/nodeproof/campaign"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/cli/admit"
	campaigncmd "github.com/nodeproof/nodeproof/cli/campaign"
	"github.com/nodeproof/nodeproof/cli/cgroups"
	"github.com/nodeproof/nodeproof/cli/checkpoint"
	"github.com/nodeproof/nodeproof/cli/findings"
	"github.com/nodeproof/nodeproof/cli/imagegc"
	"github.com/nodeproof/nodeproof/cli/mutants"
	"github.com/nodeproof/nodeproof/cli/plugincheck"
	"github.com/nodeproof/nodeproof/cli/probe"
	"github.com/nodeproof/nodeproof/cli/replay"
	"github.com/nodeproof/nodeproof/cli/report"
	"github.com/nodeproof/nodeproof/properties"

	// Every suite, registered for properties.Suites and Lookup.
	_ "github.com/nodeproof/nodeproof/properties/suites"
	"github.com/nodeproof/nodeproof/reportview"
	"github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/verify"
)

func main() {
	os.Exit(cli.Execute(cli.NewRoot(defaultCommands()...), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// defaultCommands are nodeproof's commands, each built by its own package
// under cli/ or its own file here.
func defaultCommands() []*cobra.Command {
	return []*cobra.Command{
		admit.NewCommand(),
		campaigncmd.NewCommand(campaigncmd.Deps{Suites: properties.Suites(), ListFuzz: campaign.ListFuzzTargets, Fuzz: campaign.RunFuzz,
			NewRecorder: newShardRecorder(sim.Run, properties.Run, properties.Suites())}),
		cgroups.NewCommand(),
		findings.NewCommand(properties.SearchFinding),
		checkpoint.NewCommand(),
		imagegc.NewCommand(time.Now),
		mutants.NewCommand(),
		plugincheck.NewCommand(),
		probe.NewCommand(agentprobe.WallClock{}),
		replay.NewCommand(properties.Lookup, properties.Suites()),
		report.NewCommand(properties.Suites(), verify.Findings(), reportview.MergeShards),
		clisim.NewCommand(sim.Run),
	}
}
