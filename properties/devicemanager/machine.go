package devicemanager

import (
	"fmt"
	"strings"
	"time"

	"pgregory.net/rapid"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	"github.com/nodeproof/nodeproof/core/pod"
	model "github.com/nodeproof/nodeproof/models/devicemanager"
	"github.com/nodeproof/nodeproof/properties"
)

// slot is an invariant's slot in the machine's counts of a case's checks.
type slot int

const (
	slotModel slot = iota
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
	slots
)

// slotIDs names each slot's invariant, in the suite's order.
var slotIDs = [slots]string{
	slotModel:           Model,
	slotExclusive:       Exclusive,
	slotAllocatedCache:  AllocatedCache,
	slotAllocLECapacity: AllocLECapacity,
	slotAllocHealthy:    AllocHealthy,
	slotGraceDelete:     GraceDelete,
	slotCheckpointTrip:  CheckpointTrip,
	slotRestoreKeeps:    RestoreKeeps,
	slotDeterministic:   Deterministic,
	slotErrorKinds:      ErrorKinds,
	slotRunOptions:      RunOptions,
	slotCAdvertised:     ContractAdvertised,
	slotCNotShared:      ContractNotShared,
	slotCEffective:      ContractEffective,
	slotCAdmits:         ContractAdmits,
}

// checkCount is how often a case evaluated an invariant, and how often it applied.
type checkCount struct{ checked, applied int }

// init registers the suite, so that importing the package is enough.
func init() {
	properties.Register(properties.Suite{
		Name:       "devicemanager",
		Subsystem:  "devicemanager",
		Invariants: invariants,
		Property:   func(t *rapid.T, tally *properties.Tally) { newMachine(t, tally).run() },
	})
}

// plugin is one plugin instance the machine plays.
type plugin struct {
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

// resourceView is what the invariants expect of a resource, kept from the
// plugin's side of the API, independent of both core and model.
type resourceView struct {
	resource       string
	hasState       bool // upstream has a device entry (healthy or unhealthy) for it
	hasHealthy     bool // upstream has a healthy entry, which the checkpoint records
	hasEndpoint    bool
	current        *plugin
	lastHealthy    int64
	zeroed         bool // disconnected or restarted since the last snapshot
	stopped        bool
	stoppedAt      time.Time
	everSnapshoted bool
}

// answer is the part of an Allocate answer RunOptions checks.
type answer struct{ visibleDevices, devicePath string }

type podEntry struct {
	p      *pod.Pod
	active bool
	// effective is, for DM-C-EFFECTIVE, the pod's effective request of
	// each device resource the node advertised when it was admitted, for
	// those it asked devices of; nil for a pod not admitted.
	effective map[string]int64
}

type machine struct {
	t     *rapid.T
	tally *properties.Tally
	// counts are the case's checks by invariant, handed to tally when the
	// case ends, passed or failed (see checked).
	counts [slots]checkCount
	now    time.Time
	step   int

	core  *dm.Manager
	twin  *dm.Manager // fed the same inputs, for Deterministic
	model *model.Model

	plugins []*plugin
	// views has one view per resource a plugin reported: a list, as a
	// node has two resources and the checks walk them after every step.
	views   []*resourceView
	pods    []*podEntry
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
	trips []trip
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
	answered map[[3]string]answer
	// errs collects the core errors of the current step for ErrorKinds.
	errs []seenError
}

// trip is a checkpoint content whose round trip the checks made, and
// what its bytes decoded to.
type trip struct{ data, decoded checkpoint.Data }

// tripHistory is how many round trips the machine keeps. Over seeds
// 1..381 (20 cases each) one trip kept makes 7,904 trips, eight 6,655
// (-16 %), sixteen 6,496 and 64 6,366; every trip kept costs a
// checkpoint.Equal on each content change.
const tripHistory = 8

type seenError struct {
	err         error
	wantKind    string
	wantMessage string
}

func newMachine(t *rapid.T, tally *properties.Tally) *machine {
	return &machine{
		t: t, tally: tally, now: epoch,
		core: dm.New(dm.DefaultLimits()), twin: dm.New(dm.DefaultLimits()), model: model.New(),
		answered: map[[3]string]answer{},
	}
}

func (m *machine) run() {
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
func (m *machine) checked(slot slot, applied bool) {
	m.counts[slot].checked++
	if applied {
		m.counts[slot].applied++
	}
}

// countChecks hands the case's counts to the tally; it runs when the case
// ends, also when a check fails (a failure unwinds the case).
func (m *machine) countChecks() {
	for slot, c := range m.counts {
		m.tally.CheckCounts(slotIDs[slot], c.checked, c.applied)
	}
}

func (m *machine) begin(action, format string, args ...any) {
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

// both runs an operation on the core and on the twin and requires the same
// observable result.
func (m *machine) both(op func(*dm.Manager) string) string {
	got := op(m.core)
	again := op(m.twin)
	if got != again {
		properties.Fail(m.t, Deterministic, "the same input gave two outputs:\n  first:  %s\n  second: %s", got, again)
	}
	return got
}

// bothSame is both for results that are compared as values rather than
// as printed text: printing them (maps, plans) cost more than the
// operation. show prints a result for the failure message.
func bothSame[T any](m *machine, op func(*dm.Manager) T, same func(a, b T) bool, show func(T) string) T {
	got := op(m.core)
	again := op(m.twin)
	if !same(got, again) {
		properties.Fail(m.t, Deterministic, "the same input gave two outputs:\n  first:  %s\n  second: %s", show(got), show(again))
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
func (m *machine) view(r string) *resourceView {
	if v := m.findView(r); v != nil {
		return v
	}
	v := &resourceView{resource: r}
	m.views = append(m.views, v)
	return v
}

// findView returns resource r's view, nil when it has none.
func (m *machine) findView(r string) *resourceView {
	for _, v := range m.views {
		if v.resource == r {
			return v
		}
	}
	return nil
}

func (devices deviceList) String() string {
	parts := make([]string, len(devices))
	for i, d := range devices {
		parts[i] = fmt.Sprintf("%s:%s", d.ID, d.Health)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

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

func (p planText) String() string { return describePlan(p.plan) }
