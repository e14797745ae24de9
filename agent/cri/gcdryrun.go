package cri

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nodeproof/nodeproof/core/imagegc"
)

// GCDryRun is what a prediction of the kubelet's image GC takes besides
// the runtime: the policy, the time of the pass and the assumptions about
// the state the kubelet keeps only in memory.
type GCDryRun struct {
	// Socket names the runtime in the prediction.
	Socket string
	// Policy is the kubelet's image GC policy; it must be valid
	// (Policy.Validate).
	Policy imagegc.Policy
	// Now is the time of the pass.
	Now time.Time
	// Uptime is how long before Now the kubelet started and first detected
	// every image listed; UptimeGiven says the caller chose it rather than
	// taking one long enough that every image is past both ages.
	Uptime      time.Duration
	UptimeGiven bool
}

// GCPrediction is what the kubelet's image GC would do now, removing
// nothing: the output of `nodeproof imagegc`, in its JSON form.
type GCPrediction struct {
	Runtime     GCRuntimeInfo `json:"runtime"`
	Policy      GCPolicy      `json:"policy"`
	Now         time.Time     `json:"now"`
	Assumptions GCAssumptions `json:"assumptions"`
	Mountpoint  string        `json:"mountpoint,omitempty"`
	UsageBefore *GCUsage      `json:"usageBefore"`
	Removals    []GCRemoval   `json:"removals"`
	UsageAfter  *GCUsage      `json:"usageAfter"`
	// Error is upstream's error text of the pass; empty when it succeeds.
	Error  string    `json:"error"`
	Events []GCEvent `json:"events"`
}

