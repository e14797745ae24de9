package properties

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
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// Device manager invariant IDs.
const (
	DMModel           = "DM-MODEL"
	DMExclusive       = "DM-EXCLUSIVE"
	DMAllocatedCache  = "DM-ALLOCATED-CACHE"
	DMAllocLECapacity = "DM-ALLOCATABLE-LE-CAPACITY"
	DMAllocHealthy    = "DM-ALLOCATABLE-HEALTHY"
	DMGraceDelete     = "DM-GRACE-DELETE"
	DMCheckpointTrip  = "DM-CHECKPOINT-ROUNDTRIP"
	DMRestoreKeeps    = "DM-RESTORE-KEEPS"
	DMDeterministic   = "DM-DETERMINISTIC"
	DMErrorKinds      = "DM-ERROR-KINDS"
	DMRunOptions      = "DM-RUN-OPTIONS"

	// Contract properties: what the Kubernetes documentation and KEPs
	// promise users of device plugins, checked against the same generated
	// cases (see devicemanager_contract.go).
	DMCAdvertised = "DM-C-ADVERTISED"
	DMCNotShared  = "DM-C-NOT-SHARED"
	DMCEffective  = "DM-C-EFFECTIVE"
	DMCAdmits     = "DM-C-ADMITS"
)

// dmSlot is an invariant's slot in the machine's counts of a case's checks.
type dmSlot int

const (
	slotModel dmSlot = iota
	slotExclusive
	slotAllocatedCache
	slotAllocLECapacity
	slotAllocHealthy
	slotGraceDelete
	slotCheckpointTrip
	slotRestoreKeeps
	slotDeterministic
	slotErrorKinds
	slotRunOptions
	slotCAdvertised
	slotCNotShared
	slotCEffective
	slotCAdmits
	dmSlots
)

// dmSlotIDs names each slot's invariant, in the suite's order.
var dmSlotIDs = [dmSlots]string{
	slotModel:           DMModel,
	slotExclusive:       DMExclusive,
	slotAllocatedCache:  DMAllocatedCache,
	slotAllocLECapacity: DMAllocLECapacity,
	slotAllocHealthy:    DMAllocHealthy,
	slotGraceDelete:     DMGraceDelete,
	slotCheckpointTrip:  DMCheckpointTrip,
	slotRestoreKeeps:    DMRestoreKeeps,
	slotDeterministic:   DMDeterministic,
	slotErrorKinds:      DMErrorKinds,
	slotRunOptions:      DMRunOptions,
	slotCAdvertised:     DMCAdvertised,
	slotCNotShared:      DMCNotShared,
	slotCEffective:      DMCEffective,
	slotCAdmits:         DMCAdmits,
}

// dmCheckCount is how often a case evaluated an invariant, and how often it applied.
type dmCheckCount struct{ checked, applied int }

// Where the device manager invariants come from: the v1.36.3 device manager
// files (pkg/kubelet/cm/devicemanager) and the seed article that walks
// through it.
const (
	dmManager    = "pkg/kubelet/cm/devicemanager/manager.go"
	dmPodDevices = "pkg/kubelet/cm/devicemanager/pod_devices.go"
	dmEndpoint   = "pkg/kubelet/cm/devicemanager/endpoint.go"
	dmTypes      = "pkg/kubelet/cm/devicemanager/types.go"
	dmCheckpoint = "pkg/kubelet/cm/devicemanager/checkpoint/checkpoint.go"
	dmServer     = "pkg/kubelet/cm/devicemanager/plugin/v1beta1/server.go"
	dmAPI        = "pkg/kubelet/cm/devicemanager/plugin/v1beta1/api.go"

	dmSeedAllocate = "Calling the device plugin's Allocate interface"
	dmSeedCapacity = "Maintaining the capacity of device plugin resources in the node status"
	dmSeedPreStart = "Calling the device plugin's PreStartContainer interface"
)

func dmSeed(section string) cite.Source {
	return cite.Seed("the kubelet's device manager (its creation, plugin registration, Allocate and capacity)", section)
}

