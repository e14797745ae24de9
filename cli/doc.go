// Package cli is what every nodeproof command shares and nothing else: the
// exit statuses and the error that carries one, the reading of an input
// file or stdin, the JSON writer, the interrupt context, the progress of a
// long job on stderr and the root command with its help and completion
// commands.
//
// Each command lives in its own package under cli/ (cli/report,
// cli/campaign, ...), as kubectl's pkg/cmd/<verb> do: an Options value
// filled from the flags, then Complete (derive what the flags imply),
// Validate (refuse bad flags and inputs before any work, with status 2) and
// Run (the work, in library packages outside cli/). cmd/nodeproof only
// assembles them.
package cli
