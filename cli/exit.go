package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// The exit statuses of every command, listed in the README's "Exit codes".
// Scripts and CI tell a problem found from a command used wrongly by them.
const (
	StatusOK = 0
	// StatusFailed: the command ran and found a problem: an invariant
	// violated, a checkpoint that fails its checks, a surviving mutant, or
	// output that could not be written.
	StatusFailed = 1
	// StatusUsage: the command could not do its job as asked: an unknown
	// command or flag, a bad flag value, or input (a file) it cannot use.
	StatusUsage = 2
	// StatusInterrupted: SIGINT or SIGTERM stopped the command before it
	// finished, which is neither a problem found nor a command used
	// wrongly; 130 is what a shell reports for a command ended by Ctrl-C.
	StatusInterrupted = 130
)

// ExitError ends a command with Status. Execute prints Err, prefixed with
// the command's path; a nil Err means the command has already said why.
type ExitError struct {
	Status int
	Err    error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Status)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// UsageError is a bad flag, argument or input file: status 2.
func UsageError(err error) error { return &ExitError{Status: StatusUsage, Err: err} }

// Usagef is UsageError of a formatted message.
func Usagef(format string, args ...any) error { return UsageError(fmt.Errorf(format, args...)) }

// Failed is a problem the command found or met while working: status 1.
func Failed(err error) error { return &ExitError{Status: StatusFailed, Err: err} }

// InterruptedError ends a command that SIGINT or SIGTERM stopped: status
// 130, with "interrupted" on stderr.
func InterruptedError() error {
	return &ExitError{Status: StatusInterrupted, Err: errors.New("interrupted")}
}

// OutputError is output that could not be written (a full disk, a closed
// pipe): the command did not deliver what it ran, status 1.
func OutputError(err error) error {
	return &ExitError{Status: StatusFailed, Err: fmt.Errorf("writing the output: %w", err)}
}

// Exit turns the status of a command's work, which has reported its own
// problems, into the error cobra hands back to Execute.
func Exit(status int) error {
	if status == StatusOK {
		return nil
	}
	return &ExitError{Status: status}
}

// FlagError is the FlagErrorFunc of every command: a flag that does not
// parse is a usage error, with a pointer to the command's help.
func FlagError(cmd *cobra.Command, err error) error {
	return UsageError(fmt.Errorf("%w (see '%s --help')", err, cmd.CommandPath()))
}

// NoArguments is the Args check of a command that takes flags only.
func NoArguments(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return Usagef("unexpected argument %q", args[0])
	}
	return nil
}

// status prints err once, on stderr, and decides the process's exit
// status. Errors cobra makes itself (an unknown command) are usage errors.
func status(cmd *cobra.Command, err error, stderr io.Writer) int {
	if err == nil {
		return StatusOK
	}
	name := "nodeproof"
	if cmd != nil {
		name = cmd.CommandPath()
	}
	msg := strings.TrimSuffix(err.Error(), "\n")
	code := StatusUsage
	var exit *ExitError
	if errors.As(err, &exit) {
		code = exit.Status
		if exit.Err == nil {
			return code
		}
	} else {
		msg += fmt.Sprintf("\nRun '%s --help' for usage.", name)
	}
	fmt.Fprintf(stderr, "%s: %s\n", name, msg)
	return code
}

// Writer keeps the first error of a run of writes, so that output that
// could not be written (a full disk, a closed pipe) fails the command:
// Err is then an OutputError.
type Writer struct {
	W   io.Writer
	Err error
}

func (e *Writer) Write(p []byte) (int, error) {
	if e.Err != nil {
		return 0, e.Err
	}
	n, err := e.W.Write(p)
	if err != nil {
		e.Err = OutputError(err)
	}
	return n, err
}