func init() {
	Register(Suite{
		Name:      "devicemanager",
		Subsystem: "devicemanager",
		Invariants: []verify.Property{
			{ID: DMModel, Subsystem: "devicemanager", Statement: "The core and the reference model agree on every allocation, every error kind and message, capacity, allocatable and the deleted resources.", Sources: []cite.Source{cite.Code(dmServer, "server.Register"), cite.Code(dmManager, "ManagerImpl.genericDeviceUpdateCallback"), cite.Code(dmManager, "ManagerImpl.GetCapacity"), cite.Code(dmManager, "ManagerImpl.Allocate"), cite.Code(dmManager, "ManagerImpl.devicesToAllocate"), cite.Code(dmManager, "ManagerImpl.UpdateAllocatedDevices")}, Kind: verify.Fidelity},
			{ID: DMExclusive, Subsystem: "devicemanager", Statement: "No device is held by two containers, except that a later container of the same pod may reuse a regular init container's device (never a sidecar's or an app container's).", Sources: []cite.Source{dmSeed(dmSeedAllocate), cite.Code(dmManager, "ManagerImpl.Allocate"), cite.Issue(56022), cite.PR(120461)}, Kind: verify.Fidelity},
			{ID: DMAllocatedCache, Subsystem: "devicemanager", Statement: "Between admissions the allocated-device cache is exactly the union of the devices containers hold.", Sources: []cite.Source{cite.Code(dmManager, "ManagerImpl.UpdateAllocatedDevices"), cite.Code(dmPodDevices, "podDevices.devices")}, Kind: verify.Fidelity},
			{ID: DMAllocLECapacity, Subsystem: "devicemanager", Statement: "For every resource, allocatable is at most capacity, and every allocatable resource has a capacity.", Sources: []cite.Source{dmSeed(dmSeedCapacity), cite.Code(dmManager, "ManagerImpl.GetCapacity")}, Kind: verify.Fidelity},
			{ID: DMAllocHealthy, Subsystem: "devicemanager", Statement: "Allocatable equals the healthy devices of the resource's last snapshot while its plugin is connected, and 0 once it disconnected or the kubelet restarted; the last snapshot is upstream's, whichever plugin instance sent it, a superseded one's included (what that breaks: DM-C-ADVERTISED).", Sources: []cite.Source{dmSeed(dmSeedCapacity), cite.Code(dmManager, "ManagerImpl.PluginDisconnected"), cite.Code(dmManager, "ManagerImpl.readCheckpoint"), cite.Issue(62773)}, Kind: verify.Fidelity},
			{ID: DMGraceDelete, Subsystem: "devicemanager", Statement: "A resource is deleted exactly when its plugin has been gone for strictly more than 5 minutes, or its state has no endpoint.", Sources: []cite.Source{cite.Code(dmManager, "ManagerImpl.GetCapacity"), cite.Code(dmEndpoint, "endpointImpl.stopGracePeriodExpired"), cite.Issue(133702), cite.PR(133724)}, Kind: verify.Fidelity},
			{ID: DMCheckpointTrip, Subsystem: "devicemanager", Statement: "Every checkpoint the manager writes decodes, with a valid checksum, to the same registered resources and every allocation.", Sources: []cite.Source{cite.Code(dmCheckpoint, "Data.MarshalCheckpoint"), cite.Code(dmCheckpoint, "Data.VerifyChecksum"), cite.Code(dmManager, "ManagerImpl.writeCheckpoint"), cite.Issue(102880)}, Kind: verify.Fidelity},
			{ID: DMRestoreKeeps, Subsystem: "devicemanager", Statement: "After a kubelet restart every restored allocation stays with its container until the pod is garbage-collected (in the model), so no restored device is handed out twice.", Sources: []cite.Source{cite.Code(dmManager, "ManagerImpl.readCheckpoint"), cite.Code(dmManager, "ManagerImpl.devicesToAllocate"), cite.Issue(109595), cite.Issue(118559)}, Kind: verify.Fidelity},
			{ID: DMDeterministic, Subsystem: "devicemanager", Statement: "A second manager fed the same inputs gives the same outputs and the same checkpoint bytes at every step.", Sources: []cite.Source{cite.DeterminismContract}, Kind: verify.Fidelity},
			{ID: DMErrorKinds, Subsystem: "devicemanager", Statement: "Every error the core returns is a documented kind, with upstream's message where the model states it.", Sources: []cite.Source{cite.Code(dmAPI, "errUnsupportedVersion, errInvalidResourceName"), cite.Code(dmTypes, "errEndpointStopped"), cite.Code(dmManager, "ManagerImpl.devicesToAllocate")}, Kind: verify.Fidelity},
			{ID: DMRunOptions, Subsystem: "devicemanager", Statement: "Every container holding devices gets run options merged from its plugins' Allocate answers, first resource in name order winning, also after a restart.", Sources: []cite.Source{cite.Code(dmManager, "ManagerImpl.GetDeviceRunContainerOptions"), cite.Code(dmPodDevices, "podDevices.deviceRunContainerOptions"), dmSeed(dmSeedPreStart)}, Kind: verify.Fidelity},
			dmContractAdvertised,
			dmContractNotShared,
			dmContractEffective,
			dmContractAdmits,
		},
		Property: func(t *rapid.T, tally *Tally) { newDMMachine(t, tally).run() },
	})
}

