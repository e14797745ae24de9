package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

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
				return usageError(fmt.Errorf("want one shell (bash, zsh, fish or powershell), got %d arguments", len(args)))
			case completionShells[args[0]] == nil:
				return usageError(fmt.Errorf("no completion for shell %q; shells: bash, zsh, fish, powershell", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := completionShells[args[0]](cmd.Root(), cmd); err != nil {
				return &exitError{status: exitFailed, err: err}
			}
			return nil
		},
	}
}
