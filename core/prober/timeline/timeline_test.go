package timeline

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/core/prober"
)

func httpProbe(period, failure int32) *prober.Probe {
	return &prober.Probe{Handler: prober.Handler{HTTPGet: &prober.HTTPGetAction{Path: "/healthz", Port: prober.PortNumber(8080)}},
		PeriodSeconds: period, FailureThreshold: failure}
}

func webPod() prober.Pod {
	return prober.Pod{UID: "uid-web", Namespace: "default", Name: "web", Containers: []prober.Container{{
		Name: "web", LivenessProbe: httpProbe(10, 3), ReadinessProbe: httpProbe(5, 1),
	}}}
}

// play runs a pod under a script and returns the entries of the given
// kinds as "at container kind type value" lines.
func play(t *testing.T, pod prober.Pod, script string, opts Options, kinds ...Kind) []string {
	t.Helper()
	var o Outcomes
	if script != "" {
		var err error
		o, err = ParseOutcomes(script)
		require.NoError(t, err)
	}
	tl, err := New(pod, opts)
	require.NoError(t, err)
	require.NoError(t, Play(tl, o))
	var lines []string
	for _, e := range tl.Entries() {
		for _, k := range kinds {
			if e.Kind == k {
				typ := "-"
				if e.Type != nil {
					typ = strings.ToLower(e.Type.String())
				}
				lines = append(lines, strings.TrimSpace(fmt.Sprintf("%v %s %s %s %s %s", e.At, e.Container, e.Kind, typ, e.ContainerID, e.Value)))
			}
		}
	}
	return lines
}

// TestLivenessHealthyThenFailing is the example: healthy for 30 s,
// then failing. Liveness (period 10 s, failure 3) fails at 30, 40 and 50 s
// and publishes Failure on the third; the kubelet kills the container and
// starts a new one at once (its first restart: no earlier exited
// instance); the new container plays the pattern again and is killed 50 s
// after its start, again at once (it ran longer than the 10 s back-off).
func TestLivenessHealthyThenFailing(t *testing.T) {
	got := play(t, webPod(), "liveness=healthy 30s, failing", Options{Duration: 2 * time.Minute}, KindStart, KindResult, KindKill, KindBackOff)
	var liveness []string
	for _, l := range play(t, webPod(), "liveness=healthy 30s, failing", Options{Duration: 2 * time.Minute}, KindProbe) {
		if strings.Contains(l, " liveness ") {
			liveness = append(liveness, l)
		}
	}
	require.Equal(t, []string{
		"0s web start - containerd://web-1",
		"0s web result readiness containerd://web-1 Failure",
		"0s web result readiness containerd://web-1 Success",
		"10s web result liveness containerd://web-1 Success",
		"50s web result liveness containerd://web-1 Failure",
		"50s web kill - containerd://web-1 Killing",
		"50s web result readiness containerd://web-1 Failure",
		"50s web start - containerd://web-2",
		"50s web result readiness containerd://web-2 Failure",
		"50s web result readiness containerd://web-2 Success",
		"1m0s web result liveness containerd://web-2 Success",
		"1m40s web result liveness containerd://web-2 Failure",
		"1m40s web kill - containerd://web-2 Killing",
		"1m40s web result readiness containerd://web-2 Failure",
		"1m40s web start - containerd://web-3",
		"1m40s web result readiness containerd://web-3 Failure",
		"1m40s web result readiness containerd://web-3 Success",
		"1m50s web result liveness containerd://web-3 Success",
	}, got)
	require.Equal(t, []string{
		"10s web probe liveness containerd://web-1 success",
		"20s web probe liveness containerd://web-1 success",
		"30s web probe liveness containerd://web-1 failure",
		"40s web probe liveness containerd://web-1 failure",
		"50s web probe liveness containerd://web-1 failure",
		"1m0s web probe liveness containerd://web-2 success",
		"1m10s web probe liveness containerd://web-2 success",
		"1m20s web probe liveness containerd://web-2 failure",
		"1m30s web probe liveness containerd://web-2 failure",
		"1m40s web probe liveness containerd://web-2 failure",
		"1m50s web probe liveness containerd://web-3 success",
		"2m0s web probe liveness containerd://web-3 success",
	}, liveness, "the first doProbe at 0 s sees no container; then every 10 s; Failure after exactly 3")
}

