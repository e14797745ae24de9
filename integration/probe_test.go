package integration

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/nodeproof/nodeproof/agent/probe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newProber is a Prober without a runtime, with a goroutine-leak check
// registered first so that it runs after every target's own cleanup.
func newProber(t *testing.T) *probe.Prober {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
	p := probe.New(nil)
	t.Cleanup(p.Close)
	return p
}

// hostPort splits a listener's address into the pod IP and port of a target.
func hostPort(t testing.TB, addr string) (string, int32) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	var n int32
	_, err = fmt.Sscan(port, &n)
	require.NoError(t, err)
	return host, n
}

// httpProbe probes path on srv with the given timeout.
func httpProbe(t *testing.T, p *probe.Prober, srv *httptest.Server, path string, timeoutSeconds int32) probe.Result {
	t.Helper()
	host, port := hostPort(t, srv.Listener.Addr().String())
	return p.Run(context.Background(), probe.Spec{
		HTTPGet:        &probe.HTTPGetAction{Port: probe.Port{Number: port}, Path: path},
		TimeoutSeconds: timeoutSeconds,
	}, probe.Target{PodIP: host})
}

// TestProbeHTTPFlaps: a server whose status flaps gives each probe the
// verdict of the answer it got, with upstream's texts, and sees the
// kubelet's User-Agent and Accept on every request.
func TestProbeHTTPFlaps(t *testing.T) {
	p := newProber(t)
	statuses := []int{200, 500, 204, 503, 200, 404}
	var (
		mu      sync.Mutex
		served  int
		agents  []string
		accepts []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		code := statuses[served%len(statuses)]
		served++
		agents = append(agents, r.UserAgent())
		accepts = append(accepts, r.Header.Get("Accept"))
		mu.Unlock()
		w.WriteHeader(code)
		fmt.Fprintf(w, "answer %d", code)
	}))
	t.Cleanup(srv.Close)

	var got []probe.Result
	for range statuses {
		got = append(got, httpProbe(t, p, srv, "/healthz", 1))
	}
	assert.Equal(t, []probe.Result{
		{Kind: probe.Success, Output: "answer 200"},
		{Kind: probe.Failure, Output: "HTTP probe failed with statuscode: 500"},
		{Kind: probe.Success, Output: ""}, // 204 has no body
		{Kind: probe.Failure, Output: "HTTP probe failed with statuscode: 503"},
		{Kind: probe.Success, Output: "answer 200"},
		{Kind: probe.Failure, Output: "HTTP probe failed with statuscode: 404"},
	}, got)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, slicesOf("kube-probe/1.36", len(statuses)), agents)
	assert.Equal(t, slicesOf("*/*", len(statuses)), accepts)
}

func slicesOf(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// silentServer is an HTTP server that answers nothing: each request is held
// until the prober gives up and closes its connection. The bound turns a
// prober that never gives up into a test failure, not a hang; cleanup
// releases what is still held.
func silentServer(t *testing.T) *httptest.Server {
	released := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-released:
		case <-time.After(waitLimit):
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(released) })
	return srv
}

