package linearizability

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/nodeproof/nodeproof/agent/deviceplugin"
	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
	"github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/models/deviceagent"
)

// Workload says what Record runs. The zero value of every field but Seed
// takes the default named beside it.
type Workload struct {
	// Seed fixes every choice the clients make. The interleaving is the
	// scheduler's, so one seed gives one operation mix, not one history.
	Seed uint64
	// PodClients admit pods, remove them and read capacity (default 6).
	PodClients int
	// OpsPerClient is each client's number of operations (default 30).
	OpsPerClient int
	// AllocateTimeout is the agent's Allocate deadline (default 100ms). A
	// plugin told to hang runs into it.
	AllocateTimeout time.Duration
	// Pace is the mean pause every client takes before each operation
	// (default 1ms; each pause is drawn from 0 to twice that). Without it
	// sixteen clients in tight loops keep two cores busy, and a loaded
	// machine preempts them in the middle of operations: the intervals
	// stretch until every client's overlap every other's, which is the
	// scheduler's doing, not the workload's, and makes the check search
	// orders no run of the agent could take. A paused client holds no
	// operation open, so a stall delays its next call instead.
	Pace time.Duration
	// TempDir is where the agent's directory (sockets, checkpoint) is made
	// (default: /dev/shm when it is a directory, else the system's
	// temporary directory). The agent writes and fsyncs its checkpoint
	// under its lock at every admission, as upstream does; on a disk of a
	// loaded machine that took milliseconds, and every client waiting for
	// the lock had its interval stretched over the others'. On tmpfs the
	// fsync costs nothing.
	TempDir string
	// Logger receives the agent's and the plugins' records (default: discarded).
	Logger *slog.Logger
}

// The node: four resources in two groups. An admission asks for devices of
// one group only, so the checker can split the history in two. unregistered
// is never served; admissions that ask for it exercise the model's refusal.
var (
	groups = [][]string{
		{"example.com/a", "example.com/b"},
		{"example.com/c", "example.com/d"},
	}
	unregistered = "example.com/none"
)

// deviceIDs are the names a snapshot draws from.
var deviceIDs = []string{"d0", "d1", "d2", "d3"}

// waitLimit bounds every wait for the agent to show an effect.
const waitLimit = 10 * time.Second

// Recording is one recorded history and what is needed to check it.
type Recording struct {
	Workload Workload
	// Init is the node when recording began: every plugin registered and
	// its first snapshot applied.
	Init deviceagent.State
	// Initial is each resource's device list Init was made from.
	Initial map[string][]deviceagent.Device
	// History holds every client operation. An Update whose plugin crashed
	// before the agent showed it has Output.Unknown set and returns once
	// sent; the model holds it pending until the crash.
	History []porcupine.Operation
	// Faults are the injected faults, for the visualization.
	Faults []porcupine.Annotation
	// Clients counts every client that recorded operations.
	Clients int
	// Unknown counts operations whose outcome is unknown.
	Unknown int
}

// recorder hands out timestamps and collects operations from every client.
type recorder struct {
	start  time.Time
	mu     sync.Mutex
	ops    []porcupine.Operation
	faults []porcupine.Annotation
}

func (r *recorder) now() int64 { return int64(time.Since(r.start)) }

// after returns once now() is past t, so the next operation's call comes
// strictly after an operation that returned at t: porcupine takes equal
// times as overlapping. The clock has nanosecond resolution, so this spins
// at most a few reads.
func (r *recorder) after(t int64) {
	for r.now() <= t {
	}
}

func (r *recorder) add(op porcupine.Operation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, op)
}

func (r *recorder) fault(client int, start, end int64, what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults = append(r.faults, porcupine.Annotation{
		ClientId: client, Tag: "fault", Start: start, End: end, Description: what,
		BackgroundColor: "#f4c7c3",
	})
}

