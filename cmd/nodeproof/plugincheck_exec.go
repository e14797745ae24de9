package main

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
)

// pluginOutputLimit bounds the plugin output kept for a failure: its tail,
// where the reason for a failure usually is.
const pluginOutputLimit = 64 << 10

// pluginStopGrace is how long the plugin has to exit after SIGTERM before
// it is killed.
const pluginStopGrace = 10 * time.Second

// pluginProcess is the plugin --exec starts: a shell running the command
// line in a process group of its own, so that stopping it stops whatever
// the command started too.
type pluginProcess struct {
	command string
	env     []string
	output  tailBuffer
	// exited is closed when the process has been waited for, or failed
	// to start.
	exited chan struct{}

	mu      sync.Mutex
	cmd     *exec.Cmd
	stopped bool
	waitErr error
}

// newPluginProcess prepares command with dir in place of {dir} and in the
// environment variable env (none when env is empty).
func newPluginProcess(command, env, dir string) *pluginProcess {
	p := &pluginProcess{command: strings.ReplaceAll(command, execDirPlaceholder, dir), env: os.Environ(), exited: make(chan struct{})}
	if env != "" {
		p.env = append(p.env, env+"="+dir)
	}
	p.output.limit = pluginOutputLimit
	return p
}

// launch is plugincheck.Options.Launch: it starts the plugin and waits for
// it, so that a plugin that exits before registering ends the check at
// once with its exit status rather than after the registration bound.
func (p *pluginProcess) launch(context.Context) error {
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
		return fmt.Errorf("--exec %q: %v", p.command, err)
	}
	p.cmd = cmd
	p.mu.Unlock()
	err := cmd.Wait()
	p.mu.Lock()
	p.waitErr = err
	p.mu.Unlock()
	close(p.exited)
	if err == nil {
		err = errors.New("exit status 0")
	}
	return fmt.Errorf("--exec %q exited before it registered: %v", p.command, err)
}

// stop ends the plugin's process group: SIGTERM, then SIGKILL after
// pluginStopGrace. It returns an error when the plugin had to be killed.
func (p *pluginProcess) stop() error {
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
	grace := time.NewTimer(pluginStopGrace)
	defer grace.Stop()
	select {
	case <-p.exited:
		return nil
	case <-grace.C:
	}
	_ = syscall.Kill(pgid, syscall.SIGKILL)
	<-p.exited
	return fmt.Errorf("the plugin did not exit within %v of SIGTERM and was killed", pluginStopGrace)
}

// printOutput shows what the plugin printed, for a run that failed.
func (p *pluginProcess) printOutput(w io.Writer) {
	out, cut := p.output.tail()
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

// tailBuffer keeps the last limit bytes written to it; safe for
// concurrent use (the plugin's stdout and stderr).
type tailBuffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte
	cut   bool
}

func (b *tailBuffer) Write(data []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, data...)
	if over := len(b.buf) - b.limit; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
		b.cut = true
	}
	return len(data), nil
}

func (b *tailBuffer) tail() ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf...), b.cut
}
