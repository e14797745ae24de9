package devicemanager

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"pgregory.net/rapid"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	"github.com/nodeproof/nodeproof/core/pod"
	model "github.com/nodeproof/nodeproof/models/devicemanager"
	"github.com/nodeproof/nodeproof/properties"
)

// --- actions --------------------------------------------------------------

func (m *machine) register(t *rapid.T) {
	r := resourceGen.Draw(t, "resource")
	opts := dm.PluginOptions{
		PreStartRequired:                boolGen.Draw(t, "preStart"),
		GetPreferredAllocationAvailable: boolGen.Draw(t, "preferred"),
	}
	m.sockets++
	socket := fmt.Sprintf("plugin-%d.sock", m.sockets)
	m.begin("register", "resource=%s endpoint=%s preferred=%t prestart=%t", r, socket, opts.GetPreferredAllocationAvailable, opts.PreStartRequired)
	req := dm.RegisterRequest{Version: dm.Version, Endpoint: socket, ResourceName: r, Options: &opts}
	if err := dm.ValidateRegistration(req); err != nil {
		properties.Fail(m.t, ErrorKinds, "valid registration %+v rejected: %v", req, err)
	}
	var id dm.EndpointID
	m.both(func(mgr *dm.Manager) string {
		got, err := mgr.Connected(r, socket, opts)
		if mgr == m.core {
			id = got
		}
		return fmt.Sprint(got, err)
	})
	conn := m.model.Register(r, model.Options{Preferred: opts.GetPreferredAllocationAvailable, PreStart: opts.PreStartRequired})
	p := &plugin{resource: r, socket: socket, id: id, conn: conn, opts: opts, streaming: true}
	m.plugins = append(m.plugins, p)
	v := m.view(r)
	v.current, v.hasEndpoint, v.stopped = p, true, false
	// Real plugins send their first snapshot as soon as ListAndWatch opens.
	if boolGen.Draw(t, "initialSnapshot") {
		m.sendSnapshot(t, p)
	}
}

func (m *machine) registerInvalid(t *rapid.T) {
	badVersion := boolGen.Draw(t, "badVersion")
	req := dm.RegisterRequest{Version: dm.Version, Endpoint: "bad.sock", ResourceName: resourceGen.Draw(t, "resource")}
	want := model.Failure{}
	if badVersion {
		req.Version = badVersions.Draw(t, "version")
		want = model.Failure{Kind: "UnsupportedVersion", Message: fmt.Sprintf(`requested API version %q is not supported by kubelet. Supported version is ["v1beta1"]`, req.Version)}
	} else {
		req.ResourceName = badNames.Draw(t, "name")
		want = model.Failure{Kind: "InvalidResourceName", Message: fmt.Sprintf("the ResourceName %q is invalid", req.ResourceName)}
	}
	m.begin("registerInvalid", "version=%q resource=%q", req.Version, req.ResourceName)
	err := dm.ValidateRegistration(req)
	if err == nil {
		properties.Fail(m.t, ErrorKinds, "invalid registration %+v accepted", req)
	}
	m.errs = append(m.errs, seenError{err, want.Kind, want.Message})
}

