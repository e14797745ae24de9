package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// IsTerminal reports whether w is a character device, where progress can
// redraw one line instead of printing many.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// Progress shows one job's progress on stderr: a suite's checks, the
// linearizability histories, a simulation's minutes, a plugin check's
// cases.
type Progress interface {
	// Update says done of total units are done.
	Update(done, total int)
	// Finish removes what Update drew, before the job's result is printed.
	Finish()
}

// NewProgress returns a bar redrawn in place on a terminal, otherwise plain
// lines at every tenth of the work, so that CI logs stay short.
func NewProgress(w io.Writer, tty bool, name, unit string, width int) Progress {
	if tty {
		return &terminalBar{w: w, name: name, unit: unit, width: width}
	}
	return &plainProgress{w: w, name: name, unit: unit, width: width}
}

// terminalBar draws with mpb. The bar is made at the first Update, when the
// total is known.
type terminalBar struct {
	w          io.Writer
	name, unit string
	width      int
	progress   *mpb.Progress
	bar        *mpb.Bar
}

func (b *terminalBar) Update(done, total int) {
	if b.bar == nil {
		b.progress = mpb.New(mpb.WithOutput(b.w), mpb.WithWidth(40))
		b.bar = b.progress.AddBar(int64(total),
			mpb.PrependDecorators(decor.Name(b.name, decor.WC{W: b.width + 2, C: decor.DindentRight})),
			mpb.AppendDecorators(decor.CountersNoUnit("%d/%d "+b.unit)),
			mpb.BarRemoveOnComplete())
	}
	// rapid may run more cases than checks (it discards invalid ones).
	b.bar.SetCurrent(int64(min(done, total)))
}

func (b *terminalBar) Finish() {
	if b.bar == nil {
		return
	}
	// A failed suite stops early; completing the bar lets mpb remove it.
	b.bar.SetTotal(-1, true)
	b.progress.Wait()
}

type plainProgress struct {
	w          io.Writer
	name, unit string
	width      int
	lastTenth  int
}

func (p *plainProgress) Update(done, total int) {
	done = min(done, total)
	tenth := done * 10 / total
	if tenth > p.lastTenth {
		fmt.Fprintf(p.w, "%-*s  [%s%s] %d/%d %s\n", p.width, p.name,
			strings.Repeat("#", tenth), strings.Repeat(".", 10-tenth), done, total, p.unit)
	}
	p.lastTenth = tenth
}

func (p *plainProgress) Finish() {}
