package deviceplugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
)

// maxSocketPath is the longest path a Unix socket address holds on Linux
// (108 bytes of sun_path, one of them the terminating NUL).
const maxSocketPath = 107

// Agent is the kubelet's device plugin manager running against real sockets.
// Its methods are safe for concurrent use.
type Agent struct {
	opts Options
	log  *slog.Logger
	// ctx is the parent of every ListAndWatch stream; Stop cancels it.
	ctx          context.Context
	cancel       context.CancelFunc
	registration *RegistrationServer

	// mu serialises every call into core and guards the fields below it.
	// It is never held across an RPC.
	mu      sync.Mutex
	core    *devicemanager.Manager
	clients map[devicemanager.EndpointID]*pluginClient
	// active holds the UIDs of pods admitted and not yet removed: upstream's
	// activePods, which garbage collection keeps.
	active  map[string]bool
	stopped bool

	// goroutines counts the ListAndWatch loops and the
	// Register handlers in flight, so that Stop leaves none behind.
	goroutines sync.WaitGroup
	stopOnce   sync.Once
}

// Start restores the checkpoint in opts.Dir, removes stale sockets there and
// serves the Registration service on <Dir>/kubelet.sock, as upstream's
// ManagerImpl.Start does. A checkpoint that cannot be loaded is logged and
// renamed aside, and the agent starts empty.
func Start(opts Options) (*Agent, error) {
	if opts.Dir == "" {
		return nil, errors.New("deviceplugin: Options.Dir: must not be empty")
	}
	opts = opts.withDefaults()
	if _, err := kubeletSocketPath(opts.Dir); err != nil {
		return nil, fmt.Errorf("deviceplugin: Options.Dir: %w", err)
	}
	if err := os.MkdirAll(opts.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("deviceplugin: %w", err)
	}
	a := &Agent{
		opts:    opts,
		log:     opts.Logger,
		clients: map[devicemanager.EndpointID]*pluginClient{},
		active:  map[string]bool{},
	}
	a.core = a.restore()
	for _, c := range opts.Containers {
		if c.Running {
			a.active[c.PodUID] = true
		}
	}
	if err := removeStaleSockets(opts.Dir); err != nil {
		return nil, fmt.Errorf("deviceplugin: cleaning up %s: %w", opts.Dir, err)
	}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	registration, err := ServeRegistration(opts.Dir, registrar{agent: a}, a.log)
	if err != nil {
		a.cancel()
		return nil, fmt.Errorf("deviceplugin: %w", err)
	}
	a.registration = registration
	a.log.Info("serving device plugin registration", "socket", registration.Socket())
	return a, nil
}

// restore loads the checkpoint into a new core. Any failure is logged, as
// upstream logs "Continue after failing to read checkpoint file", and the
// agent goes on with an empty core; a file that exists but cannot be loaded
// is kept aside.
func (a *Agent) restore() *devicemanager.Manager {
	core := devicemanager.New(a.opts.Limits)
	data, err := readCheckpoint(a.opts.Dir)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return core
	}
	if err == nil {
		var report devicemanager.RestoreReport
		report, err = core.Restore(data, a.opts.Clock.Now(), a.opts.Containers)
		for _, skipped := range report.Skipped {
			a.log.Warn("skipped a checkpoint entry whose Allocate answer does not decode", "entry", skipped)
		}
		if err == nil {
			return core
		}
		core = devicemanager.New(a.opts.Limits)
	}
	a.log.Error("Continue after failing to read checkpoint file. Device allocation info may NOT be up-to-date",
		"file", filepath.Join(a.opts.Dir, devicemanager.CheckpointName), "err", err)
	if aside, renameErr := keepAside(a.opts.Dir, a.opts.Clock.Now()); renameErr != nil {
		a.log.Error("could not keep the unreadable checkpoint aside; the next write replaces it", "err", renameErr)
	} else {
		a.log.Warn("kept the unreadable checkpoint aside", "file", aside)
	}
	return core
}

// removeStaleSockets removes every socket in dir, as upstream's
// CleanupPluginDirectory does: sockets of plugins from before this start
// cannot be trusted, and plugins re-create theirs when kubelet.sock appears.
// Other files (the checkpoint among them) and directories stay.
func removeStaleSockets(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.Type()&os.ModeSocket == 0 {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Stop disconnects every plugin, stops the registration server and waits for
// every goroutine the agent started. It may be called more than once.
func (a *Agent) Stop() {
	a.stopOnce.Do(func() {
		a.mu.Lock()
		a.stopped = true
		a.mu.Unlock()
		// No client is added once stopped is set, so closing the current
		// ones (and cancelling their streams) ends every ListAndWatch loop.
		a.cancel()
		a.registration.Stop()
		a.mu.Lock()
		clients := slices.Collect(maps.Values(a.clients))
		a.mu.Unlock()
		for _, c := range clients {
			c.close()
		}
		a.goroutines.Wait()
		a.log.Info("device plugin agent stopped", "dir", a.opts.Dir)
	})
}

// Capacity reports the node's device plugin resources and deletes those
// whose plugin has been gone longer than the grace period (upstream
// GetCapacity), writing the checkpoint if that deleted any.
func (a *Agent) Capacity() devicemanager.Capacity {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.core.GetCapacity(a.opts.Clock.Now())
	a.saveIfDue()
	return c
}

// Plugin describes one open plugin connection.
type Plugin struct {
	Resource string
	Socket   string
	Endpoint devicemanager.EndpointID
}

// Plugins lists the open plugin connections in the order they registered.
// A superseded connection stays listed until its ListAndWatch stream ends.
func (a *Agent) Plugins() []Plugin {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Plugin, 0, len(a.clients))
	for _, c := range a.clients {
		out = append(out, Plugin{Resource: c.resource, Socket: c.socket, Endpoint: c.id})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Endpoint < out[j].Endpoint })
	return out
}

// RemovePod records that a pod is no longer active. Its devices are freed by
// the next allocation's garbage collection or by CollectGarbage, once
// sources are ready.
func (a *Agent) RemovePod(uid string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.active, uid)
}

// SetSourcesReady records that the kubelet has seen every pod source: garbage
// collection may run, and running containers from before a restart no longer
// skip allocation.
func (a *Agent) SetSourcesReady() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.core.SetSourcesReady()
}

// CollectGarbage frees the devices of pods that are no longer active
// (upstream UpdateAllocatedDevices).
func (a *Agent) CollectGarbage() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.core.UpdateAllocatedDevices(a.activePods())
	a.saveIfDue()
}

// activePods lists the active pod UIDs in order. a.mu must be held.
func (a *Agent) activePods() []string {
	return slices.Sorted(maps.Keys(a.active))
}

// saveIfDue writes the checkpoint when the core says upstream would have.
// A failure is logged and returned in upstream's words; only an allocation
// passes it on to its caller. a.mu must be held.
func (a *Agent) saveIfDue() error {
	if !a.core.CheckpointDue() {
		return nil
	}
	if err := writeCheckpoint(a.opts.Dir, a.core.Checkpoint()); err != nil {
		err = fmt.Errorf("failed to write checkpoint file %q: %v", devicemanager.CheckpointName, err)
		a.log.Error("checkpoint not written", "err", err)
		return err
	}
	return nil
}