// The generated world is small on purpose: few resources and devices make
// collisions, reuse and exhaustion common.
var (
	dmResources = []string{"example.com/gpu", "vendor.io/nic"}
	dmDeviceIDs = []string{"d0", "d1", "d2", "d3", "d4"}
	dmEpoch     = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

// The machine's generators and draw labels, built once: rapid generators
// are immutable values, and building one per draw (with its label
// concatenated) cost a tenth of a step. The draws, and so the cases of a
// seed, are the same as with generators built in place.
var (
	dmBool            = rapid.Bool()
	dmResourceGen     = rapid.SampledFrom(dmResources)
	dmBadVersions     = rapid.SampledFrom([]string{"", "v1alpha", "v1beta2", "V1BETA1"})
	dmBadNames        = rapid.SampledFrom([]string{"gpu", "kubernetes.io/gpu", "foo.kubernetes.io/x", "Domain.com/x", "a/b/c", "a.com/", "requests.a.com/x", "/x", "a.com/-x", "a..com/x"})
	dmPresence        = rapid.IntRange(0, 3)
	dmHealths         = rapid.SampledFrom([]string{dm.Healthy, dm.Healthy, dm.Healthy, dm.Healthy, dm.Unhealthy, "healthy", ""})
	dmNUMAShape       = rapid.IntRange(0, 2)
	dmFault           = rapid.IntRange(0, 2)
	dmShortSeconds    = rapid.IntRange(1, 240)
	dmExtraSeconds    = rapid.IntRange(0, 2)
	dmWants           = rapid.IntRange(0, 2)
	dmCount           = rapid.IntRange(0, 3)
	dmInitContainers  = rapid.IntRange(0, 3)
	dmAppContainers   = rapid.IntRange(1, 2)
	dmPreferredOrder  = rapid.Permutation(append([]string{"zz"}, dmDeviceIDs...))
	dmPreferredFails  = rapid.IntRange(0, 9)
	dmAllocateOutcome = rapid.SampledFrom([]string{"ok", "ok", "ok", "rpcError", "emptyResponse"})

	// The containers' names, as many as dmInitContainers and
	// dmAppContainers draw.
	dmInitNames = []string{"init0", "init1", "init2"}
	dmAppNames  = []string{"app0", "app1"}

	dmDeviceLabels    = labels(dmDeviceIDs, "present ", "health ", "numa ")
	dmResourceLabels  = labels(dmResources, "wants ", "count ", "preferred ", "preferredFails ")
	dmPreferredLabels = labels(append([]string{"zz"}, dmDeviceIDs...), "prefer ")
)

// labels returns, for each name, the draw labels prefix+name, one per prefix.
func labels(names []string, prefixes ...string) map[string][]string {
	out := make(map[string][]string, len(names))
	for _, name := range names {
		for _, prefix := range prefixes {
			out[name] = append(out[name], prefix+name)
		}
	}
	return out
}

// dmPlugin is one plugin instance the machine plays.
type dmPlugin struct {
	resource string
	socket   string
	id       dm.EndpointID
	conn     int
	opts     dm.PluginOptions
	// streaming is true while its ListAndWatch stream is open.
	streaming bool
	// reported is true once the instance sent a snapshot the kubelet
	// took, and healthy and total count that snapshot's healthy devices
	// and all its devices: what DM-C-ADVERTISED expects the node to show
	// while this instance is the resource's registered plugin. A snapshot
	// the kubelet rejected (updateInvalid) clears it.
	reported       bool
	healthy, total int64
}

// dmResourceView is what the invariants expect of a resource, kept from the
// plugin's side of the API, independent of both core and model.
type dmResourceView struct {
	resource       string
	hasState       bool // upstream has a device entry (healthy or unhealthy) for it
	hasHealthy     bool // upstream has a healthy entry, which the checkpoint records
	hasEndpoint    bool
	current        *dmPlugin
	lastHealthy    int64
	zeroed         bool // disconnected or restarted since the last snapshot
	stopped        bool
	stoppedAt      time.Time
	everSnapshoted bool
}

// dmAnswer is the part of an Allocate answer DMRunOptions checks.
type dmAnswer struct{ visibleDevices, devicePath string }

type dmPod struct {
	p      *pod.Pod
	active bool
	// effective is, for DM-C-EFFECTIVE, the pod's effective request of
	// each device resource the node advertised when it was admitted, for
	// those it asked devices of; nil for a pod not admitted.
	effective map[string]int64
}

type dmMachine struct {
	t     *rapid.T
	tally *Tally
	// counts are the case's checks by invariant, handed to tally when the
	// case ends, passed or failed (see checked).
	counts [dmSlots]dmCheckCount
	now    time.Time
	step   int

	core  *dm.Manager
	twin  *dm.Manager // fed the same inputs, for DMDeterministic
	model *model.Model

	plugins []*dmPlugin
	// views has one view per resource a plugin reported: a list, as a
	// node has two resources and the checks walk them after every step.
	views   []*dmResourceView
	pods    []*dmPod
	nextPod int
	sockets int

	restored []dm.Holding
	// line is the current step's log line (see begin).
	line stepLine
	// trips are the last checkpoint contents whose round trip was checked,
	// with what their bytes decoded to, the latest first: most steps leave
	// the content unchanged or bring back a recent one (a pod admitted and
	// collected, a plugin's snapshot sent again), and the same content
	// makes the same trip (see checkCheckpoint).
	trips []dmTrip
	// capacityView is the core's capacity as the check of the step last
	// read it, its maps reused from step to step.
	capacityView dm.Capacity
	// admitView is the core's capacity as a pod arrives, its maps reused.
	admitView dm.Capacity
	// ready is true once the kubelet has seen all its pod sources, since
	// it last started (the sourcesReady action).
	ready bool
	// idScratch, unionScratch and pathScratch are reused by the checks to
	// gather devices and device paths, so that a step's checks allocate less.
	idScratch, unionScratch, pathScratch []string
	// answered records what each committed Allocate answer set, by pod,
	// container and resource.
	answered map[[3]string]dmAnswer
	// errs collects the core errors of the current step for DMErrorKinds.
	errs []dmSeenError
}

// dmTrip is a checkpoint content whose round trip the checks made, and
// what its bytes decoded to.
type dmTrip struct{ data, decoded checkpoint.Data }

// dmTripHistory is how many round trips the machine keeps. Over seeds
// 1..381 (20 cases each) one trip kept makes 7,904 trips, eight 6,655
// (-16 %), sixteen 6,496 and 64 6,366; every trip kept costs a
// checkpoint.Equal on each content change.
const dmTripHistory = 8

type dmSeenError struct {
	err         error
	wantKind    string
	wantMessage string
}

func newDMMachine(t *rapid.T, tally *Tally) *dmMachine {
	return &dmMachine{
		t: t, tally: tally, now: dmEpoch,
		core: dm.New(dm.DefaultLimits()), twin: dm.New(dm.DefaultLimits()), model: model.New(),
		answered: map[[3]string]dmAnswer{},
	}
}

func (m *dmMachine) run() {
	actions := map[string]func(*rapid.T){
		"register":         m.register,
		"registerInvalid":  m.registerInvalid,
		"update":           m.update,
		"updateInvalid":    m.updateInvalid,
		"disconnect":       m.disconnect,
		"advanceShort":     m.advanceShort,
		"advancePastGrace": m.advancePastGrace,
		"capacity":         m.capacity,
		"admitPod":         m.admitPod,
		"schedulePod":      m.schedulePod,
		"readmitPod":       m.readmitPod,
		"terminatePod":     m.terminatePod,
		"collectGarbage":   m.collectGarbage,
		"sourcesReady":     m.sourcesReady,
		"restartKubelet":   m.restartKubelet,
		"startContainer":   m.startContainer,
		"":                 m.check,
	}
	defer m.countChecks()
	m.t.Repeat(actions)
}

// checked records one evaluation of an invariant, and whether it applied,
// as Tally.Check does: every call site says in a comment what applying
// means for its invariant.
func (m *dmMachine) checked(slot dmSlot, applied bool) {
	m.counts[slot].checked++
	if applied {
		m.counts[slot].applied++
	}
}

// countChecks hands the case's counts to the tally; it runs when the case
// ends, also when a check fails (a failure unwinds the case).
func (m *dmMachine) countChecks() {
	for slot, c := range m.counts {
		m.tally.CheckCounts(dmSlotIDs[slot], c.checked, c.applied)
	}
}

func (m *dmMachine) begin(action, format string, args ...any) {
	m.step++
	m.tally.Action(action)
	m.line = stepLine{m.step, action, format, args}
	m.t.Logf("%v", &m.line)
}

// stepLine is a step's log line, "step N: action details", formatted only
// when printed: rapid prints a step's line only when it shows the case (a
// failure's replay), and most steps are never shown. One value carries the
// whole line, the machine's (Logf formats at once when it prints), so a
// step hands Logf a pointer instead of boxing three arguments.
type stepLine struct {
	step   int
	action string
	format string
	args   []any
}

func (l stepLine) String() string {
	if l.format == "" {
		return fmt.Sprintf("step %d: %s", l.step, l.action)
	}
	return fmt.Sprintf("step %d: %s ", l.step, l.action) + fmt.Sprintf(l.format, l.args...)
}

func (m *dmMachine) fail(id, format string, args ...any) {
	m.t.Fatalf("%s: "+format, append([]any{id}, args...)...)
}

// both runs an operation on the core and on the twin and requires the same
// observable result.
func (m *dmMachine) both(op func(*dm.Manager) string) string {
	got := op(m.core)
	again := op(m.twin)
	if got != again {
		m.fail(DMDeterministic, "the same input gave two outputs:\n  first:  %s\n  second: %s", got, again)
	}
	return got
}

// bothSame is both for results that are compared as values rather than
// as printed text: printing them (maps, plans) cost more than the
// operation. show prints a result for the failure message.
func bothSame[T any](m *dmMachine, op func(*dm.Manager) T, same func(a, b T) bool, show func(T) string) T {
	got := op(m.core)
	again := op(m.twin)
	if !same(got, again) {
		m.fail(DMDeterministic, "the same input gave two outputs:\n  first:  %s\n  second: %s", show(got), show(again))
	}
	return got
}

// sameError is both's comparison of two errors as printed: both nil, or
// both with the same text.
func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
}

