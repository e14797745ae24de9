package integration

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/nodeproof/nodeproof/agent/probe"
	"github.com/nodeproof/nodeproof/core/prober"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The runner tests' injected clock: the kubelet started at kubeletT0 and
// the pods are added an hour later, past the start-up jitter and the
// kubelet-restart grace; the container started a minute before that.
var (
	kubeletT0  = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	addedAt    = kubeletT0.Add(time.Hour)
	appStarted = addedAt.Add(-time.Minute)
)

const appID = "containerd://app1"

// runnerFor is a Runner over a new Manager holding pod, whose status is
// whatever *status points to when a worker steps.
func runnerFor(t *testing.T, pod prober.Pod, status **prober.PodStatus) *probe.Runner {
	t.Helper()
	m, err := prober.NewManager(prober.Options{KubeletStart: kubeletT0})
	require.NoError(t, err)
	_, err = m.AddPod(addedAt, pod.WithDefaults(), nil)
	require.NoError(t, err)
	return &probe.Runner{Manager: m, Prober: newProber(t), Status: func(string) *prober.PodStatus { return *status }}
}

func appStatus(podIP string, started bool) *prober.PodStatus {
	return &prober.PodStatus{Phase: prober.PodRunning, PodIP: podIP, ContainerStatuses: []prober.ContainerStatus{{
		Name: "app", ContainerID: appID, State: prober.ContainerState{Running: &prober.Running{StartedAt: appStarted}}, Started: &started,
	}}}
}

func update(t prober.ProbeType, r prober.Result) prober.Update {
	return prober.Update{Type: t, ContainerID: appID, Result: r, PodUID: "uid"}
}

func unhealthy(msg string) prober.Event {
	return prober.Event{PodUID: "uid", ContainerName: "app", Type: "Warning", Reason: "Unhealthy", Message: msg}
}

// runUntil runs the runner to at and returns what it published.
func runUntil(t *testing.T, r *probe.Runner, at time.Time) probe.Report {
	t.Helper()
	rep, err := r.RunUntil(context.Background(), at)
	require.NoError(t, err)
	return rep
}

