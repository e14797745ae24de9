package imagegc

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"pgregory.net/rapid"

	core "github.com/nodeproof/nodeproof/core/imagegc"
	model "github.com/nodeproof/nodeproof/models/imagegc"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/verify"
)

// init registers the suite of core/imagegc with every invariant, so that
// importing the package is enough.
func init() {
	properties.Register(properties.Suite{
		Name:       "imagegc",
		Subsystem:  subsystem,
		Invariants: invariants,
		Property:   func(t *rapid.T, tally *properties.Tally) { newMachine(t, tally, nil).run() },
	})
}

// ContractSuite is the suite with kubelet's managers as its system under
// test in place of core: the same generated node, the same actions, held
// to the contract properties alone (ContractInvariants). The fidelity
// invariants compare core's own records, outcome and twin with the model;
// another system under test gives none of them, and the conformance
// module's TestImageGC holds core to upstream already. properties.Run runs
// it unregistered.
func ContractSuite(name string, kubelet Kubelet) properties.Suite {
	return properties.Suite{
		Name:       name,
		Subsystem:  subsystem,
		Invariants: ContractInvariants(),
		Property:   func(t *rapid.T, tally *properties.Tally) { newMachine(t, tally, kubelet).run() },
	}
}

// ContractInvariants are the contract properties among the invariants, in
// order: the ones that judge a system under test other than core.
func ContractInvariants() []verify.Property { return verify.Contracts(invariants) }

// maxContainers bounds the containers startContainer leaves listed, so
// that most images stay unused and GC has something to judge; containers
// that start during a pass (#123631) come on top.
const maxContainers = 2

// container is a container the runtime lists (running or exited).
type container struct {
	podID, id, imageID string
	mounts             []string
	exited             bool
}

