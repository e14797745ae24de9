package properties

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/imagegc"
	model "github.com/nodeproof/nodeproof/models/imagegc"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// Image GC invariant IDs.
const (
	GCModel         = "GC-MODEL"
	GCInUse         = "GC-IN-USE"
	GCPinned        = "GC-PINNED"
	GCOrder         = "GC-ORDER"
	GCStop          = "GC-STOP"
	GCLow           = "GC-LOW"
	GCMinAge        = "GC-MIN-AGE"
	GCMaxAge        = "GC-MAX-AGE"
	GCDisabled      = "GC-DISABLED"
	GCDeleteUnused  = "GC-DELETE-UNUSED"
	GCRestart       = "GC-RESTART"
	GCDeterministic = "GC-DETERMINISTIC"
	GCStartRace     = "GC-123631-START-RACE"
	GCSharedLayers  = "GC-68203-SHARED-LAYERS"
	gcSubsystem     = "imagegc"
)

// Image GC contract invariant IDs: what the documentation and KEP-4210
// promise a cluster operator, checked against the node the machine plays
// (the images' arrival and use as they happened), not against the kubelet's
// records.
const (
	GCCInUse        = "GC-C-IN-USE"
	GCCMinAge       = "GC-C-MIN-AGE"
	GCCMaxAgeUnused = "GC-C-MAX-AGE-UNUSED"
	GCCMaxAgeBound  = "GC-C-MAX-AGE-BOUND"
	GCCLow          = "GC-C-LOW"
)

// The pages that make the promises.
var (
	gcDocLifecycle = cite.KubernetesDoc("concepts/architecture/garbage-collection/", "Garbage Collection", "Container image lifecycle")
	gcDocConfig    = cite.KubernetesDoc("reference/config-api/kubelet-config.v1beta1/", "Kubelet Configuration (v1beta1), KubeletConfiguration", "")
	gcKEPTitle     = "ImageMaximumGCAge in Kubelet"
)

// Where the image GC invariants come from: the v1.36.3 image GC manager,
// the kubelet's loop that starts it, and the seed article on image GC.
const (
	gcManager = "pkg/kubelet/images/image_gc_manager.go"
	gcKubelet = "pkg/kubelet/kubelet.go"

	gcSeedStart    = "Initialisation and start of image GC"
	gcSeedDetect   = "Detecting and maintaining image information"
	gcSeedRun      = "How image GC runs"
	gcSeedEviction = "Disk eviction and image GC"
	gcSeedUse      = "How image GC is used"

	// gcStatStartRace and gcStatOverCount are the suite's statistics: what
	// upstream does, measured rather than judged.
	gcStatStartRace = "removals of an image a container started using after the pass's detection, per pass with such a start (#123631)"
	gcStatOverCount = "bytes the kubelet counted as freed beyond what the filesystem regained, per pass with a removal (#68203)"
)

func gcSeed(section string) cite.Source {
	return cite.Seed("the kubelet's image garbage collection", section)
}

