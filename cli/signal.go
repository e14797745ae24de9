package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// InterruptContext is ctx, cancelled by SIGINT or SIGTERM. A command that
// sees it cancelled ends with InterruptedError (status 130); stop restores
// the default handling, so a second Ctrl-C kills the process.
func InterruptContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}
