package imagegc

import (
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// Image GC invariant IDs.
const (
	Model         = "GC-MODEL"
	InUse         = "GC-IN-USE"
	Pinned        = "GC-PINNED"
	Order         = "GC-ORDER"
	Stop          = "GC-STOP"
	Low           = "GC-LOW"
	MinAge        = "GC-MIN-AGE"
	MaxAge        = "GC-MAX-AGE"
	Disabled      = "GC-DISABLED"
	DeleteUnused  = "GC-DELETE-UNUSED"
	Restart       = "GC-RESTART"
	Deterministic = "GC-DETERMINISTIC"
	StartRace     = "GC-123631-START-RACE"
	SharedLayers  = "GC-68203-SHARED-LAYERS"
	subsystem     = "imagegc"
)

// Image GC contract invariant IDs: what the documentation and KEP-4210
// promise a cluster operator, checked against the node the machine plays
// (the images' arrival and use as they happened), not against the kubelet's
// records.
const (
	ContractInUse        = "GC-C-IN-USE"
	ContractMinAge       = "GC-C-MIN-AGE"
	ContractMaxAgeUnused = "GC-C-MAX-AGE-UNUSED"
	ContractMaxAgeBound  = "GC-C-MAX-AGE-BOUND"
	ContractLow          = "GC-C-LOW"
)

// The pages that make the promises.
var (
	docLifecycle = cite.KubernetesDoc(
		"concepts/architecture/garbage-collection/",
		"Garbage Collection",
		"Container image lifecycle",
	)
	docConfig = cite.KubernetesDoc(
		"reference/config-api/kubelet-config.v1beta1/",
		"Kubelet Configuration (v1beta1), KubeletConfiguration",
		"",
	)
	kepTitle = "ImageMaximumGCAge in Kubelet"
)

// Where the image GC invariants come from: the v1.36.3 image GC manager,
// the kubelet's loop that starts it, and the seed article on image GC.
const (
	manager = "pkg/kubelet/images/image_gc_manager.go"
	kubelet = "pkg/kubelet/kubelet.go"

	seedStart    = "Initialisation and start of image GC"
	seedDetect   = "Detecting and maintaining image information"
	seedRun      = "How image GC runs"
	seedEviction = "Disk eviction and image GC"
	seedUse      = "How image GC is used"

	// statStartRace and statOverCount are the suite's statistics: what
	// upstream does, measured rather than judged.
	statStartRace = "removals of an image a container started using after the pass's detection, per pass with such a " +
		"start (#123631)"
	statOverCount = "bytes the kubelet counted as freed beyond what the filesystem regained, per pass with a removal " +
		"(#68203)"
)

func seed(section string) cite.Source {
	return cite.Seed("the kubelet's image garbage collection", section)
}

// invariants are the statements the suite checks after every step.
var invariants = []verify.Property{
	{
		ID:        Model,
		Subsystem: subsystem,
		Statement: "The core and the reference model agree on every detection's records and on every GarbageCollect " +
			"and DeleteUnusedImages: the RemoveImage calls in order with their reasons and failures, the bytes " +
			"counted as freed, the error text and the records left.",
		Sources: []cite.Source{
			cite.Code(manager, "realImageGCManager.detectImages"),
			cite.Code(manager, "realImageGCManager.GarbageCollect"),
			cite.Code(manager, "realImageGCManager.freeSpace"),
			cite.Code(manager, "realImageGCManager.freeOldImages"),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        InUse,
		Subsystem: subsystem,
		Statement: "No pass removes, or hands the post-GC hooks as examined, an image that a container listed at the " +
			"pass's detection runs or mounts as an image volume, exited containers included.",
		Sources: []cite.Source{
			cite.Code(manager, "realImageGCManager.detectImages"),
			cite.Code(manager, "realImageGCManager.imagesInEvictionOrder"),
			cite.Code(manager, "realImageGCManager.runPostGCHooks"),
			seed(seedDetect),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        Pinned,
		Subsystem: subsystem,
		Statement: "No pass removes an image the runtime reports as pinned (the sandbox image), in the MaxAge pass or " +
			"the space pass, or hands it to the post-GC hooks as examined.",
		Sources: []cite.Source{cite.Code(manager, "realImageGCManager.imagesInEvictionOrder"), cite.Issue(111796)},
		Kind:    verify.Fidelity,
	},
	{
		ID:        Order,
		Subsystem: subsystem,
		Statement: "Within each pass the removals follow the eviction order (last used, then first detected, " +
			"ascending; image ID where upstream's order is arbitrary), and the space pass skips no eligible " +
			"image ranked before one it removes.",
		Sources: []cite.Source{
			cite.Code(manager, "realImageGCManager.imagesInEvictionOrder"),
			cite.Code(manager, "byLastUsedAndDetected.Less"),
			seed(seedRun),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        Stop,
		Subsystem: subsystem,
		Statement: "The space pass stops at the first removal that brings the sizes it counted to amountToFree or " +
			"more, and when it ends short it has tried every eligible image; it counts exactly the sizes of " +
			"the images it removed.",
		Sources: []cite.Source{cite.Code(manager, "realImageGCManager.freeSpace")},
		Kind:    verify.Fidelity,
	},
	{
		ID:        Low,
		Subsystem: subsystem,
		Statement: "When the image filesystem's usage is at or above the high threshold, amountToFree is " +
			"capacity×(100−low)/100 − available and GarbageCollect succeeds exactly when no removal failed and " +
			"the eligible images' sizes reach it; then the counted bytes bring available to the low " +
			"threshold's target, and the real filesystem gets there too whenever no removed image shared a " +
			"layer that stayed.",
		Sources: []cite.Source{
			cite.Code(manager, "realImageGCManager.GarbageCollect"),
			seed(seedRun),
			cite.PR(132578),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        MinAge,
		Subsystem: subsystem,
		Statement: "The space pass (GarbageCollect and DeleteUnusedImages) removes only images first detected at " +
			"least MinAge ago by this kubelet run and last used strictly before the pass.",
		Sources: []cite.Source{
			cite.Code(manager, "realImageGCManager.freeSpace"),
			seed(seedUse),
			cite.Issue(119642),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        MaxAge,
		Subsystem: subsystem,
		Statement: "With MaxAge set, GarbageCollect removes for age only once the GC loop has run strictly longer " +
			"than MaxAge since the kubelet started, and then tries exactly the unused unpinned images last " +
			"used strictly more than MaxAge ago (never used since the start counts as always), whatever their " +
			"first detection.",
		Sources: []cite.Source{
			cite.Code(manager, "realImageGCManager.freeOldImages"),
			cite.KEP(4210, "ImageMaximumGCAge"),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        Disabled,
		Subsystem: subsystem,
		Statement: "The kubelet runs the periodic image GC exactly when the high threshold is below 100 or MaxAge is " +
			"set; with high 100 and MaxAge 0 nothing is ever removed periodically.",
		Sources: []cite.Source{cite.Code(kubelet, "Kubelet.StartGarbageCollection"), seed(seedStart)},
		Kind:    verify.Fidelity,
	},
	{
		ID:        DeleteUnused,
		Subsystem: subsystem,
		Statement: "DeleteUnusedImages tries every unused, unpinned image last used before now and at least MinAge " +
			"old, in eviction order, whatever the usage and MaxAge, never reads the filesystem's stats, and " +
			"fails exactly when a removal failed.",
		Sources: []cite.Source{cite.Code(manager, "realImageGCManager.DeleteUnusedImages"), seed(seedEviction)},
		Kind:    verify.Fidelity,
	},
	{
		ID:        Restart,
		Subsystem: subsystem,
		Statement: "After a kubelet restart the records are rebuilt from the start's detection alone: every image is " +
			"first detected at the restart, and last used then if a container uses it, else never (zero).",
		Sources: []cite.Source{
			cite.Code(manager, "realImageGCManager.Start"),
			cite.Issue(119642),
			seed(seedDetect),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        Deterministic,
		Subsystem: subsystem,
		Statement: "A second manager fed the same detections, runtime answers and filesystem stats makes the same " +
			"RemoveImage calls and returns the same outcome and records.",
		Sources: []cite.Source{cite.DeterminismContract},
		Kind:    verify.Fidelity,
	},
	{
		ID:        StartRace,
		Subsystem: subsystem,
		Statement: "Upstream's behaviour (#123631; it breaks GC-C-IN-USE): a container that starts on an image after " +
			"the pass's detection does not stop the pass; the image it was about to remove is still removed, " +
			"and the report counts how often.",
		Sources: []cite.Source{cite.Issue(123631), cite.Code(manager, "realImageGCManager.freeSpace")},
		Kind:    verify.Fidelity,
	},
	{
		ID:        SharedLayers,
		Subsystem: subsystem,
		Statement: "Upstream's behaviour (#68203; it breaks GC-C-LOW): every removal counts the image's reported " +
			"size, shared layers included, so the bytes counted exceed the bytes the filesystem regains by " +
			"exactly, per layer, its size times the removed images holding it, less one if the layer came free.",
		Sources: []cite.Source{cite.Issue(68203), cite.Code(manager, "realImageGCManager.freeSpace")},
		Kind:    verify.Fidelity,
	},
	{ID: ContractInUse, Subsystem: subsystem, Kind: verify.Contract,
		Statement: "Image garbage collection removes only unused images: no pass removes an image while a container " +
			"the runtime lists runs it or mounts it, including a container that started on it while the pass " +
			"was under way (\"the kubelet performs garbage collection on unused images\"; KEP-4210: \"no " +
			"running workloads can be affected\").",
		Sources: []cite.Source{
			docLifecycle,
			cite.KEPSection(4210, kepTitle, "Rollout, Upgrade and Rollback Planning"),
			cite.Issue(123631),
		}},
	{ID: ContractMinAge, Subsystem: subsystem, Kind: verify.Contract,
		Statement: "No image is garbage collected, by any pass, before it has been on the node for imageMinimumGCAge " +
			"(\"imageMinimumGCAge is the minimum age for an unused image before it is garbage collected\"; " +
			"KEP-4210: \"the youngest an image can be to be qualified for garbage collection\").",
		Sources: []cite.Source{docConfig, cite.KEPSection(4210, kepTitle, "Proposal")}},
	{ID: ContractMaxAgeUnused, Subsystem: subsystem, Kind: verify.Contract,
		Statement: "An image removed for its age has been unused for at least imageMaximumGCAge, counted from the " +
			"latest of its last use by a container, its arrival on the node and the kubelet's start (\"the " +
			"maximum age an image can be unused before it is garbage collected\"; \"a time after which unused " +
			"images will be garbage collected\"; after a restart the kubelet waits \"the full " +
			"imageMaximumGCAge duration before qualifying images\").",
		Sources: []cite.Source{docConfig, docLifecycle, cite.KEPSection(4210, kepTitle, "Summary")}},
	{ID: ContractMaxAgeBound, Subsystem: subsystem, Kind: verify.Contract,
		Statement: "With imageMaximumGCAge set, every GC pass, whatever the disk usage, tries to remove each listed " +
			"image that no container uses, that the runtime does not pin, and that has been unused for more " +
			"than imageMaximumGCAge since the latest of its last use, its arrival and the kubelet's start " +
			"(\"the maximum time a local image can be unused for, regardless of disk usage\"; KEP-4210: GC'd " +
			"\"up to 5 minutes after it has aged out\", one GC period).",
		Sources: []cite.Source{
			docLifecycle,
			cite.KEPSection(4210, kepTitle, "Design Details"),
			cite.PR(103299).Noting("pinned images are the runtime's sandbox image, exempt"),
		}},
	{ID: ContractLow, Subsystem: subsystem, Kind: verify.Contract,
		Statement: "When a GC pass finds the image filesystem's disk usage above imageGCHighThresholdPercent, it " +
			"deletes images until the disk usage, as the filesystem measures it, reaches " +
			"imageGCLowThresholdPercent, unless it runs out of images it may delete (unused, unpinned, at " +
			"least imageMinimumGCAge old) or the runtime fails a removal (\"The kubelet deletes images until " +
			"disk usage reaches the LowThresholdPercent value\"; imageGCLowThresholdPercent is the \"Lowest " +
			"disk usage to garbage collect to\").",
		Sources: []cite.Source{docLifecycle, docConfig, cite.Issue(68203)}},
}
