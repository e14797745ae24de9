package linearizability

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/nodeproof/nodeproof/agent/deviceplugin"
	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
	"github.com/nodeproof/nodeproof/models/deviceagent"
)

// owner plays one resource's plugin. Its operations are sequential and it
// is the only one that changes the resource's devices, so it knows what the
// agent should show, and it waits until the agent shows it before the
// operation returns: an operation's return time is then a time by which it
// has taken effect.
type owner struct {
	client   int
	resource string
	dir      string
	agent    *deviceplugin.Agent
	rec      *recorder
	log      *slog.Logger
	rng      *rand.Rand
	pace     time.Duration // see Workload.Pace
	// pauses draws the pauses, apart from rng so that the pace leaves a
	// seed's operations as they were.
	pauses *rand.Rand

	plugin *testplugin.Plugin // nil after a crash, until the restart
	// instances counts plugin instances; each serves on its own socket, so
	// a new one can register while the old one still runs.
	instances int
	devices   []testplugin.Device // the list the agent should show
}

func (o *owner) socket() string {
	return filepath.Join(o.dir, fmt.Sprintf("%s-%d.sock", filepath.Base(o.resource), o.instances))
}

// startInstance starts a new plugin instance serving o.devices and returns
// once it has registered: the agent's Register handler answers after it
// has connected, so the new connection is current by then.
func (o *owner) startInstance(ctx context.Context) error {
	o.instances++
	p, err := testplugin.Start(testplugin.Config{
		Dir: o.dir, Endpoint: filepath.Base(o.socket()), ResourceName: o.resource,
		Devices: o.devices, Logger: o.log, AnswerKey: answerKey(o.resource),
	})
	if err != nil {
		return fmt.Errorf("starting plugin instance %d of %s: %w", o.instances, o.resource, err)
	}
	o.plugin = p
	return nil
}

func (o *owner) stop() {
	if o.plugin != nil {
		o.plugin.Stop()
		o.plugin = nil
	}
}

// waitCounts waits until the agent's capacity and allocatable of the
// resource are those of o.devices.
func (o *owner) waitCounts(ctx context.Context) error {
	capacity, allocatable := counts(o.devices)
	want := []deviceagent.Count{{Resource: o.resource, Capacity: capacity, Allocatable: allocatable}}
	return waitFor(ctx, fmt.Sprintf("%s to show %d/%d devices", o.resource, allocatable, capacity), func() bool {
		return slices.Equal(readCounts(o.agent, []string{o.resource}), want)
	})
}

// waitConnections waits until the agent's open connections for the
// resource are exactly the given sockets: a connection is listed until the
// agent has finished with its stream's end.
func (o *owner) waitConnections(ctx context.Context, sockets ...string) error {
	return waitFor(ctx, fmt.Sprintf("%s's connections to be %v", o.resource, sockets), func() bool {
		var open []string
		for _, p := range o.agent.Plugins() {
			if p.Resource == o.resource {
				open = append(open, p.Socket)
			}
		}
		return slices.Equal(open, sockets)
	})
}

// randomSnapshot draws a device list whose counts differ from those of
// avoid, so the agent's capacity read tells when it has been applied. A
// list drawn after a crash (avoid nil, o.devices unhealthy) has a healthy
// device for the same reason.
func (o *owner) randomSnapshot(avoid []testplugin.Device) []testplugin.Device {
	oldCapacity, oldAllocatable := counts(avoid)
	for {
		n := 1 + o.rng.IntN(len(deviceIDs))
		ids := slices.Clone(deviceIDs)
		o.rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		ids = ids[:n]
		slices.Sort(ids)
		devs := make([]testplugin.Device, n)
		for i, id := range ids {
			health := "Healthy"
			if o.rng.IntN(4) == 0 {
				health = "Unhealthy"
			}
			devs[i] = testplugin.Device{ID: id, Health: health}
		}
		capacity, allocatable := counts(devs)
		if avoid != nil && capacity == oldCapacity && allocatable == oldAllocatable {
			continue
		}
		if allocatable == 0 && o.plugin == nil {
			continue
		}
		return devs
	}
}

func (o *owner) op(in deviceagent.Input) porcupine.Operation {
	in.Resources = []string{o.resource}
	return porcupine.Operation{ClientId: o.client, Input: in, Output: deviceagent.Output{}, Call: o.rec.now()}
}

