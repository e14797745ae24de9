package conformance

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The prober's findings (verify/findings_prober.go), each confirmed on the
// v1.36.3 kubelet's own prober manager and workers: the scenario of the
// shrunk case runs through upstream's prober.NewManager with the fakes of
// prober_test.go (a status manager, upstream's results managers, a scripted
// exec runner, a testing/synctest clock), and the test asserts that the
// documented promise is broken. Each test passes while the bug is present
// and fails once upstream keeps the promise. Each also checks that
// nodeproof's core gives the same results, as the comparison does.

// prRunsOf returns upstream's probe tries of one type on one container.
func prRunsOf(out prResult, containerID, typ string) []prRun {
	var runs []prRun
	for _, r := range out.Runs {
		if r.ContainerID == containerID && r.Type == typ {
			runs = append(runs, r)
		}
	}
	return runs
}

// prUpdateOf returns the first result of a type published for a container
// with the given value.
func prUpdateOf(out prResult, containerID, typ, result string) (prUpdate, bool) {
	for _, u := range out.Updates {
		if u.ContainerID == containerID && u.Type == typ && u.Result == result {
			return u, true
		}
	}
	return prUpdate{}, false
}

// prSyncAt returns the app containers' name:started:ready of the sync that
// was the scenario's step index.
func prSyncAt(t *testing.T, out prResult, step int) []string {
	for _, s := range out.Syncs {
		if s.Step == step {
			return s.App
		}
	}
	require.Failf(t, "no sync", "step %d synced nothing: %+v", step, out.Syncs)
	return nil
}

// prRunBefore counts the tries among runs strictly before at.
func prRunBefore(runs []prRun, at time.Duration) int {
	n := 0
	for _, r := range runs {
		if r.At < at {
			n++
		}
	}
	return n
}

const prC0 = "containerd://p0.c0.1"
const prC0Replaced = "containerd://p0.c0.2"

// coreAgrees requires nodeproof's core to do what upstream did on a
// finding's scenario, on the modelled release; on another, a difference is
// that release's behaviour change, which the comparisons report.
func coreAgrees(t *testing.T, in prScenario, out prResult) {
	t.Helper()
	if onModelled() {
		require.Equal(t, runOurProber(in), out, "nodeproof's core and upstream differ on the finding's scenario")
	}
}

// TestFindingPBDelayAfterStartup confirms PB-F1. The promise, from
// "Configure Liveness, Readiness and Startup Probes", section "Configure
// Probes" (https://kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/#configure-probes):
// initialDelaySeconds: "If a startup probe is defined, liveness and
// readiness probe delays do not begin until the startup probe has
// succeeded." Upstream counts a liveness probe's initial delay from the
// container's start instead: a container whose startup probe succeeds 4 s
// after it started has its first liveness probe 1 s later, although
// initialDelaySeconds is 5. The test passes while the bug is present.
func TestFindingPBDelayAfterStartup(t *testing.T) {
	in := prScenario{
		Pods: []prPod{{UID: "p0", RestartPolicy: "Always", Containers: []prContainer{{Name: "c0",
			Start:    &prProbe{Timeout: 1, Period: 1, Success: 1, Failure: 10, Script: []prOutcome{prFail, prFail, prFail, prOK}},
			Liveness: &prProbe{InitialDelay: 5, Timeout: 1, Period: 1, Success: 1, Failure: 3, Script: []prOutcome{prOK}}}}}},
		Steps: []prStep{
			{Op: "add"},                                 // at 1 s, past the jitter window
			{Op: "start", Container: "c0"},              // the container starts at 1 s
			{Op: "wait", Wait: 4500 * time.Millisecond}, // startup fails at 2, 3, 4 s, succeeds at 5 s
			{Op: "sync"},                                // 5.5 s: Started
			{Op: "wait", Wait: 3 * time.Second},
		},
	}
	out := runTheirProber(t, in)
	require.Empty(t, out.Setup)
	coreAgrees(t, in, out)

	started, ok := prUpdateOf(out, prC0, "Startup", "Success")
	require.True(t, ok, "the startup probe never succeeded: %+v", out.Updates)
	assert.Equal(t, 5*time.Second, started.At)
	live := prRunsOf(out, prC0, "Liveness")
	require.NotEmpty(t, live, "no liveness probe ran: %+v", out.Runs)
	// The broken promise: the first liveness probe comes sooner than
	// initialDelaySeconds (5 s) after the startup probe's success.
	bug := bugOutcome(t, "PB-F1")
	assert.Less(bug, live[0].At-started.At, 5*time.Second, "the first liveness probe waited initialDelaySeconds after startup succeeded: the promise is kept")
	assert.Equal(bug, 6*time.Second, live[0].At, "upstream's first liveness probe: initialDelaySeconds after the container's start")
}

