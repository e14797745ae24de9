package prober_test

import (
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/core/prober"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInitialValues: a worker seeing a container for the first time
// publishes its type's initial value (readiness Failure, liveness Success,
// startup Unknown) before anything else.
func TestInitialValues(t *testing.T) {
	for _, tc := range []struct {
		typ  prober.ProbeType
		want prober.Result
	}{
		{prober.Readiness, prober.Failure},
		{prober.Liveness, prober.Success},
		{prober.Startup, prober.Unknown},
	} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			m := addOne(t, tc.typ, execProbe(func(p *prober.Probe) { p.InitialDelaySeconds = 100 }))
			step := stepDue(t, m, key(tc.typ), runningStatus("containerd://a", later, boolPtr(false)))
			assert.Equal(t, prober.StepWait, step.Kind)
			assert.Equal(t, []prober.Update{{Type: tc.typ, ContainerID: "containerd://a", Result: tc.want, PodUID: "uid"}}, step.Updates)
			assert.Equal(t, tc.want, prober.InitialValue(tc.typ))
		})
	}
}

// TestThresholds: liveness publishes Failure only after FailureThreshold
// consecutive failures, readiness Success only after SuccessThreshold
// successes; a different result resets the run.
func TestThresholds(t *testing.T) {
	started := boolPtr(true)
	status := runningStatus("containerd://a", later, started)
	for _, tc := range []struct {
		name     string
		typ      prober.ProbeType
		probe    *prober.Probe
		outcomes []prober.Outcome
		want     [][]prober.Result // per step, after the initial value
	}{
		{"liveness fails after 3", prober.Liveness, execProbe(thresholds(1, 3)),
			[]prober.Outcome{failure, failure, failure},
			[][]prober.Result{{}, {}, {prober.Failure}}},
		{"liveness success between failures resets the run", prober.Liveness, execProbe(thresholds(1, 2)),
			[]prober.Outcome{failure, success, failure, failure},
			[][]prober.Result{{}, {}, {}, {prober.Failure}}},
		{"readiness succeeds after 2", prober.Readiness, execProbe(thresholds(2, 3)),
			[]prober.Outcome{success, success, success},
			[][]prober.Result{{}, {prober.Success}, {}}},
		{"readiness flips to failure after 1", prober.Readiness, execProbe(thresholds(1, 1)),
			[]prober.Outcome{success, failure, success},
			[][]prober.Result{{prober.Success}, {prober.Failure}, {prober.Success}}},
		{"a warning counts as success", prober.Readiness, execProbe(thresholds(1, 1)),
			[]prober.Outcome{warning},
			[][]prober.Result{{prober.Success}}},
		{"unknown without error is a failure", prober.Readiness, execProbe(thresholds(1, 1)),
			[]prober.Outcome{success, unknown},
			[][]prober.Result{{prober.Success}, {prober.Failure}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := addOne(t, tc.typ, tc.probe)
			for i, out := range tc.outcomes {
				step := stepDue(t, m, key(tc.typ), status, out)
				got := results(step.Updates)
				if i == 0 {
					require.NotEmpty(t, got)
					require.Equal(t, prober.InitialValue(tc.typ), got[0])
					got = got[1:]
				}
				assert.Equal(t, tc.want[i], got, "step %d", i)
			}
		})
	}
}

// TestProbeErrors: prober.probe tries a handler three times while it
// errs; the third error records "errored" and is thrown away: no result,
// no change to the run (the failures before it still count).
func TestProbeErrors(t *testing.T) {
	status := runningStatus("containerd://a", later, boolPtr(true))
	m := addOne(t, prober.Liveness, execProbe(thresholds(1, 2)))
	k := key(prober.Liveness)

	stepDue(t, m, k, status, failure)
	w, _ := m.Worker(k)
	require.Equal(t, 1, w.ResultRun)

	step, tries := stepAt(t, m, k, w.NextDue, status, errored, errored, errored)
	assert.Equal(t, 3, tries)
	assert.Empty(t, step.Updates)
	assert.Equal(t, []prober.Event{{PodUID: "uid", ContainerName: "c", Type: "Warning", Reason: "Unhealthy",
		Message: "Liveness probe errored and resulted in unknown state: invalid port number: 0"}}, step.Events)
	w, _ = m.Worker(k)
	assert.Equal(t, 1, w.ResultRun, "an error leaves the run")
	assert.Equal(t, prober.Failure, w.LastResult)

	// An error then a verdict: the retry's verdict counts.
	step, tries = stepAt(t, m, k, w.NextDue, status, errored, failure)
	assert.Equal(t, 2, tries)
	assert.Equal(t, []prober.Result{prober.Failure}, results(step.Updates))
	assert.Equal(t, "Liveness probe failed: boom", step.Events[0].Message)
}

