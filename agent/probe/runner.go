package probe

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/nodeproof/nodeproof/core/prober"
)

// Runner drives core/prober's workers with real probes. Time is the
// caller's: RunUntil steps the workers due up to a time it is given (an
// injected clock in tests, the wall clock in a daemon), so a test decides
// exactly when each worker runs without sleeping.
type Runner struct {
	// Manager holds the workers; the Runner is its only caller while
	// RunUntil runs.
	Manager *prober.Manager
	// Prober runs the probes.
	Prober *Prober
	// Status is the kubelet's status manager: the pod status a worker
	// reads on each step; nil when it has none for the pod.
	Status func(podUID string) *prober.PodStatus
}

// Report is what a RunUntil published and recorded, in order.
type Report struct {
	Updates []prober.Update
	Events  []prober.Event
	// Probes counts the probe handlers run (retries included).
	Probes int
}

func (r *Report) add(s prober.Step) {
	r.Updates = append(r.Updates, s.Updates...)
	r.Events = append(r.Events, s.Events...)
}

// RunUntil steps, in order of due time (ties in key order), every worker
// due at or before now. The workers due at one instant are stepped first;
// the probes they ask for then run concurrently, as upstream's worker
// goroutines run them, and their outcomes are reported in key order at
// that same instant: the clock is the caller's and does not move while a
// probe runs (a probe's real time is bounded by its timeout). A probe that
// errs is retried at once, as upstream's prober.probe retries it.
func (r *Runner) RunUntil(ctx context.Context, now time.Time) (Report, error) {
	var report Report
	for {
		_, due, ok := r.Manager.NextDue()
		if !ok || due.After(now) {
			return report, nil
		}
		var runs []prober.ProbeRun
		for {
			key, at, ok := r.Manager.NextDue()
			if !ok || !at.Equal(due) {
				break
			}
			step, err := r.Manager.Step(key, due, r.Status(key.PodUID))
			if err != nil {
				return report, err
			}
			report.add(step)
			if step.Kind == prober.StepProbe {
				runs = append(runs, step.Run)
			}
		}
		for len(runs) > 0 {
			outcomes := r.runAll(ctx, runs)
			report.Probes += len(runs)
			var retries []prober.ProbeRun
			for i, run := range runs {
				step, err := r.Manager.ProbeDone(run.Key, due, outcomes[i])
				if err != nil {
					return report, err
				}
				report.add(step)
				if step.Kind == prober.StepProbe {
					retries = append(retries, step.Run)
				}
			}
			runs = retries
		}
	}
}

// runAll runs the probes concurrently and returns their outcomes in order.
func (r *Runner) runAll(ctx context.Context, runs []prober.ProbeRun) []prober.Outcome {
	outcomes := make([]prober.Outcome, len(runs))
	var wg sync.WaitGroup
	for i, run := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outcomes[i] = r.Prober.Answer(ctx, run)
		}()
	}
	wg.Wait()
	return outcomes
}

// Answer runs the probe of a core ProbeRun against its container and
// returns the outcome as core/prober takes it back: the one conversion of
// a Result into a prober.Outcome, shared by the Runner and live timelines.
func (p *Prober) Answer(ctx context.Context, run prober.ProbeRun) prober.Outcome {
	res := p.Run(ctx, SpecOf(run.Probe), TargetOf(run))
	return prober.Outcome{Result: prober.ProbeResult(res.Kind), Output: res.Output, Err: res.Err}
}

// SpecOf is a core probe's handler and timeout as a Spec.
func SpecOf(p prober.Probe) Spec {
	h := p.Handler
	s := Spec{TimeoutSeconds: p.TimeoutSeconds}
	if h.Exec != nil {
		s.Exec = &ExecAction{Command: h.Exec.Command}
	}
	if h.HTTPGet != nil {
		a := &HTTPGetAction{Scheme: h.HTTPGet.Scheme, Host: h.HTTPGet.Host, Port: portOf(h.HTTPGet.Port), Path: h.HTTPGet.Path}
		for _, hd := range h.HTTPGet.Headers {
			a.Headers = append(a.Headers, HTTPHeader{Name: hd.Name, Value: hd.Value})
		}
		s.HTTPGet = a
	}
	if h.TCPSocket != nil {
		s.TCPSocket = &TCPSocketAction{Host: h.TCPSocket.Host, Port: portOf(h.TCPSocket.Port)}
	}
	if h.GRPC != nil {
		s.GRPC = &GRPCAction{Port: h.GRPC.Port, Service: h.GRPC.Service}
	}
	return s
}

func portOf(p prober.Port) Port {
	if p.Named {
		return Port{Name: p.Name}
	}
	return Port{Number: p.Number}
}

// TargetOf is the container a core ProbeRun probes: the pod IP, the CRI
// container ID (the status's "<runtime>://<id>" without the runtime), the
// container's ports and environment.
func TargetOf(run prober.ProbeRun) Target {
	id := run.ContainerID
	if _, after, found := strings.Cut(id, "://"); found {
		id = after
	}
	t := Target{PodIP: run.PodIP, ContainerID: id}
	for _, p := range run.Container.Ports {
		t.Ports = append(t.Ports, ContainerPort{Name: p.Name, Number: p.ContainerPort})
	}
	for _, e := range run.Container.Env {
		t.Env = append(t.Env, EnvVar{Name: e.Name, Value: e.Value})
	}
	return t
}
