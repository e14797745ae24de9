package verify

import "github.com/nodeproof/nodeproof/verify/cite"

// The pages the image GC promises are written on.
var (
	gcDocLifecycle = cite.KubernetesDoc("concepts/architecture/garbage-collection/", "Garbage Collection", "Container image lifecycle")
	gcDocConfig    = cite.KubernetesDoc("reference/config-api/kubelet-config.v1beta1/", "Kubelet Configuration (v1beta1), KubeletConfiguration", "")
)

const (
	gcKEPTitle = "ImageMaximumGCAge in Kubelet"
	// gcCode is where v1.37.2 still does what v1.36.3 does.
	gcCode = "pkg/kubelet/images/image_gc_manager.go"
)

// imagegcFindings are the known findings in the imagegc subsystem.
var imagegcFindings = []Finding{
	{
		ID:        "GC-F1",
		Title:     "imageMaximumGCAge removes an image younger than imageMinimumGCAge, even one pulled a moment before",
		Subsystem: "imagegc", Suite: "imagegc", Property: "GC-C-MIN-AGE",
		Promise: "imageMinimumGCAge is the minimum age for an unused image before it is garbage collected; " +
			"KEP-4210 calls it the youngest an image can be to be qualified for garbage collection.",
		Sources: []cite.Source{gcDocConfig, cite.KEPSection(4210, gcKEPTitle, "Proposal")},
		Steps: []string{
			"the kubelet starts with imageMinimumGCAge 2m and imageMaximumGCAge 15m; the image filesystem is 10% used",
			"15m1s pass: the kubelet has run for longer than imageMaximumGCAge",
			"an image is pulled (a pod is about to start on it)",
			"the GC loop runs in the same instant: its MaxAge pass removes the image for age, 0s after it came to the node",
		},
		Seed:         5,
		Confirmation: "conformance: TestFindingGCMaxAgeIgnoresMinAge",
		RealKubelet:  imageGCOnNode,
		Tracker:      []cite.Source{cite.Issue(132403).Noting("open: images of pods whose containers were never created are removed every GC period under imageMaximumGCAge, the same mechanism")},
		Releases:     "still present in v1.37.2 (read: " + gcCode + " realImageGCManager.freeOldImages)",
	},
	{
		ID:        "GC-F2",
		Title:     "imageMaximumGCAge removes an image unused for less than imageMaximumGCAge: one the kubelet has not seen in use since it started counts as unused since forever",
		Subsystem: "imagegc", Suite: "imagegc", Property: "GC-C-MAX-AGE-UNUSED",
		Promise: "imageMaximumGCAge is the maximum age an image can be unused before it is garbage collected: " +
			"a time after which unused images will be garbage collected (KEP-4210); after a kubelet restart the kubelet " +
			"waits the full imageMaximumGCAge before qualifying images for garbage collection based on image age.",
		Sources: []cite.Source{gcDocConfig, gcDocLifecycle, cite.KEPSection(4210, gcKEPTitle, "Summary")},
		Steps: []string{
			"the kubelet starts with imageMinimumGCAge 2m and imageMaximumGCAge 1h; the image filesystem is 10% used",
			"50m pass; an image is pulled and the background detection lists it",
			"10m1s pass; no container has used the image",
			"the GC loop runs: its MaxAge pass removes the image for age after 10m1s unused, under imageMaximumGCAge 1h",
		},
		Seed:         2,
		Confirmation: "conformance: TestFindingGCMaxAgeRemovesRecentImage",
		RealKubelet:  imageGCOnNode,
		Tracker:      []cite.Source{cite.Issue(132403).Noting("open: images of pods whose containers were never created are removed every GC period under imageMaximumGCAge")},
		Releases:     "still present in v1.37.2 (read: " + gcCode + " realImageGCManager.freeOldImages)",
	},
	{
		ID:        "GC-F3",
		Title:     "image GC removes the image of a container that started after the pass's detection",
		Subsystem: "imagegc", Suite: "imagegc", Property: "GC-C-IN-USE",
		Promise: "The kubelet performs garbage collection on unused images; KEP-4210: the kubelet garbage collects an " +
			"image only once its containers are removed, so no running workloads can be affected.",
		Sources: []cite.Source{gcDocLifecycle, cite.KEPSection(4210, gcKEPTitle, "Rollout, Upgrade and Rollback Planning")},
		Steps: []string{
			"an image no container uses is on the node; the image filesystem is 90% used (high threshold 85%)",
			"the GC loop's detection finds the image unused and the space pass picks it",
			"before its RemoveImage is made, a pod's container starts on the image (the kubelet's background detection even records it in use)",
			"the space pass removes the image all the same; the running container's image is gone",
		},
		Seed:         2,
		Confirmation: "conformance: TestFindingGCRemovesImageOfStartedContainer",
		RealKubelet:  imageGCOnNode,
		Tracker:      []cite.Source{cite.Issue(123631).Noting("open")},
		Releases:     "still present in v1.37.2 (read: " + gcCode + " realImageGCManager.freeSpace)",
	},
	{
		ID:        "GC-F4",
		Title:     "image GC stops above the low threshold, reporting success, when removed images share layers with images left",
		Subsystem: "imagegc", Suite: "imagegc", Property: "GC-C-LOW",
		Promise: "Disk usage above imageGCHighThresholdPercent triggers garbage collection; the kubelet deletes images " +
			"until disk usage reaches imageGCLowThresholdPercent, the lowest disk usage to garbage collect to.",
		Sources: []cite.Source{gcDocLifecycle, gcDocConfig},
		Steps: []string{
			"two unused images share a 300-byte base layer and hold 50 bytes each of their own; the runtime reports each as 350 bytes",
			"with 450 bytes of logs and volumes, 850 of 1000 bytes are used: 85%, above the high threshold 80%; the low threshold 60% needs 250 bytes freed",
			"the GC loop removes the first image, counts 350 bytes freed, and stops with no error",
			"the filesystem regained 50 bytes: 80% is still used, above the low threshold, though removing the second image would reach 45%",
		},
		Seed:         8,
		Confirmation: "conformance: TestFindingGCStopsAboveLowThreshold",
		RealKubelet:  imageGCOnNode,
		Tracker:      []cite.Source{cite.Issue(68203).Noting("closed by the bot as rotten, not fixed")},
		Releases:     "still present in v1.37.2 (read: " + gcCode + " realImageGCManager.GarbageCollect, freeSpace)",
	},
}
