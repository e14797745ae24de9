package probe

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/agent/kube"
	"github.com/nodeproof/nodeproof/agent/probe"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/core/prober"
	"github.com/nodeproof/nodeproof/core/prober/timeline"
)

// Options are the flags of `nodeproof probe`, as typed, and what Validate
// reads them as.
type Options struct {
	// File holds the Pod manifests; "-" is stdin.
	File string
	// Outcomes is the script of what the probe targets answer; "" is
	// every probe healthy.
	Outcomes string
	// Duration is how long the timeline runs from AddPod, StartDelay the
	// time to the containers running, Jitter the start-up jitter draw.
	Duration, StartDelay time.Duration
	Jitter               float64
	// Live is the HOST to probe for real; "" for a scripted run.
	Live string
	// JSON prints the timelines as JSON.
	JSON bool

	// outcomes and timeline are Outcomes and the timing flags read
	// (Validate).
	outcomes timeline.Outcomes
	timeline timeline.Options
}

// NewCommand is `nodeproof probe`; clock is the wall clock of a --live run
// (probe.WallClock, or a test's that jumps).
func NewCommand(clock probe.Clock) *cobra.Command {
	var o Options
	cmd := &cobra.Command{
		Use:   "probe -f FILE [--outcomes SCRIPT] [--duration D] [--start-delay D] [--jitter F] [--live HOST] [--json]",
		Short: "show the timeline of a pod's probes: each probe, result, restart and Ready change the v1.36 kubelet produces",
		Long: `Reads Pod manifests (YAML or JSON, several documents or a v1 List; other kinds are
skipped with a note), applies the API server's probe defaults and validation, and plays
each pod's liveness, readiness and startup probes through nodeproof's prober core
(core/prober, the v1.36 kubelet's workers and manager) on a virtual clock, from the
moment the kubelet adds the pod: when each probe runs and what it answers, each result
the kubelet publishes, when a container is killed for a liveness or startup failure and
restarted (with a new container ID, after the restart back-off where it applies), and
when each container becomes Started and Ready. For each probe it prints the worst-case
detection time its settings imply: initialDelaySeconds + periodSeconds ×
failureThreshold + timeoutSeconds.

The targets answer as --outcomes scripts them (docs/commands/probe.md), for example
"liveness=healthy 30s, failing" or "healthy 20s, timeout 10s, repeat; startup=failing
15s, healthy"; each container plays its pattern from its own start. Without --outcomes
every probe is healthy.

--live HOST runs the HTTP, TCP and gRPC probes for real against HOST (as the pod's IP;
named ports resolved from the container's ports) over --duration of real time, with
progress on stderr, and shows the same decisions from the real answers. Exec probes are
not run live: they need the container runtime.

What nodeproof assumes around the prober (start-up, back-off, timing) is listed in
docs/commands/probe.md. Bad flags or manifests exit 2 naming the flag or field and the
rule.`,
		DisableFlagsInUseLine: true,
		Args:                  cli.NoArguments,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context(), clock, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.File, "filename", "f", "", "`FILE` of Pod manifests (YAML or JSON, several documents, a v1 List); - reads stdin")
	fl.StringVar(&o.Outcomes, "outcomes", "", "what the probe targets answer over each container's life, a `SCRIPT` such as \"liveness=healthy 30s, failing\" (default: every probe healthy)")
	fl.DurationVar(&o.Duration, "duration", 3*time.Minute, "how long the timeline runs from the pod's AddPod (real time with --live)")
	fl.DurationVar(&o.StartDelay, "start-delay", 0, "time from the pod's AddPod to its containers running")
	fl.Float64Var(&o.Jitter, "jitter", 0, "the kubelet's start-up jitter draw in [0, 1): each worker's first doProbe comes this fraction of its period late (0: no delay, as with a kubelet already running; just under 1: the worst case, a whole period)")
	fl.StringVar(&o.Live, "live", "", "run the HTTP, TCP and gRPC probes for real against `HOST` (the pod's IP) over --duration of real time")
	fl.BoolVar(&o.JSON, "json", false, "print the timelines as JSON (docs/commands/probe.md)")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	return cmd
}

// Validate reads the flags, refusing a bad one with a usage error naming
// it and the rule.
func (o *Options) Validate() error {
	if err := o.validate(); err != nil {
		return cli.UsageError(err)
	}
	return nil
}

