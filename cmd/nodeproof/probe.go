package main

import (
	"bufio"
	"context"
	"encoding/json"
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

// errExecNotLive is the outcome of an exec probe in a --live run: the
// kubelet runs it through the container runtime (CRI ExecSync) inside the
// container, which a probe against a host cannot reach. It is an error, so
// the timeline retries it and discards it as the kubelet does with a probe
// that cannot run: it changes no result.
var errExecNotLive = errors.New("exec probes are not run live: they run inside the container through the container runtime (CRI ExecSync), which --live HOST does not reach")

// probeOptions are the validated arguments of `nodeproof probe`.
type probeOptions struct {
	file     string
	script   string
	outcomes timeline.Outcomes
	timeline timeline.Options
	asJSON   bool
	live     string // HOST, "" for a scripted run
}

// liveClock is the wall clock of a --live run; tests give one that jumps.
type liveClock interface {
	Now() time.Time
	// WaitUntil returns at t, or earlier with ctx's error.
	WaitUntil(ctx context.Context, t time.Time) error
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) WaitUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func newProbeCommand(clock liveClock) *cobra.Command {
	var f probeFlags
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
			opts, err := f.options()
			if err != nil {
				return cli.UsageError(err)
			}
			return runProbe(cmd.Context(), opts, clock, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "filename", "f", "", "`FILE` of Pod manifests (YAML or JSON, several documents, a v1 List); - reads stdin")
	fl.StringVar(&f.outcomes, "outcomes", "", "what the probe targets answer over each container's life, a `SCRIPT` such as \"liveness=healthy 30s, failing\" (default: every probe healthy)")
	fl.DurationVar(&f.duration, "duration", 3*time.Minute, "how long the timeline runs from the pod's AddPod (real time with --live)")
	fl.DurationVar(&f.startDelay, "start-delay", 0, "time from the pod's AddPod to its containers running")
	fl.Float64Var(&f.jitter, "jitter", 0, "the kubelet's start-up jitter draw in [0, 1): each worker's first doProbe comes this fraction of its period late (0: no delay, as with a kubelet already running; just under 1: the worst case, a whole period)")
	fl.StringVar(&f.live, "live", "", "run the HTTP, TCP and gRPC probes for real against `HOST` (the pod's IP) over --duration of real time")
	fl.BoolVar(&f.asJSON, "json", false, "print the timelines as JSON (docs/commands/probe.md)")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	return cmd
}

// probeFlags are the flags of `nodeproof probe` as typed.
type probeFlags struct {
	file, outcomes, live string
	duration, startDelay time.Duration
	jitter               float64
	asJSON               bool
}

func (f probeFlags) options() (probeOptions, error) {
	opts := probeOptions{file: f.file, script: f.outcomes, asJSON: f.asJSON, live: f.live}
	if f.file == "" {
		return opts, errors.New("-f FILE is required (- reads stdin)")
	}
	if strings.TrimSpace(f.outcomes) != "" {
		var err error
		if opts.outcomes, err = timeline.ParseOutcomes(f.outcomes); err != nil {
			return opts, fmt.Errorf("--outcomes %q: %v", f.outcomes, err)
		}
	}
	if f.duration <= 0 || f.duration > timeline.MaxDuration {
		return opts, fmt.Errorf("--duration %v: must be more than 0 and at most %v", f.duration, timeline.MaxDuration)
	}
	if f.startDelay < 0 || f.startDelay > f.duration {
		return opts, fmt.Errorf("--start-delay %v: must be at least 0 and at most --duration %v", f.startDelay, f.duration)
	}
	if !(f.jitter >= 0 && f.jitter < 1) {
		return opts, fmt.Errorf("--jitter %v: must be at least 0 and less than 1 (a fraction of the period)", f.jitter)
	}
	if f.live != "" {
		if strings.ContainsAny(f.live, "/ ") || strings.Contains(f.live, "://") {
			return opts, fmt.Errorf("--live %q: must be a host name or IP address, without scheme, port or path", f.live)
		}
		if f.outcomes != "" {
			return opts, fmt.Errorf("--outcomes and --live: a live run takes the answers of the real targets, not a script")
		}
	}
	opts.timeline = timeline.Options{Duration: f.duration, StartDelay: f.startDelay, Jitter: f.jitter, PodIP: f.live}
	return opts, nil
}

// probePods reads the file's pods as the prober reads them.
func probePods(opts probeOptions, stdin io.Reader, stderr io.Writer) ([]prober.Pod, []kube.Origin, error) {
	_, data, err := cli.ReadManifest(opts.file, stdin)
	if err != nil {
		return nil, nil, err
	}
	m, err := kube.Decode(data, kube.Options{SkipUnknownKinds: true})
	if err != nil {
		return nil, nil, err
	}
	for _, s := range m.Skipped {
		fmt.Fprintf(stderr, "nodeproof probe: note: %s\n", s.Note())
	}
	if len(m.Nodes) > 0 {
		fmt.Fprintf(stderr, "nodeproof probe: note: skipped %d Node(s): probes do not depend on the node\n", len(m.Nodes))
	}
	if len(m.ProberPods) == 0 {
		return nil, nil, errors.New("the file holds no Pod")
	}
	for i, p := range m.ProberPods {
		if err := p.WithDefaults().Validate(); err != nil {
			return nil, nil, m.PodOrigins[i].Errorf("", "%v", err)
		}
	}
	return m.ProberPods, m.PodOrigins, nil
}

func runProbe(ctx context.Context, opts probeOptions, clock liveClock, stdin io.Reader, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	pods, origins, err := probePods(opts, stdin, stderr)
	if err != nil {
		return cli.UsageError(fmt.Errorf("%s: %v", displayName(opts.file), err))
	}
	if err := opts.outcomes.Check(pods...); err != nil {
		return cli.UsageError(fmt.Errorf("--outcomes %q: %v", opts.script, err))
	}
	var results []podTimeline
	for i, p := range pods {
		tl, err := timeline.New(p, opts.timeline)
		if err != nil {
			return cli.UsageError(origins[i].Errorf("", "%v", err))
		}
		if opts.live != "" {
			err = playLive(ctx, tl, opts, clock, stderr)
		} else {
			err = timeline.Play(tl, opts.outcomes)
		}
		if err != nil {
			return &cli.ExitError{Status: cli.StatusFailed, Err: fmt.Errorf("pod %s/%s: %v", p.Namespace, p.Name, err)}
		}
		results = append(results, newPodTimeline(tl, opts))
	}
	if opts.asJSON {
		err = writeProbeJSON(stdout, results)
	} else {
		err = writeProbeText(stdout, results, opts)
	}
	if err != nil {
		return &cli.ExitError{Status: cli.StatusFailed, Err: fmt.Errorf("writing the output: %v", err)}
	}
	return nil
}

func displayName(file string) string {
	if file == "-" {
		return "stdin"
	}
	return file
}

// playLive answers the timeline's probes with real probes against the
// host, each when its time comes on the clock.
func playLive(ctx context.Context, tl *timeline.Timeline, opts probeOptions, clock liveClock, stderr io.Writer) error {
	p := probe.New(nil)
	defer p.Close()
	start := clock.Now()
	total := int(opts.timeline.Duration / time.Second)
	bar := cli.NewProgress(stderr, cli.IsTerminal(stderr), "live "+tl.Pod().Name, "s", len(tl.Pod().Name)+5)
	defer bar.Finish()
	for {
		req, ok, err := tl.Next()
		if err != nil || !ok {
			return err
		}
		if err := clock.WaitUntil(ctx, start.Add(req.At)); err != nil {
			return err
		}
		var out prober.Outcome
		if req.Run.Probe.Handler.Exec != nil {
			out = prober.Outcome{Result: prober.ProbeUnknown, Err: errExecNotLive}
		} else {
			target := probe.TargetOf(req.Run)
			res := p.Run(ctx, probe.SpecOf(req.Run.Probe), target)
			out = prober.Outcome{Result: prober.ProbeResult(res.Kind), Output: res.Output, Err: res.Err}
		}
		end := clock.Now().Sub(start)
		if end < req.At {
			end = req.At
		}
		if total > 0 {
			bar.Update(min(int(end/time.Second), total), total)
		}
		if err := tl.Done(req, end, out); err != nil {
			return err
		}
	}
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

func newPodTimeline(tl *timeline.Timeline, opts probeOptions) podTimeline {
	p := tl.Pod()
	out := podTimeline{Pod: p.Namespace + "/" + p.Name, UID: p.UID, Seconds: seconds(opts.timeline.Duration), Live: opts.live, Restarts: tl.Restarts()}
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
			if opts.live == "" {
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
		if opts.live == "" && e.Kind == timeline.KindResult && e.Value == prober.Failure.String() && e.Type != nil {
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

func writeProbeJSON(w io.Writer, pods []podTimeline) error {
	b, err := json.MarshalIndent(map[string]any{"pods": pods}, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func formatAt(s float64) string {
	return time.Duration(s * float64(time.Second)).String()
}

func writeProbeText(w io.Writer, pods []podTimeline, opts probeOptions) error {
	bw := bufio.NewWriter(w)
	for i, p := range pods {
		if i > 0 {
			fmt.Fprintln(bw)
		}
		source := "outcomes: every probe healthy"
		if opts.script != "" {
			source = fmt.Sprintf("outcomes %q", opts.script)
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
