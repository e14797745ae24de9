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
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/sim"
)

func main() {
	os.Exit(execute(newRootCommand(defaultCommands()...), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
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

// execute runs the command line args against root and returns the exit
// status, having printed any error once on stderr.
func execute(root *cobra.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		// Without a command there is nothing to run: a usage error, which
		// lists the commands (cobra would print the help and exit 0).
		fmt.Fprint(stderr, root.UsageString())
		return exitUsage
	}
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteC()
	return exitStatus(cmd, err, stderr)
}

// newRootCommand is `nodeproof` with the given commands, the help command
// and the completion command.
func newRootCommand(commands ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:   "nodeproof",
		Short: "property-based verification of the kubelet's node subsystems",
		Long: `nodeproof checks a deterministic model of the kubelet's node subsystems (device manager,
cgroups, admission and preemption, image GC, probers) against reference models, and
inspects the files and manifests a node holds.`,
		// --version prints "nodeproof version V (revision)" on stdout.
		Version: version(),
		// Errors are printed once, by execute, without the usage under them.
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetFlagErrorFunc(flagError)
	root.SetHelpCommand(newHelpCommand())
	root.AddCommand(commands...)
	root.AddCommand(newCompletionCommand())
	// cobra adds the flag while it executes; adding it now makes the usage
	// printed without executing (no command given) list it too.
	root.InitDefaultHelpFlag()
	return root
}

// newHelpCommand replaces cobra's, which prints the root's usage and exits 0
// for a command that does not exist.
func newHelpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "Help prints the usage of a command, or of nodeproof, on stdout.",
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []cobra.Completion
			for _, c := range cmd.Root().Commands() {
				if c.IsAvailableCommand() {
					names = append(names, cobra.CompletionWithDesc(c.Name(), c.Short))
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			target, rest, err := cmd.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return usageError(fmt.Errorf("no command %q (see 'nodeproof help')", strings.Join(args, " ")))
			}
			// As cobra's own help command does, so that the help lists -h.
			target.InitDefaultHelpFlag()
			return target.Help()
		},
	}
}

// noArguments is the Args check of a command that takes flags only.
func noArguments(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError(fmt.Errorf("unexpected argument %q", args[0]))
	}
	return nil
}
