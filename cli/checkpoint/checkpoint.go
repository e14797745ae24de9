package checkpoint

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/agent/checkpointfile"
	"github.com/nodeproof/nodeproof/cli"
	corecheckpoint "github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
)

// Options are the arguments of `nodeproof checkpoint`.
type Options struct {
	// File is the checkpoint to read; "-" is stdin.
	File string
	// JSON prints the report as one JSON document instead of text.
	JSON bool
}

// NewCommand is `nodeproof checkpoint`.
func NewCommand() *cobra.Command {
	var o Options
	cmd := &cobra.Command{
		Use:   "checkpoint FILE [--json]",
		Short: "decode a device manager checkpoint file (kubelet_internal_checkpoint) and check its invariants",
		Long: `Decodes a device manager checkpoint as the kubelet reads it (FILE - reads stdin), prints
its devices and entries, and exits 1 when the kubelet would refuse it or it breaks an
invariant of the kubelet's allocation state, 2 when it cannot be read. A file the
kubelet loads that is not byte for byte what it would write is noted as
non-canonical, and still exits 0.`,
		DisableFlagsInUseLine: true,
		Args: func(_ *cobra.Command, args []string) error {
			switch len(args) {
			case 0:
				return cli.UsageError(errors.New("FILE is required (- reads stdin)"))
			case 1:
				return nil
			}
			return cli.UsageError(fmt.Errorf("unexpected argument %q", args[1]))
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Complete(args)
			return o.Run(cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the result as JSON")
	return cmd
}

// Complete takes FILE from the arguments, which Args has counted.
func (o *Options) Complete(args []string) { o.File = args[0] }

// Run reports on the file. It ends with nil when the kubelet would load the
// file and it breaks no invariant (a note, such as non-canonical bytes,
// keeps it so), status 1 when the kubelet would refuse it or an invariant is
// broken, and status 2 when the file cannot be read.
func (o *Options) Run(stdin io.Reader, stdout io.Writer) error {
	// One byte over the checkpoint's bound is enough for the decoder to
	// refuse the file, so a path such as /dev/zero is not read without end.
	name, b, readErr := cli.ReadInput(o.File, stdin, corecheckpoint.MaxFileBytes)
	var r checkpointfile.Report
	if readErr != nil {
		r = checkpointfile.Unreadable(name, readErr)
	} else {
		r = checkpointfile.Examine(name, b)
	}
	if o.JSON {
		// A script reading --json gets a document for every file, one that
		// cannot be read or does not decode included.
		if err := cli.WriteJSON(stdout, r.Document()); err != nil {
			return cli.Failed(fmt.Errorf("writing JSON: %w", err))
		}
	} else if err := r.WriteText(stdout); err != nil {
		// A report nobody can read is no report: a full disk or a closed
		// pipe fails the command, as a failed check does.
		return cli.OutputError(err)
	}
	switch {
	case readErr != nil:
		return cli.UsageError(readErr)
	case r.Broken():
		if r.Problem() == "" {
			return cli.Exit(cli.StatusFailed)
		}
		return cli.Failed(errors.New(r.Problem()))
	}
	return nil
}
