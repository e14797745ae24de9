package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
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

// TestProbeStress600 runs 600 concurrent probers, each probing one of six
// real targets five times (healthy and failing HTTP, TCP and gRPC), and
// requires every one of the 3,000 results to be the target's: no false
// result under load. It reports the wall time and the CPU the process
// spent (prober and targets together).
// stressTargets starts the six real targets of the stress tests and
// returns a probe of each with the result it must give.
func stressTargets(t *testing.T) []stressCase {
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

func TestProbeStress600(t *testing.T) {
	p := newProber(t)
	cases := stressTargets(t)

	type falseResult struct {
		worker int
		got    probe.Result
	}
	var (
		mu    sync.Mutex
		wrong []falseResult
		wg    sync.WaitGroup
	)
	start := make(chan struct{})
	for w := range stressWorkers {
		c := cases[w%len(cases)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range stressRounds {
				if got := p.Run(context.Background(), c.spec, c.target); got != c.want {
					mu.Lock()
					wrong = append(wrong, falseResult{w, got})
					mu.Unlock()
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	cpuBefore, wallBefore := cpuTime(t), time.Now()
	close(start)
	select {
	case <-done:
	case <-time.After(6 * waitLimit):
		t.Fatalf("%d workers did not finish %d probes each within %v", stressWorkers, stressRounds, 6*waitLimit)
	}
	wall, cpu := time.Since(wallBefore), cpuTime(t)-cpuBefore
	probes := stressWorkers * stressRounds
	t.Logf("%d workers x %d probes = %d probes: wall %v, CPU %v (%.0f µs CPU per probe, prober and targets), false results %d",
		stressWorkers, stressRounds, probes, wall.Round(time.Millisecond), cpu.Round(time.Millisecond),
		float64(cpu.Microseconds())/float64(probes), len(wrong))
	assert.Empty(t, wrong, "false results")
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
// its target's text: zero false results.
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

	var wrong []string
	for i := range stressWorkers {
		c := cases[i%len(cases)]
		want := prober.Failure
		if c.want.Kind == probe.Success {
			want = prober.Success
		}
		if got, _ := r.Manager.Result(prober.Readiness, fmt.Sprintf("containerd://c%03d", i)); got != want {
			wrong = append(wrong, fmt.Sprintf("c%03d (%s): %v", i, c.name, got))
		}
	}
	failing := 0
	for _, ev := range events {
		var i int
		_, err := fmt.Sscanf(ev.ContainerName, "c%03d", &i)
		require.NoError(t, err)
		if c := cases[i%len(cases)]; c.want.Kind == probe.Success || ev.Message != "Readiness probe failed: "+c.want.Output {
			wrong = append(wrong, fmt.Sprintf("%s (%s): event %q", ev.ContainerName, c.name, ev.Message))
		}
		failing++
	}
	t.Logf("%d core workers x %d periods = %d probes through the runner: wall %v, CPU %v (%.0f µs CPU per probe), false results %d",
		stressWorkers, stressRounds, probes, wall.Round(time.Millisecond), cpu.Round(time.Millisecond), float64(cpu.Microseconds())/float64(probes), len(wrong))
	assert.Equal(t, stressWorkers*stressRounds, probes)
	assert.Equal(t, stressWorkers/2*stressRounds, failing, "one failure event per failing probe")
	assert.Empty(t, wrong, "false results")
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