func (o *owner) run(ctx context.Context, ops int) error {
	for range ops {
		pause(ctx, o.pauses, o.pace)
		var err error
		switch roll := o.rng.IntN(20); {
		case o.plugin == nil:
			err = o.restart(ctx)
		case roll < 8:
			err = o.update(ctx)
		case roll < 11:
			err = o.reregister(ctx)
		case roll < 13:
			err = o.crash(ctx)
		case roll < 15:
			err = o.updateThenCrash(ctx)
		default:
			err = o.faultWindow(ctx)
		}
		if err != nil {
			return fmt.Errorf("client %d (%s): %w", o.client, o.resource, err)
		}
	}
	return nil
}

// update sends a snapshot through the live plugin.
func (o *owner) update(ctx context.Context) error {
	devs := o.randomSnapshot(o.devices)
	op := o.op(deviceagent.Input{Op: deviceagent.Update, Devices: toModel(devs)})
	o.devices = devs
	o.plugin.Update(devs)
	if err := o.waitCounts(ctx); err != nil {
		return err
	}
	op.Return = o.rec.now()
	o.rec.add(op)
	return nil
}

// restart starts a new instance after a crash; its first snapshot is an
// Update to the model.
func (o *owner) restart(ctx context.Context) error {
	devs := o.randomSnapshot(nil)
	op := o.op(deviceagent.Input{Op: deviceagent.Update, Devices: toModel(devs)})
	o.devices = devs
	if err := o.startInstance(ctx); err != nil {
		return err
	}
	if err := o.waitCounts(ctx); err != nil {
		return err
	}
	op.Return = o.rec.now()
	o.rec.add(op)
	return nil
}

// reregister starts a new instance with the same devices while the old one
// still runs, then stops the old one. The old connection's end comes after
// the new connection is current, the late disconnect of #127803, and must
// change nothing a client can see.
func (o *owner) reregister(ctx context.Context) error {
	op := o.op(deviceagent.Input{Op: deviceagent.Reregister})
	old := o.plugin
	if err := o.startInstance(ctx); err != nil {
		return err
	}
	old.Stop()
	if err := o.waitConnections(ctx, o.socket()); err != nil {
		return err
	}
	op.Return = o.rec.now()
	o.rec.add(op)
	return nil
}

// crash kills the plugin and waits until the agent has handled its
// stream's end.
func (o *owner) crash(ctx context.Context) error {
	op := o.op(deviceagent.Input{Op: deviceagent.Crash})
	o.plugin.Crash()
	o.plugin.Stop()
	o.plugin = nil
	if err := o.waitConnections(ctx); err != nil {
		return err
	}
	op.Return = o.rec.now()
	o.rec.add(op)
	for i := range o.devices {
		o.devices[i].Health = "Unhealthy"
	}
	return nil
}

// updateThenCrash sends a snapshot and crashes the plugin at once: whether
// the agent received the snapshot is unknown. The update returns once it is
// sent, and the model holds it pending: it may land any time until the
// crash takes effect, and not after, so its window must not reach past the
// crash's call (a window ending with the crash's return would let the
// checker place it after the crash and mark the crashed plugin's devices
// healthy again).
func (o *owner) updateThenCrash(ctx context.Context) error {
	devs := o.randomSnapshot(o.devices)
	op := o.op(deviceagent.Input{Op: deviceagent.Update, Devices: toModel(devs)})
	op.Output = deviceagent.Output{Unknown: true}
	o.plugin.Update(devs)
	op.Return = o.rec.now()
	o.rec.add(op)
	// The capacity after the crash may be either list's; both are all
	// unhealthy, and the restart's list has a healthy device, so the
	// restart is still seen when it is applied.
	o.devices = devs
	o.rec.after(op.Return)
	return o.crash(ctx)
}

