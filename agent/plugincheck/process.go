package plugincheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nodeproof/nodeproof/agent/tail"
)

// DefaultDirEnv is the environment variable a Process hands its directory
// in by default: the name the Kubernetes sample device plugin reads its
// socket directory from (test/images/sample-device-plugin), which
// nodeproof's testplugin reads too.
const DefaultDirEnv = "PLUGIN_SOCK_DIR"

// DirPlaceholder in a Process's command line is replaced by the directory.
const DirPlaceholder = "{dir}"

// processOutputLimit bounds the plugin output a Process keeps: its tail,
// where the reason for a failure usually is.
const processOutputLimit = 64 << 10

// processStopGrace is how long the plugin has to exit after SIGTERM before
// it is killed.
const processStopGrace = 10 * time.Second

// Process is a plugin started from a command line: a shell running it in a
// process group of its own, so that stopping it stops whatever the command
// started too. Its Launch is an Options.Launch that watches the process for
// as long as it runs, so that a plugin that exits is reported at once.
type Process struct {
	command string
	env     []string
	output  tail.Buffer
	// exited is closed when the process has been waited for, or failed
	// to start.
	exited chan struct{}

	mu      sync.Mutex
	cmd     *exec.Cmd
	stopped bool
}

// NewProcess prepares command with dir in place of every {dir} and in the
// environment variable env (none when env is empty).
func NewProcess(command, env, dir string) *Process {
	p := &Process{command: strings.ReplaceAll(command, DirPlaceholder, dir), env: os.Environ(), exited: make(chan struct{})}
	if env != "" {
		p.env = append(p.env, env+"="+dir)
	}
	p.output.Limit = processOutputLimit
	return p
}

// Command is the command line as run, the directory in place of {dir}.
func (p *Process) Command() string { return p.command }

// ExitError is Launch's error once the plugin's process has exited.
type ExitError struct {
	// Status is how the process ended, as the os package writes it:
	// "exit status 3", "signal: killed".
	Status string
}

func (e *ExitError) Error() string { return "the plugin exited: " + e.Status }

// Launch is Options.Launch: it starts the plugin and waits for it, so that
// a plugin that exits, before it registered or after, ends the check at
// once with its exit status (an *ExitError) rather than after a bound.
func (p *Process) Launch(context.Context) error {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return errors.New("the check ended before the plugin started")
	}
	cmd := exec.Command("/bin/sh", "-c", p.command)
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = &p.output, &p.output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A grandchild holding the output pipe open must not keep Wait.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		close(p.exited)
		p.mu.Unlock()
		return fmt.Errorf("the plugin command %q does not start: %v", p.command, err)
	}
	p.cmd = cmd
	p.mu.Unlock()
	err := cmd.Wait()
	close(p.exited)
	if cmd.ProcessState == nil {
		return fmt.Errorf("waiting for the plugin command %q: %v", p.command, err)
	}
	return &ExitError{Status: cmd.ProcessState.String()}
}

// Stop ends the plugin's process group: SIGTERM, then SIGKILL after
// processStopGrace. It returns an error when the plugin had to be killed.
func (p *Process) Stop() error {
	p.mu.Lock()
	p.stopped = true
	cmd := p.cmd
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-p.exited:
		return nil
	default:
	}
	pgid := -cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	grace := time.NewTimer(processStopGrace)
	defer grace.Stop()
	select {
	case <-p.exited:
		return nil
	case <-grace.C:
	}
	_ = syscall.Kill(pgid, syscall.SIGKILL)
	<-p.exited
	return fmt.Errorf("the plugin did not exit within %v of SIGTERM and was killed", processStopGrace)
}

// WriteOutput writes what the plugin printed (its last 64 KiB), under a
// line naming the command, for a run that failed.
func (p *Process) WriteOutput(w io.Writer) {
	out, cut := p.output.Tail()
	switch {
	case len(out) == 0:
		fmt.Fprintf(w, "the plugin (%s) printed nothing\n", p.command)
		return
	case cut:
		fmt.Fprintf(w, "the plugin's output (%s), its last %d bytes:\n", p.command, len(out))
	default:
		fmt.Fprintf(w, "the plugin's output (%s):\n", p.command)
	}
	w.Write(out)
	if out[len(out)-1] != '\n' {
		fmt.Fprintln(w)
	}
}