func (o *Options) validate() error {
	if o.File == "" {
		return errors.New("-f FILE is required (- reads stdin)")
	}
	if strings.TrimSpace(o.Outcomes) != "" {
		var err error
		if o.outcomes, err = timeline.ParseOutcomes(o.Outcomes); err != nil {
			return fmt.Errorf("--outcomes %q: %v", o.Outcomes, err)
		}
	}
	if o.Duration <= 0 || o.Duration > timeline.MaxDuration {
		return fmt.Errorf("--duration %v: must be more than 0 and at most %v", o.Duration, timeline.MaxDuration)
	}
	if o.StartDelay < 0 || o.StartDelay > o.Duration {
		return fmt.Errorf("--start-delay %v: must be at least 0 and at most --duration %v", o.StartDelay, o.Duration)
	}
	if !(o.Jitter >= 0 && o.Jitter < 1) {
		return fmt.Errorf("--jitter %v: must be at least 0 and less than 1 (a fraction of the period)", o.Jitter)
	}
	if o.Live != "" {
		if strings.ContainsAny(o.Live, "/ ") || strings.Contains(o.Live, "://") {
			return fmt.Errorf("--live %q: must be a host name or IP address, without scheme, port or path", o.Live)
		}
		if o.Outcomes != "" {
			return fmt.Errorf("--outcomes and --live: a live run takes the answers of the real targets, not a script")
		}
	}
	o.timeline = timeline.Options{Duration: o.Duration, StartDelay: o.StartDelay, Jitter: o.Jitter, PodIP: o.Live}
	return nil
}

// Run plays each pod's timeline and prints them. A bad file is a usage
// error; a timeline that cannot be played, or output that cannot be
// written, fails the command.
func (o *Options) Run(ctx context.Context, clock probe.Clock, stdin io.Reader, stdout, stderr io.Writer) error {
	pods, origins, err := readPods(o.File, stdin, stderr)
	if err != nil {
		return cli.UsageError(err)
	}
	if err := o.outcomes.Check(pods...); err != nil {
		return cli.Usagef("--outcomes %q: %v", o.Outcomes, err)
	}
	var results []podTimeline
	for i, p := range pods {
		tl, err := timeline.New(p, o.timeline)
		if err != nil {
			return cli.UsageError(origins[i].Errorf("", "%v", err))
		}
		if o.Live != "" {
			err = o.playLive(ctx, tl, clock, stderr)
		} else {
			err = timeline.Play(tl, o.outcomes)
		}
		if err != nil {
			return cli.Failed(fmt.Errorf("pod %s/%s: %v", p.Namespace, p.Name, err))
		}
		results = append(results, newPodTimeline(tl, o))
	}
	if o.JSON {
		err = cli.WriteJSON(stdout, map[string]any{"pods": results})
	} else {
		err = writeText(stdout, results, o)
	}
	if err != nil {
		return cli.Failed(fmt.Errorf("writing the output: %v", err))
	}
	return nil
}

// readPods reads the file's pods as the prober reads them, with the API
// server's probe defaults and validation. Notes on what it skipped go to
// stderr; every error names the file.
func readPods(file string, stdin io.Reader, stderr io.Writer) ([]prober.Pod, []kube.Origin, error) {
	name, data, err := cli.ReadManifest(file, stdin)
	if err != nil {
		return nil, nil, err
	}
	m, err := kube.Decode(data, kube.Options{SkipUnknownKinds: true})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", name, err)
	}
	for _, s := range m.Skipped {
		fmt.Fprintf(stderr, "nodeproof probe: note: %s\n", s.Note())
	}
	if len(m.Nodes) > 0 {
		fmt.Fprintf(stderr, "nodeproof probe: note: skipped %d Node(s): probes do not depend on the node\n", len(m.Nodes))
	}
	if len(m.ProberPods) == 0 {
		return nil, nil, fmt.Errorf("%s: the file holds no Pod", name)
	}
	for i, p := range m.ProberPods {
		if err := p.WithDefaults().Validate(); err != nil {
			return nil, nil, fmt.Errorf("%s: %v", name, m.PodOrigins[i].Errorf("", "%v", err))
		}
	}
	return m.ProberPods, m.PodOrigins, nil
}

// playLive plays the timeline against --live's host, with a bar over its
// seconds on stderr.
func (o *Options) playLive(ctx context.Context, tl *timeline.Timeline, clock probe.Clock, stderr io.Writer) error {
	bar := cli.NewProgress(stderr, cli.IsTerminal(stderr), "live "+tl.Pod().Name, "s", len(tl.Pod().Name)+5)
	defer bar.Finish()
	return probe.PlayLive(ctx, tl, o.timeline.Duration, clock, bar.Update)
}

