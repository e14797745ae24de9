package probe

import (
	"context"
	"errors"
	"time"

	"github.com/nodeproof/nodeproof/core/prober"
	"github.com/nodeproof/nodeproof/core/prober/timeline"
)

// errExecNotLive is the outcome of an exec probe in a live timeline: the
// kubelet runs it through the container runtime (CRI ExecSync) inside the
// container, which a probe against a host cannot reach. It is an error, so
// the timeline retries it and discards it as the kubelet does with a probe
// that cannot run: it changes no result.
var errExecNotLive = errors.New("exec probes are not run live: they run inside the container through the container runtime (CRI ExecSync), which --live HOST does not reach")

// Clock is the wall clock of a live timeline; a test gives one that jumps.
type Clock interface {
	Now() time.Time
	// WaitUntil returns at t, or earlier with ctx's error.
	WaitUntil(ctx context.Context, t time.Time) error
}

// WallClock is the real clock.
type WallClock struct{}

// Now is time.Now.
func (WallClock) Now() time.Time { return time.Now() }

// WaitUntil waits on a timer until t, or until ctx is done.
func (WallClock) WaitUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// PlayLive answers the timeline's probes with real probes against its pod
// IP, each when its time comes on clock, until the timeline ends or ctx is
// done. Exec probes are not run (errExecNotLive). progress, when not nil,
// is told the whole seconds done of the timeline's duration.
func PlayLive(ctx context.Context, tl *timeline.Timeline, duration time.Duration, clock Clock, progress func(done, total int)) error {
	p := New(nil)
	defer p.Close()
	start := clock.Now()
	total := int(duration / time.Second)
	for {
		req, ok, err := tl.Next()
		if err != nil || !ok {
			return err
		}
		if err := clock.WaitUntil(ctx, start.Add(req.At)); err != nil {
			return err
		}
		var out prober.Outcome
		if req.Run.Probe.Handler.Exec != nil {
			out = prober.Outcome{Result: prober.ProbeUnknown, Err: errExecNotLive}
		} else {
			out = p.Answer(ctx, req.Run)
		}
		end := max(clock.Now().Sub(start), req.At)
		if progress != nil && total > 0 {
			progress(min(int(end/time.Second), total), total)
		}
		if err := tl.Done(req, end, out); err != nil {
			return err
		}
	}
}
