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
// completion, and one exit status per outcome (package cli). Each command is
// a package under cli/; this one only runs them.
package main

import (
	"os"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/cli/commands"
)

func main() {
	os.Exit(cli.Execute(cli.NewRoot(commands.All()...), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
