package devicemanager

import (
	"slices"
	"sort"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	model "github.com/nodeproof/nodeproof/models/devicemanager"
	"github.com/nodeproof/nodeproof/properties"
	"pgregory.net/rapid"
)

// The device manager suite's invariants, evaluated after every step.

// check runs after every step. The specific invariants come before the
// broad comparison with the model, so a failure is attributed to the
// sharpest statement it breaks.
//
// The views of the state that several checks read (the holdings and
// capacity of the core and of the model) are taken once per step: they
// are read-only, so every check sees what it saw when it took its own.
func (m *machine) check(t *rapid.T) {
	holdings := m.core.Holdings()
	modelHoldings := m.model.Holdings()
	m.core.CapacityViewInto(&m.capacityView, m.now)
	capacity := m.capacityView
	m.checkErrors()
	m.checkHoldings(holdings, modelHoldings)
	m.checkRunOptions(holdings)
	m.checkCapacity(capacity)
	m.checkCheckpoint(holdings)
	m.checkModel(holdings, modelHoldings, capacity)
	// The contract properties come last: a step that breaks fidelity is
	// attributed to the fidelity invariant it breaks.
	m.checkAdvertised(capacity)
	m.checkNotShared(holdings)
	m.checkEffective(holdings)
}

var kindNames = func() map[string]bool {
	names := map[string]bool{}
	for _, k := range dm.Kinds() {
		names[k.String()] = true
	}
	return names
}()

func (m *machine) checkErrors() {
	// DM-ERROR-KINDS applies when the step returned errors to classify.
	m.checked(slotErrorKinds, len(m.errs) > 0)
	for _, seen := range m.errs {
		kind, ok := dm.KindOf(seen.err)
		if !ok || !kindNames[kind.String()] {
			properties.Fail(m.t, ErrorKinds, "error %q (%T) is not a documented kind", seen.err, seen.err)
		}
		if seen.wantKind != "" && kind.String() != seen.wantKind {
			properties.Fail(m.t, Model, "error %q has kind %s, the model expects %s", seen.err, kind, seen.wantKind)
		}
		if seen.wantMessage != "" && seen.err.Error() != seen.wantMessage {
			properties.Fail(m.t, ErrorKinds, "error message\n  got:  %s\n  want: %s", seen.err, seen.wantMessage)
		}
	}
	m.errs = m.errs[:0]
}

func (m *machine) checkModel(core []dm.Holding, mod []model.Holding, c dm.Capacity) {
	counts, md := m.model.CapacityView(m.now)
	// DM-MODEL applies when either side holds an allocation or knows a
	// resource: two empty managers agree without saying anything.
	m.checked(slotModel, len(core)+len(mod)+len(c.Capacity)+len(counts)+len(c.Deleted)+len(md) > 0)
	if len(core) != len(mod) {
		properties.Fail(m.t, Model, "core holds %v, model holds %+v", core, mod)
	}
	for i, h := range core {
		o := mod[i]
		if h.PodUID != o.Pod || h.Container != o.Container || h.Resource != o.Resource || !equalStrings(h.DeviceIDs, o.Devices) {
			properties.Fail(m.t, Model, "core holds %v, model holds %+v", core, mod)
		}
	}
	if !sameAsCounts(c, counts) || !equalStrings(c.Deleted, md) {
		properties.Fail(m.t, Model, "capacity: core %v / %v deleting %v, model %+v deleting %v", c.Capacity, c.Allocatable, c.Deleted, counts, md)
	}
}

