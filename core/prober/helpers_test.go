package prober_test

import (
	"errors"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/core/prober"
	"github.com/stretchr/testify/require"
)

// kubeletStart is an arbitrary kubelet start; later is an hour after it,
// far past any start-up jitter and kubelet-restart grace.
var (
	kubeletStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	later        = kubeletStart.Add(time.Hour)
)

var (
	success = prober.Outcome{Result: prober.ProbeSuccess, Output: "ok"}
	failure = prober.Outcome{Result: prober.ProbeFailure, Output: "boom"}
	warning = prober.Outcome{Result: prober.ProbeWarning, Output: "Probe terminated redirects, Response body: x"}
	unknown = prober.Outcome{Result: prober.ProbeUnknown}
	errored = prober.Outcome{Result: prober.ProbeUnknown, Err: errors.New("invalid port number: 0")}
)

func boolPtr(b bool) *bool { return &b }

// execProbe is a defaulted exec probe with the changes given.
func execProbe(change ...func(*prober.Probe)) *prober.Probe {
	p := prober.Probe{Handler: prober.Handler{Exec: &prober.ExecAction{Command: []string{"true"}}}}
	for _, c := range change {
		c(&p)
	}
	d := p.WithDefaults()
	return &d
}

func thresholds(success, failure int32) func(*prober.Probe) {
	return func(p *prober.Probe) { p.SuccessThreshold, p.FailureThreshold = success, failure }
}

// podWith is pod "uid" with one container "c" carrying the probe of type t.
func podWith(t prober.ProbeType, p *prober.Probe) prober.Pod {
	c := prober.Container{Name: "c"}
	c.SetProbe(t, p)
	return prober.Pod{UID: "uid", Name: "p", Namespace: "ns", Containers: []prober.Container{c}}
}

func key(t prober.ProbeType) prober.WorkerKey {
	return prober.WorkerKey{PodUID: "uid", ContainerName: "c", Type: t}
}

func runningStatus(id string, startedAt time.Time, started *bool) *prober.PodStatus {
	return &prober.PodStatus{Phase: prober.PodRunning, PodIP: "10.0.0.1", ContainerStatuses: []prober.ContainerStatus{{
		Name: "c", ContainerID: id, State: prober.ContainerState{Running: &prober.Running{StartedAt: startedAt}}, Started: started,
	}}}
}

func exitedStatus(id string, exitCode int32) *prober.PodStatus {
	return &prober.PodStatus{Phase: prober.PodRunning, ContainerStatuses: []prober.ContainerStatus{{
		Name: "c", ContainerID: id, State: prober.ContainerState{Terminated: &prober.Terminated{ExitCode: exitCode}},
	}}}
}

func newManager(t testing.TB) *prober.Manager {
	m, err := prober.NewManager(prober.Options{KubeletStart: kubeletStart})
	require.NoError(t, err)
	return m
}

// addOne adds a pod with one probe of type t at later and returns the
// manager.
func addOne(t testing.TB, typ prober.ProbeType, p *prober.Probe) *prober.Manager {
	m := newManager(t)
	res, err := m.AddPod(later, podWith(typ, p), nil)
	require.NoError(t, err)
	require.Equal(t, []prober.WorkerKey{key(typ)}, res.Added)
	return m
}

// stepAt runs one doProbe of k at now, answering the probe tries with
// outcomes in turn, and returns what it published and recorded.
func stepAt(t testing.TB, m *prober.Manager, k prober.WorkerKey, now time.Time, status *prober.PodStatus, outcomes ...prober.Outcome) (prober.Step, int) {
	t.Helper()
	step, err := m.Step(k, now, status)
	require.NoError(t, err)
	updates, events := step.Updates, step.Events
	tries := 0
	for step.Kind == prober.StepProbe {
		require.Less(t, tries, len(outcomes), "probe try %d has no scripted outcome", tries+1)
		require.Equal(t, tries+1, step.Run.Attempt)
		step, err = m.ProbeDone(k, now, outcomes[tries])
		require.NoError(t, err)
		updates = append(updates, step.Updates...)
		events = append(events, step.Events...)
		tries++
	}
	step.Updates, step.Events = updates, events
	return step, tries
}

// stepDue steps k at its NextDue.
func stepDue(t testing.TB, m *prober.Manager, k prober.WorkerKey, status *prober.PodStatus, outcomes ...prober.Outcome) prober.Step {
	t.Helper()
	w, ok := m.Worker(k)
	require.True(t, ok, "worker %v", k)
	step, _ := stepAt(t, m, k, w.NextDue, status, outcomes...)
	return step
}

func results(updates []prober.Update) []prober.Result {
	out := []prober.Result{}
	for _, u := range updates {
		out = append(out, u.Result)
	}
	return out
}