// TestProbeEvents: the events of prober.probe with upstream's texts.
func TestProbeEvents(t *testing.T) {
	status := runningStatus("containerd://a", later, boolPtr(true))
	for _, tc := range []struct {
		out  prober.Outcome
		want []prober.Event
	}{
		{success, nil},
		{unknown, nil},
		{failure, []prober.Event{{PodUID: "uid", ContainerName: "c", Type: "Warning", Reason: "Unhealthy", Message: "Readiness probe failed: boom"}}},
		{warning, []prober.Event{{PodUID: "uid", ContainerName: "c", Type: "Warning", Reason: "ProbeWarning", Message: "Readiness probe warning: Probe terminated redirects, Response body: x"}}},
	} {
		m := addOne(t, prober.Readiness, execProbe())
		step := stepDue(t, m, key(prober.Readiness), status, tc.out)
		assert.Equal(t, tc.want, step.Events, "%s", tc.out.Result)
	}
	assert.Equal(t, `command timed out: "sh -c sleep 5" timed out after 1s`, prober.ExecTimeoutOutput([]string{"sh", "-c", "sleep 5"}, time.Second))
	assert.Equal(t, "Container c failed liveness probe, will be restarted", prober.KillMessage("c", prober.Liveness, true))
	assert.Equal(t, "Container c failed startup probe", prober.KillMessage("c", prober.Startup, false))
}

// TestOnHold (#117153): after a liveness Failure, or any startup result,
// the worker stops probing (and its run restarts from 0) until the
// container ID changes; then it publishes the initial value again.
func TestOnHold(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  prober.ProbeType
		out  prober.Outcome
		hold bool
	}{
		{"liveness failure", prober.Liveness, failure, true},
		{"liveness success", prober.Liveness, success, false},
		{"startup success", prober.Startup, success, true},
		{"startup failure", prober.Startup, failure, true},
		{"readiness failure", prober.Readiness, failure, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := addOne(t, tc.typ, execProbe(thresholds(1, 1)))
			k := key(tc.typ)
			status := runningStatus("containerd://a", later, boolPtr(tc.typ != prober.Startup))
			stepDue(t, m, k, status, tc.out)
			w, _ := m.Worker(k)
			assert.Equal(t, tc.hold, w.OnHold)
			_, tries := stepAt(t, m, k, w.NextDue, status, tc.out)
			assert.Equal(t, !tc.hold, tries == 1, "probed while on hold: %v", tries)
			if !tc.hold {
				return
			}
			assert.Equal(t, 0, w.ResultRun)
			w, _ = m.Worker(k)
			step, tries := stepAt(t, m, k, w.NextDue, runningStatus("containerd://b", w.NextDue, boolPtr(tc.typ != prober.Startup)), tc.out)
			assert.Equal(t, 1, tries, "a new container resumes probing")
			assert.Equal(t, prober.InitialValue(tc.typ), step.Updates[0].Result)
			assert.Equal(t, "containerd://b", step.Updates[0].ContainerID)
		})
	}
}

// TestRunCarriesOverNewContainer: a run of failures below the threshold
// carries over to a new container ID (resultRun is reset only on hold).
func TestRunCarriesOverNewContainer(t *testing.T) {
	m := addOne(t, prober.Liveness, execProbe(thresholds(1, 2)))
	k := key(prober.Liveness)
	stepDue(t, m, k, runningStatus("containerd://a", later, boolPtr(true)), failure)
	step := stepDue(t, m, k, runningStatus("containerd://b", later, boolPtr(true)), failure)
	assert.Equal(t, []prober.Result{prober.Success, prober.Failure}, results(step.Updates))
}