// streamingPlugin draws a plugin whose stream is open. When none is, it
// registers one first: skipping the action instead would make rapid end
// the case early (it stops a case whose actions are mostly rejected).
func (m *machine) streamingPlugin(t *rapid.T) *plugin {
	var live []*plugin
	for _, p := range m.plugins {
		if p.streaming {
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		m.register(t)
		return m.plugins[len(m.plugins)-1]
	}
	return rapid.SampledFrom(live).Draw(t, "plugin")
}

// activePod draws an active pod, admitting one first when there is none.
// It returns nil when that admission was rejected: the admission was then
// the whole action.
func (m *machine) activePod(t *rapid.T) *podEntry {
	var active []*podEntry
	for _, p := range m.pods {
		if p.active {
			active = append(active, p)
		}
	}
	if len(active) == 0 {
		m.admitPod(t)
		if admitted := m.pods[len(m.pods)-1]; admitted.active {
			return admitted
		}
		return nil
	}
	return rapid.SampledFrom(active).Draw(t, "pod")
}

func (m *machine) update(t *rapid.T) {
	m.sendSnapshot(t, m.streamingPlugin(t))
}

func (m *machine) sendSnapshot(t *rapid.T, p *plugin) {
	devices := m.drawDevices(t)
	m.begin("update", "resource=%s endpoint=%s devices=%s", p.resource, p.socket, deviceList(devices))
	bothSame(m, func(mgr *dm.Manager) error { return mgr.Update(p.resource, devices) }, sameError, showError)
	mdevs := make([]model.Device, len(devices))
	var healthy int64
	for i, d := range devices {
		mdevs[i] = model.Device{ID: d.ID, Healthy: d.Health == dm.Healthy}
		if d.Health == dm.Healthy {
			healthy++
		}
	}
	m.model.Update(p.resource, mdevs)
	p.reported, p.healthy, p.total = true, healthy, int64(len(devices))
	v := m.view(p.resource)
	v.hasState, v.hasHealthy, v.lastHealthy, v.zeroed, v.everSnapshoted = true, true, healthy, false, true
}

func (m *machine) updateInvalid(t *rapid.T) {
	p := m.streamingPlugin(t)
	devices := m.drawDevices(t)
	switch fault.Draw(t, "fault") {
	case 0:
		devices = append(devices, dm.Device{ID: "", Health: dm.Healthy})
	case 1:
		devices = append(devices, dm.Device{ID: "d0", Health: dm.Healthy}, dm.Device{ID: "d0", Health: dm.Unhealthy})
	case 2:
		devices = append(devices, dm.Device{ID: "dx", Health: dm.Healthy, NUMANodes: []int64{-3}})
	}
	m.begin("updateInvalid", "resource=%s devices=%s", p.resource, deviceList(devices))
	var err error
	m.both(func(mgr *dm.Manager) string {
		e := mgr.Update(p.resource, devices)
		if mgr == m.core {
			err = e
		}
		return fmt.Sprint(e)
	})
	if err == nil {
		properties.Fail(m.t, ErrorKinds, "malformed device list %s accepted", deviceList(devices))
	}
	// The plugin's last word is a list the kubelet refused: what the node
	// should show is undefined until it sends a valid one.
	p.reported = false
	m.errs = append(m.errs, seenError{err, "InvalidDeviceList", ""})
}

func (m *machine) disconnect(t *rapid.T) {
	p := m.streamingPlugin(t)
	current := m.view(p.resource).current == p
	m.begin("disconnect", "resource=%s endpoint=%s current=%t", p.resource, p.socket, current)
	p.streaming = false
	m.both(func(mgr *dm.Manager) string { return fmt.Sprint(mgr.Disconnected(p.resource, p.id, m.now)) })
	m.model.Disconnect(p.resource, p.conn, m.now)
	v := m.view(p.resource)
	if current && v.hasEndpoint && !v.stopped {
		// Upstream creates the unhealthy entry even before any snapshot.
		v.stopped, v.stoppedAt, v.zeroed, v.hasState = true, m.now, true, true
	}
}

func (m *machine) advanceShort(t *rapid.T) {
	d := time.Duration(shortSeconds.Draw(t, "seconds")) * time.Second
	m.begin("advanceShort", "by=%s", d)
	m.now = m.now.Add(d)
}

// advancePastGrace lands on the boundary (exactly 5 minutes after the
// earliest stop, which must not delete yet) or just past it.
func (m *machine) advancePastGrace(t *rapid.T) {
	d := dm.EndpointStopGracePeriod + time.Duration(extraSeconds.Draw(t, "extraSeconds"))*time.Second
	var earliest *time.Time
	for _, v := range m.views {
		if v.stopped && (earliest == nil || v.stoppedAt.Before(*earliest)) {
			at := v.stoppedAt
			earliest = &at
		}
	}
	target := m.now.Add(d)
	if earliest != nil && earliest.Add(d).After(m.now) {
		target = earliest.Add(d)
	}
	m.begin("advancePastGrace", "to=stop+%s", d)
	m.now = target
}

func (m *machine) capacity(t *rapid.T) {
	m.begin("capacity", "")
	expected := m.expectedDeletions()
	c := bothSame(m, func(mgr *dm.Manager) dm.Capacity { return mgr.GetCapacity(m.now) }, sameCapacity, showCapacity)
	counts, md := m.model.Capacity(m.now)
	if !sameAsCounts(c, counts) || !equalStrings(c.Deleted, md) {
		properties.Fail(m.t, Model, "GetCapacity: core capacity=%v allocatable=%v deleted=%v, model %+v deleted=%v", c.Capacity, c.Allocatable, c.Deleted, counts, md)
	}
	m.checked(slotGraceDelete, m.graceRuleApplies(c.Deleted))
	if !equalStrings(c.Deleted, expected) {
		properties.Fail(m.t, GraceDelete, "GetCapacity deleted %v, expected %v", c.Deleted, expected)
	}
	m.views = slices.DeleteFunc(m.views, func(v *resourceView) bool { return slices.Contains(c.Deleted, v.resource) })
}

// graceRuleApplies says whether DM-GRACE-DELETE has a resource to judge:
// one the manager deletes, or one whose plugin has stopped or that has
// state without an endpoint. A resource with a live plugin is never
// deleted, so a node of only those says nothing about the rule.
func (m *machine) graceRuleApplies(deleted []string) bool {
	if len(deleted) > 0 {
		return true
	}
	for _, v := range m.views {
		if v.hasState && (v.stopped || !v.hasEndpoint) {
			return true
		}
	}
	return false
}

// expectedDeletions is the grace rule stated from the plugin side.
func (m *machine) expectedDeletions() []string {
	var out []string
	for _, v := range m.views {
		if !v.hasState {
			continue
		}
		// A resource has state without an endpoint when a superseded
		// plugin's stream sends a snapshot after the resource was deleted
		// (v1.36 applies it, spec §1.3).
		if !v.hasEndpoint || (v.stopped && m.now.Sub(v.stoppedAt) > dm.EndpointStopGracePeriod) {
			out = append(out, v.resource)
		}
	}
	sort.Strings(out)
	return out
}

func (m *machine) activeUIDs() []string {
	var uids []string
	for _, p := range m.pods {
		if p.active {
			uids = append(uids, p.p.UID)
		}
	}
	return uids
}

func (m *machine) admitPod(t *rapid.T) {
	p := m.drawPod(t)
	m.begin("admitPod", "%s", podSpec{p})
	m.admit(t, p)
}

// schedulePod is a pod the scheduler placed on the node: drawn as admitPod
// draws one, then without the device requests the node's room cannot hold
// (what it advertises as allocatable less the effective requests of its
// other running pods), as the scheduler would only place it elsewhere.
// admitPod's pods arrive whatever they ask, as when the node status is
// stale or a pod names the node itself.
func (m *machine) schedulePod(t *rapid.T) {
	p := m.drawPod(t)
	m.core.CapacityViewInto(&m.admitView, m.now)
	for _, r := range resources {
		room := m.admitView.Allocatable[r]
		for _, q := range m.pods {
			if q.active {
				room -= effectiveDevices(q.p, r)
			}
		}
		if effectiveDevices(p, r) <= room {
			continue
		}
		name := pod.ResourceName(r)
		for _, cs := range [][]pod.Container{p.InitContainers, p.Containers} {
			for i := range cs {
				delete(cs[i].Limits, name)
				delete(cs[i].Requests, name)
			}
		}
	}
	m.begin("schedulePod", "%s", podSpec{p})
	m.admit(t, p)
}

// admit is the kubelet admitting a new pod.
func (m *machine) admit(t *rapid.T, p *pod.Pod) {
	entry := &podEntry{p: p, active: true} // the kubelet lists a pod as active while admitting it
	m.pods = append(m.pods, entry)
	// What the node advertises as the pod arrives, for DM-C-EFFECTIVE.
	m.core.CapacityViewInto(&m.admitView, m.now)
	fits := m.fitsNode(p)
	if !m.allocatePod(t, entry) {
		entry.active = false
		p.Phase = pod.Failed
		m.checkAdmits(p, fits, m.errs[len(m.errs)-1].err)
		return
	}
	m.checkAdmits(p, fits, nil)
	p.Phase = pod.Running
	entry.effective = admittedEffective(p, m.admitView.Allocatable)
}

// readmitPod is the kubelet admitting an existing pod again, as it does for
// every pod after a restart.
func (m *machine) readmitPod(t *rapid.T) {
	entry := m.activePod(t)
	if entry == nil {
		return
	}
	m.begin("readmitPod", "%s", entry.p.UID)
	if !m.allocatePod(t, entry) {
		entry.active = false
		entry.p.Phase = pod.Failed
	}
}

// errPluginRestarting is the GetPreferredAllocation failure the machine's
// plugins answer with; PlanContainer only reads it.
var errPluginRestarting = errors.New("rpc error: code = Unavailable desc = plugin restarting")

// allocatePod allocates every container in upstream's order and plays the
// plugin's side of each Allocate RPC. It reports whether the pod was admitted.
func (m *machine) allocatePod(t *rapid.T, entry *podEntry) bool {
	p := entry.p
	// No pod changes its activity while one is admitted, so one list of
	// the active pods serves every container (core and model only read it).
	active := m.activeUIDs()
	for i := range len(p.InitContainers) + len(p.Containers) {
		isInit := i < len(p.InitContainers)
		var c *pod.Container
		if isInit {
			c = &p.InitContainers[i]
		} else {
			c = &p.Containers[i-len(p.InitContainers)]
		}
		in := dm.PlanInput{Pod: p, Container: c.Name, ActivePods: active}
		mc := model.Container{Name: c.Name, Limits: make([]model.Limit, 0, len(c.Limits)), Init: isInit, Sidecar: isInit && c.IsSidecar()}
		for _, name := range c.Limits.Names() {
			r := string(name)
			limit := model.Limit{Resource: r, Count: c.Limits[name]}
			if name != pod.CPU {
				order := preferredOrder.Draw(t, resourceLabels[r][2])
				ids := make([]string, 0, len(order))
				for _, id := range order {
					if boolGen.Draw(t, preferredLabels[id][0]) {
						ids = append(ids, id)
					}
				}
				pref := dm.Preference{DeviceIDs: ids}
				if preferredFails.Draw(t, resourceLabels[r][3]) == 0 {
					pref.Err = errPluginRestarting
					limit.PreferredErr = true
				}
				if in.Preferred == nil {
					in.Preferred = make(map[string]dm.Preference, len(resources))
				}
				in.Preferred[r] = pref
				limit.Preferred = ids
			}
			mc.Limits = append(mc.Limits, limit)
		}
		if !m.allocateContainer(t, in, mc) {
			return false
		}
	}
	return true
}

// planText prints a plan with describePlan when a log line is printed.
type planText struct{ plan *dm.Plan }

func describePlan(plan *dm.Plan) string {
	if plan == nil {
		return "<nil>"
	}
	var parts []string
	for _, r := range plan.Requests {
		parts = append(parts, fmt.Sprintf("%s=%v", r.Resource, r.DeviceIDs))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func (m *machine) allocateContainer(t *rapid.T, in dm.PlanInput, mc model.Container) bool {
	planned := bothSame(m, func(mgr *dm.Manager) plannedOutput {
		pl, e := mgr.PlanContainer(in)
		return plannedOutput{pl, e}
	}, samePlannedOutput, showPlannedOutput)
	plan, err := planned.plan, planned.err
	mplan, mfail := m.model.Plan(in.Pod.UID, mc, in.ActivePods)
	if err != nil || mfail != nil {
		if err == nil || mfail == nil {
			properties.Fail(m.t, Model, "plan %s/%s: core plan=%s err=%v, model failure=%+v", in.Pod.UID, in.Container, describePlan(plan), err, mfail)
		}
		m.errs = append(m.errs, seenError{err, mfail.Kind, mfail.Message})
		m.t.Logf("  %s: rejected: %v", in.Container, err)
		return false
	}
	if len(plan.Requests) != len(mplan.Requests) {
		properties.Fail(m.t, Model, "plan %s/%s: core %s, model %+v", in.Pod.UID, in.Container, describePlan(plan), mplan.Requests)
	}
	for i, req := range plan.Requests {
		if req.Resource != mplan.Requests[i].Resource || !equalStrings(req.DeviceIDs, mplan.Requests[i].Devices) {
			properties.Fail(m.t, Model, "plan %s/%s: core %s, model %+v", in.Pod.UID, in.Container, describePlan(plan), mplan.Requests)
		}
	}
	outcome := "ok"
	if len(plan.Requests) > 0 {
		outcome = allocateOutcome.Draw(t, "allocateOutcome")
	}
	m.t.Logf("  %s: plan %s, plugin answers %s", in.Container, planText{plan}, outcome)
	switch outcome {
	case "rpcError":
		cause := errors.New("rpc error: code = Internal desc = device busy")
		var abortErr error
		m.both(func(mgr *dm.Manager) string {
			e := mgr.Abort(mgr.PendingPlans()[0], cause)
			if mgr == m.core {
				abortErr = e
			}
			return fmt.Sprint(e)
		})
		m.model.Abort(mplan.ID)
		m.errs = append(m.errs, seenError{abortErr, "AllocateFailed", cause.Error()})
		return false
	case "emptyResponse":
		answers := make([][]allocresp.ContainerAllocateResponse, len(plan.Requests))
		var commitErr error
		m.both(func(mgr *dm.Manager) string {
			e := mgr.Commit(mgr.PendingPlans()[0], answers)
			if mgr == m.core {
				commitErr = e
			}
			return fmt.Sprint(e)
		})
		m.model.Abort(mplan.ID)
		m.errs = append(m.errs, seenError{commitErr, "NoContainerResponses", "no containers return in allocation response "})
		return false
	}
	answers := make([][]allocresp.ContainerAllocateResponse, len(plan.Requests))
	for i, req := range plan.Requests {
		answers[i] = []allocresp.ContainerAllocateResponse{{
			Envs:    map[string]string{"VISIBLE_DEVICES": strings.Join(req.DeviceIDs, ",")},
			Devices: []allocresp.DeviceSpec{{ContainerPath: "/dev/" + req.DeviceIDs[0], HostPath: "/dev/" + req.DeviceIDs[0], Permissions: "rw"}},
		}}
	}
	bothSame(m, func(mgr *dm.Manager) error { return mgr.Commit(mgr.PendingPlans()[0], answers) }, sameError, showError)
	m.model.Commit(mplan.ID)
	for i, req := range plan.Requests {
		m.answered[[3]string{plan.PodUID, plan.Container, req.Resource}] = answer{answers[i][0].Envs["VISIBLE_DEVICES"], answers[i][0].Devices[0].ContainerPath}
	}
	return true
}

// startContainer is the kubelet about to start a container: it asks which
// PreStartContainer RPCs the plugins want and whether the container must be
// allocated again (spec §1.9).
func (m *machine) startContainer(t *rapid.T) {
	entry := m.activePod(t)
	if entry == nil {
		return
	}
	p := entry.p
	containers := append(append([]pod.Container(nil), p.InitContainers...), p.Containers...)
	i := rapid.IntRange(0, len(containers)-1).Draw(t, "container")
	c := containers[i]
	m.begin("startContainer", "%s/%s", p.UID, c.Name)
	var calls []dm.PreStartCall
	var reallocate bool
	var err error
	m.both(func(mgr *dm.Manager) string {
		cs, r, e := mgr.PreStartCalls(p, c.Name, true)
		if mgr == m.core {
			calls, reallocate, err = cs, r, e
		}
		return fmt.Sprint(cs, r, e)
	})
	mc := model.Container{Name: c.Name, Limits: make([]model.Limit, 0, len(c.Limits))}
	for _, name := range c.Limits.Names() {
		mc.Limits = append(mc.Limits, model.Limit{Resource: string(name), Count: c.Limits[name]})
	}
	want, wantReallocate, failure := m.model.PreStart(p.UID, mc, true)
	if (err != nil) != (failure != nil) {
		properties.Fail(m.t, Model, "PreStartCalls %s/%s: core err=%v, model failure=%+v", p.UID, c.Name, err, failure)
	}
	if err != nil {
		m.errs = append(m.errs, seenError{err, failure.Kind, failure.Message})
		return
	}
	same := len(calls) == len(want) && reallocate == wantReallocate
	for k := 0; same && k < len(calls); k++ {
		same = calls[k].Resource == want[k].Resource && equalStrings(calls[k].DeviceIDs, want[k].Devices)
	}
	if !same {
		properties.Fail(m.t, Model, "PreStartCalls %s/%s: core %+v reallocate=%t, model %+v reallocate=%t", p.UID, c.Name, calls, reallocate, want, wantReallocate)
	}
}

func (m *machine) terminatePod(t *rapid.T) {
	entry := m.activePod(t)
	if entry == nil {
		return
	}
	m.begin("terminatePod", "%s", entry.p.UID)
	entry.active = false
	entry.p.Phase = pod.Succeeded
}

func (m *machine) collectGarbage(t *rapid.T) {
	active := m.activeUIDs()
	m.begin("collectGarbage", "active=%v", active)
	m.both(func(mgr *dm.Manager) string { mgr.UpdateAllocatedDevices(active); return "" })
	m.model.GC(active)
}

func (m *machine) sourcesReady(t *rapid.T) {
	m.begin("sourcesReady", "")
	m.ready = true
	m.both(func(mgr *dm.Manager) string { mgr.SetSourcesReady(); return "" })
	m.model.SourcesReady()
}

// restartKubelet writes the checkpoint, starts a new manager from it, and
// ends every plugin's stream: plugins must register again.
func (m *machine) restartKubelet(t *rapid.T) {
	m.begin("restartKubelet", "")
	m.ready = false
	var running []dm.ContainerRef
	var modelRunning [][2]string
	for _, p := range m.pods {
		if !p.active {
			continue
		}
		for _, c := range append(append([]pod.Container(nil), p.p.InitContainers...), p.p.Containers...) {
			running = append(running, dm.ContainerRef{PodUID: p.p.UID, Container: c.Name, Running: true})
			modelRunning = append(modelRunning, [2]string{p.p.UID, c.Name})
		}
	}
	before := m.core.Holdings()
	coreData, twinData := m.core.Checkpoint(), m.twin.Checkpoint()
	coreRead := m.writeAndRead(coreData)
	// Equal content makes the same file (checkpoint.Equal), so the twin
	// reads what the core read; Restore copies what it keeps, so the two
	// managers share nothing with each other or with the checks' trip.
	twinRead := coreRead
	if !checkpoint.Equal(coreData, twinData) {
		twinRead = m.writeAndRead(twinData)
	}
	m.core = m.restart(coreRead, running)
	m.twin = m.restart(twinRead, running)
	m.model.Restart(m.now, modelRunning)
	for _, p := range m.plugins {
		p.streaming = false
	}
	// Only resources with a healthy entry are in the checkpoint.
	m.views = slices.DeleteFunc(m.views, func(v *resourceView) bool { return !v.hasHealthy })
	for _, v := range m.views {
		*v = resourceView{resource: v.resource, hasState: true, hasHealthy: true, hasEndpoint: true, zeroed: true, stopped: true, stoppedAt: m.now}
	}
	m.restored = before
	// Here DM-RESTORE-KEEPS applies when the restart had allocations to restore.
	m.checked(slotRestoreKeeps, len(before) > 0)
	if after := m.core.Holdings(); !equalHoldings(before, after) {
		properties.Fail(m.t, RestoreKeeps, "holdings before restart %v, after restore %v", before, after)
	}
}

// writeAndRead is the kubelet writing a manager's checkpoint and reading
// it back at start. Content checkpoint.Equal to a content whose round trip
// the checks made is written as the same bytes and read back as the same
// data (see checkCheckpoint), so that trip's decoded data is what the
// kubelet reads; the check after the step before a restart has almost
// always made it.
func (m *machine) writeAndRead(data checkpoint.Data) checkpoint.Data {
	if decoded, ok := m.trippedAs(data); ok {
		return decoded
	}
	file, err := checkpoint.Encode(data)
	if err != nil {
		properties.Fail(m.t, CheckpointTrip, "encode: %v", err)
	}
	decoded, err := checkpoint.Decode(file)
	if err != nil {
		properties.Fail(m.t, CheckpointTrip, "decode of a checkpoint the manager wrote: %v", err)
	}
	return decoded
}

func (m *machine) restart(decoded checkpoint.Data, running []dm.ContainerRef) *dm.Manager {
	fresh := dm.New(dm.DefaultLimits())
	report, err := fresh.Restore(decoded, m.now, running)
	if err != nil || len(report.Skipped) > 0 {
		properties.Fail(m.t, CheckpointTrip, "restore: err=%v skipped=%v", err, report.Skipped)
	}
	return fresh
}
