package imagegc

import "fmt"

// Event types and the reasons of pkg/kubelet/events the image GC records.
const (
	EventTypeWarning = "Warning"

	ReasonInvalidDiskCapacity = "InvalidDiskCapacity"
	ReasonFreeDiskSpaceFailed = "FreeDiskSpaceFailed"
	ReasonImageGCFailed       = "ImageGCFailed"
	ReasonInvalidImageID      = "InvalidImageID"
)

// Event is a Kubernetes event the kubelet records on its node object.
type Event struct {
	Type, Reason, Message string
}

// GCLoop is the failure rule of the kubelet's image GC loop
// (StartGarbageCollection): a failure right after a success, or on the
// first run, is only logged ("Image garbage collection failed once. Stats
// initialization may not have completed yet"); a failure right after a
// failure records an ImageGCFailed warning with the error's text. The zero
// value is a loop that has not run.
type GCLoop struct {
	prevFailed bool
}

// Observe takes the outcome of one GarbageCollect and returns the event the
// loop records for it, if any.
func (l *GCLoop) Observe(err error) (Event, bool) {
	if err == nil {
		l.prevFailed = false
		return Event{}, false
	}
	repeated := l.prevFailed
	l.prevFailed = true
	if !repeated {
		return Event{}, false
	}
	return Event{Type: EventTypeWarning, Reason: ReasonImageGCFailed, Message: err.Error()}, true
}

// FormatSize is upstream's formatSize: bytes below 1 KiB as "%d B", else
// one decimal in the largest binary unit up to TiB ("1.5 KiB"; 2048 TiB
// stays "2048.0 TiB").
func FormatSize(sizeBytes int64) string {
	const (
		kib = 1024
		mib = 1024 * kib
		gib = 1024 * mib
		tib = 1024 * gib
	)
	size := float64(sizeBytes)
	switch {
	case size < kib:
		return fmt.Sprintf("%d B", sizeBytes)
	case size < mib:
		return fmt.Sprintf("%.1f KiB", size/kib)
	case size < gib:
		return fmt.Sprintf("%.1f MiB", size/mib)
	case size < tib:
		return fmt.Sprintf("%.1f GiB", size/gib)
	default:
		return fmt.Sprintf("%.1f TiB", size/tib)
	}
}