func init() {
	Register(Suite{
		Name:      "imagegc",
		Subsystem: gcSubsystem,
		Invariants: []verify.Property{
			{ID: GCModel, Subsystem: gcSubsystem, Statement: "The core and the reference model agree on every detection's records and on every GarbageCollect and DeleteUnusedImages: the RemoveImage calls in order with their reasons and failures, the bytes counted as freed, the error text and the records left.", Sources: []cite.Source{cite.Code(gcManager, "realImageGCManager.detectImages"), cite.Code(gcManager, "realImageGCManager.GarbageCollect"), cite.Code(gcManager, "realImageGCManager.freeSpace"), cite.Code(gcManager, "realImageGCManager.freeOldImages")}, Kind: verify.Fidelity},
			{ID: GCInUse, Subsystem: gcSubsystem, Statement: "No pass removes, or hands the post-GC hooks as examined, an image that a container listed at the pass's detection runs or mounts as an image volume, exited containers included.", Sources: []cite.Source{cite.Code(gcManager, "realImageGCManager.detectImages"), cite.Code(gcManager, "realImageGCManager.imagesInEvictionOrder"), cite.Code(gcManager, "realImageGCManager.runPostGCHooks"), gcSeed(gcSeedDetect)}, Kind: verify.Fidelity},
			{ID: GCPinned, Subsystem: gcSubsystem, Statement: "No pass removes an image the runtime reports as pinned (the sandbox image), in the MaxAge pass or the space pass, or hands it to the post-GC hooks as examined.", Sources: []cite.Source{cite.Code(gcManager, "realImageGCManager.imagesInEvictionOrder"), cite.Issue(111796)}, Kind: verify.Fidelity},
			{ID: GCOrder, Subsystem: gcSubsystem, Statement: "Within each pass the removals follow the eviction order (last used, then first detected, ascending; image ID where upstream's order is arbitrary), and the space pass skips no eligible image ranked before one it removes.", Sources: []cite.Source{cite.Code(gcManager, "realImageGCManager.imagesInEvictionOrder"), cite.Code(gcManager, "byLastUsedAndDetected.Less"), gcSeed(gcSeedRun)}, Kind: verify.Fidelity},
			{ID: GCStop, Subsystem: gcSubsystem, Statement: "The space pass stops at the first removal that brings the sizes it counted to amountToFree or more, and when it ends short it has tried every eligible image; it counts exactly the sizes of the images it removed.", Sources: []cite.Source{cite.Code(gcManager, "realImageGCManager.freeSpace")}, Kind: verify.Fidelity},
			{ID: GCLow, Subsystem: gcSubsystem, Statement: "When the image filesystem's usage is at or above the high threshold, amountToFree is capacity×(100−low)/100 − available and GarbageCollect succeeds exactly when no removal failed and the eligible images' sizes reach it; then the counted bytes bring available to the low threshold's target, and the real filesystem gets there too whenever no removed image shared a layer that stayed.", Sources: []cite.Source{cite.Code(gcManager, "realImageGCManager.GarbageCollect"), gcSeed(gcSeedRun), cite.PR(132578)}, Kind: verify.Fidelity},
			{ID: GCMinAge, Subsystem: gcSubsystem, Statement: "The space pass (GarbageCollect and DeleteUnusedImages) removes only images first detected at least MinAge ago by this kubelet run and last used strictly before the pass.", Sources: []cite.Source{cite.Code(gcManager, "realImageGCManager.freeSpace"), gcSeed(gcSeedUse), cite.Issue(119642)}, Kind: verify.Fidelity},
			{ID: GCMaxAge, Subsystem: gcSubsystem, Statement: "With MaxAge set, GarbageCollect removes for age only once the GC loop has run strictly longer than MaxAge since the kubelet started, and then tries exactly the unused unpinned images last used strictly more than MaxAge ago (never used since the start counts as always), whatever their first detection.", Sources: []cite.Source{cite.Code(gcManager, "realImageGCManager.freeOldImages"), cite.KEP(4210, "ImageMaximumGCAge")}, Kind: verify.Fidelity},
			{ID: GCDisabled, Subsystem: gcSubsystem, Statement: "The kubelet runs the periodic image GC exactly when the high threshold is below 100 or MaxAge is set; with high 100 and MaxAge 0 nothing is ever removed periodically.", Sources: []cite.Source{cite.Code(gcKubelet, "Kubelet.StartGarbageCollection"), gcSeed(gcSeedStart)}, Kind: verify.Fidelity},
			{ID: GCDeleteUnused, Subsystem: gcSubsystem, Statement: "DeleteUnusedImages tries every unused, unpinned image last used before now and at least MinAge old, in eviction order, whatever the usage and MaxAge, never reads the filesystem's stats, and fails exactly when a removal failed.", Sources: []cite.Source{cite.Code(gcManager, "realImageGCManager.DeleteUnusedImages"), gcSeed(gcSeedEviction)}, Kind: verify.Fidelity},
			{ID: GCRestart, Subsystem: gcSubsystem, Statement: "After a kubelet restart the records are rebuilt from the start's detection alone: every image is first detected at the restart, and last used then if a container uses it, else never (zero).", Sources: []cite.Source{cite.Code(gcManager, "realImageGCManager.Start"), cite.Issue(119642), gcSeed(gcSeedDetect)}, Kind: verify.Fidelity},
			{ID: GCDeterministic, Subsystem: gcSubsystem, Statement: "A second manager fed the same detections, runtime answers and filesystem stats makes the same RemoveImage calls and returns the same outcome and records.", Sources: []cite.Source{cite.DeterminismContract}, Kind: verify.Fidelity},
			{ID: GCStartRace, Subsystem: gcSubsystem, Statement: "Upstream's behaviour (#123631; it breaks GC-C-IN-USE): a container that starts on an image after the pass's detection does not stop the pass; the image it was about to remove is still removed, and the report counts how often.", Sources: []cite.Source{cite.Issue(123631), cite.Code(gcManager, "realImageGCManager.freeSpace")}, Kind: verify.Fidelity},
			{ID: GCSharedLayers, Subsystem: gcSubsystem, Statement: "Upstream's behaviour (#68203; it breaks GC-C-LOW): every removal counts the image's reported size, shared layers included, so the bytes counted exceed the bytes the filesystem regains by exactly, per layer, its size times the removed images holding it, less one if the layer came free.", Sources: []cite.Source{cite.Issue(68203), cite.Code(gcManager, "realImageGCManager.freeSpace")}, Kind: verify.Fidelity},
			{ID: GCCInUse, Subsystem: gcSubsystem, Kind: verify.Contract,
				Statement: "Image garbage collection removes only unused images: no pass removes an image while a container the runtime lists runs it or mounts it, including a container that started on it while the pass was under way (\"the kubelet performs garbage collection on unused images\"; KEP-4210: \"no running workloads can be affected\").",
				Sources:   []cite.Source{gcDocLifecycle, cite.KEPSection(4210, gcKEPTitle, "Rollout, Upgrade and Rollback Planning"), cite.Issue(123631)}},
			{ID: GCCMinAge, Subsystem: gcSubsystem, Kind: verify.Contract,
				Statement: "No image is garbage collected, by any pass, before it has been on the node for imageMinimumGCAge (\"imageMinimumGCAge is the minimum age for an unused image before it is garbage collected\"; KEP-4210: \"the youngest an image can be to be qualified for garbage collection\").",
				Sources:   []cite.Source{gcDocConfig, cite.KEPSection(4210, gcKEPTitle, "Proposal")}},
			{ID: GCCMaxAgeUnused, Subsystem: gcSubsystem, Kind: verify.Contract,
				Statement: "An image removed for its age has been unused for at least imageMaximumGCAge, counted from the latest of its last use by a container, its arrival on the node and the kubelet's start (\"the maximum age an image can be unused before it is garbage collected\"; \"a time after which unused images will be garbage collected\"; after a restart the kubelet waits \"the full imageMaximumGCAge duration before qualifying images\").",
				Sources:   []cite.Source{gcDocConfig, gcDocLifecycle, cite.KEPSection(4210, gcKEPTitle, "Summary")}},
			{ID: GCCMaxAgeBound, Subsystem: gcSubsystem, Kind: verify.Contract,
				Statement: "With imageMaximumGCAge set, every GC pass, whatever the disk usage, tries to remove each listed image that no container uses, that the runtime does not pin, and that has been unused for more than imageMaximumGCAge since the latest of its last use, its arrival and the kubelet's start (\"the maximum time a local image can be unused for, regardless of disk usage\"; KEP-4210: GC'd \"up to 5 minutes after it has aged out\", one GC period).",
				Sources:   []cite.Source{gcDocLifecycle, cite.KEPSection(4210, gcKEPTitle, "Design Details"), cite.PR(103299).Noting("pinned images are the runtime's sandbox image, exempt")}},
			{ID: GCCLow, Subsystem: gcSubsystem, Kind: verify.Contract,
				Statement: "When a GC pass finds the image filesystem's disk usage above imageGCHighThresholdPercent, it deletes images until the disk usage, as the filesystem measures it, reaches imageGCLowThresholdPercent, unless it runs out of images it may delete (unused, unpinned, at least imageMinimumGCAge old) or the runtime fails a removal (\"The kubelet deletes images until disk usage reaches the LowThresholdPercent value\"; imageGCLowThresholdPercent is the \"Lowest disk usage to garbage collect to\").",
				Sources:   []cite.Source{gcDocLifecycle, gcDocConfig, cite.Issue(68203)}},
		},
		Property: func(t *rapid.T, tally *Tally) { newGCMachine(t, tally).run() },
	})
}

