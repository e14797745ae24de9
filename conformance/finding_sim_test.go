package conformance

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Findings of the node simulation (verify/findings_sim.go), confirmed on
// the v1.36.3 kubelet's own code.

// restartReadyScenario is SIM-F1's case as the prober harness plays it: a
// pod whose one container has a readiness probe that always succeeds is
// added, its container starts, the probe succeeds and the status sync
// makes the container Ready, and the API pod's Ready condition is True.
// The kubelet restarts sinceStart after the container started: a new
// prober manager, the pod added again, and the new kubelet's first status
// sync, before its readiness worker has probed (its start-up jitter, from
// seed 1, is 6 s).
func restartReadyScenario(sinceStart time.Duration) prScenario {
	always := &prProbe{Timeout: 1, Period: 10, Success: 1, Failure: 3, Script: []prOutcome{prOK}}
	return prScenario{
		Pods: []prPod{{UID: "pod-000001", RestartPolicy: "Always", Containers: []prContainer{{Name: "c0", Readiness: always}}}},
		Steps: []prStep{
			// The first kubelet: its worker's jitter (seed 9) is 36 ms; a
			// readiness worker waits for the container's Started, which
			// the first sync writes and whose manual trigger makes it
			// probe at once; the second sync finds the probe's success.
			{Op: "add", Seed: 9},
			{Op: "start", Container: "c0"},
			{Op: "phase", Phase: "Running"},
			{Op: "wait", Wait: time.Second},
			{Op: "sync"},
			{Op: "wait", Wait: time.Second},
			{Op: "sync"},
			{Op: "ready", Flag: true},
			{Op: "wait", Wait: sinceStart - 2*time.Second},
			// The restart, and the new kubelet's first sync.
			{Op: "restart"},
			{Op: "add", Seed: 1},
			{Op: "sync"},
		},
	}
}

// TestFindingSIMRestartReady confirms SIM-F1 on upstream's prober manager
// (pkg/kubelet/prober at v1.36.3), driven through the calls the
// simulation's kubelet makes around a restart: AddPod, the container's
// start, UpdatePodStatus after the readiness probe succeeded; then a new
// manager (the restarted kubelet), AddPod and UpdatePodStatus with the API
// pod's Ready condition True.
//
// The promise (Kubernetes documentation, Pod Lifecycle, "Detection of
// kubelet restarts"; What Happens After A Node Restart, "Impact of a
// kubelet restart"; KEP-4781): by default the kubelet does not change
// container statuses after a restart; a container that was ready: true
// stays ready.
//
// It covers the prober's part of the path: how the restarted kubelet
// computes the container's Ready from the status it finds. The rest of the
// kubelet's restart (the status manager publishing the result, the
// endpoints following it) is not exercised here.
//
// The test passes while the bug is present: a container that started 3 s
// before the restart is reported not ready by the new kubelet's first sync,
// although no readiness probe ran since the restart; one that started 15 s
// before it keeps ready: true, since v1.36.3 keeps the readiness only of
// containers started more than 10 s before the kubelet.
func TestFindingSIMRestartReady(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sinceStart time.Duration
		wantReady  bool
	}{
		{"a container started 3 s before the restart loses ready", 3 * time.Second, false},
		{"a container started 15 s before the restart keeps it", 15 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := runTheirProber(t, restartReadyScenario(tc.sinceStart))
			require.Empty(t, out.Setup)
			require.Len(t, out.Syncs, 3, "two syncs before the restart, one after")
			assert.Equal(t, []string{"c0:true:true"}, out.Syncs[1].App, "Ready before the restart")
			assert.Empty(t, runsAfter(out, tc.sinceStart), "no readiness probe ran between the restart and its first sync")
			want := "c0:true:false"
			if tc.wantReady {
				want = "c0:true:true"
			}
			assert.Equal(t, []string{want}, out.Syncs[2].App, "Started and Ready after the restart")
		})
	}
}

// runsAfter are the probes upstream ran from the restart at, on.
func runsAfter(out prResult, at time.Duration) []prRun {
	var runs []prRun
	for _, r := range out.Runs {
		if r.At >= at {
			runs = append(runs, r)
		}
	}
	return runs
}