func showError(err error) string { return fmt.Sprint(err) }

func sameCapacity(a, b dm.Capacity) bool {
	return equalCounts(a.Capacity, b.Capacity) && equalCounts(a.Allocatable, b.Allocatable) && equalStrings(a.Deleted, b.Deleted)
}

func showCapacity(c dm.Capacity) string { return fmt.Sprint(c) }

// plannedOutput is what both used to compare of PlanContainer's answer:
// the requests' resources and devices, and the error's text.
type plannedOutput struct {
	plan *dm.Plan
	err  error
}

func samePlannedOutput(a, b plannedOutput) bool {
	if (a.plan == nil) != (b.plan == nil) || (a.err == nil) != (b.err == nil) {
		return false
	}
	if a.err != nil && a.err.Error() != b.err.Error() {
		return false
	}
	if a.plan == nil {
		return true
	}
	if len(a.plan.Requests) != len(b.plan.Requests) {
		return false
	}
	for i, r := range a.plan.Requests {
		if r.Resource != b.plan.Requests[i].Resource || !equalStrings(r.DeviceIDs, b.plan.Requests[i].DeviceIDs) {
			return false
		}
	}
	return true
}

func showPlannedOutput(o plannedOutput) string { return describePlan(o.plan) + fmt.Sprint(o.err) }