// gcMi is a mebibyte; layer sizes are whole mebibytes.
const gcMi = int64(1) << 20

// gcLayers are the layers of gcCatalogue's images; "base" and the language
// runtimes are shared, which is what #68203 is about.
var gcLayers = map[string]int64{
	"pause": 1 * gcMi, "busybox": 4 * gcMi, "alpine": 8 * gcMi, "tools": 60 * gcMi, "base": 80 * gcMi,
	"python": 120 * gcMi, "app": 30 * gcMi, "worker": 50 * gcMi, "node": 100 * gcMi, "web": 20 * gcMi,
	"api": 70 * gcMi, "jre": 200 * gcMi, "svc": 40 * gcMi, "db": 300 * gcMi, "nginx": 40 * gcMi, "curl": 5 * gcMi, "redis": 30 * gcMi, "ml": 250 * gcMi, "jobs": 40 * gcMi,
}

// gcCatalogueImage is an image the runtime can pull.
type gcCatalogueImage struct {
	id     string
	layers []string
}

// gcPause is the sandbox image, pinned by the runtime and present from the
// start, as containerd does.
const gcPause = "sha256:pause"

var gcCatalogue = []gcCatalogueImage{
	{"sha256:alpine-tools", []string{"alpine", "tools"}},
	{"sha256:alpine-curl", []string{"alpine", "curl"}},
	{"sha256:busybox", []string{"busybox"}},
	{"sha256:db", []string{"db"}},
	{"sha256:java-svc", []string{"base", "jre", "svc"}},
	{"sha256:nginx", []string{"base", "nginx"}},
	{"sha256:node-api", []string{"base", "node", "api"}},
	{"sha256:node-jobs", []string{"base", "node", "jobs"}},
	{"sha256:node-web", []string{"base", "node", "web"}},
	{gcPause, []string{"pause"}},
	{"sha256:python-app", []string{"base", "python", "app"}},
	{"sha256:python-ml", []string{"base", "python", "ml"}},
	{"sha256:python-worker", []string{"base", "python", "worker"}},
	{"sha256:redis", []string{"redis"}},
}

