package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/nodeproof/nodeproof/agent/probe"
)

// BenchmarkProbe is one probe of each kind against a healthy loopback
// target, one after another: a new connection each time, as the kubelet's.
func BenchmarkProbe(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	lis := acceptAndClose(b)
	grpcLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	gs := grpc.NewServer()
	healthpb.RegisterHealthServer(gs, health.NewServer())
	served := make(chan struct{})
	go func() { defer close(served); gs.Serve(grpcLis) }()
	defer func() { gs.Stop(); <-served }()

	port := func(l net.Listener) int32 { return int32(l.Addr().(*net.TCPAddr).Port) }
	target := probe.Target{PodIP: "127.0.0.1"}
	p := probe.New(nil)
	defer p.Close()
	for _, bc := range []struct {
		name string
		spec probe.Spec
	}{
		{"HTTP", probe.Spec{HTTPGet: &probe.HTTPGetAction{Port: probe.Port{Number: port(srv.Listener)}, Path: "/"}}},
		{"TCP", probe.Spec{TCPSocket: &probe.TCPSocketAction{Port: probe.Port{Number: port(lis)}}}},
		{"GRPC", probe.Spec{GRPC: &probe.GRPCAction{Port: port(grpcLis)}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if got := p.Run(context.Background(), bc.spec, target); got.Kind != probe.Success {
					b.Fatalf("%+v", got)
				}
			}
		})
	}
}

// BenchmarkProbeStress600 is the capacity side of TestProbeStress600: each
// iteration runs one probe in each of 600 concurrent workers against the
// six real targets, as a pod of 600 probed containers would all at once.
// It reports probes per second and the probes per iteration that ran out
// of their 10 s timeout, which a busy machine raises and a test must not
// fail for.
func BenchmarkProbeStress600(b *testing.B) {
	p := probe.New(nil)
	defer p.Close()
	cases := stressTargets(b)
	timedOut := 0
	// b.N, not b.Loop: Go 1.26.8's compiler fails on this body under
	// b.Loop with an internal compiler error (a nil dereference while
	// compiling rapid's oneOfGen, which this package instantiates).
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		results := make([]probe.Result, stressWorkers)
		for w := range stressWorkers {
			c := cases[w%len(cases)]
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[w] = p.Run(context.Background(), c.spec, c.target)
			}()
		}
		wg.Wait()
		for w, got := range results {
			c := cases[w%len(cases)]
			switch {
			case got == c.want:
			case isTimeout(c.spec, got):
				timedOut++
			default:
				b.Fatalf("worker %d (%s): false result %+v", w, c.name, got)
			}
		}
	}
	b.ReportMetric(float64(stressWorkers*b.N)/b.Elapsed().Seconds(), "probes/s")
	b.ReportMetric(float64(timedOut)/float64(b.N), "timeouts/op")
}