// Record starts an agent and one test plugin per resource in a fresh
// directory, lets every client run its operations concurrently and returns
// the history. Each resource has an owner client that plays its plugin:
// snapshots, crashes, re-registrations and Allocate faults. The pod clients
// admit, remove and read. Everything it started is stopped before it
// returns.
func Record(ctx context.Context, w Workload) (Recording, error) {
	w = w.withDefaults()
	root, err := os.MkdirTemp(w.TempDir, "nplin")
	if err != nil {
		return Recording{}, err
	}
	defer os.RemoveAll(root)
	dir := filepath.Join(root, "dp")
	agent, err := deviceplugin.Start(deviceplugin.Options{
		Dir: dir, Clock: frozenClock{}, AllocateTimeout: w.AllocateTimeout, Logger: w.Logger,
	})
	if err != nil {
		return Recording{}, err
	}
	defer agent.Stop()
	// Garbage collection before each admission frees removed pods' devices
	// only once sources are ready; the model frees them at once.
	agent.SetSourcesReady()

	rng := rand.New(rand.NewPCG(w.Seed, 0x6c696e))
	rec := &recorder{}
	var owners []*owner
	defer func() {
		for _, o := range owners {
			o.stop()
		}
	}()
	initial := map[string][]deviceagent.Device{}
	for i, res := range slices.Concat(groups...) {
		o := &owner{client: i, resource: res, dir: dir, agent: agent, rec: rec, log: w.Logger, pace: w.Pace, pauses: pausesOf(w.Seed, i),
			rng: rand.New(rand.NewPCG(rng.Uint64(), uint64(i)))}
		owners = append(owners, o)
		o.devices = o.randomSnapshot(nil)
		if err := o.startInstance(ctx); err != nil {
			return Recording{}, err
		}
		if err := o.waitCounts(ctx); err != nil {
			return Recording{}, err
		}
		initial[res] = toModel(o.devices)
	}

	rec.start = time.Now()
	clients := len(owners) + w.PodClients
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for _, o := range owners {
		wg.Go(func() { errs <- o.run(ctx, w.OpsPerClient) })
	}
	for i := range w.PodClients {
		c := &podClient{client: len(owners) + i, agent: agent, rec: rec, pace: w.Pace, pauses: pausesOf(w.Seed, len(owners)+i),
			rng: rand.New(rand.NewPCG(rng.Uint64(), uint64(100+i)))}
		wg.Go(func() { errs <- c.run(ctx, w.OpsPerClient) })
	}
	wg.Wait()
	close(errs)
	var failures []error
	for err := range errs {
		if err != nil {
			failures = append(failures, err)
		}
	}
	if len(failures) > 0 {
		return Recording{}, errors.Join(failures...)
	}

	out := Recording{Workload: w, Init: deviceagent.Init(initial), Initial: initial, History: rec.ops, Faults: rec.faults, Clients: clients}
	for _, op := range rec.ops {
		if op.Output.(deviceagent.Output).Unknown {
			out.Unknown++
		}
	}
	return out, nil
}

func (w Workload) withDefaults() Workload {
	if w.PodClients <= 0 {
		w.PodClients = 6
	}
	if w.OpsPerClient <= 0 {
		w.OpsPerClient = 30
	}
	if w.TempDir == "" {
		if info, err := os.Stat("/dev/shm"); err == nil && info.IsDir() {
			w.TempDir = "/dev/shm"
		}
	}
	if w.Pace <= 0 {
		w.Pace = time.Millisecond
	}
	if w.AllocateTimeout <= 0 {
		w.AllocateTimeout = 100 * time.Millisecond
	}
	if w.Logger == nil {
		w.Logger = slog.New(slog.DiscardHandler)
	}
	return w
}

// frozenClock never moves, so no crashed resource reaches the end of its
// grace period and disappears: deletion is outside the model.
type frozenClock struct{}

func (frozenClock) Now() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

func toModel(devs []testplugin.Device) []deviceagent.Device {
	out := make([]deviceagent.Device, len(devs))
	for i, d := range devs {
		out[i] = deviceagent.Device{ID: d.ID, Healthy: d.Health == "Healthy"}
	}
	return out
}