func (m *machine) checkHoldings(holdings []dm.Holding, modelHoldings []model.Holding) {
	// DM-EXCLUSIVE applies when two containers hold devices of the same
	// resource: only then could one device be held twice. Holdings are one
	// per container and resource, so that is two holdings of one resource,
	// and each such pair is compared device by device (the lists are
	// sorted); a node holds few, so pairs cost less than an index.
	compared := false
	for i, a := range holdings {
		for _, b := range holdings[i+1:] {
			if a.Resource != b.Resource {
				continue
			}
			compared = true
			if id, shared := firstShared(a.DeviceIDs, b.DeviceIDs); shared && !mayShare(m.place(a.PodUID, a.Container), m.place(b.PodUID, b.Container)) {
				properties.Fail(m.t, Exclusive, "device %s of %s held by %s/%s and %s/%s", id, a.Resource, a.PodUID, a.Container, b.PodUID, b.Container)
			}
		}
	}
	m.checked(slotExclusive, compared)

	// The union of each resource's holdings, sorted and without repeats,
	// against the allocated cache (sorted sets).
	allocated := m.core.Allocated()
	// DM-ALLOCATED-CACHE applies when a container holds devices or the
	// cache lists a resource.
	m.checked(slotAllocatedCache, len(holdings) > 0 || len(allocated) > 0)
	for r, ids := range allocated {
		if union := m.unionOf(holdings, r); !equalStrings(ids, union) {
			properties.Fail(m.t, AllocatedCache, "allocated cache of %s is %v, containers hold %v", r, ids, union)
		}
	}
	for _, h := range holdings {
		if len(h.DeviceIDs) > 0 && len(allocated[h.Resource]) == 0 {
			properties.Fail(m.t, AllocatedCache, "containers hold %v of %s but the allocated cache has none", m.unionOf(holdings, h.Resource), h.Resource)
		}
	}

	// DM-RESTORE-KEEPS applies while a restored allocation belongs to a pod
	// the model has not garbage-collected: the core must still hold it.
	m.checked(slotRestoreKeeps, len(restoredOfKeptPods(m.restored, modelHoldings)) > 0)
	for _, r := range lostRestored(m.restored, holdings, modelHoldings) {
		properties.Fail(m.t, RestoreKeeps, "restored allocation %v changed or vanished, but its pod was not garbage-collected", r)
	}
}

// firstShared returns the first device two sorted ID lists have in common.
func firstShared(a, b []string) (string, bool) {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			return a[i], true
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return "", false
}

// unionOf returns the devices of resource r that containers hold, sorted
// and without repeats, in a scratch slice valid until the next call.
func (m *machine) unionOf(holdings []dm.Holding, r string) []string {
	ids := m.unionScratch[:0]
	for _, h := range holdings {
		if h.Resource == r {
			ids = append(ids, h.DeviceIDs...)
		}
	}
	m.unionScratch = dedupSorted(ids)
	return m.unionScratch
}

// lostRestored returns the restored allocations the core no longer holds as
// they were, of pods the model has not garbage-collected. Whether a pod was
// collected is the model's to say (a pod it still holds devices for was
// not; collection happens inside admissions too), never the core's own
// holdings: a core that dropped an active pod's allocations must not pass.
func lostRestored(restored, core []dm.Holding, modelHoldings []model.Holding) []dm.Holding {
	var lost []dm.Holding
	for _, r := range restoredOfKeptPods(restored, modelHoldings) {
		found := false
		for _, h := range core {
			if h.PodUID == r.PodUID && h.Container == r.Container && h.Resource == r.Resource {
				found = equalStrings(h.DeviceIDs, r.DeviceIDs)
			}
		}
		if !found {
			lost = append(lost, r)
		}
	}
	return lost
}