// machine plays a node: a runtime with images and containers, an image
// filesystem, a clock and a kubelet whose image GC manager is the system
// under test, the core unless kubelet starts another. With the core, the
// reference model's records are kept beside it, and every expectation of
// the invariants is worked out from the node and those records; the
// contract invariants read the node alone.
type machine struct {
	t     *rapid.T
	tally *properties.Tally
	steps properties.Steps

	now, beganGC time.Time
	// lastDetect is the last detection's time, for the clock's draws.
	lastDetect time.Time
	policy     core.Policy
	// kubelet starts the system under test; nil for the core.
	kubelet Kubelet
	// sut is this kubelet run's manager. core and twin are the core's
	// managers when it is the system under test (sut is then core), nil
	// otherwise: the fidelity invariants apply only when they are set.
	sut        Collector
	core, twin *core.Manager

	// listed are the image IDs the runtime lists, in ID order.
	listed     []string
	containers []container
	seq        int
	// capacityBytes and otherBytes (logs, volumes) make up the image
	// filesystem with the layers that images and containers hold.
	capacityBytes, otherBytes int64

	// records are the model's records of the current kubelet run.
	records map[string]model.Record

	// arrived and lastUse are what happened on the node, for the contract
	// invariants: when each image came (pulled, or there from the node's
	// start; a removal by the kubelet forgets it, one outside the kubelet
	// does not), and the last time a listed container (running or exited)
	// referenced each image, as its image or an image volume. They outlive
	// kubelet restarts, as the node does.
	arrived, lastUse map[string]time.Time
	// listedSince is when this kubelet run's detections first listed each
	// image: the earliest the kubelet can count an image's age from.
	listedSince map[string]time.Time
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newMachine(t *rapid.T, tally *properties.Tally, kubelet Kubelet) *machine {
	m := &machine{t: t, tally: tally, steps: properties.NewSteps(t, tally), now: epoch, kubelet: kubelet, arrived: map[string]time.Time{}, lastUse: map[string]time.Time{}}
	m.capacityBytes = rapid.SampledFrom([]int64{1536 * mi, 2048 * mi, 3072 * mi}).Draw(t, "capacity")
	m.listed = []string{pause}
	m.otherBytes = rapid.SampledFrom([]int64{0, 200 * mi, 600 * mi}).Draw(t, "otherBytes")
	for _, img := range catalogue {
		if img.id != pause && rapid.IntRange(0, 2).Draw(t, "preloaded") == 0 && m.roomFor(img.id) {
			m.listed = append(m.listed, img.id)
		}
	}
	sort.Strings(m.listed)
	for _, id := range m.listed {
		m.arrived[id] = m.now
	}
	m.policy = drawPolicy(t)
	t.Logf("step 0: start capacity=%s other=%s images=%v", core.FormatSize(m.capacityBytes), core.FormatSize(m.otherBytes), m.listed)
	m.restartKubelet("start")
	return m
}

func (m *machine) run() {
	// rapid draws the actions in name order with a bias towards the first,
	// so the frequent actions weigh more and the eviction
	// manager's DeleteUnusedImages, which empties the node, sorts last:
	// pulls and the clock keep the node supplied with images old enough to
	// remove, and GC runs often enough to remove them.
	actions := properties.Actions(m.check, map[string]properties.Action{
		"imagePull":          {Weight: 3, Do: m.pull},
		"startContainer":     {Weight: 1, Do: m.startContainer},
		"stopContainer":      {Weight: 1, Do: m.stopContainer},
		"removeContainer":    {Weight: 2, Do: m.removeContainer},
		"runtimeRemoveImage": {Weight: 1, Do: m.runtimeRemoveImage},
		"tick":               {Weight: 2, Do: m.tick},
		"diskUsage":          {Weight: 2, Do: m.diskUsage},
		"periodicDetect":     {Weight: 1, Do: m.detect},
		"periodicGC":         {Weight: 2, Do: m.periodicGC},
		"gc":                 {Weight: 2, Do: m.gc},
		"underDiskPressure":  {Weight: 1, Do: m.deleteUnusedImages},
		"restart":            {Weight: 1, Do: m.restart},
	})
	// Two rounds of actions per case: image GC's statements are about
	// histories (ages past MinAge and MaxAge, passes after pulls and
	// restarts), and at one round the rarest of them (GC-STOP, GC-DISABLED,
	// GC-DELETE-UNUSED) applied only 950–1,300 times at the default budget,
	// too close to the floor for every seed to reach it.
	m.t.Repeat(actions)
	m.t.Repeat(actions)
}

// --- the runtime and the filesystem -----------------------------------------

func (m *machine) isListed(id string) bool {
	_, ok := slices.BinarySearch(m.listed, id)
	return ok
}

// heldLayers are the layers on disk: those of every listed image and of
// every image a listed container runs or mounts (its snapshot keeps them
// after the image itself is removed).
func (m *machine) heldLayers() map[string]bool {
	held := map[string]bool{}
	hold := func(id string) {
		for _, l := range imageLayers(id) {
			held[l] = true
		}
	}
	for _, id := range m.listed {
		hold(id)
	}
	for _, c := range m.containers {
		hold(c.imageID)
		for _, id := range c.mounts {
			hold(id)
		}
	}
	return held
}

func (m *machine) usedBytes() int64 {
	used := m.otherBytes
	for l := range m.heldLayers() {
		used += layers[l]
	}
	return used
}

func (m *machine) fsStats() core.FsStats {
	return core.FsStats{CapacityBytes: m.capacityBytes, AvailableBytes: m.capacityBytes - m.usedBytes()}
}

// roomFor says whether pulling id fits: only the layers not yet on disk
// take space.
func (m *machine) roomFor(id string) bool {
	held := m.heldLayers()
	var need int64
	for _, l := range imageLayers(id) {
		if !held[l] {
			need += layers[l]
		}
	}
	return m.usedBytes()+need <= m.capacityBytes
}

// view is the runtime's answer to ListImages, GetPods and GetContainerStatus.
func (m *machine) view() core.RuntimeView {
	v := core.RuntimeView{}
	for _, id := range m.listed {
		v.Images = append(v.Images, core.Image{ID: id, SizeBytes: reportedSize(id), Pinned: id == pause})
	}
	for _, c := range m.containers {
		v.Containers = append(v.Containers, core.Container{PodID: c.podID, ID: c.id, ImageID: c.imageID, MountedImageIDs: slices.Clone(c.mounts)})
	}
	return v
}

// modelImages and inUse are the same answer in the model's terms: the
// images in use are worked out here, from the containers the runtime lists.
func (m *machine) modelImages() []model.Image {
	out := make([]model.Image, 0, len(m.listed))
	for _, id := range m.listed {
		out = append(out, model.Image{ID: id, Size: reportedSize(id), Pinned: id == pause})
	}
	return out
}

func (m *machine) inUse() map[string]bool {
	used := map[string]bool{}
	for _, c := range m.containers {
		used[c.imageID] = true
		for _, id := range c.mounts {
			if m.isListed(id) {
				used[id] = true
			}
		}
	}
	return used
}

func (m *machine) usedByContainer(id string) bool {
	for _, c := range m.containers {
		if c.imageID == id || slices.Contains(c.mounts, id) {
			return true
		}
	}
	return false
}

// removeFromRuntime is a successful RemoveImage: containerd removes an
// image even while a container runs it (the container's snapshot stays).
func (m *machine) removeFromRuntime(id string) {
	if i, ok := slices.BinarySearch(m.listed, id); ok {
		m.listed = slices.Delete(m.listed, i, i+1)
	}
	delete(m.arrived, id)
	delete(m.listedSince, id)
}

// markUse records that every image a listed container references is in
// use now. It runs after every action and at the start of every pass, so
// an image's last use is the last instant a container referenced it: time
// moves only in ticks and at a periodic pass, and a container listed
// before a tick was listed through it.
func (m *machine) markUse() {
	for _, c := range m.containers {
		m.lastUse[c.imageID] = m.now
		for _, id := range c.mounts {
			m.lastUse[id] = m.now
		}
	}
}

func (m *machine) addContainer(t *rapid.T, imageID string) container {
	m.seq++
	c := container{podID: fmt.Sprintf("pod-%d", m.seq), id: fmt.Sprintf("ctr-%d", m.seq), imageID: imageID}
	if rapid.IntRange(0, 3).Draw(t, "imageVolume") == 0 {
		c.mounts = []string{rapid.SampledFrom(m.listed).Draw(t, "mountedImage")}
	}
	m.containers = append(m.containers, c)
	return c
}

// clock prints the time as seen from the kubelet's start.
func (m *machine) clock() string {
	return fmt.Sprintf("start+%v", m.now.Sub(m.beganGC))
}

// restartKubelet starts a kubelet: new managers with no records, the GC
// loop beginning now, and the start's detection (realImageGCManager.Start).
func (m *machine) restartKubelet(why string) {
	var err error
	if m.kubelet != nil {
		if m.sut, err = m.kubelet(m.policy); err != nil {
			m.t.Fatalf("the system under test refuses a valid policy %+v: %v", m.policy, err)
		}
	} else {
		if m.core, err = core.NewManager(m.policy, core.Options{}); err != nil {
			properties.Fail(m.t, Model, "a valid policy %+v is refused: %v", m.policy, err)
		}
		if m.twin, err = core.NewManager(m.policy, core.Options{}); err != nil {
			properties.Fail(m.t, Deterministic, "the second manager refuses %+v: %v", m.policy, err)
		}
		m.sut = coreCollector{m.core}
		m.records = map[string]model.Record{}
	}
	m.beganGC = m.now
	m.listedSince = map[string]time.Time{}
	m.runDetect()
	m.checkRestart(why)
}

func (m *machine) runDetect() {
	view := m.view()
	if m.core == nil {
		if err := m.sut.Detect(m.now, view); err != nil {
			m.t.Fatalf("detection of a valid view failed: %v", err)
		}
	} else {
		errCore, errTwin := m.sut.Detect(m.now, view), m.twin.Detect(m.now, view)
		if errCore != nil || errTwin != nil {
			properties.Fail(m.t, Model, "detection of a valid view failed: %v / %v", errCore, errTwin)
		}
		m.records = model.Detect(m.records, m.modelImages(), m.inUse(), m.now)
	}
	m.lastDetect = m.now
	m.noteListed()
}

// noteListed records the images a detection lists now.
func (m *machine) noteListed() {
	for id := range m.listedSince {
		if !m.isListed(id) {
			delete(m.listedSince, id)
		}
	}
	for _, id := range m.listed {
		if _, ok := m.listedSince[id]; !ok {
			m.listedSince[id] = m.now
		}
	}
}

// pass is what one pass saw and did, for the checks.
type pass struct {
	isGC bool
	// before are the model's records after the pass's detection, with the
	// core only; inUse and listed are the runtime's answer at that
	// detection.
	before map[string]model.Record
	inUse  map[string]bool
	listed []string
	// order is the eviction order worked out from before.
	order []string
	// stats is what ImageFsStats answered, when it was asked.
	stats *core.FsStats
	out   Outcome
	// failing are the removals the runtime failed, with their error texts.
	failing map[string]string
	// raced are the images a container started on while their removal was
	// under way; usedBefore and usedAfter bracket the pass's removals.
	raced                 []string
	usedBefore, usedAfter int64
	heldAfter             map[string]bool
	// answers replay the runtime to the twin: each removal's error in order.
	answers []error
	// removedInUse are the images removed while a listed container
	// referenced them, at the moment of the removal; usedAtStats is the
	// bytes in use on the filesystem when the pass read its stats.
	removedInUse []string
	usedAtStats  int64
	// arrivedBefore and lastUseBefore are m.arrived and m.lastUse as the
	// pass began.
	arrivedBefore, lastUseBefore map[string]time.Time
}

// runPass runs GarbageCollect (isGC) or DeleteUnusedImages on the system
// under test, the machine answering RemoveImage (failures drawn per
// removal) and ImageFsStats, and a container sometimes starting on the
// image being removed (#123631).
func (m *machine) runPass(t *rapid.T, isGC bool) {
	m.markUse()
	m.noteListed()
	view := m.view()
	p := &pass{isGC: isGC, inUse: m.inUse(), listed: slices.Clone(m.listed), failing: map[string]string{}, usedBefore: m.usedBytes(),
		arrivedBefore: maps.Clone(m.arrived), lastUseBefore: maps.Clone(m.lastUse)}
	if m.core != nil {
		p.before = model.Detect(m.records, m.modelImages(), p.inUse, m.now)
		p.order = evictionOrder(p.before, p.inUse)
	}
	var err error
	if p.out, err = m.sut.Collect(isGC, m.now, m.beganGC, view, &passRuntime{m: m, t: t, p: p}); err != nil {
		properties.Fail(m.t, Model, "%v", err)
	}
	p.usedAfter, p.heldAfter = m.usedBytes(), m.heldLayers()
	m.t.Logf("  outcome: freed %d, err %v", p.out.FreedBytes, p.out.Err)
	m.checkPass(p)
}

// passRuntime is the node answering one pass: the machine's Runtime.
type passRuntime struct {
	m *machine
	t *rapid.T
	p *pass
}

func (r *passRuntime) RemoveImage(removal core.Removal) error {
	m, t, p, id := r.m, r.t, r.p, removal.ImageID
	if rapid.Bool().Draw(t, "podStartsOnImage") && id != pause {
		c := m.addContainer(t, id)
		p.raced = append(p.raced, id)
		m.t.Logf("  %s starts on %s between detection and removal", c.id, id)
	}
	var removeErr error
	if rapid.IntRange(0, 5).Draw(t, "removalFails") == 0 {
		removeErr = fmt.Errorf("rpc error: code = Unknown desc = failed to remove image %q: device or resource busy", id)
		p.failing[id] = removeErr.Error()
	} else {
		if m.usedByContainer(id) {
			p.removedInUse = append(p.removedInUse, id)
		}
		m.removeFromRuntime(id)
	}
	m.t.Logf("  RemoveImage %s (%s, %s): %v", id, removal.Reason, core.FormatSize(removal.SizeBytes), removeErr)
	p.answers = append(p.answers, removeErr)
	return removeErr
}

func (r *passRuntime) ImageFsStats() core.FsStats {
	m, p := r.m, r.p
	if !p.isGC && m.core != nil {
		properties.Fail(m.t, DeleteUnused, "DeleteUnusedImages asked for the filesystem's stats")
	}
	stats := m.fsStats()
	p.stats, p.usedAtStats = &stats, m.usedBytes()
	m.t.Logf("  ImageFsStats: %s available of %s", core.FormatSize(stats.AvailableBytes), core.FormatSize(stats.CapacityBytes))
	return stats
}

// evictionOrder is the eviction order worked out from the model's
// records: unused, unpinned, by last use, then first detection, then ID.
func evictionOrder(records map[string]model.Record, inUse map[string]bool) []string {
	var order []string
	for id, r := range records {
		if !inUse[id] && !r.Pinned {
			order = append(order, id)
		}
	}
	sort.Slice(order, func(i, j int) bool { return evictsBefore(records, order[i], order[j]) })
	return order
}

func evictsBefore(records map[string]model.Record, a, b string) bool {
	ra, rb := records[a], records[b]
	if !ra.LastUsed.Equal(rb.LastUsed) {
		return ra.LastUsed.Before(rb.LastUsed)
	}
	if !ra.FirstDetected.Equal(rb.FirstDetected) {
		return ra.FirstDetected.Before(rb.FirstDetected)
	}
	return a < b
}

func ids(attempts []core.Attempt) string {
	ids := make([]string, len(attempts))
	for i, a := range attempts {
		ids[i] = a.ImageID + "/" + a.Reason
		if a.Err != nil {
			ids[i] += "(failed)"
		}
	}
	return "[" + strings.Join(ids, " ") + "]"
}