// GCRuntimeInfo names the runtime read.
type GCRuntimeInfo struct {
	Socket  string `json:"socket"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// GCPolicy is the policy in the kubelet's terms.
type GCPolicy struct {
	HighThresholdPercent int    `json:"highThresholdPercent"`
	LowThresholdPercent  int    `json:"lowThresholdPercent"`
	MinAge               string `json:"minAge"`
	MaxAge               string `json:"maxAge"`
	// PeriodicGC is false when the kubelet starts no image GC loop.
	PeriodicGC bool `json:"periodicGC"`
}

// GCAssumptions are the kubelet's in-memory state the prediction assumes,
// with Notes saying it in words.
type GCAssumptions struct {
	KubeletStarted     time.Time `json:"kubeletStarted"`
	KubeletUptime      string    `json:"kubeletUptime"`
	KubeletUptimeGiven bool      `json:"kubeletUptimeGiven"`
	ImagesInUse        int       `json:"imagesInUse"`
	ImagesNotInUse     int       `json:"imagesNotInUse"`
	Notes              []string  `json:"notes"`
}

// GCUsage is the image filesystem's usage as the kubelet computes it.
type GCUsage struct {
	CapacityBytes  int64  `json:"capacityBytes"`
	AvailableBytes int64  `json:"availableBytes"`
	UsedBytes      int64  `json:"usedBytes"`
	Percent        int    `json:"percent"`
	Text           string `json:"text"`
}

// GCRemoval is one image the pass would remove, with its reason (age or
// space).
type GCRemoval struct {
	ImageID   string `json:"imageID"`
	Tag       string `json:"tag"`
	SizeBytes int64  `json:"sizeBytes"`
	Size      string `json:"size"`
	Reason    string `json:"reason"`
}

// GCEvent is an event the kubelet would record.
type GCEvent struct {
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// PredictGC reads the runtime behind client (Version, one listing of
// images, pods and containers, ImageFsInfo and statfs) and predicts what
// the kubelet's image GC would remove at d.Now, calling no RemoveImage.
// Its errors are the runtime's: a call that failed or an answer that breaks
// CRI.
func PredictGC(ctx context.Context, client *Client, d GCDryRun) (*GCPrediction, error) {
	version, err := client.Version(ctx)
	if err != nil {
		return nil, err
	}
	p := &GCPrediction{
		Runtime:  GCRuntimeInfo{Socket: d.Socket, Name: version.RuntimeName, Version: version.RuntimeVersion},
		Policy:   gcPolicy(d.Policy),
		Now:      d.Now.UTC(),
		Removals: []GCRemoval{},
		Events:   []GCEvent{},
	}
	rt := &dryRunRuntime{GCRuntime: NewGCRuntime(ctx, client), sizes: map[string]int64{}}
	// One listing serves both detections, so the prediction is of one
	// moment of the runtime.
	view := rt.View()
	if err := errors.Join(view.ListImagesErr, view.GetPodsErr); err != nil {
		return nil, err
	}
	tags := rt.noteListed()
	m, err := imagegc.NewManager(d.Policy, imagegc.Options{})
	if err != nil {
		return nil, err
	}
	began := d.Now.Add(-d.Uptime)
	if p.Assumptions, err = detectAtStart(m, view, d, began); err != nil {
		return nil, err
	}
	if d.Policy.PeriodicGCEnabled() {
		if err := p.pass(m, rt, view, d.Now, began, tags); err != nil {
			return nil, err
		}
	}
	if err := p.measure(rt); err != nil {
		return nil, err
	}
	return p, nil
}

func gcPolicy(p imagegc.Policy) GCPolicy {
	return GCPolicy{HighThresholdPercent: p.HighThresholdPercent, LowThresholdPercent: p.LowThresholdPercent,
		MinAge: p.MinAge.String(), MaxAge: p.MaxAge.String(), PeriodicGC: p.PeriodicGCEnabled()}
}

// detectAtStart is the kubelet's first detection, at its start: the images
// a container uses now get that time as their last use, the others none.
// It returns the assumptions this makes.
func detectAtStart(m *imagegc.Manager, view imagegc.RuntimeView, d GCDryRun, began time.Time) (GCAssumptions, error) {
	a := GCAssumptions{KubeletStarted: began.UTC(), KubeletUptime: d.Uptime.String(), KubeletUptimeGiven: d.UptimeGiven}
	if err := m.Detect(began, view); err != nil {
		return a, err
	}
	for _, r := range m.Records() {
		if r.LastUsed.IsZero() {
			a.ImagesNotInUse++
		} else {
			a.ImagesInUse++
		}
	}
	a.Notes = gcNotes(d, a)
	return a, nil
}

// pass runs the periodic pass at now against the dry-run runtime and
// records its removals, error and events. An error of the pass that is the
// runtime's (a failed call, an answer that breaks CRI) is returned; the
// kubelet's own outcome (an insufficient-space error) is the prediction's.
func (p *GCPrediction) pass(m *imagegc.Manager, rt *dryRunRuntime, view imagegc.RuntimeView, now, began time.Time, tags map[string]string) error {
	pass, err := m.GarbageCollect(now, began, view)
	if err != nil {
		return err
	}
	out, err := imagegc.Run(pass, rt)
	if err == nil && out.Err != nil && runtimeReadError(out.Err) {
		err = out.Err
	}
	if err != nil {
		return err
	}
	for _, a := range out.Attempts {
		p.Removals = append(p.Removals, GCRemoval{ImageID: a.ImageID, Tag: tags[a.ImageID],
			SizeBytes: a.SizeBytes, Size: imagegc.FormatSize(a.SizeBytes), Reason: a.Reason})
	}
	if out.Err != nil {
		p.Error = out.Err.Error()
	}
	for _, e := range out.Events {
		p.Events = append(p.Events, GCEvent{Type: e.Type, Reason: e.Reason, Message: e.Message})
	}
	return nil
}

// measure fills in the image filesystem and its usage before and after
// the removals, reading it when the pass did not (no GC loop, or the
// MaxAge pass failed first).
func (p *GCPrediction) measure(rt *dryRunRuntime) error {
	if rt.measured == nil {
		if _, err := rt.ImageFsStats(); err != nil {
			return err
		}
	}
	p.Mountpoint = rt.Filesystem().Mountpoint
	p.UsageBefore = usageOf(rt.measured.CapacityBytes, rt.measured.AvailableBytes)
	p.UsageAfter = usageOf(rt.measured.CapacityBytes, rt.measured.AvailableBytes+rt.removedBytes)
	return nil
}

// dryRunRuntime is the GCRuntime with RemoveImage answered without the
// runtime: it succeeds and counts the image's reported size, which later
// stats reads add to the available bytes, as the kubelet would count them.
type dryRunRuntime struct {
	*GCRuntime
	sizes        map[string]int64 // reported sizes by image ID
	removedBytes int64
	measured     *imagegc.FsStats // statfs as read, before any pretend removal
}

func (r *dryRunRuntime) RemoveImage(imageID, _ string) error {
	r.removedBytes += r.sizes[imageID]
	return nil
}

func (r *dryRunRuntime) ImageFsStats() (imagegc.FsStats, error) {
	stats, err := r.GCRuntime.ImageFsStats()
	if err != nil {
		return stats, err
	}
	measured := stats
	r.measured = &measured
	stats.AvailableBytes = min(stats.AvailableBytes+r.removedBytes, stats.CapacityBytes)
	return stats, nil
}

// noteListed keeps each listed image's size, for the pretend removals, and
// returns its first tag by ID.
func (r *dryRunRuntime) noteListed() map[string]string {
	tags := map[string]string{}
	for _, img := range r.Listed() {
		r.sizes[img.ID] = img.SizeBytes
		if len(img.RepoTags) > 0 {
			tags[img.ID] = img.RepoTags[0]
		}
	}
	return tags
}

// usageOf is the kubelet's usage of a filesystem reading: the percent is
// 100 - available*100/capacity in integer arithmetic.
func usageOf(capacity, available int64) *GCUsage {
	available = min(available, capacity)
	u := &GCUsage{CapacityBytes: capacity, AvailableBytes: available, UsedBytes: capacity - available}
	if capacity > 0 {
		u.Percent = 100 - int(available*100/capacity)
	}
	u.Text = fmt.Sprintf("%d%% (%s of %s used, %s available)", u.Percent,
		imagegc.FormatSize(u.UsedBytes), imagegc.FormatSize(capacity), imagegc.FormatSize(available))
	return u
}

// runtimeReadError says whether err is the runtime's failure (a call that
// failed or an answer that breaks CRI) rather than the kubelet's outcome.
func runtimeReadError(err error) bool {
	var rpcErr *RPCError
	var respErr *ResponseError
	var inputErr *imagegc.InputError
	return errors.As(err, &rpcErr) || errors.As(err, &respErr) || errors.As(err, &inputErr)
}

// gcNotes are the assumptions in words, the same in text and JSON.
func gcNotes(d GCDryRun, a GCAssumptions) []string {
	started := fmt.Sprintf("the kubelet started %v ago (--kubelet-uptime)", d.Uptime)
	if !d.UptimeGiven {
		started = fmt.Sprintf("the kubelet started long enough ago that every image is older than the min age and the max-age wait is over (--kubelet-uptime not given; taken as %v)", d.Uptime)
	}
	notes := []string{
		started,
		"every image listed now was first detected at the kubelet's start",
		fmt.Sprintf("last used: now for the %d image(s) a listed container uses (exited containers included); unknown, so zero as after a kubelet restart, for the other %d", a.ImagesInUse, a.ImagesNotInUse),
		"images tied on last use and first detection are removed in image ID order (upstream's order among them is arbitrary)",
		"nothing is removed: sizes are the runtime's, and the usage after is the kubelet's arithmetic (statfs available + the sizes removed); the space really freed differs where layers are shared or unpacked (#68203)",
	}
	if !d.Policy.PeriodicGCEnabled() {
		notes = append(notes, "with --high 100 and --max-age 0 the kubelet starts no image GC loop: nothing is removed periodically")
	}
	return notes
}