// faultWindow makes the plugin's Allocate fail, by an error or by hanging
// past the agent's deadline, for the span of three snapshot updates: long
// enough for concurrent admissions to run into it.
func (o *owner) faultWindow(ctx context.Context) error {
	fault, what := testplugin.Fault{Err: errors.New("injected Allocate failure")}, "Allocate returns an error"
	if o.rng.IntN(2) == 0 {
		fault, what = testplugin.Fault{Hang: true}, "Allocate hangs past the agent's deadline"
	}
	start := o.rec.now()
	o.plugin.SetFault(testplugin.Allocate, fault)
	var err error
	for i := 0; i < 3 && err == nil; i++ {
		err = o.update(ctx)
	}
	o.plugin.SetFault(testplugin.Allocate, testplugin.Fault{})
	o.rec.fault(o.client, start, o.rec.now(), fmt.Sprintf("%s: %s", o.resource, what))
	return err
}

// podClient admits pods, removes the ones it admitted and reads capacity.
type podClient struct {
	client int
	agent  *deviceplugin.Agent
	rec    *recorder
	rng    *rand.Rand
	pace   time.Duration // see Workload.Pace
	pauses *rand.Rand    // as owner.pauses
	next   int
	held   []deviceagent.Input // admitted pods, as their Admit inputs
}

func (c *podClient) run(ctx context.Context, ops int) error {
	for range ops {
		pause(ctx, c.pauses, c.pace)
		switch roll := c.rng.IntN(20); {
		case roll < 11 || len(c.held) == 0 && roll < 16:
			c.admit(ctx)
		case roll < 16:
			c.remove()
		default:
			c.read()
		}
	}
	return nil
}

func (c *podClient) admit(ctx context.Context) {
	c.next++
	uid := fmt.Sprintf("c%d-p%d", c.client, c.next)
	var wants []deviceagent.Want
	if c.rng.IntN(20) == 0 {
		wants = []deviceagent.Want{{Resource: unregistered, Count: 1}}
	} else {
		group := groups[c.rng.IntN(len(groups))]
		for _, r := range group {
			if c.rng.IntN(2) == 0 {
				wants = append(wants, deviceagent.Want{Resource: r, Count: 1 + c.rng.IntN(2)})
			}
		}
		if len(wants) == 0 {
			r := group[c.rng.IntN(len(group))]
			wants = []deviceagent.Want{{Resource: r, Count: 1 + c.rng.IntN(2)}}
		}
	}
	if in, err := admitRecorded(ctx, c.agent, c.rec, c.client, uid, wants); err == nil {
		c.held = append(c.held, in)
	}
}

// admitRecorded admits a one-container pod asking for wants, records the
// admission with the devices it got, and returns its input and the
// agent's answer.
func admitRecorded(ctx context.Context, agent *deviceplugin.Agent, rec *recorder, client int, uid string, wants []deviceagent.Want) (deviceagent.Input, error) {
	in := deviceagent.Input{Op: deviceagent.Admit, Pod: uid, Wants: wants}
	for _, w := range wants {
		in.Resources = append(in.Resources, w.Resource)
	}
	p := podOf(uid, wants)
	// The call and return times are taken next to the call, so that
	// nothing else the client does stretches the interval.
	op := porcupine.Operation{ClientId: client, Input: in, Call: rec.now()}
	err := agent.Admit(ctx, p)
	op.Return = rec.now()
	op.Output = deviceagent.Output{Err: errKind(err)}
	if err == nil {
		op.Output = granted(ctx, agent, p, wants)
	}
	rec.add(op)
	return in, err
}

func (c *podClient) remove() {
	i := c.rng.IntN(len(c.held))
	admitted := c.held[i]
	c.held = slices.Delete(c.held, i, i+1)
	in := deviceagent.Input{Op: deviceagent.Remove, Pod: admitted.Pod, Resources: admitted.Resources}
	op := porcupine.Operation{ClientId: c.client, Input: in, Output: deviceagent.Output{}, Call: c.rec.now()}
	c.agent.RemovePod(admitted.Pod)
	op.Return = c.rec.now()
	c.rec.add(op)
}

func (c *podClient) read() {
	resources := append(slices.Concat(groups...), unregistered)
	slices.Sort(resources)
	op := porcupine.Operation{ClientId: c.client, Input: deviceagent.Input{Op: deviceagent.Capacity, Resources: resources}}
	op.Call = c.rec.now()
	capacity := c.agent.Capacity()
	op.Return = c.rec.now()
	op.Output = deviceagent.Output{Counts: countsOf(capacity, resources)}
	c.rec.add(op)
}