// TestProbeHTTPSlowAnswerTimesOut: a server that answers after the
// probe's timeout gives a Failure with the client's timeout text, within
// the timeout plus scheduling.
func TestProbeHTTPSlowAnswerTimesOut(t *testing.T) {
	p := newProber(t)
	srv := silentServer(t)

	start := time.Now()
	got := httpProbe(t, p, srv, "/slow", 1)
	elapsed := time.Since(start)
	assert.Equal(t, probe.Result{Kind: probe.Failure,
		Output: fmt.Sprintf(`Get "%s/slow": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, srv.URL)}, got)
	assert.GreaterOrEqual(t, elapsed, time.Second)
	assert.Less(t, elapsed, waitLimit/2, "the 1 s timeout bounds the probe")
}

// TestProbeHTTPRedirects: a redirect to the same host is followed, at most
// 10 requests in a chain; one to another host is not, and its 3xx is a
// Warning with its body, as is a 3xx that is no redirect.
func TestProbeHTTPRedirects(t *testing.T) {
	p := newProber(t)
	var otherServed atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherServed.Add(1)
		fmt.Fprint(w, "other host")
	}))
	t.Cleanup(other.Close)
	_, otherPort := hostPort(t, other.Listener.Addr().String())

	var loopServed atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/start", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/final", http.StatusFound)
	})
	mux.HandleFunc("/final", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "final") })
	mux.HandleFunc("/loop/", func(w http.ResponseWriter, r *http.Request) {
		n := loopServed.Add(1)
		http.Redirect(w, r, fmt.Sprintf("/loop/%d", n), http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		// localhost is the same machine under another host name.
		w.Header().Set("Location", fmt.Sprintf("http://localhost:%d/", otherPort))
		w.WriteHeader(http.StatusMovedPermanently)
		fmt.Fprint(w, "moved away")
	})
	mux.HandleFunc("/choices", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusMultipleChoices)
		fmt.Fprint(w, "pick one")
	})
	mux.HandleFunc("/unmodified", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotModified) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	assert.Equal(t, probe.Result{Kind: probe.Success, Output: "final"}, httpProbe(t, p, srv, "/start", 1))
	assert.Equal(t, probe.Result{Kind: probe.Failure, Output: `Get "/loop/10": stopped after 10 redirects`}, httpProbe(t, p, srv, "/loop/0", 1))
	assert.Equal(t, int32(10), loopServed.Load(), "ten requests in the chain, the eleventh not sent")
	assert.Equal(t, probe.Result{Kind: probe.Warning, Output: "Probe terminated redirects, Response body: moved away"}, httpProbe(t, p, srv, "/away", 1))
	assert.Zero(t, otherServed.Load(), "the other host is never asked")
	assert.Equal(t, probe.Result{Kind: probe.Warning, Output: "Probe terminated redirects, Response body: pick one"}, httpProbe(t, p, srv, "/choices", 1))
	assert.Equal(t, probe.Result{Kind: probe.Warning, Output: "Probe terminated redirects, Response body: "}, httpProbe(t, p, srv, "/unmodified", 1))
}

// TestProbeHTTPBodies: a body is read to 10 KiB at most and cut there
// without an error; a failure's output never carries the body; a body that
// breaks off is a Failure with the read error, which the kubelet discards.
func TestProbeHTTPBodies(t *testing.T) {
	p := newProber(t)
	big := strings.Repeat("0123456789abcdef", 64<<10) // 1 MiB
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, big) })
	mux.HandleFunc("/bigfail", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, big)
	})
	mux.HandleFunc("/exact", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, big[:probe.MaxOutputBytes]) })
	mux.HandleFunc("/broken", func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b")
		buf.Flush()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	assert.Equal(t, probe.Result{Kind: probe.Success, Output: big[:probe.MaxOutputBytes]}, httpProbe(t, p, srv, "/big", 1))
	assert.Equal(t, probe.Result{Kind: probe.Success, Output: big[:probe.MaxOutputBytes]}, httpProbe(t, p, srv, "/exact", 1))
	assert.Equal(t, probe.Result{Kind: probe.Failure, Output: "HTTP probe failed with statuscode: 500"}, httpProbe(t, p, srv, "/bigfail", 1))
	assert.Equal(t, probe.Result{Kind: probe.Failure, Err: io.ErrUnexpectedEOF}, httpProbe(t, p, srv, "/broken", 1))
}

// TestProbeTCPListenerCloses: a listener is Success while it listens and a
// Failure with the dial error once it is closed.
func TestProbeTCPListenerCloses(t *testing.T) {
	p := newProber(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	host, port := hostPort(t, lis.Addr().String())
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		conn, err := lis.Accept()
		if err == nil {
			conn.Close()
		}
	}()
	spec := probe.Spec{TCPSocket: &probe.TCPSocketAction{Port: probe.Port{Name: "svc"}}}
	target := probe.Target{PodIP: host, Ports: []probe.ContainerPort{{Name: "svc", Number: port}}}
	assert.Equal(t, probe.Result{Kind: probe.Success}, p.Run(context.Background(), spec, target))
	select {
	case <-accepted:
	case <-time.After(waitLimit):
		t.Fatal("the probe's connection never reached the listener")
	}
	require.NoError(t, lis.Close())
	assert.Equal(t, probe.Result{Kind: probe.Failure, Output: fmt.Sprintf("dial tcp %s: connect: connection refused", lis.Addr())},
		p.Run(context.Background(), spec, target))
}

// serveGRPC starts a gRPC server on loopback with whatever register adds
// and returns its address; the cleanup stops it.
func serveGRPC(t testing.TB, register func(*grpc.Server)) (string, int32) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	register(srv)
	served := make(chan struct{})
	go func() { defer close(served); srv.Serve(lis) }()
	t.Cleanup(func() { srv.Stop(); <-served })
	return hostPort(t, lis.Addr().String())
}

func grpcProbe(p *probe.Prober, host string, port int32, service *string) probe.Result {
	return p.Run(context.Background(), probe.Spec{GRPC: &probe.GRPCAction{Port: port, Service: service}, TimeoutSeconds: 1}, probe.Target{PodIP: host})
}

// TestProbeGRPCHealthSwitches: a grpc.health.v1 server's status, switched
// between probes, is each probe's verdict with upstream's texts; an
// unknown service name is the server's NotFound.
func TestProbeGRPCHealthSwitches(t *testing.T) {
	p := newProber(t)
	hs := health.NewServer()
	host, port := serveGRPC(t, func(s *grpc.Server) { healthpb.RegisterHealthServer(s, hs) })
	db := "db"

	assert.Equal(t, probe.Result{Kind: probe.Success, Output: "service healthy"}, grpcProbe(p, host, port, nil), "health.NewServer serves \"\"")
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	assert.Equal(t, probe.Result{Kind: probe.Failure, Output: `service unhealthy (responded with "NOT_SERVING")`}, grpcProbe(p, host, port, nil))
	assert.Equal(t, probe.Result{Kind: probe.Failure, Output: "error: health rpc probe failed: rpc error: code = NotFound desc = unknown service"}, grpcProbe(p, host, port, &db))
	hs.SetServingStatus(db, healthpb.HealthCheckResponse_SERVING)
	assert.Equal(t, probe.Result{Kind: probe.Success, Output: "service healthy"}, grpcProbe(p, host, port, &db))
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	assert.Equal(t, probe.Result{Kind: probe.Success, Output: "service healthy"}, grpcProbe(p, host, port, nil))
}

// TestProbeGRPCWithoutHealthProtocol: a gRPC server without the health
// service is upstream's "does not implement" failure.
func TestProbeGRPCWithoutHealthProtocol(t *testing.T) {
	p := newProber(t)
	host, port := serveGRPC(t, func(*grpc.Server) {})
	assert.Equal(t, probe.Result{Kind: probe.Failure,
		Output: "error: this server does not implement the grpc health protocol (grpc.health.v1.Health): unknown service grpc.health.v1.Health"},
		grpcProbe(p, host, port, nil))
}

// stuckHealth answers Check only when its caller gives up.
type stuckHealth struct {
	healthpb.UnimplementedHealthServer
}

func (stuckHealth) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	select {
	case <-ctx.Done():
	case <-time.After(waitLimit):
	}
	return nil, ctx.Err()
}

// TestProbeGRPCTimeouts: a Check that outlives the timeout, and a port
// nothing listens on (the blocking dial retries until the deadline), are
// upstream's two timeout failures.
func TestProbeGRPCTimeouts(t *testing.T) {
	p := newProber(t)
	host, port := serveGRPC(t, func(s *grpc.Server) { healthpb.RegisterHealthServer(s, stuckHealth{}) })
	assert.Equal(t, probe.Result{Kind: probe.Failure, Output: "timeout: health rpc did not complete within 1s"}, grpcProbe(p, host, port, nil))

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedHost, closedPort := hostPort(t, lis.Addr().String())
	require.NoError(t, lis.Close())
	assert.Equal(t, probe.Result{Kind: probe.Failure,
		Output: fmt.Sprintf(`timeout: failed to connect service "%s" within 1s: context deadline exceeded`, lis.Addr())},
		grpcProbe(p, closedHost, closedPort, nil))
}
