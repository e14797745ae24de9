package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/agent/cri"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/core/imagegc"
)

// defaultCRISocket is containerd's socket, where the kubelet's
// --container-runtime-endpoint points on most nodes.
const defaultCRISocket = "/run/containerd/containerd.sock"

// imagegcOptions are the validated flags of `nodeproof imagegc`.
type imagegcOptions struct {
	socket  string
	policy  imagegc.Policy
	timeout time.Duration
	asJSON  bool
	// uptime is how long ago the kubelet started; uptimeGiven says whether
	// --kubelet-uptime chose it or it is the "long enough" default.
	uptime      time.Duration
	uptimeGiven bool
}

// imagegcFlags are the flags as typed.
type imagegcFlags struct {
	socket                          string
	high, low                       int32
	minAge, maxAge, timeout, uptime time.Duration
	asJSON                          bool
}

func newImageGCCommand(clock func() time.Time) *cobra.Command {
	var f imagegcFlags
	cmd := &cobra.Command{
		Use:                   "imagegc [--cri-socket PATH] [--high P] [--low P] [--min-age D] [--max-age D] [--kubelet-uptime D] [--timeout D] [--json]",
		Short:                 "print what the kubelet's image garbage collection would remove now from a live CRI runtime, removing nothing",
		Long:                  imagegcLong,
		DisableFlagsInUseLine: true,
		Args:                  cli.NoArguments,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.options(cmd.Flags().Changed)
			if err != nil {
				return cli.UsageError(err)
			}
			return cli.Exit(runImageGC(cmd.Context(), opts, clock(), cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.socket, "cri-socket", defaultCRISocket, "the runtime's CRI Unix socket `PATH`, or the kubelet's --container-runtime-endpoint (unix:///PATH)")
	fl.Int32Var(&f.high, "high", 85, "image GC high threshold `PERCENT` (the kubelet's --image-gc-high-threshold): usage at or above it starts the space pass")
	fl.Int32Var(&f.low, "low", 80, "image GC low threshold `PERCENT` (--image-gc-low-threshold): the space pass frees down to it")
	fl.DurationVar(&f.minAge, "min-age", 2*time.Minute, "imageMinimumGCAge `DURATION`: an image first detected more recently is not removed by the space pass")
	fl.DurationVar(&f.maxAge, "max-age", 0, "imageMaximumGCAge `DURATION`: an unused image not used for longer is removed whatever the usage; 0 is off")
	fl.DurationVar(&f.uptime, "kubelet-uptime", 0, "how long ago the kubelet started (`DURATION`); every image listed now is assumed first detected then (default: long enough that every image is older than --min-age and the --max-age wait is over)")
	fl.DurationVar(&f.timeout, "timeout", cri.DefaultTimeout, "bound of each CRI call (`DURATION`, the kubelet's --runtime-request-timeout)")
	fl.BoolVar(&f.asJSON, "json", false, "print the prediction as one JSON object")
	return cmd
}

// options validates the flags; changed says whether a flag was given.
func (f imagegcFlags) options(changed func(string) bool) (imagegcOptions, error) {
	config := imagegc.KubeletConfig{
		ImageGCHighThresholdPercent: f.high, ImageGCLowThresholdPercent: f.low,
		ImageMinimumGCAge: f.minAge, ImageMaximumGCAge: f.maxAge,
	}
	if err := imagegc.ValidateKubeletConfig(config); err != nil {
		return imagegcOptions{}, fmt.Errorf("--high %d --low %d --min-age %v --max-age %v (the kubelet's image GC settings): %w", f.high, f.low, f.minAge, f.maxAge, err)
	}
	if f.timeout <= 0 {
		return imagegcOptions{}, fmt.Errorf("--timeout %v: must be more than 0", f.timeout)
	}
	if f.uptime < 0 {
		return imagegcOptions{}, fmt.Errorf("--kubelet-uptime %v: must not be negative", f.uptime)
	}
	socket, err := criSocketPath(f.socket)
	if err != nil {
		return imagegcOptions{}, err
	}
	opts := imagegcOptions{socket: socket, policy: config.Policy(), timeout: f.timeout, asJSON: f.asJSON,
		uptime: f.uptime, uptimeGiven: changed("kubelet-uptime")}
	if !opts.uptimeGiven {
		// Any uptime above both ages gives the same prediction: every
		// image is past MinAge and the MaxAge start-up wait is over.
		opts.uptime = max(opts.policy.MinAge, opts.policy.MaxAge) + imagegc.GCPeriod
	}
	return opts, nil
}

// criSocketPath takes --cri-socket as a path or as the kubelet's
// --container-runtime-endpoint spells it (unix:///run/containerd/containerd.sock),
// and refuses any other endpoint in the flag's own words.
func criSocketPath(flag string) (string, error) {
	path := flag
	if rest, ok := strings.CutPrefix(flag, "unix://"); ok {
		path = rest
	} else if scheme, _, ok := strings.Cut(flag, "://"); ok {
		return "", fmt.Errorf("--cri-socket %q: only a Unix socket can be read, as a path or unix:///PATH, not a %s:// endpoint", flag, scheme)
	}
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("--cri-socket %q: must be an absolute path to the runtime's Unix socket (or unix:///PATH)", flag)
	}
	return path, nil
}

const imagegcLong = `Reads a live container runtime over CRI (ListImages, ListPodSandbox,
ListContainers, ContainerStatus, ImageFsInfo and statfs of the image
filesystem) and prints what the v1.36 kubelet's image garbage collection
(core/imagegc) would remove now, in order: each image's ID and tag, the size
the runtime reports and the reason (age: the MaxAge pass; space: the pass
that frees down to the low threshold), the image filesystem's usage before
and after, and the outcome with the error and events upstream would give.

Nothing is removed: RemoveImage is not called. The usage after is the
kubelet's own arithmetic, statfs's available bytes plus the sizes of the
images removed; the space a removal really frees differs where layers are
shared or unpacked (#68203).

The kubelet keeps part of its state only in memory, so the prediction
assumes it and prints the assumptions:
  - the kubelet started --kubelet-uptime ago (default: long enough that
    every image is older than --min-age and the --max-age wait is over) and
    first detected every image listed now at its start;
  - the last use of an image a listed container uses (exited ones included)
    is now; of any other image unknown, so zero, as after a kubelet restart:
    with --max-age set, every unused image is then old enough to go;
  - images tied on last use and first detection go in image ID order, where
    upstream's order is arbitrary.

Exit status: 0 when the prediction was made, whatever the kubelet's outcome
(an insufficient-space error included); 1 when the runtime could not be read
(unreachable, or an answer that breaks CRI) or the output not written; 2 for
bad flags, naming the flag and the kubelet's rule.`

// dryRunRuntime is the CRI adapter with RemoveImage answered without the
// runtime: it succeeds and counts the image's reported size, which later
// stats reads add to the available bytes, as the kubelet would count them.
type dryRunRuntime struct {
	*cri.GCRuntime
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

// imagegcPrediction is what `nodeproof imagegc` prints; the JSON form.
type imagegcPrediction struct {
	Runtime     runtimeJSON     `json:"runtime"`
	Policy      policyJSON      `json:"policy"`
	Now         time.Time       `json:"now"`
	Assumptions assumptionsJSON `json:"assumptions"`
	Mountpoint  string          `json:"mountpoint,omitempty"`
	UsageBefore *usageJSON      `json:"usageBefore"`
	Removals    []removalJSON   `json:"removals"`
	UsageAfter  *usageJSON      `json:"usageAfter"`
	// Error is upstream's error text of the pass; empty when it succeeds.
	Error  string      `json:"error"`
	Events []eventJSON `json:"events"`
}

type runtimeJSON struct {
	Socket  string `json:"socket"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

type policyJSON struct {
	HighThresholdPercent int    `json:"highThresholdPercent"`
	LowThresholdPercent  int    `json:"lowThresholdPercent"`
	MinAge               string `json:"minAge"`
	MaxAge               string `json:"maxAge"`
	// PeriodicGC is false when the kubelet starts no image GC loop.
	PeriodicGC bool `json:"periodicGC"`
}

type assumptionsJSON struct {
	KubeletStarted     time.Time `json:"kubeletStarted"`
	KubeletUptime      string    `json:"kubeletUptime"`
	KubeletUptimeGiven bool      `json:"kubeletUptimeGiven"`
	ImagesInUse        int       `json:"imagesInUse"`
	ImagesNotInUse     int       `json:"imagesNotInUse"`
	Notes              []string  `json:"notes"`
}

type usageJSON struct {
	CapacityBytes  int64  `json:"capacityBytes"`
	AvailableBytes int64  `json:"availableBytes"`
	UsedBytes      int64  `json:"usedBytes"`
	Percent        int    `json:"percent"`
	Text           string `json:"text"`
}

type removalJSON struct {
	ImageID   string `json:"imageID"`
	Tag       string `json:"tag"`
	SizeBytes int64  `json:"sizeBytes"`
	Size      string `json:"size"`
	Reason    string `json:"reason"`
}

type eventJSON struct {
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// usageOf is the kubelet's usage of a filesystem reading: the percent is
// 100 - available*100/capacity in integer arithmetic.
func usageOf(capacity, available int64) *usageJSON {
	available = min(available, capacity)
	u := &usageJSON{CapacityBytes: capacity, AvailableBytes: available, UsedBytes: capacity - available}
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
	var rpcErr *cri.RPCError
	var respErr *cri.ResponseError
	var inputErr *imagegc.InputError
	return errors.As(err, &rpcErr) || errors.As(err, &respErr) || errors.As(err, &inputErr)
}

func runImageGC(ctx context.Context, opts imagegcOptions, now time.Time, stdout, stderr io.Writer) int {
	fail := func(status int, format string, args ...any) int {
		fmt.Fprintf(stderr, "nodeproof imagegc: "+format+"\n", args...)
		return status
	}
	client, err := cri.New(cri.Options{Socket: opts.socket, Timeout: opts.timeout})
	if err != nil {
		return fail(cli.StatusUsage, "--cri-socket: %v", err)
	}
	defer client.Close()
	version, err := client.Version(ctx)
	if err != nil {
		return fail(cli.StatusFailed, "reading the runtime on %s: %v", opts.socket, err)
	}
	pred := imagegcPrediction{
		Runtime: runtimeJSON{Socket: opts.socket, Name: version.RuntimeName, Version: version.RuntimeVersion},
		Policy: policyJSON{HighThresholdPercent: opts.policy.HighThresholdPercent, LowThresholdPercent: opts.policy.LowThresholdPercent,
			MinAge: opts.policy.MinAge.String(), MaxAge: opts.policy.MaxAge.String(), PeriodicGC: opts.policy.PeriodicGCEnabled()},
		Now:      now.UTC(),
		Removals: []removalJSON{},
		Events:   []eventJSON{},
	}
	began := now.Add(-opts.uptime)
	rt := &dryRunRuntime{GCRuntime: cri.NewGCRuntime(ctx, client), sizes: map[string]int64{}}
	// One listing serves both detections, so the prediction is of one
	// moment of the runtime.
	view := rt.View()
	for _, err := range []error{view.ListImagesErr, view.GetPodsErr} {
		if err != nil {
			return fail(cli.StatusFailed, "reading the runtime on %s: %v", opts.socket, err)
		}
	}
	tags := map[string]string{}
	for _, img := range rt.Listed() {
		rt.sizes[img.ID] = img.SizeBytes
		if len(img.RepoTags) > 0 {
			tags[img.ID] = img.RepoTags[0]
		}
	}
	m, err := imagegc.NewManager(opts.policy, imagegc.Options{})
	if err != nil {
		return fail(cli.StatusUsage, "%v", err)
	}
	// The kubelet's first detection, at its start: the images a container
	// uses now get that time as their last use, the others none.
	if err := m.Detect(began, view); err != nil {
		return fail(cli.StatusFailed, "reading the runtime on %s: %v", opts.socket, err)
	}
	for _, r := range m.Records() {
		if r.LastUsed.IsZero() {
			pred.Assumptions.ImagesNotInUse++
		} else {
			pred.Assumptions.ImagesInUse++
		}
	}
	pred.Assumptions.KubeletStarted, pred.Assumptions.KubeletUptime = began.UTC(), opts.uptime.String()
	pred.Assumptions.KubeletUptimeGiven = opts.uptimeGiven
	pred.Assumptions.Notes = imagegcNotes(opts, pred.Assumptions)

	if opts.policy.PeriodicGCEnabled() {
		pass, err := m.GarbageCollect(now, began, view)
		if err != nil {
			return fail(cli.StatusFailed, "reading the runtime on %s: %v", opts.socket, err)
		}
		out, err := imagegc.Run(pass, rt)
		if err == nil && out.Err != nil && runtimeReadError(out.Err) {
			err = out.Err
		}
		if err != nil {
			return fail(cli.StatusFailed, "reading the runtime on %s: %v", opts.socket, err)
		}
		for _, a := range out.Attempts {
			pred.Removals = append(pred.Removals, removalJSON{ImageID: a.ImageID, Tag: tags[a.ImageID],
				SizeBytes: a.SizeBytes, Size: imagegc.FormatSize(a.SizeBytes), Reason: a.Reason})
		}
		if out.Err != nil {
			pred.Error = out.Err.Error()
		}
		for _, e := range out.Events {
			pred.Events = append(pred.Events, eventJSON{Type: e.Type, Reason: e.Reason, Message: e.Message})
		}
	}
	if rt.measured == nil {
		// The pass ended before reading the filesystem (no GC loop, or the
		// MaxAge pass failed): read it for the usage lines.
		if _, err := rt.ImageFsStats(); err != nil {
			return fail(cli.StatusFailed, "reading the runtime on %s: %v", opts.socket, err)
		}
	}
	pred.Mountpoint = rt.Filesystem().Mountpoint
	pred.UsageBefore = usageOf(rt.measured.CapacityBytes, rt.measured.AvailableBytes)
	pred.UsageAfter = usageOf(rt.measured.CapacityBytes, rt.measured.AvailableBytes+rt.removedBytes)

	if opts.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(pred); err != nil {
			return fail(cli.StatusFailed, "writing JSON: %v", err)
		}
		return cli.StatusOK
	}
	if _, err := io.WriteString(stdout, renderImageGC(pred)); err != nil {
		return fail(cli.StatusFailed, "writing the output: %v", err)
	}
	return cli.StatusOK
}

// imagegcNotes are the assumptions in words, the same in text and JSON.
func imagegcNotes(opts imagegcOptions, a assumptionsJSON) []string {
	started := fmt.Sprintf("the kubelet started %v ago (--kubelet-uptime)", opts.uptime)
	if !opts.uptimeGiven {
		started = fmt.Sprintf("the kubelet started long enough ago that every image is older than the min age and the max-age wait is over (--kubelet-uptime not given; taken as %v)", opts.uptime)
	}
	notes := []string{
		started,
		"every image listed now was first detected at the kubelet's start",
		fmt.Sprintf("last used: now for the %d image(s) a listed container uses (exited containers included); unknown, so zero as after a kubelet restart, for the other %d", a.ImagesInUse, a.ImagesNotInUse),
		"images tied on last use and first detection are removed in image ID order (upstream's order among them is arbitrary)",
		"nothing is removed: sizes are the runtime's, and the usage after is the kubelet's arithmetic (statfs available + the sizes removed); the space really freed differs where layers are shared or unpacked (#68203)",
	}
	if !opts.policy.PeriodicGCEnabled() {
		notes = append(notes, "with --high 100 and --max-age 0 the kubelet starts no image GC loop: nothing is removed periodically")
	}
	return notes
}

func renderImageGC(p imagegcPrediction) string {
	var b strings.Builder
	fmt.Fprintf(&b, "runtime: %s %s on %s\n", p.Runtime.Name, p.Runtime.Version, p.Runtime.Socket)
	maxAge := p.Policy.MaxAge
	if maxAge == "0s" {
		maxAge += " (off)"
	}
	fmt.Fprintf(&b, "policy: high %d%%, low %d%%, min age %s, max age %s\n", p.Policy.HighThresholdPercent, p.Policy.LowThresholdPercent, p.Policy.MinAge, maxAge)
	fmt.Fprintf(&b, "now: %s\n", p.Now.Format(time.RFC3339))
	b.WriteString("assumed (the kubelet keeps this state only in memory):\n")
	for _, n := range p.Assumptions.Notes {
		fmt.Fprintf(&b, "  - %s\n", n)
	}
	fmt.Fprintf(&b, "image filesystem: %s\n", p.Mountpoint)
	fmt.Fprintf(&b, "usage before: %s\n", p.UsageBefore.Text)
	if len(p.Removals) == 0 {
		b.WriteString("would remove: nothing\n")
	} else {
		b.WriteString("would remove, in order:\n")
		for i, r := range p.Removals {
			tag := r.Tag
			if tag == "" {
				tag = "<none>"
			}
			fmt.Fprintf(&b, "  %d. %s %s  %s  %s\n", i+1, r.ImageID, tag, r.Size, r.Reason)
		}
	}
	fmt.Fprintf(&b, "usage after: %s\n", p.UsageAfter.Text)
	if p.Error == "" {
		b.WriteString("outcome: ok\n")
	} else {
		fmt.Fprintf(&b, "outcome: error: %s\n", p.Error)
	}
	for _, e := range p.Events {
		fmt.Fprintf(&b, "event: %s %s: %s\n", e.Type, e.Reason, e.Message)
	}
	return b.String()
}