// podTimeline is one pod's result, as printed.
type podTimeline struct {
	Pod      string           `json:"pod"`
	UID      string           `json:"uid"`
	Seconds  float64          `json:"seconds"`
	Live     string           `json:"live,omitempty"`
	Probes   []probeSummary   `json:"probes"`
	Restarts map[string]int   `json:"restarts"`
	Timeline []timelineRecord `json:"timeline"`
}

// probeSummary is one probe's defaulted settings, its worst-case
// detection time and the pattern its target follows.
type probeSummary struct {
	Container           string  `json:"container"`
	Type                string  `json:"type"`
	Handler             string  `json:"handler"`
	InitialDelaySeconds int32   `json:"initial_delay_seconds"`
	PeriodSeconds       int32   `json:"period_seconds"`
	TimeoutSeconds      int32   `json:"timeout_seconds"`
	SuccessThreshold    int32   `json:"success_threshold"`
	FailureThreshold    int32   `json:"failure_threshold"`
	WorstCaseDetection  float64 `json:"worst_case_detection_seconds"`
	Pattern             string  `json:"pattern,omitempty"`
}

// timelineRecord is one entry. UnhealthySince is, for a published
// Failure of a scripted run, the container age at which its target began
// failing, so Age − UnhealthySince is how long detection took.
type timelineRecord struct {
	At             float64  `json:"at_seconds"`
	Container      string   `json:"container"`
	Kind           string   `json:"kind"`
	Type           string   `json:"probe,omitempty"`
	ContainerID    string   `json:"container_id,omitempty"`
	Age            *float64 `json:"age_seconds,omitempty"`
	Value          string   `json:"value,omitempty"`
	Attempt        int      `json:"attempt,omitempty"`
	Message        string   `json:"message,omitempty"`
	UnhealthySince *float64 `json:"unhealthy_since_seconds,omitempty"`
}

func seconds(d time.Duration) float64 { return d.Seconds() }

func newPodTimeline(tl *timeline.Timeline, opts *Options) podTimeline {
	p := tl.Pod()
	out := podTimeline{Pod: p.Namespace + "/" + p.Name, UID: p.UID, Seconds: seconds(opts.timeline.Duration), Live: opts.Live, Restarts: tl.Restarts()}
	containers := append(append([]prober.Container(nil), p.Containers...), p.InitContainers...)
	for _, c := range containers {
		for _, t := range []prober.ProbeType{prober.Startup, prober.Liveness, prober.Readiness} {
			pr := c.ProbeOf(t)
			if pr == nil {
				continue
			}
			s := probeSummary{Container: c.Name, Type: strings.ToLower(t.String()), Handler: describeHandler(pr.Handler),
				InitialDelaySeconds: pr.InitialDelaySeconds, PeriodSeconds: pr.PeriodSeconds, TimeoutSeconds: pr.TimeoutSeconds,
				SuccessThreshold: pr.SuccessThreshold, FailureThreshold: pr.FailureThreshold,
				WorstCaseDetection: seconds(timeline.WorstCaseDetection(*pr))}
			if opts.Live == "" {
				s.Pattern = opts.outcomes.PatternFor(c.Name, t).String()
			}
			out.Probes = append(out.Probes, s)
		}
	}
	for _, e := range tl.Entries() {
		r := timelineRecord{At: seconds(e.At), Container: e.Container, Kind: string(e.Kind), ContainerID: e.ContainerID,
			Value: e.Value, Attempt: e.Attempt, Message: e.Message}
		if e.Type != nil {
			r.Type = strings.ToLower(e.Type.String())
		}
		if e.Kind == timeline.KindProbe || e.Kind == timeline.KindResult {
			age := seconds(e.Age)
			r.Age = &age
		}
		if opts.Live == "" && e.Kind == timeline.KindResult && e.Value == prober.Failure.String() && e.Type != nil {
			if since, ok := opts.outcomes.PatternFor(e.Container, *e.Type).UnhealthySince(e.Age); ok {
				s := seconds(since)
				r.UnhealthySince = &s
			}
		}
		out.Timeline = append(out.Timeline, r)
	}
	return out
}

