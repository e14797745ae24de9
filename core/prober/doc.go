// Package prober is the deterministic core of the kubelet's probers
// (pkg/kubelet/prober, Kubernetes v1.36, spec/prober.md §3): probe
// defaults and validation with the API's rules and texts, the workers'
// state and doProbe as a step in upstream's branch order, the rules of
// prober.probe (three tries on error, a warning counts as success, an
// error thrown away), the results caches, the manager (AddPod with its
// early return, StopLivenessAndStartup, RemovePod, CleanupPods,
// UpdatePodStatus with the manual readiness trigger and the v1.36
// kubelet-restart rules) and the event texts.
//
// # API
//
//	pod = pod.WithDefaults()                    // the API server's defaults
//	err := pod.Validate()                       // ValidationError: upstream's field errors
//	m, _ := prober.NewManager(prober.Options{KubeletStart: start})
//	added, err := m.AddPod(now, pod, jitter)    // Added keys; EarlyReturn names the key that stopped it
//	for key, due, ok := m.NextDue(); ok; key, due, ok = m.NextDue() {
//	        step, err := m.Step(key, due, statusManager.PodStatus(key.PodUID)) // nil: no status
//	        for step.Kind == prober.StepProbe { // run step.Run (1st, 2nd, 3rd try)
//	                step, err = m.ProbeDone(key, end, prober.Outcome{Result: prober.ProbeFailure, Output: "..."})
//	        }
//	        publish(step.Updates); record(step.Events) // StepExit: the worker is gone
//	}
//	st, err := m.UpdatePodStatus(now, apiPod, status) // Started, Ready; readiness workers triggered
//	m.SetDeletionTimestamp(uid, t); m.StopLivenessAndStartup(now, pod); m.RemovePod(now, pod); m.CleanupPods(now, desired)
//
// A step is doProbe: Step runs it up to the probe (publishing the initial
// value of a new container, Failure for one that is not running, Success
// on deletion), and either ends it (StepWait with NextDue, or StepExit) or
// hands out the probe to run (StepProbe). ProbeDone takes the handler's
// Outcome: an error asks for the next try (StepProbe, Run.Attempt 2, 3);
// after the third the error is recorded as an event and discarded (no
// result, no change to the run); otherwise the result goes through the
// run and the thresholds, is published when it reaches one, and puts a
// liveness worker (on Failure) or a startup worker (on any result) on hold
// until the container ID changes (#117153). Every published Update is a
// change of the results cache (Results.Set publishes only changes).
//
// # Time
//
// Upstream's worker is a goroutine: it sleeps rand·period when it starts
// less than one period after the kubelet (the start-up jitter; here the
// Jitter argument gives the fraction), runs doProbe, then starts a ticker
// and runs doProbe on every tick, on a manual trigger (which resets the
// ticker), until doProbe returns false or it is stopped. The core keeps
// that goroutine's timing as values: FirstProbeAt = AddedAt + jitter; the
// ticks fall on FirstProbeAt + k·period; NextDue is the next tick after
// the one that started the last doProbe, or the end of that doProbe when a
// tick passed while it ran (a Go ticker keeps one tick for a slow
// receiver and drops the rest); a manual trigger taken by a waiting worker
// makes it due at once and restarts the ticks from then; one sent while
// it probes waits in the 1-buffered channel and is taken when the doProbe
// ends. Where upstream's select picks at random between ready channels
// (a stop, a tick and a trigger at once), the core lets the stop win, then
// the trigger. A caller (the simulation, the runner in agent/probe) reads
// NextDue and decides when to step; stepping before it is an error.
//
// # Contract
//
// Everything is a pure function of the arguments and the Manager's state:
// no clock, goroutines, locks, I/O or randomness. Bad input (an invalid or
// undefaulted probe, a container ID that is not <runtime>://<id>, a step
// before its time or out of turn, too many workers) gets an *InputError or
// a ValidationError naming the field and the rule and changes nothing.
// Maps are visited in key order. A Manager is used by one caller at a
// time. docs/deviations.md (P1...) lists the differences from upstream.
package prober