// TestInitialDelayTruncatedSeconds: the initial delay compares whole
// seconds, truncated toward zero, since the container started: 9.999 s is
// 9 (< 10, no probe), and a start 0.9 s in the future (clock skew) is 0,
// not below a zero delay, so it probes, where a comparison of durations
// would wait.
func TestInitialDelayTruncatedSeconds(t *testing.T) {
	for _, tc := range []struct {
		name       string
		delay      int32
		sinceStart time.Duration
		probes     bool
	}{
		{"9.999 s of 10", 10, 9*time.Second + 999*time.Millisecond, false},
		{"10 s of 10", 10, 10 * time.Second, true},
		{"-0.9 s of 0", 0, -900 * time.Millisecond, true},
		{"-1 s of 0", 0, -time.Second, false},
		{"0.5 s of 1", 1, 500 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := addOne(t, prober.Readiness, execProbe(func(p *prober.Probe) { p.InitialDelaySeconds = tc.delay }))
			status := runningStatus("containerd://a", later.Add(-tc.sinceStart), boolPtr(true))
			_, tries := stepAt(t, m, key(prober.Readiness), later, status, success)
			assert.Equal(t, tc.probes, tries == 1)
		})
	}
}

// TestStartupGating: liveness and readiness wait for Started; startup
// stops probing once started but stays.
func TestStartupGating(t *testing.T) {
	for _, tc := range []struct {
		typ     prober.ProbeType
		started *bool
		probes  bool
	}{
		{prober.Liveness, nil, false}, {prober.Liveness, boolPtr(false), false}, {prober.Liveness, boolPtr(true), true},
		{prober.Readiness, boolPtr(false), false}, {prober.Readiness, boolPtr(true), true},
		{prober.Startup, nil, true}, {prober.Startup, boolPtr(false), true}, {prober.Startup, boolPtr(true), false},
	} {
		m := addOne(t, tc.typ, execProbe())
		step, tries := stepAt(t, m, key(tc.typ), later, runningStatus("containerd://a", later, tc.started), success)
		assert.Equal(t, tc.probes, tries == 1, "%s started=%v", tc.typ, tc.started)
		assert.Equal(t, prober.StepWait, step.Kind)
	}
}

// TestNotRunning: a container that is not running publishes Failure; the
// worker goes on only if the container will run again (v1.36 restart
// rules).
func TestNotRunning(t *testing.T) {
	never, onFailure := prober.RestartNever, prober.RestartOnFailure
	for _, tc := range []struct {
		name      string
		podPolicy prober.ContainerRestartPolicy
		container func(*prober.Container)
		status    *prober.PodStatus
		keep      bool
	}{
		{"waiting", never, nil, &prober.PodStatus{Phase: prober.PodPending, ContainerStatuses: []prober.ContainerStatus{{Name: "c", ContainerID: "containerd://a"}}}, true},
		{"exited, pod Always", "", nil, exitedStatus("containerd://a", 0), true},
		{"exited 0, pod OnFailure", onFailure, nil, exitedStatus("containerd://a", 0), false},
		{"exited 1, pod OnFailure", onFailure, nil, exitedStatus("containerd://a", 1), true},
		{"exited, pod Never", never, nil, exitedStatus("containerd://a", 1), false},
		{"exited, pod Never, container Always", never, func(c *prober.Container) { c.RestartPolicy = prober.RestartAlways }, exitedStatus("containerd://a", 1), true},
		{"exited 42, container Never with a rule Restart In [42]", "", func(c *prober.Container) {
			c.RestartPolicy = prober.RestartNever
			c.RestartRules = []prober.RestartRule{{Action: prober.ActionRestart, ExitCodes: &prober.ExitCodes{Operator: prober.OperatorIn, Values: []int32{42}}}}
		}, exitedStatus("containerd://a", 42), true},
		{"exited 1, container Never with a rule NotIn [1]", "", func(c *prober.Container) {
			c.RestartPolicy = prober.RestartNever
			c.RestartRules = []prober.RestartRule{{Action: prober.ActionRestart, ExitCodes: &prober.ExitCodes{Operator: prober.OperatorNotIn, Values: []int32{1}}}}
		}, exitedStatus("containerd://a", 1), false},
		{"exited 42, container Never with a rule of an unknown action In [42]: the policy decides", "", func(c *prober.Container) {
			c.RestartPolicy = prober.RestartNever
			c.RestartRules = []prober.RestartRule{{Action: "Unknown", ExitCodes: &prober.ExitCodes{Operator: prober.OperatorIn, Values: []int32{42}}}}
		}, exitedStatus("containerd://a", 42), false},
		{"exited, pod Never, AllContainersRestarting", never, nil, func() *prober.PodStatus {
			s := exitedStatus("containerd://a", 1)
			s.AllContainersRestarting = true
			return s
		}(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := podWith(prober.Readiness, execProbe())
			pod.RestartPolicy = tc.podPolicy
			if tc.container != nil {
				tc.container(&pod.Containers[0])
			}
			m := newManager(t)
			_, err := m.AddPod(later, pod, nil)
			require.NoError(t, err)
			step, tries := stepAt(t, m, key(prober.Readiness), later, tc.status)
			assert.Equal(t, 0, tries)
			assert.Equal(t, []prober.Result{prober.Failure}, results(step.Updates), "initial Failure, then Failure: one update")
			if tc.keep {
				assert.Equal(t, prober.StepWait, step.Kind)
			} else {
				assert.Equal(t, prober.StepExit, step.Kind)
				assert.Empty(t, m.Workers())
				assert.Empty(t, m.Results(prober.Readiness), "an exiting worker removes its result")
			}
		})
	}
}