// view returns resource r's view, made when it has none.
func (m *dmMachine) view(r string) *dmResourceView {
	if v := m.findView(r); v != nil {
		return v
	}
	v := &dmResourceView{resource: r}
	m.views = append(m.views, v)
	return v
}

// findView returns resource r's view, nil when it has none.
func (m *dmMachine) findView(r string) *dmResourceView {
	for _, v := range m.views {
		if v.resource == r {
			return v
		}
	}
	return nil
}

// --- actions --------------------------------------------------------------

func (m *dmMachine) register(t *rapid.T) {
	r := dmResourceGen.Draw(t, "resource")
	opts := dm.PluginOptions{
		PreStartRequired:                dmBool.Draw(t, "preStart"),
		GetPreferredAllocationAvailable: dmBool.Draw(t, "preferred"),
	}
	m.sockets++
	socket := fmt.Sprintf("plugin-%d.sock", m.sockets)
	m.begin("register", "resource=%s endpoint=%s preferred=%t prestart=%t", r, socket, opts.GetPreferredAllocationAvailable, opts.PreStartRequired)
	req := dm.RegisterRequest{Version: dm.Version, Endpoint: socket, ResourceName: r, Options: &opts}
	if err := dm.ValidateRegistration(req); err != nil {
		m.fail(DMErrorKinds, "valid registration %+v rejected: %v", req, err)
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
	p := &dmPlugin{resource: r, socket: socket, id: id, conn: conn, opts: opts, streaming: true}
	m.plugins = append(m.plugins, p)
	v := m.view(r)
	v.current, v.hasEndpoint, v.stopped = p, true, false
	// Real plugins send their first snapshot as soon as ListAndWatch opens.
	if dmBool.Draw(t, "initialSnapshot") {
		m.sendSnapshot(t, p)
	}
}

func (m *dmMachine) registerInvalid(t *rapid.T) {
	badVersion := dmBool.Draw(t, "badVersion")
	req := dm.RegisterRequest{Version: dm.Version, Endpoint: "bad.sock", ResourceName: dmResourceGen.Draw(t, "resource")}
	want := model.Failure{}
	if badVersion {
		req.Version = dmBadVersions.Draw(t, "version")
		want = model.Failure{Kind: "UnsupportedVersion", Message: fmt.Sprintf(`requested API version %q is not supported by kubelet. Supported version is ["v1beta1"]`, req.Version)}
	} else {
		req.ResourceName = dmBadNames.Draw(t, "name")
		want = model.Failure{Kind: "InvalidResourceName", Message: fmt.Sprintf("the ResourceName %q is invalid", req.ResourceName)}
	}
	m.begin("registerInvalid", "version=%q resource=%q", req.Version, req.ResourceName)
	err := dm.ValidateRegistration(req)
	if err == nil {
		m.fail(DMErrorKinds, "invalid registration %+v accepted", req)
	}
	m.errs = append(m.errs, dmSeenError{err, want.Kind, want.Message})
}

// streamingPlugin draws a plugin whose stream is open. When none is, it
// registers one first: skipping the action instead would make rapid end
// the case early (it stops a case whose actions are mostly rejected).
func (m *dmMachine) streamingPlugin(t *rapid.T) *dmPlugin {
	var live []*dmPlugin
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
func (m *dmMachine) activePod(t *rapid.T) *dmPod {
	var active []*dmPod
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

// drawDevices draws a plugin's device list. Devices are mostly present
// and healthy: with fewer, most admissions fail for want of devices and two
// containers rarely hold devices of one resource, which DM-EXCLUSIVE and
// the reuse rules need; the misspelt and empty health values stay in the mix.
func (m *dmMachine) drawDevices(t *rapid.T) []dm.Device {
	var devices []dm.Device
	for _, id := range dmDeviceIDs {
		label := dmDeviceLabels[id]
		if dmPresence.Draw(t, label[0]) == 0 {
			continue
		}
		health := dmHealths.Draw(t, label[1])
		var numa []int64
		switch dmNUMAShape.Draw(t, label[2]) {
		case 1:
			numa = []int64{0}
		case 2:
			numa = []int64{0, 1}
		}
		devices = append(devices, dm.Device{ID: id, Health: health, NUMANodes: numa})
	}
	return devices
}

// deviceList and podSpec print lazily: rapid formats a log line only when
// it shows it (a failure's replay), and most steps are never shown.
type deviceList []dm.Device

func (devices deviceList) String() string {
	parts := make([]string, len(devices))
	for i, d := range devices {
		parts[i] = fmt.Sprintf("%s:%s", d.ID, d.Health)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func (m *dmMachine) update(t *rapid.T) {
	m.sendSnapshot(t, m.streamingPlugin(t))
}

func (m *dmMachine) sendSnapshot(t *rapid.T, p *dmPlugin) {
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

func (m *dmMachine) updateInvalid(t *rapid.T) {
	p := m.streamingPlugin(t)
	devices := m.drawDevices(t)
	switch dmFault.Draw(t, "fault") {
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
		m.fail(DMErrorKinds, "malformed device list %s accepted", deviceList(devices))
	}
	// The plugin's last word is a list the kubelet refused: what the node
	// should show is undefined until it sends a valid one.
	p.reported = false
	m.errs = append(m.errs, dmSeenError{err, "InvalidDeviceList", ""})
}

func (m *dmMachine) disconnect(t *rapid.T) {
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

func (m *dmMachine) advanceShort(t *rapid.T) {
	d := time.Duration(dmShortSeconds.Draw(t, "seconds")) * time.Second
	m.begin("advanceShort", "by=%s", d)
	m.now = m.now.Add(d)
}

// advancePastGrace lands on the boundary (exactly 5 minutes after the
// earliest stop, which must not delete yet) or just past it.
func (m *dmMachine) advancePastGrace(t *rapid.T) {
	d := dm.EndpointStopGracePeriod + time.Duration(dmExtraSeconds.Draw(t, "extraSeconds"))*time.Second
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

func (m *dmMachine) capacity(t *rapid.T) {
	m.begin("capacity", "")
	expected := m.expectedDeletions()
	c := bothSame(m, func(mgr *dm.Manager) dm.Capacity { return mgr.GetCapacity(m.now) }, sameCapacity, showCapacity)
	counts, md := m.model.Capacity(m.now)
	if !sameAsCounts(c, counts) || !equalStrings(c.Deleted, md) {
		m.fail(DMModel, "GetCapacity: core capacity=%v allocatable=%v deleted=%v, model %+v deleted=%v", c.Capacity, c.Allocatable, c.Deleted, counts, md)
	}
	m.checked(slotGraceDelete, m.graceRuleApplies(c.Deleted))
	if !equalStrings(c.Deleted, expected) {
		m.fail(DMGraceDelete, "GetCapacity deleted %v, expected %v", c.Deleted, expected)
	}
	m.views = slices.DeleteFunc(m.views, func(v *dmResourceView) bool { return slices.Contains(c.Deleted, v.resource) })
}

// graceRuleApplies says whether DM-GRACE-DELETE has a resource to judge:
// one the manager deletes, or one whose plugin has stopped or that has
// state without an endpoint. A resource with a live plugin is never
// deleted, so a node of only those says nothing about the rule.
func (m *dmMachine) graceRuleApplies(deleted []string) bool {
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
func (m *dmMachine) expectedDeletions() []string {
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

func (m *dmMachine) drawPod(t *rapid.T) *pod.Pod {
	m.nextPod++
	p := &pod.Pod{UID: fmt.Sprintf("pod-%d", m.nextPod), Name: fmt.Sprintf("p%d", m.nextPod), Namespace: "default", Phase: pod.Pending}
	drawContainer := func(name string) pod.Container {
		c := pod.Container{Name: name, Limits: pod.ResourceList{}}
		for _, r := range dmResources {
			label := dmResourceLabels[r]
			if dmWants.Draw(t, label[0]) > 0 {
				c.Limits[pod.ResourceName(r)] = int64(dmCount.Draw(t, label[1]))
			}
		}
		if dmBool.Draw(t, "cpu") {
			c.Limits[pod.CPU] = 100
		}
		c.Requests = c.Limits.Clone()
		return c
	}
	for i := range dmInitContainers.Draw(t, "initContainers") {
		c := drawContainer(dmInitNames[i])
		if dmBool.Draw(t, "sidecar") {
			c.RestartPolicy = pod.RestartAlways
		}
		p.InitContainers = append(p.InitContainers, c)
	}
	for i := range dmAppContainers.Draw(t, "appContainers") {
		p.Containers = append(p.Containers, drawContainer(dmAppNames[i]))
	}
	return p
}

type podSpec struct{ p *pod.Pod }

func (s podSpec) String() string {
	p := s.p
	var parts []string
	for _, c := range p.InitContainers {
		kind := "init"
		if c.IsSidecar() {
			kind = "sidecar"
		}
		parts = append(parts, fmt.Sprintf("%s(%s)%s", c.Name, kind, c.Limits))
	}
	for _, c := range p.Containers {
		parts = append(parts, fmt.Sprintf("%s%s", c.Name, c.Limits))
	}
	return p.UID + " " + strings.Join(parts, " ")
}

func (m *dmMachine) activeUIDs() []string {
	var uids []string
	for _, p := range m.pods {
		if p.active {
			uids = append(uids, p.p.UID)
		}
	}
	return uids
}

func (m *dmMachine) admitPod(t *rapid.T) {
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
func (m *dmMachine) schedulePod(t *rapid.T) {
	p := m.drawPod(t)
	m.core.CapacityViewInto(&m.admitView, m.now)
	for _, r := range dmResources {
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
func (m *dmMachine) admit(t *rapid.T, p *pod.Pod) {
	entry := &dmPod{p: p, active: true} // the kubelet lists a pod as active while admitting it
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
func (m *dmMachine) readmitPod(t *rapid.T) {
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
func (m *dmMachine) allocatePod(t *rapid.T, entry *dmPod) bool {
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
				order := dmPreferredOrder.Draw(t, dmResourceLabels[r][2])
				ids := make([]string, 0, len(order))
				for _, id := range order {
					if dmBool.Draw(t, dmPreferredLabels[id][0]) {
						ids = append(ids, id)
					}
				}
				pref := dm.Preference{DeviceIDs: ids}
				if dmPreferredFails.Draw(t, dmResourceLabels[r][3]) == 0 {
					pref.Err = errPluginRestarting
					limit.PreferredErr = true
				}
				if in.Preferred == nil {
					in.Preferred = make(map[string]dm.Preference, len(dmResources))
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

func (p planText) String() string { return describePlan(p.plan) }

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

func (m *dmMachine) allocateContainer(t *rapid.T, in dm.PlanInput, mc model.Container) bool {
	planned := bothSame(m, func(mgr *dm.Manager) plannedOutput {
		pl, e := mgr.PlanContainer(in)
		return plannedOutput{pl, e}
	}, samePlannedOutput, showPlannedOutput)
	plan, err := planned.plan, planned.err
	mplan, mfail := m.model.Plan(in.Pod.UID, mc, in.ActivePods)
	if err != nil || mfail != nil {
		if err == nil || mfail == nil {
			m.fail(DMModel, "plan %s/%s: core plan=%s err=%v, model failure=%+v", in.Pod.UID, in.Container, describePlan(plan), err, mfail)
		}
		m.errs = append(m.errs, dmSeenError{err, mfail.Kind, mfail.Message})
		m.t.Logf("  %s: rejected: %v", in.Container, err)
		return false
	}
	if len(plan.Requests) != len(mplan.Requests) {
		m.fail(DMModel, "plan %s/%s: core %s, model %+v", in.Pod.UID, in.Container, describePlan(plan), mplan.Requests)
	}
	for i, req := range plan.Requests {
		if req.Resource != mplan.Requests[i].Resource || !equalStrings(req.DeviceIDs, mplan.Requests[i].Devices) {
			m.fail(DMModel, "plan %s/%s: core %s, model %+v", in.Pod.UID, in.Container, describePlan(plan), mplan.Requests)
		}
	}
	outcome := "ok"
	if len(plan.Requests) > 0 {
		outcome = dmAllocateOutcome.Draw(t, "allocateOutcome")
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
		m.errs = append(m.errs, dmSeenError{abortErr, "AllocateFailed", cause.Error()})
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
		m.errs = append(m.errs, dmSeenError{commitErr, "NoContainerResponses", "no containers return in allocation response "})
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
		m.answered[[3]string{plan.PodUID, plan.Container, req.Resource}] = dmAnswer{answers[i][0].Envs["VISIBLE_DEVICES"], answers[i][0].Devices[0].ContainerPath}
	}
	return true
}

// startContainer is the kubelet about to start a container: it asks which
// PreStartContainer RPCs the plugins want and whether the container must be
// allocated again (spec §1.9).
func (m *dmMachine) startContainer(t *rapid.T) {
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
		m.fail(DMModel, "PreStartCalls %s/%s: core err=%v, model failure=%+v", p.UID, c.Name, err, failure)
	}
	if err != nil {
		m.errs = append(m.errs, dmSeenError{err, failure.Kind, failure.Message})
		return
	}
	same := len(calls) == len(want) && reallocate == wantReallocate
	for k := 0; same && k < len(calls); k++ {
		same = calls[k].Resource == want[k].Resource && equalStrings(calls[k].DeviceIDs, want[k].Devices)
	}
	if !same {
		m.fail(DMModel, "PreStartCalls %s/%s: core %+v reallocate=%t, model %+v reallocate=%t", p.UID, c.Name, calls, reallocate, want, wantReallocate)
	}
}

func (m *dmMachine) terminatePod(t *rapid.T) {
	entry := m.activePod(t)
	if entry == nil {
		return
	}
	m.begin("terminatePod", "%s", entry.p.UID)
	entry.active = false
	entry.p.Phase = pod.Succeeded
}

func (m *dmMachine) collectGarbage(t *rapid.T) {
	active := m.activeUIDs()
	m.begin("collectGarbage", "active=%v", active)
	m.both(func(mgr *dm.Manager) string { mgr.UpdateAllocatedDevices(active); return "" })
	m.model.GC(active)
}

func (m *dmMachine) sourcesReady(t *rapid.T) {
	m.begin("sourcesReady", "")
	m.ready = true
	m.both(func(mgr *dm.Manager) string { mgr.SetSourcesReady(); return "" })
	m.model.SourcesReady()
}

// restartKubelet writes the checkpoint, starts a new manager from it, and
// ends every plugin's stream: plugins must register again.
func (m *dmMachine) restartKubelet(t *rapid.T) {
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
	m.views = slices.DeleteFunc(m.views, func(v *dmResourceView) bool { return !v.hasHealthy })
	for _, v := range m.views {
		*v = dmResourceView{resource: v.resource, hasState: true, hasHealthy: true, hasEndpoint: true, zeroed: true, stopped: true, stoppedAt: m.now}
	}
	m.restored = before
	// Here DM-RESTORE-KEEPS applies when the restart had allocations to restore.
	m.checked(slotRestoreKeeps, len(before) > 0)
	if after := m.core.Holdings(); !equalHoldings(before, after) {
		m.fail(DMRestoreKeeps, "holdings before restart %v, after restore %v", before, after)
	}
}

// writeAndRead is the kubelet writing a manager's checkpoint and reading
// it back at start. Content checkpoint.Equal to a content whose round trip
// the checks made is written as the same bytes and read back as the same
// data (see checkCheckpoint), so that trip's decoded data is what the
// kubelet reads; the check after the step before a restart has almost
// always made it.
func (m *dmMachine) writeAndRead(data checkpoint.Data) checkpoint.Data {
	if decoded, ok := m.trippedAs(data); ok {
		return decoded
	}
	file, err := checkpoint.Encode(data)
	if err != nil {
		m.fail(DMCheckpointTrip, "encode: %v", err)
	}
	decoded, err := checkpoint.Decode(file)
	if err != nil {
		m.fail(DMCheckpointTrip, "decode of a checkpoint the manager wrote: %v", err)
	}
	return decoded
}

func (m *dmMachine) restart(decoded checkpoint.Data, running []dm.ContainerRef) *dm.Manager {
	fresh := dm.New(dm.DefaultLimits())
	report, err := fresh.Restore(decoded, m.now, running)
	if err != nil || len(report.Skipped) > 0 {
		m.fail(DMCheckpointTrip, "restore: err=%v skipped=%v", err, report.Skipped)
	}
	return fresh
}
