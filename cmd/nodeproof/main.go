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

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/properties"
	// Every suite, registered for properties.Suites and Lookup.
	_ "github.com/nodeproof/nodeproof/properties/suites"
	"github.com/nodeproof/nodeproof/sim"
)

func main() {
	os.Exit(cli.Execute(cli.NewRoot(defaultCommands()...), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// defaultCommands are nodeproof's commands, each built by its own file.
func defaultCommands() []*cobra.Command {
	return []*cobra.Command{
		newAdmitCommand(),
		newCampaignCommand(defaultCampaignRunners()),
		newCgroupsCommand(),
		newFindingsCommand(properties.SearchFinding),
		newCheckpointCommand(),
		newImageGCCommand(time.Now),
		newMutantsCommand(),
		newPluginCheckCommand(),
		newProbeCommand(wallClock{}),
		newReplayCommand(properties.Lookup, properties.Suites()),
		newReportCommand(),
		newSimCommand(sim.Run),
	}
}