// TestRunnerLivenessFailsAfterExactlyF: a liveness probe of a real HTTP
// server that turns unhealthy publishes Failure at the third failure
// (failureThreshold 3), not before, and then holds: no probe runs until
// the container changes.
func TestRunnerLivenessFailsAfterExactlyF(t *testing.T) {
	var healthy atomic.Bool
	var hits atomic.Int32
	healthy.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if !healthy.Load() {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	host, port := hostPort(t, srv.Listener.Addr().String())
	pod := prober.Pod{UID: "uid", Name: "p", Namespace: "ns", Containers: []prober.Container{{Name: "app",
		LivenessProbe: &prober.Probe{Handler: prober.Handler{HTTPGet: &prober.HTTPGetAction{Port: prober.PortNumber(port), Path: "/healthz"}}, FailureThreshold: 3}}}}
	status := appStatus(host, true)
	r := runnerFor(t, pod, &status)

	rep := runUntil(t, r, addedAt)
	assert.Equal(t, []prober.Update{update(prober.Liveness, prober.Success)}, rep.Updates, "the initial value, then a success that changes nothing")
	assert.Equal(t, 1, rep.Probes)

	healthy.Store(false)
	failed := unhealthy("Liveness probe failed: HTTP probe failed with statuscode: 500")
	for i := 1; i <= 2; i++ {
		rep = runUntil(t, r, addedAt.Add(time.Duration(i)*10*time.Second))
		assert.Empty(t, rep.Updates, "failure %d of 3 publishes nothing", i)
		assert.Equal(t, []prober.Event{failed}, rep.Events)
	}
	rep = runUntil(t, r, addedAt.Add(30*time.Second))
	assert.Equal(t, []prober.Update{update(prober.Liveness, prober.Failure)}, rep.Updates, "the third failure")
	assert.Equal(t, []prober.Event{failed}, rep.Events)

	healthy.Store(true)
	rep = runUntil(t, r, addedAt.Add(5*time.Minute))
	assert.Zero(t, rep.Probes, "on hold after a liveness failure until the container ID changes")
	assert.Equal(t, int32(4), hits.Load())
}

// TestRunnerReadinessFlips: a readiness probe of a real gRPC health server
// (thresholds 1) follows its status: Failure at first (readiness's
// initial value), then Success, Failure and Success as the server
// switches.
func TestRunnerReadinessFlips(t *testing.T) {
	hs := health.NewServer()
	host, port := serveGRPC(t, func(s *grpc.Server) { healthpb.RegisterHealthServer(s, hs) })
	pod := prober.Pod{UID: "uid", Name: "p", Namespace: "ns", Containers: []prober.Container{{Name: "app",
		ReadinessProbe: &prober.Probe{Handler: prober.Handler{GRPC: &prober.GRPCAction{Port: port}}, PeriodSeconds: 5, FailureThreshold: 1}}}}
	status := appStatus(host, true)
	r := runnerFor(t, pod, &status)

	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	rep := runUntil(t, r, addedAt)
	assert.Equal(t, []prober.Update{update(prober.Readiness, prober.Failure)}, rep.Updates, "the initial value; the failure changes nothing")
	assert.Equal(t, []prober.Event{unhealthy(`Readiness probe failed: service unhealthy (responded with "NOT_SERVING")`)}, rep.Events)

	var flips []prober.Update
	for i, serving := range []healthpb.HealthCheckResponse_ServingStatus{healthpb.HealthCheckResponse_SERVING, healthpb.HealthCheckResponse_NOT_SERVING, healthpb.HealthCheckResponse_SERVING} {
		hs.SetServingStatus("", serving)
		rep = runUntil(t, r, addedAt.Add(time.Duration(i+1)*5*time.Second))
		require.Equal(t, 1, rep.Probes)
		flips = append(flips, rep.Updates...)
	}
	assert.Equal(t, []prober.Update{
		update(prober.Readiness, prober.Success), update(prober.Readiness, prober.Failure), update(prober.Readiness, prober.Success),
	}, flips)
}

// TestRunnerStartupGatesLiveness: while the startup probe has not
// succeeded, the liveness probe never reaches its server; once startup
// publishes Success, UpdatePodStatus marks the container started and
// liveness probes on its period.
func TestRunnerStartupGatesLiveness(t *testing.T) {
	var up atomic.Bool
	var startupHits, livenessHits atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/started", func(w http.ResponseWriter, r *http.Request) {
		startupHits.Add(1)
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { livenessHits.Add(1) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	host, port := hostPort(t, srv.Listener.Addr().String())
	get := func(path string) prober.Handler {
		return prober.Handler{HTTPGet: &prober.HTTPGetAction{Port: prober.PortNumber(port), Path: path}}
	}
	pod := prober.Pod{UID: "uid", Name: "p", Namespace: "ns", Containers: []prober.Container{{Name: "app",
		StartupProbe:  &prober.Probe{Handler: get("/started"), PeriodSeconds: 1, FailureThreshold: 30},
		LivenessProbe: &prober.Probe{Handler: get("/healthz")}}}}
	pod = pod.WithDefaults()
	status := appStatus(host, false)
	r := runnerFor(t, pod, &status)

	rep := runUntil(t, r, addedAt.Add(3*time.Second))
	assert.Equal(t, int32(4), startupHits.Load(), "startup probes every second")
	assert.Zero(t, livenessHits.Load(), "liveness waits for the container to start")
	assert.Equal(t, []prober.Update{update(prober.Liveness, prober.Success), update(prober.Startup, prober.Unknown)}, rep.Updates, "the initial values, in key order")

	up.Store(true)
	rep = runUntil(t, r, addedAt.Add(4*time.Second))
	assert.Equal(t, []prober.Update{update(prober.Startup, prober.Success)}, rep.Updates)
	st, err := r.Manager.UpdatePodStatus(addedAt.Add(4*time.Second), pod, *status)
	require.NoError(t, err)
	require.NotNil(t, st.Status.ContainerStatuses[0].Started)
	assert.True(t, *st.Status.ContainerStatuses[0].Started, "started from the startup result")
	status = &st.Status

	runUntil(t, r, addedAt.Add(30*time.Second))
	assert.Equal(t, int32(5), startupHits.Load(), "the startup worker stops probing once it succeeded")
	assert.Equal(t, int32(3), livenessHits.Load(), "liveness probes at +10 s, +20 s, +30 s")
}

// TestRunnerTimeoutsAndErrors: a server that answers past the 1 s timeout
// is a liveness failure with the client's text (published at once with
// failureThreshold 1); a probe whose named port the container lacks errs,
// is tried three times and thrown away: no result, an "errored" event.
func TestRunnerTimeoutsAndErrors(t *testing.T) {
	srv := silentServer(t)
	host, port := hostPort(t, srv.Listener.Addr().String())
	pod := prober.Pod{UID: "uid", Name: "p", Namespace: "ns", Containers: []prober.Container{{Name: "app",
		LivenessProbe:  &prober.Probe{Handler: prober.Handler{HTTPGet: &prober.HTTPGetAction{Port: prober.PortNumber(port), Path: "/slow"}}, FailureThreshold: 1},
		ReadinessProbe: &prober.Probe{Handler: prober.Handler{TCPSocket: &prober.TCPSocketAction{Port: prober.PortName("metrics")}}}}}}
	status := appStatus(host, true)
	r := runnerFor(t, pod, &status)

	rep := runUntil(t, r, addedAt)
	assert.Equal(t, []prober.Update{
		update(prober.Liveness, prober.Success), update(prober.Readiness, prober.Failure), update(prober.Liveness, prober.Failure),
	}, rep.Updates, "initial values in key order, then liveness's failure; readiness keeps its initial value: the errors change nothing")
	assert.Equal(t, []prober.Event{
		unhealthy(fmt.Sprintf(`Liveness probe failed: Get "%s/slow": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, srv.URL)),
		unhealthy(`Readiness probe errored and resulted in unknown state: probe: tcpSocket.port "metrics": strconv.Atoi: parsing "metrics": invalid syntax`),
	}, rep.Events)
	assert.Equal(t, 4, rep.Probes, "three tries of the erring probe, one of the slow one")
}
