package integration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/nodeproof/nodeproof/agent/deviceplugin"
	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
	"github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/require"
)

// res is the resource the tests' plugins register.
const res = "example.com/dev"

// waitLimit bounds every wait. Waits end as soon as their condition holds;
// the limit only turns a hang into a failure with a message.
const waitLimit = 10 * time.Second

// fakeClock is the agent's clock in tests: it moves only when told to.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// logSink collects the agent's and the plugins' log records and passes them
// to t.Log, so a failing test shows what happened and a test can wait for a
// record that marks an event it cannot observe otherwise.
type logSink struct {
	t     testing.TB
	mu    sync.Mutex
	lines []string
}

func (s *logSink) Write(b []byte) (int, error) {
	line := strings.TrimSpace(string(b))
	s.mu.Lock()
	s.lines = append(s.lines, line)
	s.mu.Unlock()
	s.t.Log(line)
	return len(b), nil
}

func (s *logSink) has(substr string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.lines, func(l string) bool { return strings.Contains(l, substr) })
}

// env is one test's node: a device plugin directory, a clock, a log and
// the agent serving there.
type env struct {
	t      testing.TB
	dir    string
	clock  *fakeClock
	logs   *logSink
	logger *slog.Logger
	agent  *deviceplugin.Agent
}

// newEnv prepares a directory and starts an agent in it. The directory is
// short (Unix socket paths hold 107 bytes; t.TempDir's names may be longer)
// and the agent creates its last element itself. The goroutine check is
// registered first so that it runs after every other cleanup; it ignores
// the goroutines that were there before, such as the one a benchmark's
// driver waits in.
func newEnv(t testing.TB, opts deviceplugin.Options) *env {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
	root, err := os.MkdirTemp("", "np")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(root) })
	logs := &logSink{t: t}
	e := &env{
		t:      t,
		dir:    filepath.Join(root, "dp"),
		clock:  &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)},
		logs:   logs,
		logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	e.startAgent(opts)
	return e
}

// startAgent starts an agent on the env's directory, clock and log; the
// fields of opts it does not set are the caller's.
func (e *env) startAgent(opts deviceplugin.Options) *deviceplugin.Agent {
	e.t.Helper()
	opts.Dir, opts.Clock, opts.Logger = e.dir, e.clock, e.logger
	a, err := deviceplugin.Start(opts)
	if err != nil {
		e.t.Fatalf("starting the agent: %v", err)
	}
	e.t.Cleanup(a.Stop)
	e.agent = a
	return a
}

// plugin starts a test plugin in the env's directory and fails the test if
// it does not register.
func (e *env) plugin(cfg testplugin.Config) *testplugin.Plugin {
	e.t.Helper()
	p, err := e.tryPlugin(cfg)
	if err != nil {
		e.t.Fatalf("starting plugin %s on %s: %v", cfg.ResourceName, cfg.Endpoint, err)
	}
	return p
}

func (e *env) tryPlugin(cfg testplugin.Config) (*testplugin.Plugin, error) {
	cfg.Dir, cfg.Logger = e.dir, e.logger
	if cfg.ResourceName == "" {
		cfg.ResourceName = res
	}
	p, err := testplugin.Start(cfg)
	if err == nil {
		e.t.Cleanup(p.Stop)
	}
	return p, err
}

// eventually polls cond until it holds, and fails the test with what it was
// waiting for (what is called only then, so it can show the last state seen)
// if it does not within waitLimit.
func (e *env) eventually(what func() string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(waitLimit)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("gave up after %v waiting for %s", waitLimit, what())
		}
		<-tick.C
	}
}

// waitCapacity waits until the agent reports capacity and allocatable for res.
func (e *env) waitCapacity(capacity, allocatable int64) {
	e.t.Helper()
	var last devicemanager.Capacity
	what := func() string {
		return fmt.Sprintf("capacity %d and allocatable %d of %s (last seen %+v)", capacity, allocatable, res, last)
	}
	e.eventually(what, func() bool {
		last = e.agent.Capacity()
		c, okC := last.Capacity[res]
		a, okA := last.Allocatable[res]
		return okC && okA && c == capacity && a == allocatable
	})
}

// waitPlugins waits until the agent has exactly n open plugin connections.
func (e *env) waitPlugins(n int) []deviceplugin.Plugin {
	e.t.Helper()
	var got []deviceplugin.Plugin
	what := func() string { return fmt.Sprintf("%d open plugin connections (last seen %+v)", n, got) }
	e.eventually(what, func() bool {
		got = e.agent.Plugins()
		return len(got) == n
	})
	return got
}

// admit admits a pod and fails the test if the admission fails.
func (e *env) admit(p *pod.Pod) {
	e.t.Helper()
	if err := e.agent.Admit(context.Background(), p); err != nil {
		e.t.Fatalf("admitting %s: %v", p.UID, err)
	}
}

// admitFails admits a pod, expects the upstream admission failure and
// returns its message.
func (e *env) admitFails(p *pod.Pod) string {
	e.t.Helper()
	err := e.agent.Admit(context.Background(), p)
	var ae *deviceplugin.AdmissionError
	if !errors.As(err, &ae) {
		e.t.Fatalf("admitting %s: got %v, want an *AdmissionError", p.UID, err)
	}
	if ae.Reason != "UnexpectedAdmissionError" {
		e.t.Errorf("admission failure reason %q, want UnexpectedAdmissionError", ae.Reason)
	}
	if !strings.HasPrefix(ae.Message, "Allocate failed due to ") || !strings.HasSuffix(ae.Message, ", which is unexpected") {
		e.t.Errorf("admission failure message %q is not upstream's form", ae.Message)
	}
	return ae.Message
}

// readCheckpoint decodes the env's checkpoint file.
func (e *env) readCheckpoint() checkpoint.Data {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir, devicemanager.CheckpointName))
	if err != nil {
		e.t.Fatal(err)
	}
	d, err := checkpoint.Decode(b)
	if err != nil {
		e.t.Fatalf("the checkpoint the agent wrote does not decode: %v", err)
	}
	return d
}

// podWith is a pod with one app container "app" asking for n devices of res.
func podWith(uid string, n int64) *pod.Pod {
	return &pod.Pod{UID: uid, Name: uid, Namespace: "default", Containers: []pod.Container{
		{Name: "app", Limits: pod.ResourceList{res: n}, Requests: pod.ResourceList{res: n}},
	}}
}

// allocated lists the devices of each Allocate call a plugin received.
func allocated(p *testplugin.Plugin) [][]string {
	var out [][]string
	for _, c := range p.Calls(testplugin.Allocate) {
		out = append(out, c.DeviceIDs)
	}
	return out
}

// staleSocket leaves a socket file at path that nobody listens on, as a
// process that died without cleaning up does.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	lis, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	require.NoError(t, err)
	lis.SetUnlinkOnClose(false)
	lis.Close()
}