// TestEarlyBranches: no status waits; a terminated pod stops the worker
// without writing; a container without an ID, or missing, waits; a
// container found among the init container statuses is probed.
func TestEarlyBranches(t *testing.T) {
	m := addOne(t, prober.Readiness, execProbe())
	k := key(prober.Readiness)
	step, _ := stepAt(t, m, k, later, nil)
	assert.Equal(t, prober.Step{Kind: prober.StepWait, NextDue: later.Add(10 * time.Second)}, step)
	step, _ = stepAt(t, m, k, step.NextDue, &prober.PodStatus{Phase: prober.PodRunning, ContainerStatuses: []prober.ContainerStatus{{Name: "c"}}})
	assert.Equal(t, prober.StepWait, step.Kind)
	assert.Empty(t, step.Updates)
	step, _ = stepAt(t, m, k, step.NextDue, &prober.PodStatus{Phase: prober.PodRunning, ContainerStatuses: []prober.ContainerStatus{{Name: "c"}},
		InitContainerStatuses: []prober.ContainerStatus{{Name: "c", ContainerID: "containerd://i", State: prober.ContainerState{Running: &prober.Running{StartedAt: later}}, Started: boolPtr(true)}}}, success)
	assert.Equal(t, []prober.Result{prober.Failure, prober.Success}, results(step.Updates))

	for _, phase := range []prober.Phase{prober.PodSucceeded, prober.PodFailed} {
		m := addOne(t, prober.Liveness, execProbe())
		s := runningStatus("containerd://a", later, boolPtr(true))
		s.Phase = phase
		step, _ := stepAt(t, m, key(prober.Liveness), later, s)
		assert.Equal(t, prober.Step{Kind: prober.StepExit}, step, "%s", phase)
	}
}

// TestDeletion: a pod being deleted makes liveness and startup publish
// Success and stop; readiness goes on.
func TestDeletion(t *testing.T) {
	for _, tc := range []struct {
		typ  prober.ProbeType
		exit bool
	}{{prober.Liveness, true}, {prober.Startup, true}, {prober.Readiness, false}} {
		m := addOne(t, tc.typ, execProbe(thresholds(1, 1)))
		k := key(tc.typ)
		status := runningStatus("containerd://a", later, boolPtr(tc.typ != prober.Startup))
		stepDue(t, m, k, status, failure)
		w, _ := m.Worker(k)
		// A new container so the liveness hold is lifted and the branch is reached.
		status = runningStatus("containerd://b", later, boolPtr(tc.typ != prober.Startup))
		m.SetDeletionTimestamp("uid", w.NextDue)
		step, tries := stepAt(t, m, k, w.NextDue, status, success)
		if tc.exit {
			assert.Equal(t, prober.StepExit, step.Kind, "%s", tc.typ)
			assert.Equal(t, 0, tries)
			assert.Equal(t, prober.Success, step.Updates[len(step.Updates)-1].Result)
		} else {
			assert.Equal(t, prober.StepWait, step.Kind)
			assert.Equal(t, 1, tries)
		}
	}
}