// restoredOfKeptPods returns the restored allocations of pods the model
// still holds devices for: the ones DM-RESTORE-KEEPS compares.
func restoredOfKeptPods(restored []dm.Holding, modelHoldings []model.Holding) []dm.Holding {
	if len(restored) == 0 {
		return nil
	}
	var out []dm.Holding
	for _, r := range restored {
		// A node holds few allocations: a scan costs less than an index.
		for _, h := range modelHoldings {
			if h.Pod == r.PodUID {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// checkRunOptions relies on the machine's Allocate answers: each resource's
// answer sets VISIBLE_DEVICES to its devices and exposes /dev/<first device>,
// so the merge must keep the first resource's variable and one device node
// per distinct path.
func (m *machine) checkRunOptions(holdings []dm.Holding) {
	// DM-RUN-OPTIONS applies when some container holds devices.
	m.checked(slotRunOptions, len(holdings) > 0)
	for i := 0; i < len(holdings); {
		first := holdings[i]
		// The distinct device paths of the container's answers, in a
		// scratch slice: a container holds one or two resources.
		paths := m.pathScratch[:0]
		for ; i < len(holdings) && holdings[i].PodUID == first.PodUID && holdings[i].Container == first.Container; i++ {
			h := holdings[i]
			if path := m.answered[[3]string{h.PodUID, h.Container, h.Resource}].devicePath; !slices.Contains(paths, path) {
				paths = append(paths, path)
			}
		}
		m.pathScratch = paths
		opts := m.core.RunContainerOptions(first.PodUID, first.Container)
		if opts == nil {
			properties.Fail(m.t, RunOptions, "%s/%s holds devices but has no run options", first.PodUID, first.Container)
		}
		want := dm.KeyValue{Name: "VISIBLE_DEVICES", Value: m.answered[[3]string{first.PodUID, first.Container, first.Resource}].visibleDevices}
		if len(opts.Envs) != 1 || opts.Envs[0] != want || len(opts.Devices) != len(paths) {
			properties.Fail(m.t, RunOptions, "%s/%s: run options envs=%v devices=%v, want envs=[%v] and %d device nodes", first.PodUID, first.Container, opts.Envs, opts.Devices, want, len(paths))
		}
	}
}

// containerPlace is where a container stands in its pod's allocation: the
// kubelet allocates a pod's init containers, then its app containers, in
// order.
type containerPlace struct {
	pod         string
	order       int
	regularInit bool // an init container that is not restartable (not a sidecar)
}

// mayShare is upstream's reuse rule for two containers holding the same
// device: a regular init container's devices join the pod's reuse pool,
// while a sidecar's and an app container's leave it. So the earlier of the
// two must be a regular init container of the same pod (a container between
// them that took the device from the pool would itself fail this rule with
// the later one).
func mayShare(a, b containerPlace) bool {
	if a.order > b.order {
		a, b = b, a
	}
	return a.pod == b.pod && a.order != b.order && a.regularInit
}

// place finds a holder's container among the machine's pods.
func (m *machine) place(uid, container string) containerPlace {
	for _, p := range m.pods {
		if p.p.UID != uid {
			continue
		}
		for i, c := range p.p.InitContainers {
			if c.Name == container {
				return containerPlace{uid, i, !c.IsSidecar()}
			}
		}
		for i, c := range p.p.Containers {
			if c.Name == container {
				return containerPlace{uid, len(p.p.InitContainers) + i, false}
			}
		}
	}
	properties.Fail(m.t, Exclusive, "%s/%s holds devices but is no container of a known pod", uid, container)
	return containerPlace{}
}

func (m *machine) checkCapacity(c dm.Capacity) {
	// DM-ALLOCATABLE-LE-CAPACITY applies when some resource is allocatable.
	m.checked(slotAllocLECapacity, len(c.Allocatable) > 0)
	for r, a := range c.Allocatable {
		capacity, ok := c.Capacity[r]
		if !ok || a > capacity {
			properties.Fail(m.t, AllocLECapacity, "%s: allocatable %d, capacity %d (present %t)", r, a, capacity, ok)
		}
	}
	// DM-ALLOCATABLE-HEALTHY applies when some resource is allocatable or
	// a plugin has reported one.
	m.checked(slotAllocHealthy, len(c.Allocatable) > 0 || len(m.views) > 0)
	for r, a := range c.Allocatable {
		v := m.findView(r)
		if v == nil {
			properties.Fail(m.t, AllocHealthy, "%s: allocatable %d for a resource no plugin reported", r, a)
		}
		want := v.lastHealthy
		if v.zeroed {
			want = 0
		}
		if a != want {
			properties.Fail(m.t, AllocHealthy, "%s: allocatable %d, the plugin's last snapshot has %d healthy devices (disconnected or restarted since: %t)", r, a, v.lastHealthy, v.zeroed)
		}
	}
	for _, v := range m.views {
		if v.everSnapshoted && v.hasEndpoint && !v.stopped && v.lastHealthy > 0 && !v.zeroed {
			if _, ok := c.Allocatable[v.resource]; !ok {
				properties.Fail(m.t, AllocHealthy, "%s: a connected plugin reports %d healthy devices but the resource is not allocatable", v.resource, v.lastHealthy)
			}
		}
	}
	m.checked(slotGraceDelete, m.graceRuleApplies(c.Deleted))
	if want := m.expectedDeletions(); !equalStrings(c.Deleted, want) {
		properties.Fail(m.t, GraceDelete, "at %s the manager would delete %v, expected %v", m.now.Sub(epoch), c.Deleted, want)
	}
}

func (m *machine) checkCheckpoint(holdings []dm.Holding) {
	dueCore := m.core.CheckpointDue()
	dueTwin := m.twin.CheckpointDue()
	if dueCore != dueTwin {
		properties.Fail(m.t, Deterministic, "checkpoint due: %t and %t for the same inputs", dueCore, dueTwin)
	}
	// DM-DETERMINISTIC applies here when a checkpoint is due: then the two
	// managers' bytes are compared (every action compares their answers).
	m.checked(slotDeterministic, dueCore)
	// Upstream writes only when due, but the round trip must hold for any
	// state, so it is checked after every step.
	registered := m.model.Registered()
	// DM-CHECKPOINT-ROUNDTRIP applies when the checkpoint has something to
	// keep: an allocation or a registered resource.
	m.checked(slotCheckpointTrip, len(holdings) > 0 || len(registered) > 0)
	data := m.core.Checkpoint()
	// The determinism claim is about the bytes the kubelet writes, so the
	// twin's checkpoint is compared when one is due. Equal content encodes
	// to equal bytes (checkpoint.Equal); content that differs is encoded
	// and its bytes compared, so the verdict is the bytes' as before.
	if dueCore {
		if twinData := m.twin.Checkpoint(); !checkpoint.Equal(data, twinData) {
			encoded, err := checkpoint.Encode(data)
			if err != nil {
				properties.Fail(m.t, CheckpointTrip, "encode: %v", err)
			}
			twinEncoded, err := checkpoint.Encode(twinData)
			if err != nil || string(twinEncoded) != string(encoded) {
				properties.Fail(m.t, Deterministic, "the same inputs wrote two checkpoints:\n  %s\n  %s", encoded, twinEncoded)
			}
		}
	}
	// The round trip (encode, checksum, decode) is a function of the
	// content alone: checkpoint.Equal content encodes to the same bytes,
	// which decode to the same data (TestEqualIsSameBytes). So it is run
	// when the content differs from every content of the last trips, and
	// the equal content's decoded data stands for this step's otherwise.
	// Most steps (a capacity query, time passing, a rejected admission)
	// leave the content as it was, and a sixth of the changes bring back
	// one of the last eight. What the decoded data must match, the
	// holdings and the registered resources, is compared every step.
	decoded, ok := m.trippedAs(data)
	if !ok {
		decoded = m.roundTrip(data)
	}
	if len(decoded.PodDeviceEntries) != len(holdings) {
		properties.Fail(m.t, CheckpointTrip, "checkpoint has %d entries, containers hold %d allocations", len(decoded.PodDeviceEntries), len(holdings))
	}
	for i, e := range decoded.PodDeviceEntries {
		h := holdings[i]
		ids := m.idScratch[:0]
		for _, list := range e.DeviceIDs {
			ids = append(ids, list...)
		}
		ids = dedupSorted(ids)
		m.idScratch = ids
		if e.PodUID != h.PodUID || e.ContainerName != h.Container || e.ResourceName != h.Resource || !equalStrings(ids, h.DeviceIDs) {
			properties.Fail(m.t, CheckpointTrip, "checkpoint entry %d is %+v, the container holds %v", i, e, h)
		}
	}
	if len(registered) != len(decoded.RegisteredDevices) {
		properties.Fail(m.t, CheckpointTrip, "checkpoint registers %v, the model %v", decoded.RegisteredDevices, registered)
	}
	for _, r := range registered {
		got, ok := decoded.RegisteredDevices[r.Resource]
		if !ok || !equalStrings(got, r.Devices) || got == nil {
			properties.Fail(m.t, CheckpointTrip, "checkpoint registers %s as %v, the model's healthy devices are %v", r.Resource, got, r.Devices)
		}
	}
}

// trippedAs returns what the bytes of a content checkpoint.Equal to data
// decoded to, when one of the last trips had such content, and moves that
// trip to the front.
func (m *machine) trippedAs(data checkpoint.Data) (checkpoint.Data, bool) {
	for i, trip := range m.trips {
		if checkpoint.Equal(data, trip.data) {
			copy(m.trips[1:i+1], m.trips[:i])
			m.trips[0] = trip
			return trip.decoded, true
		}
	}
	return checkpoint.Data{}, false
}

// roundTrip encodes data, decodes the bytes (which verifies the checksum)
// and requires the same content back, with every Allocate answer decoding;
// it keeps the content and the decoded data, the latest of the trips, for
// the steps that follow, and returns the decoded data.
func (m *machine) roundTrip(data checkpoint.Data) checkpoint.Data {
	encoded, err := checkpoint.Encode(data)
	if err != nil {
		properties.Fail(m.t, CheckpointTrip, "encode: %v", err)
	}
	decoded, err := checkpoint.Decode(encoded)
	if err != nil {
		properties.Fail(m.t, CheckpointTrip, "decode of %s: %v", encoded, err)
	}
	if !checkpoint.Equal(decoded, data) {
		properties.Fail(m.t, CheckpointTrip, "%s decodes to %+v, written from %+v", encoded, decoded, data)
	}
	for i, e := range decoded.PodDeviceEntries {
		if _, err := allocresp.Unmarshal(e.AllocResp); err != nil {
			properties.Fail(m.t, CheckpointTrip, "checkpoint entry %d: AllocResp does not decode: %v", i, err)
		}
	}
	if len(m.trips) < tripHistory {
		m.trips = append(m.trips, trip{})
	}
	copy(m.trips[1:], m.trips)
	m.trips[0] = trip{data, decoded}
	return decoded
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// sameAsCounts reports whether the core's capacity and allocatable maps
// say what the model's counts say: the same resources with a capacity,
// the same with an allocatable, and the same numbers.
func sameAsCounts(c dm.Capacity, counts []model.Count) bool {
	if len(c.Capacity) != len(counts) {
		return false
	}
	allocatable := 0
	for _, k := range counts {
		if capacity, ok := c.Capacity[k.Resource]; !ok || capacity != k.Capacity {
			return false
		}
		if !k.HasAllocatable {
			continue
		}
		allocatable++
		if a, ok := c.Allocatable[k.Resource]; !ok || a != k.Allocatable {
			return false
		}
	}
	return len(c.Allocatable) == allocatable
}

func equalHoldings(a, b []dm.Holding) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].PodUID != b[i].PodUID || a[i].Container != b[i].Container || a[i].Resource != b[i].Resource || !equalStrings(a[i].DeviceIDs, b[i].DeviceIDs) {
			return false
		}
	}
	return true
}

func dedupSorted(ids []string) []string {
	sort.Strings(ids)
	out := ids[:0]
	for i, id := range ids {
		if i == 0 || id != ids[i-1] {
			out = append(out, id)
		}
	}
	return out
}
