package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
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