// TestFindingPBFailureRunCarriedOver confirms PB-F2. The promise, from
// "Configure Liveness, Readiness and Startup Probes", section "Configure
// Probes": failureThreshold: "After a probe fails failureThreshold times in
// a row, Kubernetes considers that the overall check has failed [...] For
// the case of a startup or liveness probe, if at least failureThreshold
// probes have failed, Kubernetes treats the container as unhealthy and
// triggers a restart for that specific container." Upstream's worker
// keeps its run of failures when the container is replaced: two failed
// liveness probes of a container that then crashes and is restarted, and
// the replacement's first failed probe turns its liveness result Failure
// (the kubelet kills it) with failureThreshold 3; the same holds for a
// startup probe, which so shortens the time the replacement has to start.
// The test passes while the bug is present.
func TestFindingPBFailureRunCarriedOver(t *testing.T) {
	in := prScenario{
		Pods: []prPod{{UID: "p0", RestartPolicy: "Always", Containers: []prContainer{{Name: "c0",
			Liveness: &prProbe{Timeout: 1, Period: 1, Success: 1, Failure: 3, Script: []prOutcome{prFail}}}}}},
		Steps: []prStep{
			{Op: "wait", Wait: time.Second},
			{Op: "add"},                    // 1 s, no start-up jitter
			{Op: "start", Container: "c0"}, // c0.1
			{Op: "sync"},                   // Started (no startup probe)
			{Op: "wait", Wait: 2500 * time.Millisecond},
			// 3.5 s: c0.1 failed its liveness probe at 2 s and 3 s, then
			// crashes; the kubelet starts c0.2.
			{Op: "exit", Container: "c0", Exit: 1},
			{Op: "start", Container: "c0"},
			{Op: "sync"},
			{Op: "wait", Wait: 2 * time.Second},
		},
	}
	out := runTheirProber(t, in)
	require.Empty(t, out.Setup)
	coreAgrees(t, in, out)

	assert.Len(t, prRunsOf(out, prC0, "Liveness"), 2, "the first container's failed liveness probes")
	failed, ok := prUpdateOf(out, prC0Replaced, "Liveness", "Failure")
	// The broken promise: the replacement is judged failed (and would be
	// restarted) after fewer than failureThreshold (3) failed probes of its
	// own.
	bug := bugOutcome(t, "PB-F2")
	if assert.True(bug, ok, "the replacement's liveness result never turned Failure in its 2 s: the promise is kept: %+v", out.Updates) {
		own := prRunBefore(prRunsOf(out, prC0Replaced, "Liveness"), failed.At+time.Nanosecond)
		assert.Less(bug, own, 3, "the replacement failed failureThreshold probes before its result turned Failure: the promise is kept")
		assert.Equal(bug, 1, own)
		assert.Equal(bug, 4*time.Second, failed.At)
	}

	// The same with a startup probe: a slow-starting container that
	// crashed during its startup gets, in its replacement, fewer than the
	// failureThreshold × periodSeconds the documentation promises ("the
	// application will have a maximum of 5 minutes (30 * 10 = 300s) to
	// finish its startup"): one failed startup probe of c0.2 (1 s) turns its
	// startup result Failure, on which the kubelet kills it.
	t.Run("startup", func(t *testing.T) {
		in := prScenario{
			Pods: []prPod{{UID: "p0", RestartPolicy: "Always", Containers: []prContainer{{Name: "c0",
				Start: &prProbe{Timeout: 1, Period: 1, Success: 1, Failure: 3, Script: []prOutcome{prFail}}}}}},
			Steps: []prStep{
				{Op: "wait", Wait: time.Second},
				{Op: "add"},
				{Op: "start", Container: "c0"}, // c0.1 fails its startup probe at 2 s and 3 s
				{Op: "wait", Wait: 2500 * time.Millisecond},
				{Op: "exit", Container: "c0", Exit: 1}, // 3.5 s: c0.1 crashes while starting
				{Op: "start", Container: "c0"},
				{Op: "wait", Wait: 2 * time.Second},
			},
		}
		out := runTheirProber(t, in)
		require.Empty(t, out.Setup)
		coreAgrees(t, in, out)
		assert.Len(t, prRunsOf(out, prC0, "Startup"), 2, "the first container's failed startup probes")
		failed, ok := prUpdateOf(out, prC0Replaced, "Startup", "Failure")
		bug := bugOutcome(t, "PB-F2")
		if !assert.True(bug, ok, "the replacement's startup result never turned Failure in its 2 s: the promise is kept: %+v", out.Updates) {
			return
		}
		own := prRunBefore(prRunsOf(out, prC0Replaced, "Startup"), failed.At+time.Nanosecond)
		assert.Less(bug, own, 3, "the replacement failed failureThreshold startup probes before its result turned Failure: the promise is kept")
		assert.Equal(bug, 1, own)
		assert.Equal(bug, 4*time.Second, failed.At)
	})
}

