package cli

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Execute runs the command line args against root and returns the exit
// status, having printed any error once on stderr.
func Execute(root *cobra.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		// Without a command there is nothing to run: a usage error, which
		// lists the commands (cobra would print the help and exit 0).
		fmt.Fprint(stderr, root.UsageString())
		return StatusUsage
	}
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteC()
	return status(cmd, err, stderr)
}

// NewRoot is `nodeproof` with the given commands, the help command and the
// completion command.
func NewRoot(commands ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:   "nodeproof",
		Short: "property-based verification of the kubelet's node subsystems",
		Long: `nodeproof checks a deterministic model of the kubelet's node subsystems (device manager,
cgroups, admission and preemption, image GC, probers) against reference models, and
inspects the files and manifests a node holds.`,
		// --version prints "nodeproof version V (revision)" on stdout.
		Version: Version(),
		// Errors are printed once, by Execute, without the usage under them.
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetFlagErrorFunc(FlagError)
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
				return Usagef("no command %q (see 'nodeproof help')", strings.Join(args, " "))
			}
			// As cobra's own help command does, so that the help lists -h.
			target.InitDefaultHelpFlag()
			return target.Help()
		},
	}
}

// completionShells are the shells `nodeproof completion` writes scripts for,
// with cobra's generator for each.
var completionShells = map[string]func(root *cobra.Command, cmd *cobra.Command) error{
	"bash": func(root, cmd *cobra.Command) error { return root.GenBashCompletionV2(cmd.OutOrStdout(), true) },
	"zsh":  func(root, cmd *cobra.Command) error { return root.GenZshCompletion(cmd.OutOrStdout()) },
	"fish": func(root, cmd *cobra.Command) error { return root.GenFishCompletion(cmd.OutOrStdout(), true) },
	"powershell": func(root, cmd *cobra.Command) error {
		return root.GenPowerShellCompletionWithDesc(cmd.OutOrStdout())
	},
}

// newCompletionCommand is `nodeproof completion SHELL`, as kubectl has it.
// It replaces cobra's default, which answers a shell it does not know with
// its help and status 0.
func newCompletionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "print the shell completion script for bash, zsh, fish or powershell",
		Long: `Prints a script that completes nodeproof's commands, flags, suite names and files in the
given shell. Load it in the current shell, or install it for every new one:

  source <(nodeproof completion bash)
  nodeproof completion zsh > "${fpath[1]}/_nodeproof"`,
		DisableFlagsInUseLine: true,
		ValidArgs:             []string{"bash", "zsh", "fish", "powershell"},
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case len(args) != 1:
				return Usagef("want one shell (bash, zsh, fish or powershell), got %d arguments", len(args))
			case completionShells[args[0]] == nil:
				return Usagef("no completion for shell %q; shells: bash, zsh, fish, powershell", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := completionShells[args[0]](cmd.Root(), cmd); err != nil {
				return Failed(err)
			}
			return nil
		},
	}
}

// Version is the release with the VCS revision as semver build metadata
// when the binary was built from a checkout: "0.30.0+0123456789ab.dirty".
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return release
	}
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if revision == "" {
		return release
	}
	v := release + "+" + revision[:min(12, len(revision))]
	if modified == "true" {
		v += ".dirty"
	}
	return v
}

// release is nodeproof's version before the revision is added.
const release = "0.1.0-dev"