// TestBackOffHoldsARestart: a container failing from its start (period
// 2 s, failure 2) is killed 4 s after it starts. The first restart is at
// once (no earlier exited instance), the second too (the back-off entry is
// new: 10 s from now on); the third is held 10 s because the instance
// before exited 4 s earlier, the fourth 20 s.
func TestBackOffHoldsARestart(t *testing.T) {
	pod := prober.Pod{UID: "u", Namespace: "default", Name: "crash", Containers: []prober.Container{{
		Name: "app", LivenessProbe: httpProbe(2, 2)}}}
	got := play(t, pod, "liveness=failing", Options{Duration: time.Minute}, KindStart, KindKill, KindBackOff)
	require.Equal(t, []string{
		"0s app start - containerd://app-1",
		"4s app kill - containerd://app-1 Killing",
		"4s app start - containerd://app-2",
		"8s app kill - containerd://app-2 Killing",
		"8s app start - containerd://app-3",
		"12s app kill - containerd://app-3 Killing",
		"12s app backoff -  10s",
		"22s app start - containerd://app-4",
		"26s app kill - containerd://app-4 Killing",
		"26s app backoff -  20s",
		"46s app start - containerd://app-5",
		"50s app kill - containerd://app-5 Killing",
		"50s app backoff -  40s",
	}, got)
}

// TestStartupGatesAndRestartPolicyNever: liveness and readiness wait for
// the startup probe; a startup Failure under restartPolicy Never kills
// the container for good: liveness and readiness publish Failure for the
// exited container and exit; the startup worker stays, on hold (#117153)
// until a container ID that never comes.
func TestStartupGatesAndRestartPolicyNever(t *testing.T) {
	pod := prober.Pod{UID: "u", Namespace: "default", Name: "slow", RestartPolicy: prober.RestartNever, Containers: []prober.Container{{
		Name: "app", StartupProbe: httpProbe(5, 3), LivenessProbe: httpProbe(10, 3), ReadinessProbe: httpProbe(10, 1)}}}
	got := play(t, pod, "startup=healthy 12s, failing", Options{Duration: time.Minute}, KindResult, KindKill, KindStarted, KindReady, KindExit)
	require.Equal(t, []string{
		"5s app result startup containerd://app-1 UNKNOWN",
		"5s app result startup containerd://app-1 Success",
		"5s app started - containerd://app-1 true",
		"5s app result readiness containerd://app-1 Failure",
		"5s app result readiness containerd://app-1 Success",
		"5s app ready - containerd://app-1 true",
		"10s app result liveness containerd://app-1 Success",
	}, got)

	got = play(t, pod, "startup=failing", Options{Duration: time.Minute}, KindResult, KindKill, KindStarted, KindExit)
	require.Equal(t, []string{
		"5s app result startup containerd://app-1 UNKNOWN",
		"10s app result liveness containerd://app-1 Success",
		"10s app result readiness containerd://app-1 Failure",
		"15s app result startup containerd://app-1 Failure",
		"15s app kill - containerd://app-1 Killing",
		"20s app result liveness containerd://app-1 Failure",
		"20s app exit liveness",
		"20s app exit readiness",
	}, got)
}

func TestJitterDelaysFirstProbe(t *testing.T) {
	got := play(t, webPod(), "", Options{Duration: 30 * time.Second, Jitter: 0.5}, KindProbe)
	require.Equal(t, "2.5s web probe readiness containerd://web-1 success", got[0], "readiness period 5 s × 0.5")
	require.Contains(t, got, "5s web probe liveness containerd://web-1 success", "liveness period 10 s × 0.5: the container runs, so it probes at once")
}

func TestWorstCaseDetection(t *testing.T) {
	p := prober.Probe{InitialDelaySeconds: 5, PeriodSeconds: 10, FailureThreshold: 3, TimeoutSeconds: 2}
	require.Equal(t, 37*time.Second, WorstCaseDetection(p))
}

func TestNewRejects(t *testing.T) {
	_, err := New(webPod(), Options{})
	require.EqualError(t, err, "duration: must be more than 0 and at most 168h0m0s, got 0s")
	_, err = New(webPod(), Options{Duration: time.Minute, Jitter: 1})
	require.EqualError(t, err, "jitter: must be in [0, 1), got 1")
	bad := webPod()
	bad.Containers[0].LivenessProbe.SuccessThreshold = 2
	_, err = New(bad, Options{Duration: time.Minute})
	require.EqualError(t, err, "spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1")
}