// TestFindingPBSuccessRunCarriedOver confirms PB-F3. The promise, from
// "Configure Liveness, Readiness and Startup Probes", section "Configure
// Probes": successThreshold: "Minimum consecutive successes for the probe
// to be considered successful after having failed." Upstream's worker keeps
// its run of successes when the container is replaced: two successful
// readiness probes of a container that then crashes, and the replacement
// (whose readiness starts as Failure) is Ready after one successful probe
// of its own, with successThreshold 3. The test passes while the bug is
// present.
func TestFindingPBSuccessRunCarriedOver(t *testing.T) {
	in := prScenario{
		Pods: []prPod{{UID: "p0", RestartPolicy: "Always", Containers: []prContainer{{Name: "c0",
			Readiness: &prProbe{Timeout: 1, Period: 1, Success: 3, Failure: 1, Script: []prOutcome{prOK}}}}}},
		Steps: []prStep{
			{Op: "wait", Wait: time.Second},
			{Op: "add"},
			{Op: "start", Container: "c0"},
			{Op: "sync"},
			{Op: "wait", Wait: 1500 * time.Millisecond},
			// 2.5 s: c0.1 passed its readiness probe at 1 s (the sync's
			// trigger) and 2 s, not yet Ready, then crashes; the kubelet
			// starts c0.2, and the sync triggers its readiness probe.
			{Op: "exit", Container: "c0", Exit: 1},
			{Op: "start", Container: "c0"},
			{Op: "sync"},
			{Op: "wait", Wait: 100 * time.Millisecond},
			{Op: "sync"}, // step 9, at 2.6 s
		},
	}
	out := runTheirProber(t, in)
	require.Empty(t, out.Setup)
	coreAgrees(t, in, out)

	_, ok := prUpdateOf(out, prC0, "Readiness", "Success")
	assert.False(t, ok, "the first container reached successThreshold")
	ready, ok := prUpdateOf(out, prC0Replaced, "Readiness", "Success")
	// The broken promise: the replacement, whose readiness started as
	// Failure, is successful after fewer than successThreshold (3)
	// successful probes of its own.
	bug := bugOutcome(t, "PB-F3")
	if !assert.True(bug, ok, "the replacement was not ready after one probe of its own: the promise is kept: %+v", out.Updates) {
		return
	}
	own := prRunBefore(prRunsOf(out, prC0Replaced, "Readiness"), ready.At+time.Nanosecond)
	assert.Less(bug, own, 3, "the replacement passed successThreshold probes before it was ready: the promise is kept")
	assert.Equal(bug, 1, own)
	assert.Equal(bug, 2500*time.Millisecond, ready.At)
	assert.Equal(bug, []string{"c0:true:true"}, prSyncAt(t, out, 9), "the replacement is reported Ready")
}

