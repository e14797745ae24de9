package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
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

// stressWorkers is the size of upstream's prober scale test (scale_test.go:
// one pod of 600 containers, one probe each); stressRounds is how many
// probes each worker runs.
const (
	stressWorkers = 600
	stressRounds  = 5
)

// cpuTime is the process's user plus system CPU time so far.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// stressCase is one kind of probe of the stress test and the result every
// run of it must give.
type stressCase struct {
	name   string
	spec   probe.Spec
	target probe.Target
	want   probe.Result
}

// stressTargets starts the six real targets of the stress tests and
// returns a probe of each with the result it must give.
func stressTargets(t testing.TB) []stressCase {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	mux.HandleFunc("/bad", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	httpHost, httpPort := hostPort(t, srv.Listener.Addr().String())

	// The TCP target accepts and closes; the refused one is a closed port.
	lis := acceptAndClose(t)
	tcpHost, tcpPort := hostPort(t, lis.Addr().String())
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, closedPort := hostPort(t, closed.Addr().String())
	require.NoError(t, closed.Close())

	hs := health.NewServer()
	down := "down"
	hs.SetServingStatus(down, healthpb.HealthCheckResponse_NOT_SERVING)
	grpcHost, grpcPort := serveGRPC(t, func(s *grpc.Server) { healthpb.RegisterHealthServer(s, hs) })

	// A generous timeout: the test looks for wrong verdicts, not for how
	// long two shared cores take to answer 600 connections at once.
	const timeout = 10
	return []stressCase{
		{"http ok", probe.Spec{HTTPGet: &probe.HTTPGetAction{Port: probe.Port{Number: httpPort}, Path: "/ok"}, TimeoutSeconds: timeout},
			probe.Target{PodIP: httpHost}, probe.Result{Kind: probe.Success, Output: "ok"}},
		{"http 503", probe.Spec{HTTPGet: &probe.HTTPGetAction{Port: probe.Port{Number: httpPort}, Path: "/bad"}, TimeoutSeconds: timeout},
			probe.Target{PodIP: httpHost}, probe.Result{Kind: probe.Failure, Output: "HTTP probe failed with statuscode: 503"}},
		{"tcp open", probe.Spec{TCPSocket: &probe.TCPSocketAction{Port: probe.Port{Number: tcpPort}}, TimeoutSeconds: timeout},
			probe.Target{PodIP: tcpHost}, probe.Result{Kind: probe.Success}},
		{"tcp refused", probe.Spec{TCPSocket: &probe.TCPSocketAction{Port: probe.Port{Number: closedPort}}, TimeoutSeconds: timeout},
			probe.Target{PodIP: tcpHost}, probe.Result{Kind: probe.Failure, Output: fmt.Sprintf("dial tcp %s: connect: connection refused", closed.Addr())}},
		{"grpc serving", probe.Spec{GRPC: &probe.GRPCAction{Port: grpcPort}, TimeoutSeconds: timeout},
			probe.Target{PodIP: grpcHost}, probe.Result{Kind: probe.Success, Output: "service healthy"}},
		{"grpc not serving", probe.Spec{GRPC: &probe.GRPCAction{Port: grpcPort, Service: &down}, TimeoutSeconds: timeout},
			probe.Target{PodIP: grpcHost}, probe.Result{Kind: probe.Failure, Output: `service unhealthy (responded with "NOT_SERVING")`}},
	}

}

// TestProbeStress600 runs 600 concurrent probers, each probing one of six
// real targets five times (healthy and failing HTTP, TCP and gRPC), and
// requires every one of the 3,000 results to be the target's own or a
// timeout classified as one: no false result under load. A probe that
// times out on a machine too busy to answer within its 10 s is what the
// kubelet would see too, not a wrong verdict; how many probes a second the
// prober sustains is capacity, measured by BenchmarkProbeStress600, not
// asserted here. Each probe is bounded by its own timeout, so the test
// needs no deadline of its own.
func TestProbeStress600(t *testing.T) {
	p := newProber(t)
	cases := stressTargets(t)

	type falseResult struct {
		worker int
		got    probe.Result
	}
	var (
		mu              sync.Mutex
		wrong           []falseResult
		timedOut, exact = make([]int, len(cases)), make([]int, len(cases))
		wg              sync.WaitGroup
	)
	start := make(chan struct{})
	for w := range stressWorkers {
		i := w % len(cases)
		c := cases[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range stressRounds {
				got := p.Run(context.Background(), c.spec, c.target)
				mu.Lock()
				switch {
				case got == c.want:
					exact[i]++
				case isTimeout(c.spec, got):
					timedOut[i]++
				default:
					wrong = append(wrong, falseResult{w, got})
				}
				mu.Unlock()
			}
		}()
	}
	cpuBefore, wallBefore := cpuTime(t), time.Now()
	close(start)
	wg.Wait()
	wall, cpu := time.Since(wallBefore), cpuTime(t)-cpuBefore
	probes := stressWorkers * stressRounds
	t.Logf("%d workers x %d probes = %d probes: wall %v, CPU %v (%.0f µs CPU per probe, prober and targets), false results %d, timed out %v",
		stressWorkers, stressRounds, probes, wall.Round(time.Millisecond), cpu.Round(time.Millisecond),
		float64(cpu.Microseconds())/float64(probes), len(wrong), timedOut)
	assert.Empty(t, wrong, "false results")
	for i, c := range cases {
		// A case whose every probe timed out checked no verdict at all.
		assert.Positive(t, exact[i], "%s: no probe of the %d got the target's own result (%d timed out)", c.name, probes/len(cases), timedOut[i])
	}
}

// isTimeout says whether r is the result of spec's probe running out of its
// timeout: a Failure with the text the kubelet's probe of that kind gives
// then (the HTTP client's deadline, a TCP dial's i/o timeout, gRPC's own
// "timeout:" texts), never a verdict about the target.
func isTimeout(spec probe.Spec, r probe.Result) bool {
	if r.Kind != probe.Failure {
		return false
	}
	switch {
	case spec.HTTPGet != nil:
		return strings.Contains(r.Output, "Client.Timeout exceeded") || strings.Contains(r.Output, "context deadline exceeded")
	case spec.TCPSocket != nil:
		return strings.Contains(r.Output, "i/o timeout")
	case spec.GRPC != nil:
		return strings.HasPrefix(r.Output, "timeout: ")
	}
	return false
}

// TestIsTimeout holds isTimeout to the texts the prober gives, so that a
// verdict is never taken for a timeout.
func TestIsTimeout(t *testing.T) {
	httpSpec := probe.Spec{HTTPGet: &probe.HTTPGetAction{}}
	tcpSpec := probe.Spec{TCPSocket: &probe.TCPSocketAction{}}
	grpcSpec := probe.Spec{GRPC: &probe.GRPCAction{}}
	assert.True(t, isTimeout(httpSpec, probe.Result{Kind: probe.Failure, Output: `Get "http://127.0.0.1:1/ok": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`}))
	assert.True(t, isTimeout(tcpSpec, probe.Result{Kind: probe.Failure, Output: "dial tcp 127.0.0.1:1: i/o timeout"}))
	assert.True(t, isTimeout(grpcSpec, probe.Result{Kind: probe.Failure, Output: "timeout: health rpc did not complete within 10s"}))
	assert.False(t, isTimeout(httpSpec, probe.Result{Kind: probe.Failure, Output: "HTTP probe failed with statuscode: 503"}))
	assert.False(t, isTimeout(tcpSpec, probe.Result{Kind: probe.Failure, Output: "dial tcp 127.0.0.1:1: connect: connection refused"}))
	assert.False(t, isTimeout(grpcSpec, probe.Result{Kind: probe.Success, Output: "timeout: not a failure"}))
	assert.False(t, isTimeout(grpcSpec, probe.Result{Kind: probe.Failure, Output: `service unhealthy (responded with "NOT_SERVING")`}))
}

// coreHandler is a stress case's probe as core/prober's handler.
func coreHandler(s probe.Spec) prober.Handler {
	switch {
	case s.HTTPGet != nil:
		return prober.Handler{HTTPGet: &prober.HTTPGetAction{Port: prober.PortNumber(s.HTTPGet.Port.Number), Path: s.HTTPGet.Path}}
	case s.TCPSocket != nil:
		return prober.Handler{TCPSocket: &prober.TCPSocketAction{Port: prober.PortNumber(s.TCPSocket.Port.Number)}}
	default:
		return prober.Handler{GRPC: &prober.GRPCAction{Port: s.GRPC.Port, Service: s.GRPC.Service}}
	}
}

// TestRunnerStress600 is upstream's scale test through the runner: one pod
// of 600 containers, each with a readiness probe (thresholds 1) of one of
// the six real targets, five periods on the injected clock. All 600
// workers are due together, so each period runs 600 probes at once. Every
// container's cached result must be its target's and every failure event
// its target's text, unless a probe of the container ran out of its
// timeout on a busy machine (classified by isTimeout, as in
// TestProbeStress600): zero false results.
func TestRunnerStress600(t *testing.T) {
	cases := stressTargets(t)
	pod := prober.Pod{UID: "uid", Name: "scale", Namespace: "ns"}
	status := &prober.PodStatus{Phase: prober.PodRunning, PodIP: "127.0.0.1"}
	for i := range stressWorkers {
		name := fmt.Sprintf("c%03d", i)
		spec := cases[i%len(cases)].spec
		pod.Containers = append(pod.Containers, prober.Container{Name: name, ReadinessProbe: &prober.Probe{
			Handler: coreHandler(spec), TimeoutSeconds: spec.TimeoutSeconds, PeriodSeconds: 1, FailureThreshold: 1}})
		started := true
		status.ContainerStatuses = append(status.ContainerStatuses, prober.ContainerStatus{Name: name, ContainerID: "containerd://" + name,
			State: prober.ContainerState{Running: &prober.Running{StartedAt: appStarted}}, Started: &started})
	}
	r := runnerFor(t, pod, &status)

	cpuBefore, wallBefore := cpuTime(t), time.Now()
	var events []prober.Event
	probes := 0
	for round := range stressRounds {
		rep := runUntil(t, r, addedAt.Add(time.Duration(round)*time.Second))
		events = append(events, rep.Events...)
		probes += rep.Probes
	}
	wall, cpu := time.Since(wallBefore), cpuTime(t)-cpuBefore

	// A probe that ran out of its 10 s on a busy machine publishes the
	// timeout's failure, as the kubelet's would: it is counted, not taken
	// for a false result; any other result or event that is not the
	// target's own is one.
	var wrong []string
	timedOut := map[string]bool{}
	failing := 0
	for _, ev := range events {
		var i int
		_, err := fmt.Sscanf(ev.ContainerName, "c%03d", &i)
		require.NoError(t, err)
		c := cases[i%len(cases)]
		msg, ok := strings.CutPrefix(ev.Message, "Readiness probe failed: ")
		switch {
		case ok && isTimeout(c.spec, probe.Result{Kind: probe.Failure, Output: msg}):
			timedOut[ev.ContainerName] = true
		case c.want.Kind == probe.Success || msg != c.want.Output:
			wrong = append(wrong, fmt.Sprintf("%s (%s): event %q", ev.ContainerName, c.name, ev.Message))
		default:
			failing++
		}
	}
	for i := range stressWorkers {
		c, name := cases[i%len(cases)], fmt.Sprintf("c%03d", i)
		want := prober.Failure
		if c.want.Kind == probe.Success {
			want = prober.Success
		}
		if got, _ := r.Manager.Result(prober.Readiness, "containerd://"+name); got != want && !timedOut[name] {
			wrong = append(wrong, fmt.Sprintf("%s (%s): %v", name, c.name, got))
		}
	}
	t.Logf("%d core workers x %d periods = %d probes through the runner: wall %v, CPU %v (%.0f µs CPU per probe), false results %d, containers with a timed-out probe %d",
		stressWorkers, stressRounds, probes, wall.Round(time.Millisecond), cpu.Round(time.Millisecond), float64(cpu.Microseconds())/float64(probes), len(wrong), len(timedOut))
	assert.Equal(t, stressWorkers*stressRounds, probes)
	assert.Empty(t, wrong, "false results")
	// Every failing target's probe that did not time out published its
	// failure: at most one event per failing probe, and with no timeout
	// exactly one.
	assert.LessOrEqual(t, failing, stressWorkers/2*stressRounds, "one failure event per failing probe")
	if len(timedOut) == 0 {
		assert.Equal(t, stressWorkers/2*stressRounds, failing, "one failure event per failing probe")
	}
	assert.Positive(t, failing, "no failing probe published its target's own failure")
}

// acceptAndClose listens on a loopback port and closes every connection as
// soon as it is accepted: a TCP probe's healthy target. Cleanup closes the
// listener and waits for its goroutine.
func acceptAndClose(tb testing.TB) net.Listener {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	accepting := make(chan struct{})
	go func() {
		defer close(accepting)
		for {
			conn, err := lis.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	tb.Cleanup(func() { lis.Close(); <-accepting })
	return lis
}