func TestDoneOutOfTurn(t *testing.T) {
	tl, err := New(webPod(), Options{Duration: time.Minute})
	require.NoError(t, err)
	req, ok, err := tl.Next()
	require.NoError(t, err)
	require.True(t, ok)
	_, _, err = tl.Next()
	require.EqualError(t, err, "request 1: must be reported with Done before Next")
	require.EqualError(t, tl.Done(req, req.At-time.Second, prober.Outcome{Result: prober.ProbeSuccess}), "request 1: ends at -1s, before it started at 0s")
	require.NoError(t, tl.Done(req, req.At, prober.Outcome{Result: prober.ProbeSuccess}))
	require.EqualError(t, tl.Done(req, req.At, prober.Outcome{Result: prober.ProbeSuccess}), "request 1: is not outstanding")
}

// crashPod's container fails its liveness probe (period 5 s, failure 2)
// from its start: killed 10 s after each start.
func crashPod() prober.Pod {
	return prober.Pod{UID: "u", Namespace: "default", Name: "crash", Containers: []prober.Container{{
		Name: "app", LivenessProbe: httpProbe(5, 2)}}}
}

// TestBackOffNotHeldAtExactlyItsLength: the third kill comes exactly the
// 10 s back-off after the previous instance exited, so the restart is not
// held (the back-off holds only while less than its length has passed);
// the fourth comes 10 s into the doubled 20 s and is held.
func TestBackOffNotHeldAtExactlyItsLength(t *testing.T) {
	got := play(t, crashPod(), "liveness=failing", Options{Duration: time.Minute}, KindStart, KindKill, KindBackOff)
	require.Equal(t, []string{
		"0s app start - containerd://app-1",
		"10s app kill - containerd://app-1 Killing",
		"10s app start - containerd://app-2",
		"20s app kill - containerd://app-2 Killing",
		"20s app start - containerd://app-3",
		"30s app kill - containerd://app-3 Killing",
		"30s app start - containerd://app-4",
		"40s app kill - containerd://app-4 Killing",
		"40s app backoff -  20s",
		"1m0s app start - containerd://app-5",
	}, got)
}

// playEntries runs a pod under a script and returns the timeline.
func playEntries(t *testing.T, pod prober.Pod, script string, opts Options) *Timeline {
	t.Helper()
	o, err := ParseOutcomes(script)
	require.NoError(t, err)
	tl, err := New(pod, opts)
	require.NoError(t, err)
	require.NoError(t, Play(tl, o))
	return tl
}

// TestRestartsCount: the first start is no restart; each later one counts
// one, in Restarts and in the start entry's message.
func TestRestartsCount(t *testing.T) {
	tl := playEntries(t, crashPod(), "liveness=failing", Options{Duration: time.Minute})
	var messages []string
	for _, e := range tl.Entries() {
		if e.Kind == KindStart {
			messages = append(messages, e.Message)
		}
	}
	assert.Equal(t, []string{"started", "restarted (restart 1)", "restarted (restart 2)", "restarted (restart 3)", "restarted (restart 4)"}, messages)
	assert.Equal(t, map[string]int{"app": 4}, tl.Restarts())

	tl = playEntries(t, webPod(), "healthy", Options{Duration: time.Minute})
	assert.Equal(t, map[string]int{"web": 0}, tl.Restarts(), "never killed: never restarted")
}

// TestProbeAndResultEntries: a probe entry's message says how long the
// probe took when it did not answer at once (each readiness timeout took
// the 1 s timeoutSeconds; the container starts at 2 s, which triggers the
// readiness worker, and the trigger taken during that probe runs it again
// at its end); a result entry's Age is the time since its container
// started.
func TestProbeAndResultEntries(t *testing.T) {
	tl := playEntries(t, webPod(), "readiness=timeout; liveness=healthy 30s, failing", Options{Duration: time.Minute, StartDelay: 2 * time.Second})
	var probes []string
	var failures []Entry
	for _, e := range tl.Entries() {
		switch {
		case e.Kind == KindProbe && e.At <= 10*time.Second:
			probes = append(probes, fmt.Sprintf("%v %s %s: %q", e.At, typeName(*e.Type), e.Value, e.Message))
		case e.Kind == KindResult && *e.Type == prober.Liveness && e.Value == "Failure":
			failures = append(failures, e)
		}
	}
	const took = `failure: "took 1s: context deadline exceeded (Client.Timeout exceeded while awaiting headers)"`
	assert.Equal(t, []string{
		"2s readiness " + took,
		"3s readiness " + took,
		"8s readiness " + took,
		`10s liveness success: ""`,
		"10s readiness " + took,
	}, probes)
	require.NotEmpty(t, failures)
	assert.Equal(t, 60*time.Second, failures[0].At, "liveness fails at 40, 50 and 60 s")
	assert.Equal(t, "containerd://web-1", failures[0].ContainerID)
	assert.Equal(t, 58*time.Second, failures[0].Age, "Failure at 60 s of a container started at 2 s")
}
