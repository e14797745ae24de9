// Package imagegc is the deterministic core of the kubelet's image garbage
// collection (pkg/kubelet/images/image_gc_manager.go, Kubernetes v1.36,
// spec/imagegc.md §2): the policy and its validation, the records of the
// images the kubelet has seen, detection from the runtime's listing, the
// eviction order, the MaxAge pass, the space pass, DeleteUnusedImages and
// the events and error texts of v1.36.
//
// # API
//
//	m, err := imagegc.NewManager(imagegc.DefaultPolicy(), imagegc.Options{}) // a kubelet start
//	err = m.Detect(now, view)                        // the 5-minute detection loop
//	pass, err := m.GarbageCollect(now, beganGC, view) // err: bad input only
//	for step := pass.Next(); step.Kind != imagegc.StepDone; step = pass.Next() {
//	        switch step.Kind {
//	        case imagegc.StepRemoveImage: // perform it, then report the runtime's answer
//	                err = pass.RemoveImageDone(rt.RemoveImage(step.Removal.ImageID, step.Removal.RuntimeHandler))
//	        case imagegc.StepImageFsStats:
//	                stats, statsErr := rt.ImageFsStats()
//	                err = pass.ImageFsStatsDone(stats, statsErr)
//	        }
//	}
//	out := pass.Outcome() // Err (upstream's text), Events, Attempts, FreedBytes, Usage, hooks' input
//
// m.RunGarbageCollect(rt, now, beganGC) and m.RunDeleteUnusedImages(rt, now)
// do the same in one call for a caller that implements Runtime.
//
// The runtime's view (RuntimeView) is plain values: the images ListImages
// returns, the containers GetPods(all=true) lists with the image-volume
// mounts GetContainerStatus reports, and the error each of those calls
// returned, so upstream's outcome of a failed listing is reproduced. A pass
// starts with upstream's detection on that view; then the caller steps it:
// one RemoveImage at a time (a failure is recorded and the pass continues,
// as upstream), and ImageFsStats when upstream reads it (after the MaxAge
// pass). Policy.Validate and ValidateKubeletConfig give upstream's two
// validations with their texts; GCLoop gives the ImageGCFailed event rule
// of the kubelet's 5-minute loop; FormatSize is upstream's formatSize.
//
// A kubelet restart is a new Manager: the records live only in memory, so
// every image not in use at the first detection afterwards has a zero
// lastUsed (always older than MaxAge) and is first detected at that time.
//
// # Contract
//
// Everything is a pure function of the arguments and the Manager's records:
// no clock, goroutines, locks, I/O or randomness; time is an argument. Where
// upstream's order is arbitrary (sort.Sort over Go map order when two
// images have the same lastUsed and firstDetected) the core orders by the
// record key, so the same inputs give the same removals. Bad input (a
// negative size, too many images) gets an *InputError naming the field and
// the rule and changes nothing; every collection has a bound (MaxImages,
// MaxContainers, MaxMountsPerContainer, MaxImageSizeBytes, MaxFsBytes) so
// every sum stays inside int64. A Manager is used by one caller at a time;
// Detect may run between the steps of a pass, as upstream's background
// detection may, and the pass goes on with the eviction list it computed.
// docs/deviations.md lists the differences from upstream.
package imagegc