// describeHandler names the probe's handler as kubectl describe does.
func describeHandler(h prober.Handler) string {
	orPodIP := func(host string) string {
		if host == "" {
			return "<pod IP>"
		}
		return host
	}
	switch {
	case h.HTTPGet != nil:
		host := orPodIP(h.HTTPGet.Host)
		return fmt.Sprintf("http-get %s://%s/%s", strings.ToLower(h.HTTPGet.Scheme), net.JoinHostPort(host, h.HTTPGet.Port.String()), strings.TrimPrefix(h.HTTPGet.Path, "/"))
	case h.TCPSocket != nil:
		return "tcp-socket " + net.JoinHostPort(orPodIP(h.TCPSocket.Host), h.TCPSocket.Port.String())
	case h.GRPC != nil:
		svc := ""
		if h.GRPC.Service != nil {
			svc = *h.GRPC.Service
		}
		return fmt.Sprintf("grpc <pod IP>:%d %s", h.GRPC.Port, svc)
	case h.Exec != nil:
		return "exec " + strings.Join(h.Exec.Command, " ")
	}
	return "none"
}

func formatAt(s float64) string {
	return time.Duration(s * float64(time.Second)).String()
}

func writeText(w io.Writer, pods []podTimeline, opts *Options) error {
	bw := bufio.NewWriter(w)
	for i, p := range pods {
		if i > 0 {
			fmt.Fprintln(bw)
		}
		source := "outcomes: every probe healthy"
		if opts.Outcomes != "" {
			source = fmt.Sprintf("outcomes %q", opts.Outcomes)
		}
		if p.Live != "" {
			source = "live against " + p.Live
		}
		fmt.Fprintf(bw, "pod %s: %s from AddPod, start delay %v, jitter %v; %s\n", p.Pod, formatAt(p.Seconds), opts.timeline.StartDelay, opts.timeline.Jitter, source)
		for _, s := range p.Probes {
			fmt.Fprintf(bw, "  %s %s: %s; delay %ds, period %ds, timeout %ds, success %d, failure %d; worst-case detection %ds + %ds × %d + %ds = %s",
				s.Container, s.Type, s.Handler, s.InitialDelaySeconds, s.PeriodSeconds, s.TimeoutSeconds, s.SuccessThreshold, s.FailureThreshold,
				s.InitialDelaySeconds, s.PeriodSeconds, s.FailureThreshold, s.TimeoutSeconds, formatAt(s.WorstCaseDetection))
			if s.Pattern != "" {
				fmt.Fprintf(bw, "; target: %s", s.Pattern)
			}
			fmt.Fprintln(bw)
		}
		for _, r := range p.Timeline {
			fmt.Fprintf(bw, "  %9s  %s  %s\n", formatAt(r.At), r.Container, describeRecord(r))
		}
		var restarts []string
		listed := map[string]bool{}
		for _, s := range p.Probes {
			if n, ok := p.Restarts[s.Container]; ok && !listed[s.Container] {
				listed[s.Container] = true
				restarts = append(restarts, fmt.Sprintf("%s %d", s.Container, n))
			}
		}
		if len(restarts) > 0 {
			fmt.Fprintf(bw, "  restarts: %s\n", strings.Join(restarts, ", "))
		}
	}
	return bw.Flush()
}

func describeRecord(r timelineRecord) string {
	switch timeline.Kind(r.Kind) {
	case timeline.KindAdded:
		return r.Type + " worker added"
	case timeline.KindStart:
		return fmt.Sprintf("container %s %s", r.Message, r.ContainerID)
	case timeline.KindProbe:
		s := fmt.Sprintf("%s probe: %s", r.Type, r.Value)
		if r.Attempt > 1 {
			s += fmt.Sprintf(" (try %d)", r.Attempt)
		}
		if r.Message != "" {
			s += " (" + probe.Excerpt(r.Message) + ")"
		}
		return s
	case timeline.KindResult:
		s := fmt.Sprintf("%s result → %s (%s)", r.Type, r.Value, r.ContainerID)
		if r.UnhealthySince != nil && r.Age != nil {
			s += fmt.Sprintf("; failing since age %s, detected after %s", formatAt(*r.UnhealthySince), formatAt(*r.Age-*r.UnhealthySince))
		}
		return s
	case timeline.KindReady:
		if r.Value == "true" {
			return "Ready"
		}
		return "not Ready"
	case timeline.KindStarted:
		if r.Value == "true" {
			return "Started"
		}
		return "not Started"
	case timeline.KindExit:
		return r.Type + " worker exited"
	case timeline.KindTriggered:
		return r.Type + " worker triggered (UpdatePodStatus)"
	case timeline.KindEvent:
		// Unhealthy and ProbeWarning events quote the probe's output.
		return probe.Excerpt(r.Message)
	default:
		return r.Message
	}
}
