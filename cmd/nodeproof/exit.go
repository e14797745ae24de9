package main

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
	exitOK = 0
	// exitFailed: the command ran and found a problem: an invariant
	// violated, a checkpoint that fails its checks, a surviving mutant, or
	// output that could not be written.
	exitFailed = 1
	// exitUsage: the command could not do its job as asked: an unknown
	// command or flag, a bad flag value, or input (a file) it cannot use.
	exitUsage = 2
	// exitInterrupted: SIGINT or SIGTERM stopped the command before it
	// finished, which is neither a problem found nor a command used
	// wrongly; 130 is what a shell reports for a command ended by Ctrl-C.
	exitInterrupted = 130
)

// exitError ends a command with status. execute prints err, prefixed with
// the command's name; a nil err means the command has already said why.
type exitError struct {
	status int
	err    error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.status)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageError is a bad flag, argument or input file: status 2.
func usageError(err error) error { return &exitError{status: exitUsage, err: err} }

// interruptedError ends a command that SIGINT or SIGTERM stopped: status
// 130, with "interrupted" on stderr.
func interruptedError() error {
	return &exitError{status: exitInterrupted, err: errors.New("interrupted")}
}

// outputError is output that could not be written (a full disk, a closed
// pipe): the command did not deliver what it ran, status 1.
func outputError(err error) error {
	return &exitError{status: exitFailed, err: fmt.Errorf("writing the output: %w", err)}
}

// exitWith turns the status of a command's logic, which reports its own
// problems, into the error cobra hands back to execute.
func exitWith(status int) error {
	if status == exitOK {
		return nil
	}
	return &exitError{status: status}
}

// flagError is the FlagErrorFunc of every command: a flag that does not
// parse is a usage error, with a pointer to the command's help.
func flagError(cmd *cobra.Command, err error) error {
	return usageError(fmt.Errorf("%w (see '%s --help')", err, cmd.CommandPath()))
}

// exitStatus prints err once, on stderr, and decides the process's exit
// status. Errors cobra makes itself (an unknown command) are usage errors.
func exitStatus(cmd *cobra.Command, err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	name := "nodeproof"
	if cmd != nil {
		name = cmd.CommandPath()
	}
	msg := strings.TrimSuffix(err.Error(), "\n")
	status := exitUsage
	var exit *exitError
	if errors.As(err, &exit) {
		status = exit.status
		if exit.err == nil {
			return status
		}
	} else {
		msg += fmt.Sprintf("\nRun '%s --help' for usage.", name)
	}
	fmt.Fprintf(stderr, "%s: %s\n", name, msg)
	return status
}

// errWriter keeps the first error of a run of writes, so that output that
// could not be written (a full disk, a closed pipe) fails the command.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = outputError(err)
	}
	return n, err
}
