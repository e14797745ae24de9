package plugincheck

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// exitNotice bounds settle's wait for a dying plugin's exit to be seen. A
// process's connections close as it exits and its parent sees the exit
// within milliseconds; the bound is generous for a busy machine.
const exitNotice = 5 * time.Second

// launchWatch follows Options.Launch, which may block for the plugin's
// whole life (Process.Launch does).
type launchWatch struct {
	// ended is closed when Launch has returned (at once when there is
	// none); err, written before, is what it returned.
	ended chan struct{}
	err   error
	// handled is closed once watchExit has recorded the plugin's exit, or
	// found none to record.
	handled chan struct{}
	// settled says settle has waited once.
	settled atomic.Bool

	mu sync.Mutex
	// phase says what the checker is doing, for the exit's finding.
	phase string
}

func newLaunchWatch() *launchWatch {
	return &launchWatch{ended: make(chan struct{}), handled: make(chan struct{})}
}

// start runs launch, if any, on a goroutine of its own.
func (l *launchWatch) start(ctx context.Context, launch func(context.Context) error) {
	if launch == nil {
		close(l.ended)
		return
	}
	go func() {
		l.err = launch(ctx)
		close(l.ended)
	}()
}

// setPhase says what the checker does from now on, for the finding of a
// plugin that exits meanwhile: "during the smoke pass".
func (c *checker) setPhase(phase string) {
	c.launch.mu.Lock()
	defer c.launch.mu.Unlock()
	c.launch.phase = phase
}

// watchExit reports the plugin's exit after it registered (Launch
// returning an error) as one PC-PLUGIN-ALIVE finding that names the exit
// status and what the checker was doing, and ends the run at once: the
// calls, stream and registrations the exit breaks are its consequences,
// not findings of their own (the record takes none once the run ended),
// and nothing waits out a bound for a plugin that is gone. It returns when
// Launch returns or the check is over.
func (c *checker) watchExit(registered time.Time, endRun context.CancelFunc) {
	defer close(c.launch.handled)
	select {
	case <-c.launch.ended:
	case <-c.done:
		return
	}
	err := c.launch.err
	if err == nil {
		// Launch started the plugin and does not watch it.
		return
	}
	gone := fmt.Sprintf("Launch returned (%v)", err)
	var exit *ExitError
	if errors.As(err, &exit) {
		gone = fmt.Sprintf("the plugin exited (%s)", exit.Status)
	}
	c.launch.mu.Lock()
	phase := c.launch.phase
	c.launch.mu.Unlock()
	c.rec.check(PluginAlive, true)
	c.rec.replace(Finding{Check: PluginAlive,
		Message: fmt.Sprintf("%s %s, %v after it registered", gone, phase, time.Since(registered).Round(time.Millisecond))})
	endRun()
}

// settle is called with the error of a call or a stream that failed, before
// the failure is judged. A plugin process that dies fails its calls
// (Unavailable: the connection is gone) before Launch sees it exit, and its
// exit, not the calls, is the finding. So after such a failure settle waits
// until watchExit has handled an exit, at most exitNotice and once per run
// (a plugin that stops serving but lives on costs the wait once); once the
// exit ended the run, the record takes no finding.
func (c *checker) settle(err error) {
	if status.Code(err) != codes.Unavailable || !c.launch.settled.CompareAndSwap(false, true) {
		return
	}
	timer := time.NewTimer(exitNotice)
	defer timer.Stop()
	select {
	case <-c.launch.handled:
	case <-timer.C:
	}
}