// TestFindingPBReplacedContainerReady confirms PB-F4. The promises: "Pod
// Lifecycle", section "Types of probe"
// (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#types-of-probe):
// "The default state of readiness before the initial delay is Failure";
// and KEP-4781, which keeps a container's Ready state across a kubelet
// restart, says that a container that "crashed" has its Started and Ready
// "determined based on the probe". Upstream reports a replacement
// container Ready after a kubelet restart before its readiness probe ever
// ran, when the kubelet went down right after starting it (before its next
// status update) for more than 10 s: the restart rule takes the API pod's
// stale Ready condition, written for the previous container. The kubelet's
// downtime is a manager that has no pods. The test passes while the bug is
// present.
func TestFindingPBReplacedContainerReady(t *testing.T) {
	in := prScenario{
		Pods: []prPod{{UID: "p0", RestartPolicy: "Always", Containers: []prContainer{{Name: "c0",
			Readiness: &prProbe{Timeout: 1, Period: 1, Success: 1, Failure: 3, Script: []prOutcome{prFail, prFail, prOK}}}}}},
		Steps: []prStep{
			{Op: "wait", Wait: time.Second},
			{Op: "add"},
			{Op: "start", Container: "c0"},
			{Op: "sync"},
			{Op: "wait", Wait: 2500 * time.Millisecond}, // c0.1 fails at 1 s (the sync's trigger) and 2 s, is ready at 3 s
			{Op: "sync"},
			{Op: "ready", Flag: true}, // the API pod's Ready condition
			// 3.5 s: c0.1 crashes, the kubelet starts c0.2 and goes down
			// before its next status update.
			{Op: "exit", Container: "c0", Exit: 1},
			{Op: "start", Container: "c0"},
			{Op: "restart"}, // the kubelet is down: a manager without pods
			{Op: "wait", Wait: 30 * time.Second},
			{Op: "restart"}, // 33.5 s: the kubelet is back
			{Op: "add"},     // its worker's first probe comes after the start-up jitter
			{Op: "sync"},    // step 13: before c0.2's readiness probe ran
			{Op: "wait", Wait: time.Second},
			{Op: "sync"}, // step 15: after c0.2's first two probes (the jittered first and the sync's trigger), which failed
		},
	}
	out := runTheirProber(t, in)
	require.Empty(t, out.Setup)
	coreAgrees(t, in, out)

	_, ok := prUpdateOf(out, prC0, "Readiness", "Success")
	require.True(t, ok, "the first container never became ready: %+v", out.Updates)
	back := 33500 * time.Millisecond
	runs := prRunsOf(out, prC0Replaced, "Readiness")
	// The broken promise: c0.2 is reported Ready although no readiness
	// probe of its own had run, and stays Ready after its first two probes
	// failed; no readiness probe of c0.2 has succeeded.
	bug := bugOutcome(t, "PB-F4")
	assert.Equal(bug, []string{"c0:true:true"}, prSyncAt(t, out, 13), "the replacement is reported Ready before its readiness probe ran")
	assert.Zero(t, prRunBefore(runs, back+time.Nanosecond), "a readiness probe of the replacement ran before the sync")
	assert.Equal(t, 2, prRunBefore(runs, back+time.Second), "the replacement's readiness probes before step 15: %+v", runs)
	assert.Equal(bug, []string{"c0:true:true"}, prSyncAt(t, out, 15), "the replacement stays Ready after its readiness probes failed")
	// (Step 15's sync triggers a third probe, which succeeds.)
	if u, ok := prUpdateOf(out, prC0Replaced, "Readiness", "Success"); ok {
		assert.GreaterOrEqual(t, u.At, back+time.Second, "a readiness probe of the replacement succeeded before step 15")
	}
}