func gcImageLayers(id string) []string {
	for _, img := range gcCatalogue {
		if img.id == id {
			return img.layers
		}
	}
	return nil
}

// gcReportedSize is what the runtime's ListImages reports: every layer of
// the image, shared or not.
func gcReportedSize(id string) int64 {
	var size int64
	for _, l := range gcImageLayers(id) {
		size += gcLayers[l]
	}
	return size
}

// gcMaxContainers bounds the containers startContainer leaves listed, so
// that most images stay unused and GC has something to judge; containers
// that start during a pass (#123631) come on top.
const gcMaxContainers = 2

// gcContainer is a container the runtime lists (running or exited).
type gcContainer struct {
	podID, id, imageID string
	mounts             []string
	exited             bool
}

// gcMachine plays a node: a runtime with images and containers, an image
// filesystem, a clock and a kubelet whose image GC manager is the core.
// The reference model's records are kept beside it, and every expectation
// of the invariants is worked out from the node and those records.
type gcMachine struct {
	t     *rapid.T
	tally *Tally
	step  int

	now, beganGC time.Time
	// lastDetect is the last detection's time, for the clock's draws.
	lastDetect time.Time
	policy     imagegc.Policy
	core, twin *imagegc.Manager

	// listed are the image IDs the runtime lists, in ID order.
	listed     []string
	containers []gcContainer
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

var gcEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newGCMachine(t *rapid.T, tally *Tally) *gcMachine {
	m := &gcMachine{t: t, tally: tally, now: gcEpoch, arrived: map[string]time.Time{}, lastUse: map[string]time.Time{}}
	m.capacityBytes = rapid.SampledFrom([]int64{1536 * gcMi, 2048 * gcMi, 3072 * gcMi}).Draw(t, "capacity")
	m.listed = []string{gcPause}
	m.otherBytes = rapid.SampledFrom([]int64{0, 200 * gcMi, 600 * gcMi}).Draw(t, "otherBytes")
	for _, img := range gcCatalogue {
		if img.id != gcPause && rapid.IntRange(0, 2).Draw(t, "preloaded") == 0 && m.roomFor(img.id) {
			m.listed = append(m.listed, img.id)
		}
	}
	sort.Strings(m.listed)
	for _, id := range m.listed {
		m.arrived[id] = m.now
	}
	m.policy = gcDrawPolicy(t)
	t.Logf("step 0: start capacity=%s other=%s images=%v", imagegc.FormatSize(m.capacityBytes), imagegc.FormatSize(m.otherBytes), m.listed)
	m.restartKubelet("start")
	return m
}

// gcDrawPolicy draws a policy the kubelet's configuration accepts: low
// below high, MaxAge off or above MinAge; high 100 with MaxAge 0 (image GC
// off) included.
func gcDrawPolicy(t *rapid.T) imagegc.Policy {
	band := rapid.SampledFrom([][2]int{{85, 80}, {50, 40}, {70, 20}, {90, 85}, {60, 0}, {100, 80}, {100, 90}, {100, 85}}).Draw(t, "thresholds")
	p := imagegc.Policy{HighThresholdPercent: band[0], LowThresholdPercent: band[1]}
	p.MinAge = rapid.SampledFrom([]time.Duration{0, 2 * time.Minute, 5 * time.Minute}).Draw(t, "minAge")
	if rapid.IntRange(0, 2).Draw(t, "maxAgeSet") == 0 {
		p.MaxAge = p.MinAge + rapid.SampledFrom([]time.Duration{5 * time.Minute, 15 * time.Minute, time.Hour, time.Hour}).Draw(t, "maxAgeOverMin")
	}
	return p
}

func (m *gcMachine) run() {
	// rapid draws the keys in name order with a bias towards the first, so
	// the frequent actions appear under more than one key and the eviction
	// manager's DeleteUnusedImages, which empties the node, sorts last:
	// pulls and the clock keep the node supplied with images old enough to
	// remove, and GC runs often enough to remove them.
	actions := map[string]func(*rapid.T){
		"imagePull":          m.pull,
		"imagePullMore":      m.pull,
		"imagePullAgain":     m.pull,
		"startContainer":     m.startContainer,
		"stopContainer":      m.stopContainer,
		"removeContainer":    m.removeContainer,
		"removeContainers":   m.removeContainer,
		"runtimeRemoveImage": m.runtimeRemoveImage,
		"tick":               m.tick,
		"tickAgain":          m.tick,
		"diskUsage":          m.diskUsage,
		"diskUsageAgain":     m.diskUsage,
		"periodicDetect":     m.detect,
		"periodicGC":         m.periodicGC,
		"periodicGCAgain":    m.periodicGC,
		"gc":                 m.gc,
		"gcAgain":            m.gc,
		"underDiskPressure":  m.deleteUnusedImages,
		"restart":            m.restart,
		"":                   m.check,
	}
	// Two rounds of actions per case: image GC's statements are about
	// histories (ages past MinAge and MaxAge, passes after pulls and
	// restarts), and at one round the rarest of them (GC-STOP, GC-DISABLED,
	// GC-DELETE-UNUSED) applied only 950–1,300 times at the default budget,
	// too close to the floor for every seed to reach it.
	m.t.Repeat(actions)
	m.t.Repeat(actions)
}

func (m *gcMachine) begin(action, format string, args ...any) {
	m.step++
	m.tally.Action(action)
	m.t.Logf("step %d: %s "+format, append([]any{m.step, action}, args...)...)
}

func (m *gcMachine) fail(id, format string, args ...any) {
	m.t.Fatalf("%s: "+format, append([]any{id}, args...)...)
}

// --- the runtime and the filesystem -----------------------------------------

func (m *gcMachine) isListed(id string) bool {
	_, ok := slices.BinarySearch(m.listed, id)
	return ok
}

// heldLayers are the layers on disk: those of every listed image and of
// every image a listed container runs or mounts (its snapshot keeps them
// after the image itself is removed).
func (m *gcMachine) heldLayers() map[string]bool {
	held := map[string]bool{}
	hold := func(id string) {
		for _, l := range gcImageLayers(id) {
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

func (m *gcMachine) usedBytes() int64 {
	used := m.otherBytes
	for l := range m.heldLayers() {
		used += gcLayers[l]
	}
	return used
}

func (m *gcMachine) fsStats() imagegc.FsStats {
	return imagegc.FsStats{CapacityBytes: m.capacityBytes, AvailableBytes: m.capacityBytes - m.usedBytes()}
}

// roomFor says whether pulling id fits: only the layers not yet on disk
// take space.
func (m *gcMachine) roomFor(id string) bool {
	held := m.heldLayers()
	var need int64
	for _, l := range gcImageLayers(id) {
		if !held[l] {
			need += gcLayers[l]
		}
	}
	return m.usedBytes()+need <= m.capacityBytes
}

// view is the runtime's answer to ListImages, GetPods and GetContainerStatus.
func (m *gcMachine) view() imagegc.RuntimeView {
	v := imagegc.RuntimeView{}
	for _, id := range m.listed {
		v.Images = append(v.Images, imagegc.Image{ID: id, SizeBytes: gcReportedSize(id), Pinned: id == gcPause})
	}
	for _, c := range m.containers {
		v.Containers = append(v.Containers, imagegc.Container{PodID: c.podID, ID: c.id, ImageID: c.imageID, MountedImageIDs: slices.Clone(c.mounts)})
	}
	return v
}

// modelImages and inUse are the same answer in the model's terms: the
// images in use are worked out here, from the containers the runtime lists.
func (m *gcMachine) modelImages() []model.Image {
	out := make([]model.Image, 0, len(m.listed))
	for _, id := range m.listed {
		out = append(out, model.Image{ID: id, Size: gcReportedSize(id), Pinned: id == gcPause})
	}
	return out
}

func (m *gcMachine) inUse() map[string]bool {
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

func (m *gcMachine) usedByContainer(id string) bool {
	for _, c := range m.containers {
		if c.imageID == id || slices.Contains(c.mounts, id) {
			return true
		}
	}
	return false
}

// removeFromRuntime is a successful RemoveImage: containerd removes an
// image even while a container runs it (the container's snapshot stays).
func (m *gcMachine) removeFromRuntime(id string) {
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
func (m *gcMachine) markUse() {
	for _, c := range m.containers {
		m.lastUse[c.imageID] = m.now
		for _, id := range c.mounts {
			m.lastUse[id] = m.now
		}
	}
}

func (m *gcMachine) addContainer(t *rapid.T, imageID string) gcContainer {
	m.seq++
	c := gcContainer{podID: fmt.Sprintf("pod-%d", m.seq), id: fmt.Sprintf("ctr-%d", m.seq), imageID: imageID}
	if rapid.IntRange(0, 3).Draw(t, "imageVolume") == 0 {
		c.mounts = []string{rapid.SampledFrom(m.listed).Draw(t, "mountedImage")}
	}
	m.containers = append(m.containers, c)
	return c
}

// --- actions ----------------------------------------------------------------

// pull pulls the images of a new pod: one to three images not yet listed.
func (m *gcMachine) pull(t *rapid.T) {
	var candidates []string
	for _, img := range gcCatalogue {
		if !m.isListed(img.id) {
			candidates = append(candidates, img.id)
		}
	}
	if len(candidates) == 0 {
		m.tick(t)
		return
	}
	var pulled, refused []string
	for range rapid.IntRange(1, min(3, len(candidates))).Draw(t, "images") {
		id := rapid.SampledFrom(candidates).Draw(t, "image")
		switch {
		case m.isListed(id):
		case !m.roomFor(id):
			refused = append(refused, id)
		default:
			pulled = append(pulled, id)
			m.listed = append(m.listed, id)
			if _, ok := m.arrived[id]; !ok {
				m.arrived[id] = m.now
			}
			sort.Strings(m.listed)
		}
	}
	m.begin("pull", "%v (no space left for %v)", pulled, refused)
}

func (m *gcMachine) startContainer(t *rapid.T) {
	var runnable []string
	for _, id := range m.listed {
		if id != gcPause {
			runnable = append(runnable, id)
		}
	}
	if len(runnable) == 0 {
		m.pull(t)
		return
	}
	if len(m.containers) >= gcMaxContainers {
		m.removeContainer(t)
		return
	}
	c := m.addContainer(t, rapid.SampledFrom(runnable).Draw(t, "image"))
	m.begin("startContainer", "%s on %s mounts=%v", c.id, c.imageID, c.mounts)
}

func (m *gcMachine) drawContainer(t *rapid.T) (int, bool) {
	if len(m.containers) == 0 {
		return 0, false
	}
	return rapid.IntRange(0, len(m.containers)-1).Draw(t, "container"), true
}

// stopContainer leaves an exited container the runtime still lists; its
// image stays in use until the container is removed.
func (m *gcMachine) stopContainer(t *rapid.T) {
	i, ok := m.drawContainer(t)
	if !ok {
		m.startContainer(t)
		return
	}
	m.containers[i].exited = true
	m.begin("stopContainer", "%s (exited, still listed)", m.containers[i].id)
}

func (m *gcMachine) removeContainer(t *rapid.T) {
	i, ok := m.drawContainer(t)
	if !ok {
		m.startContainer(t)
		return
	}
	m.begin("removeContainer", "%s", m.containers[i].id)
	m.containers = slices.Delete(m.containers, i, i+1)
}

// runtimeRemoveImage is a removal outside the kubelet (crictl rmi) of an
// image no container uses.
func (m *gcMachine) runtimeRemoveImage(t *rapid.T) {
	var removable []string
	for _, id := range m.listed {
		if id != gcPause && !m.usedByContainer(id) {
			removable = append(removable, id)
		}
	}
	if len(removable) == 0 {
		m.pull(t)
		return
	}
	id := rapid.SampledFrom(removable).Draw(t, "image")
	m.begin("runtimeRemoveImage", "%s", id)
	// The contract counts an image removed outside the kubelet and pulled
	// again as the same image, its age from its first arrival: the
	// lenient reading, since the kubelet may not notice the gap.
	arrived := m.arrived[id]
	m.removeFromRuntime(id)
	m.arrived[id] = arrived
}

// tick moves the clock, drawn around the boundaries that matter: MinAge
// and MaxAge after the last detection, the end of MaxAge's start-up wait
// and the 5-minute GC period, each exactly, one ns before and one after.
func (m *gcMachine) tick(t *rapid.T) {
	var targets []time.Time
	periods := m.now.Sub(m.beganGC) / imagegc.GCPeriod
	targets = append(targets, m.beganGC.Add((periods+1)*imagegc.GCPeriod), m.lastDetect.Add(m.policy.MinAge))
	if m.policy.MaxAge > 0 {
		targets = append(targets, m.lastDetect.Add(m.policy.MaxAge), m.beganGC.Add(m.policy.MaxAge))
	}
	var d time.Duration
	switch kind := rapid.IntRange(0, 3).Draw(t, "tickKind"); kind {
	case 0:
		d = rapid.SampledFrom([]time.Duration{time.Second, 30 * time.Second, imagegc.GCPeriod, 2 * imagegc.GCPeriod, time.Hour}).Draw(t, "duration")
	default:
		target := rapid.SampledFrom(targets).Draw(t, "boundary").Add(rapid.SampledFrom([]time.Duration{-time.Nanosecond, 0, time.Nanosecond}).Draw(t, "offset"))
		d = target.Sub(m.now)
	}
	if d < 0 {
		d = 0
	}
	m.now = m.now.Add(d)
	m.begin("tick", "+%v to %s", d, m.clock())
}

// clock prints the time as seen from the kubelet's start.
func (m *gcMachine) clock() string {
	return fmt.Sprintf("start+%v", m.now.Sub(m.beganGC))
}

// diskUsage changes the bytes other than images (logs, volumes), drawn to
// put the usage near the thresholds.
func (m *gcMachine) diskUsage(t *rapid.T) {
	imageBytes := m.usedBytes() - m.otherBytes
	pct := rapid.SampledFrom([]int{m.policy.HighThresholdPercent - 1, m.policy.HighThresholdPercent, m.policy.HighThresholdPercent + 3,
		m.policy.LowThresholdPercent, 95, 100}).Draw(t, "usagePercent")
	m.otherBytes = max(0, min(m.capacityBytes*int64(pct)/100, m.capacityBytes)-imageBytes)
	m.begin("diskUsage", "other=%s used=%s of %s", imagegc.FormatSize(m.otherBytes), imagegc.FormatSize(m.usedBytes()), imagegc.FormatSize(m.capacityBytes))
}

// restart restarts the kubelet, half the time with a new policy (a policy
// changes only with a restart).
func (m *gcMachine) restart(t *rapid.T) {
	if rapid.Bool().Draw(t, "newPolicy") {
		m.policy = gcDrawPolicy(t)
		m.begin("changePolicy", "%+v (a kubelet restart)", m.policy)
		m.restartKubelet("changePolicy")
		return
	}
	m.begin("restart", "")
	m.restartKubelet("restart")
}

// restartKubelet starts a kubelet: new managers with no records, the GC
// loop beginning now, and the start's detection (realImageGCManager.Start).
func (m *gcMachine) restartKubelet(why string) {
	var err error
	if m.core, err = imagegc.NewManager(m.policy, imagegc.Options{}); err != nil {
		m.fail(GCModel, "a valid policy %+v is refused: %v", m.policy, err)
	}
	if m.twin, err = imagegc.NewManager(m.policy, imagegc.Options{}); err != nil {
		m.fail(GCDeterministic, "the second manager refuses %+v: %v", m.policy, err)
	}
	m.beganGC = m.now
	m.records = map[string]model.Record{}
	m.listedSince = map[string]time.Time{}
	m.runDetect()
	m.checkRestart(why)
}

func (m *gcMachine) detect(*rapid.T) {
	m.begin("detect", "at %s", m.clock())
	m.runDetect()
}

func (m *gcMachine) runDetect() {
	view := m.view()
	errCore, errTwin := m.core.Detect(m.now, view), m.twin.Detect(m.now, view)
	if errCore != nil || errTwin != nil {
		m.fail(GCModel, "detection of a valid view failed: %v / %v", errCore, errTwin)
	}
	m.records = model.Detect(m.records, m.modelImages(), m.inUse(), m.now)
	m.lastDetect = m.now
	m.noteListed()
}

// noteListed records the images a detection lists now.
func (m *gcMachine) noteListed() {
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

// periodicGC moves the clock to the GC loop's next period (exactly, or
// one ns either side) and runs the loop's GarbageCollect there.
func (m *gcMachine) periodicGC(t *rapid.T) {
	periods := m.now.Sub(m.beganGC)/imagegc.GCPeriod + 1
	m.now = m.beganGC.Add(periods * imagegc.GCPeriod).Add(rapid.SampledFrom([]time.Duration{-time.Nanosecond, 0, 0, time.Nanosecond}).Draw(t, "offset"))
	m.runGC(t, "periodicGC")
}

// gc is the GC loop's run at the current time.
func (m *gcMachine) gc(t *rapid.T) { m.runGC(t, "gc") }

func (m *gcMachine) runGC(t *rapid.T, action string) {
	m.begin(action, "at %s with %s used of %s", m.clock(), imagegc.FormatSize(m.usedBytes()), imagegc.FormatSize(m.capacityBytes))
	enabled := m.policy.HighThresholdPercent < 100 || m.policy.MaxAge > 0
	// GC-DISABLED applies where the rule keeps the loop from running.
	m.tally.Check(GCDisabled, !enabled)
	if got := m.core.Policy().PeriodicGCEnabled(); got != enabled {
		m.fail(GCDisabled, "policy %+v: the core says the periodic GC runs = %t, the kubelet's rule says %t", m.policy, got, enabled)
	}
	if !enabled {
		m.t.Logf("  image GC is off (high 100, MaxAge 0): the loop removes nothing")
		return
	}
	m.runPass(t, true)
}

func (m *gcMachine) deleteUnusedImages(t *rapid.T) {
	m.begin("deleteUnusedImages", "at %s", m.clock())
	m.runPass(t, false)
}

// gcPass is what one pass saw and did, for the checks.
type gcPass struct {
	isGC bool
	// before are the model's records after the pass's detection; inUse and
	// listed are the runtime's answer at that detection.
	before map[string]model.Record
	inUse  map[string]bool
	listed []string
	// order is the eviction order worked out from before.
	order []string
	// stats is what ImageFsStats answered, when it was asked.
	stats *imagegc.FsStats
	out   imagegc.Outcome
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

// runPass runs GarbageCollect (isGC) or DeleteUnusedImages through the
// stepped API, the machine answering RemoveImage (failures drawn per
// removal) and ImageFsStats, and a container sometimes starting on the
// image being removed (#123631).
func (m *gcMachine) runPass(t *rapid.T, isGC bool) {
	m.markUse()
	m.noteListed()
	view := m.view()
	p := &gcPass{isGC: isGC, inUse: m.inUse(), listed: slices.Clone(m.listed), failing: map[string]string{}, usedBefore: m.usedBytes(),
		arrivedBefore: maps.Clone(m.arrived), lastUseBefore: maps.Clone(m.lastUse)}
	p.before = model.Detect(m.records, m.modelImages(), p.inUse, m.now)
	p.order = gcEvictionOrder(p.before, p.inUse)
	var pass *imagegc.Pass
	var err error
	if isGC {
		pass, err = m.core.GarbageCollect(m.now, m.beganGC, view)
	} else {
		pass, err = m.core.DeleteUnusedImages(m.now, view)
	}
	if err != nil {
		m.fail(GCModel, "a valid view is refused: %v", err)
	}
	for step := pass.Next(); step.Kind != imagegc.StepDone; step = pass.Next() {
		switch step.Kind {
		case imagegc.StepRemoveImage:
			id := step.Removal.ImageID
			if rapid.Bool().Draw(t, "podStartsOnImage") && id != gcPause {
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
			m.t.Logf("  RemoveImage %s (%s, %s): %v", id, step.Removal.Reason, imagegc.FormatSize(step.Removal.SizeBytes), removeErr)
			p.answers = append(p.answers, removeErr)
			if err := pass.RemoveImageDone(removeErr); err != nil {
				m.fail(GCModel, "RemoveImageDone after a removal step: %v", err)
			}
		case imagegc.StepImageFsStats:
			if !isGC {
				m.fail(GCDeleteUnused, "DeleteUnusedImages asked for the filesystem's stats")
			}
			stats := m.fsStats()
			p.stats, p.usedAtStats = &stats, m.usedBytes()
			m.t.Logf("  ImageFsStats: %s available of %s", imagegc.FormatSize(stats.AvailableBytes), imagegc.FormatSize(stats.CapacityBytes))
			if err := pass.ImageFsStatsDone(stats, nil); err != nil {
				m.fail(GCModel, "valid stats %+v refused: %v", stats, err)
			}
		}
	}
	p.out = pass.Outcome()
	p.usedAfter, p.heldAfter = m.usedBytes(), m.heldLayers()
	m.t.Logf("  outcome: freed %d, err %v", p.out.FreedBytes, p.out.Err)
	m.checkPass(p)
}

// gcEvictionOrder is the eviction order worked out from the model's
// records: unused, unpinned, by last use, then first detection, then ID.
func gcEvictionOrder(records map[string]model.Record, inUse map[string]bool) []string {
	var order []string
	for id, r := range records {
		if !inUse[id] && !r.Pinned {
			order = append(order, id)
		}
	}
	sort.Slice(order, func(i, j int) bool { return gcEvictsBefore(records, order[i], order[j]) })
	return order
}

func gcEvictsBefore(records map[string]model.Record, a, b string) bool {
	ra, rb := records[a], records[b]
	if !ra.LastUsed.Equal(rb.LastUsed) {
		return ra.LastUsed.Before(rb.LastUsed)
	}
	if !ra.FirstDetected.Equal(rb.FirstDetected) {
		return ra.FirstDetected.Before(rb.FirstDetected)
	}
	return a < b
}

func gcIDs(attempts []imagegc.Attempt) string {
	ids := make([]string, len(attempts))
	for i, a := range attempts {
		ids[i] = a.ImageID + "/" + a.Reason
		if a.Err != nil {
			ids[i] += "(failed)"
		}
	}
	return "[" + strings.Join(ids, " ") + "]"
}