// counts is what a capacity read shows of a device list.
func counts(devs []testplugin.Device) (capacity, allocatable int64) {
	for _, d := range devs {
		capacity++
		if d.Health == "Healthy" {
			allocatable++
		}
	}
	return capacity, allocatable
}

// readCounts reads the agent's capacity of the given resources, sorted.
func readCounts(agent *deviceplugin.Agent, resources []string) []deviceagent.Count {
	return countsOf(agent.Capacity(), resources)
}

// countsOf is a capacity read's answer for the given resources, sorted.
func countsOf(c devicemanager.Capacity, resources []string) []deviceagent.Count {
	var out []deviceagent.Count
	for _, r := range resources {
		capacity, okC := c.Capacity[r]
		allocatable, okA := c.Allocatable[r]
		if okC || okA {
			out = append(out, deviceagent.Count{Resource: r, Capacity: capacity, Allocatable: allocatable})
		}
	}
	return out
}

// pausesOf is a client's source of pauses.
func pausesOf(seed uint64, client int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x7061757365+uint64(client)))
}

// pause waits a random time from 0 to twice pace, or until ctx ends.
func pause(ctx context.Context, rng *rand.Rand, pace time.Duration) {
	t := time.NewTimer(time.Duration(rng.Int64N(2 * int64(pace))))
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// waitFor polls cond until it holds, for at most waitLimit. The agent tells
// no one when it has applied a snapshot or ended a connection; polling its
// public reads is the only way to see it, and the condition, not the time,
// ends the wait.
func waitFor(ctx context.Context, what string, cond func() bool) error {
	deadline := time.Now().Add(waitLimit)
	tick := time.NewTicker(200 * time.Microsecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up after %v waiting for %s", waitLimit, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// errKind names an admission's failure as the model does.
func errKind(err error) string {
	if err == nil {
		return ""
	}
	if kind, ok := devicemanager.KindOf(err); ok {
		return kind.String()
	}
	return "Unclassified: " + err.Error()
}

// podOf builds a one-container pod that asks for wants.
func podOf(uid string, wants []deviceagent.Want) *pod.Pod {
	limits := pod.ResourceList{}
	for _, w := range wants {
		limits[pod.ResourceName(w.Resource)] = int64(w.Count)
	}
	return &pod.Pod{UID: uid, Name: uid, Namespace: "default", Containers: []pod.Container{
		{Name: "app", Requests: limits.Clone(), Limits: limits},
	}}
}

// answerKey is the environment variable a resource's plugin lists its
// devices under in an Allocate answer: one per resource, so that the
// answers of a pod's resources do not overwrite each other.
func answerKey(resource string) string {
	return "DEVICES_" + strings.ToUpper(filepath.Base(resource))
}

// granted reads which devices an admitted pod got of each requested
// resource: the device IDs its plugins' Allocate answers list, as the
// runtime would pass them to the container (the core records the IDs it
// asked for; the answer is what the plugin set up). Only the admitting
// client removes its pod, so the read after Admit returned sees the
// admission's devices. A resource whose plugin answered nothing (one no
// plugin serves) has no entry; an answer that cannot be read is reported
// as an error kind of its own, which the model never gives.
func granted(ctx context.Context, agent *deviceplugin.Agent, p *pod.Pod, wants []deviceagent.Want) deviceagent.Output {
	opts, err := agent.StartContainer(ctx, p, p.Containers[0].Name)
	if err != nil {
		return deviceagent.Output{Err: "StartContainer: " + err.Error()}
	}
	envs := map[string]string{}
	if opts != nil {
		for _, kv := range opts.Envs {
			envs[kv.Name] = kv.Value
		}
	}
	var out deviceagent.Output
	for _, w := range wants {
		if v, ok := envs[answerKey(w.Resource)]; ok {
			var ids []string
			if v != "" {
				ids = strings.Split(v, ",")
			}
			out.Granted = append(out.Granted, deviceagent.Grant{Resource: w.Resource, DeviceIDs: ids})
		}
	}
	return out
}
