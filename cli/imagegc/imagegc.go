package imagegc

import (
	"context"
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

// Options are the flags of `nodeproof imagegc`, as typed, and what
// Complete and Validate derive from them.
type Options struct {
	// Socket is --cri-socket: a path or unix:///PATH.
	Socket string
	// High and Low are the kubelet's image GC thresholds in percent,
	// MinAge and MaxAge its imageMinimumGCAge and imageMaximumGCAge.
	High, Low      int32
	MinAge, MaxAge time.Duration
	// Uptime is how long ago the kubelet started; Timeout bounds each CRI
	// call.
	Uptime, Timeout time.Duration
	// JSON prints the prediction as one JSON object.
	JSON bool

	// uptimeGiven says --kubelet-uptime was given (Complete); socket is
	// the socket's path and policy the kubelet's policy (Validate).
	uptimeGiven bool
	socket      string
	policy      imagegc.Policy
}

// NewCommand is `nodeproof imagegc`; clock gives the time of the
// prediction (time.Now, or a fixed time in tests).
func NewCommand(clock func() time.Time) *cobra.Command {
	var o Options
	cmd := &cobra.Command{
		Use:                   "imagegc [--cri-socket PATH] [--high P] [--low P] [--min-age D] [--max-age D] [--kubelet-uptime D] [--timeout D] [--json]",
		Short:                 "print what the kubelet's image garbage collection would remove now from a live CRI runtime, removing nothing",
		Long:                  long,
		DisableFlagsInUseLine: true,
		Args:                  cli.NoArguments,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Complete(cmd)
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context(), clock(), cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Socket, "cri-socket", defaultCRISocket, "the runtime's CRI Unix socket `PATH`, or the kubelet's --container-runtime-endpoint (unix:///PATH)")
	fl.Int32Var(&o.High, "high", 85, "image GC high threshold `PERCENT` (the kubelet's --image-gc-high-threshold): usage at or above it starts the space pass")
	fl.Int32Var(&o.Low, "low", 80, "image GC low threshold `PERCENT` (--image-gc-low-threshold): the space pass frees down to it")
	fl.DurationVar(&o.MinAge, "min-age", 2*time.Minute, "imageMinimumGCAge `DURATION`: an image first detected more recently is not removed by the space pass")
	fl.DurationVar(&o.MaxAge, "max-age", 0, "imageMaximumGCAge `DURATION`: an unused image not used for longer is removed whatever the usage; 0 is off")
	fl.DurationVar(&o.Uptime, "kubelet-uptime", 0, "how long ago the kubelet started (`DURATION`); every image listed now is assumed first detected then (default: long enough that every image is older than --min-age and the --max-age wait is over)")
	fl.DurationVar(&o.Timeout, "timeout", cri.DefaultTimeout, "bound of each CRI call (`DURATION`, the kubelet's --runtime-request-timeout)")
	fl.BoolVar(&o.JSON, "json", false, "print the prediction as one JSON object")
	return cmd
}

// Complete notes whether --kubelet-uptime was given; without it, the uptime
// is one long enough that every image is past both ages.
func (o *Options) Complete(cmd *cobra.Command) {
	o.uptimeGiven = cmd.Flags().Changed("kubelet-uptime")
}

// Validate checks the flags as the kubelet checks its image GC settings,
// and derives the policy, the socket's path and the uptime.
func (o *Options) Validate() error {
	config := imagegc.KubeletConfig{
		ImageGCHighThresholdPercent: o.High, ImageGCLowThresholdPercent: o.Low,
		ImageMinimumGCAge: o.MinAge, ImageMaximumGCAge: o.MaxAge,
	}
	if err := imagegc.ValidateKubeletConfig(config); err != nil {
		return cli.Usagef("--high %d --low %d --min-age %v --max-age %v (the kubelet's image GC settings): %w", o.High, o.Low, o.MinAge, o.MaxAge, err)
	}
	if o.Timeout <= 0 {
		return cli.Usagef("--timeout %v: must be more than 0", o.Timeout)
	}
	if o.Uptime < 0 {
		return cli.Usagef("--kubelet-uptime %v: must not be negative", o.Uptime)
	}
	socket, err := criSocketPath(o.Socket)
	if err != nil {
		return cli.UsageError(err)
	}
	o.socket, o.policy = socket, config.Policy()
	if !o.uptimeGiven {
		// Any uptime above both ages gives the same prediction: every
		// image is past MinAge and the MaxAge start-up wait is over.
		o.Uptime = max(o.policy.MinAge, o.policy.MaxAge) + imagegc.GCPeriod
	}
	return nil
}

// Run reads the runtime and prints the prediction. It succeeds whatever
// the kubelet's outcome (an insufficient-space error included); a runtime
// that cannot be read, or output that cannot be written, fails it.
func (o *Options) Run(ctx context.Context, now time.Time, stdout io.Writer) error {
	client, err := cri.New(cri.Options{Socket: o.socket, Timeout: o.Timeout})
	if err != nil {
		return cli.Usagef("--cri-socket: %v", err)
	}
	defer client.Close()
	p, err := cri.PredictGC(ctx, client, cri.GCDryRun{Socket: o.socket, Policy: o.policy, Now: now, Uptime: o.Uptime, UptimeGiven: o.uptimeGiven})
	if err != nil {
		return cli.Failed(fmt.Errorf("reading the runtime on %s: %v", o.socket, err))
	}
	if o.JSON {
		if err := cli.WriteJSON(stdout, p); err != nil {
			return cli.Failed(fmt.Errorf("writing JSON: %v", err))
		}
		return nil
	}
	if _, err := io.WriteString(stdout, render(p)); err != nil {
		return cli.OutputError(err)
	}
	return nil
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

// long is the help of `nodeproof imagegc`.
const long = `Reads a live container runtime over CRI (ListImages, ListPodSandbox,
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

// render is the prediction for a reader, each part on its own lines.
func render(p *cri.GCPrediction) string {
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
