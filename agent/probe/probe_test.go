package probe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nodeproof/nodeproof/agent/cri"
	"github.com/nodeproof/nodeproof/core/prober"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestBadSpecsNameFieldAndRule: every spec that cannot be run is Unknown
// with an *InputError naming the field and the rule, before any I/O.
func TestBadSpecsNameFieldAndRule(t *testing.T) {
	target := Target{PodIP: "127.0.0.1", ContainerID: "c1", Ports: []ContainerPort{{Name: "http", Number: 8080}, {Name: "zero", Number: 0}}}
	for name, tc := range map[string]struct {
		spec Spec
		want *InputError
	}{
		"no handler": {Spec{}, &InputError{Field: "handler", Rule: "must specify a handler type"}},
		"two handlers": {Spec{HTTPGet: &HTTPGetAction{Port: Port{Number: 80}}, TCPSocket: &TCPSocketAction{Port: Port{Number: 80}}},
			&InputError{Field: "tcpSocket", Rule: "may not specify more than 1 handler type"}},
		"negative timeout": {Spec{TCPSocket: &TCPSocketAction{Port: Port{Number: 80}}, TimeoutSeconds: -1},
			&InputError{Field: "timeoutSeconds", Value: "-1", Rule: "must be greater than or equal to 0"}},
		"empty command": {Spec{Exec: &ExecAction{}}, &InputError{Field: "exec.command", Rule: "must not be empty"}},
		"bad header": {Spec{HTTPGet: &HTTPGetAction{Port: Port{Number: 80}, Headers: []HTTPHeader{{"X-Ok", "1"}, {"Bad Name", "v"}}}},
			&InputError{Field: "httpGet.httpHeaders[1].name", Value: "Bad Name", Rule: "must be a valid HTTP header name"}},
		"grpc port 0":     {Spec{GRPC: &GRPCAction{}}, &InputError{Field: "grpc.port", Value: "0", Rule: "must be between 1 and 65535, inclusive"}},
		"grpc port 65536": {Spec{GRPC: &GRPCAction{Port: 65536}}, &InputError{Field: "grpc.port", Value: "65536", Rule: "must be between 1 and 65535, inclusive"}},
		"http port 65536": {Spec{HTTPGet: &HTTPGetAction{Port: Port{Number: 65536}}},
			&InputError{Field: "httpGet.port", Value: "65536", Rule: "invalid port number: 65536"}},
		"tcp port 0": {Spec{TCPSocket: &TCPSocketAction{}}, &InputError{Field: "tcpSocket.port", Value: "0", Rule: "invalid port number: 0"}},
		"unknown port name": {Spec{TCPSocket: &TCPSocketAction{Port: Port{Name: "metrics"}}},
			&InputError{Field: "tcpSocket.port", Value: "metrics", Rule: `strconv.Atoi: parsing "metrics": invalid syntax`}},
		"named port 0": {Spec{HTTPGet: &HTTPGetAction{Port: Port{Name: "zero"}}},
			&InputError{Field: "httpGet.port", Value: "0", Rule: "invalid port number: 0"}},
		"numeric name out of range": {Spec{HTTPGet: &HTTPGetAction{Port: Port{Name: "70000"}}},
			&InputError{Field: "httpGet.port", Value: "70000", Rule: "invalid port number: 70000"}},
		"exec without runtime": {Spec{Exec: &ExecAction{Command: []string{"true"}}},
			&InputError{Field: "exec", Rule: "needs a container runtime: this prober has none"}},
	} {
		got := New(nil).Run(context.Background(), tc.spec, target)
		assert.Equal(t, Result{Kind: Unknown, Err: tc.want}, got, name)
	}
}

// TestHTTPRequestAsUpstreamBuildsIt: scheme, host, port and path make the
// URL as upstream's formatURL; the kubelet's User-Agent and Accept are
// added unless set, an empty Accept removes it, Host sets the request's
// host.
func TestHTTPRequestAsUpstreamBuildsIt(t *testing.T) {
	target := Target{PodIP: "10.0.0.7", Ports: []ContainerPort{{Name: "web", Number: 8080}}}
	for name, tc := range map[string]struct {
		action  HTTPGetAction
		url     string
		headers http.Header
		host    string
	}{
		"defaults": {HTTPGetAction{Port: Port{Number: 80}, Path: "/healthz"}, "http://10.0.0.7:80/healthz",
			http.Header{"User-Agent": {UserAgent}, "Accept": {"*/*"}}, ""},
		"named port, https, query": {HTTPGetAction{Scheme: "HTTPS", Host: "example.com", Port: Port{Name: "web"}, Path: "/ready?full=1"},
			"https://example.com:8080/ready?full=1", http.Header{"User-Agent": {UserAgent}, "Accept": {"*/*"}}, ""},
		"numeric port name": {HTTPGetAction{Port: Port{Name: "9090"}}, "http://10.0.0.7:9090",
			http.Header{"User-Agent": {UserAgent}, "Accept": {"*/*"}}, ""},
		"ipv6 pod": {HTTPGetAction{Host: "fd00::1", Port: Port{Number: 80}, Path: "/"}, "http://[fd00::1]:80/",
			http.Header{"User-Agent": {UserAgent}, "Accept": {"*/*"}}, ""},
		"unparsable path kept as a path": {HTTPGetAction{Port: Port{Number: 80}, Path: "%zz"}, "http://10.0.0.7:80/%25zz",
			http.Header{"User-Agent": {UserAgent}, "Accept": {"*/*"}}, ""},
		"own headers": {HTTPGetAction{Port: Port{Number: 80}, Headers: []HTTPHeader{{"user-agent", "mine/1"}, {"accept", "application/json"}, {"x-a", "1"}, {"X-A", "2"}, {"Host", "svc.local"}}},
			"http://10.0.0.7:80", http.Header{"User-Agent": {"mine/1"}, "Accept": {"application/json"}, "X-A": {"1", "2"}, "Host": {"svc.local"}}, "svc.local"},
		"empty accept removed": {HTTPGetAction{Port: Port{Number: 80}, Headers: []HTTPHeader{{"Accept", ""}}},
			"http://10.0.0.7:80", http.Header{"User-Agent": {UserAgent}}, ""},
	} {
		req, err := newHTTPRequest(context.Background(), &tc.action, target)
		require.NoError(t, err, name)
		assert.Equal(t, tc.url, req.URL.String(), name)
		assert.Equal(t, tc.headers, req.Header, name)
		assert.Equal(t, tc.host, req.Host, name)
		assert.Equal(t, http.MethodGet, req.Method, name)
	}
}

// TestSameHostRedirects: a redirect is followed only to the first
// request's host name, and the eleventh request is refused.
func TestSameHostRedirects(t *testing.T) {
	req := func(u string) *http.Request {
		r, err := http.NewRequest(http.MethodGet, u, nil)
		require.NoError(t, err)
		return r
	}
	first := req("http://127.0.0.1:80/a")
	chain := func(n int) []*http.Request {
		via := []*http.Request{first}
		for len(via) < n {
			via = append(via, req("http://127.0.0.1:80/b"))
		}
		return via
	}
	assert.NoError(t, sameHostRedirects(req("http://127.0.0.1:81/c"), chain(1)), "another port of the same host")
	assert.ErrorIs(t, sameHostRedirects(req("http://localhost:80/c"), chain(1)), http.ErrUseLastResponse)
	assert.NoError(t, sameHostRedirects(req("http://127.0.0.1/c"), chain(9)))
	assert.EqualError(t, sameHostRedirects(req("http://127.0.0.1/c"), chain(10)), "stopped after 10 redirects")
	assert.ErrorIs(t, sameHostRedirects(req("http://other/c"), chain(10)), http.ErrUseLastResponse, "another host ends the chain before the count")
}

// scriptedExec answers ExecSync with a fixed result or error.
type scriptedExec struct {
	res     cri.ExecResult
	err     error
	cmd     []string
	timeout time.Duration
}

func (s *scriptedExec) ExecSync(_ context.Context, _ string, cmd []string, timeout time.Duration) (cri.ExecResult, error) {
	s.cmd, s.timeout = cmd, timeout
	return s.res, s.err
}

// TestExecOutcomes maps ExecSync's answers as upstream's exec prober:
// stdout then stderr cut at 10 KiB, exit 0 Success, other exits Failure,
// a timeout Failure with the CRI client's text, other errors Unknown.
func TestExecOutcomes(t *testing.T) {
	timedOut := &cri.RPCError{RPC: "ExecSync", Err: fmt.Errorf("%w: %s", cri.ErrCommandTimedOut, `"sleep 10" timed out after 2s`)}
	notFound := &cri.RPCError{RPC: "ExecSync", Err: errors.New("rpc error: code = NotFound desc = not found")}
	big := strings.Repeat("o", MaxOutputBytes-3)
	for name, tc := range map[string]struct {
		exec scriptedExec
		want Result
	}{
		"exit 0":    {scriptedExec{res: cri.ExecResult{Stdout: []byte("out\n"), Stderr: []byte("err\n")}}, Result{Kind: Success, Output: "out\nerr\n"}},
		"exit 3":    {scriptedExec{res: cri.ExecResult{Stdout: []byte("o"), Stderr: []byte("e"), ExitCode: 3}}, Result{Kind: Failure, Output: "oe"}},
		"cut":       {scriptedExec{res: cri.ExecResult{Stdout: []byte(big), Stderr: []byte("stderr")}}, Result{Kind: Success, Output: big + "std"}},
		"timeout":   {scriptedExec{err: timedOut}, Result{Kind: Failure, Output: `command timed out: "sleep 10" timed out after 2s`}},
		"not found": {scriptedExec{err: notFound}, Result{Kind: Unknown, Err: notFound}},
	} {
		p := New(&tc.exec)
		got := p.Run(context.Background(), Spec{Exec: &ExecAction{Command: []string{"sleep", "10"}}, TimeoutSeconds: 2}, Target{ContainerID: "c1"})
		assert.Equal(t, tc.want, got, name)
		assert.Equal(t, []string{"sleep", "10"}, tc.exec.cmd, name)
		assert.Equal(t, 2*time.Second, tc.exec.timeout, name)
	}
	got := New(&scriptedExec{}).Run(context.Background(), Spec{Exec: &ExecAction{Command: []string{"true"}}}, Target{})
	assert.Equal(t, Result{Kind: Unknown, Err: &InputError{Field: "target.containerID", Rule: "must not be empty for an exec probe"}}, got)
}

// TestExecCommandExpansion: $(VAR) from the container's declared
// environment, as the kubelet's ExpandContainerCommandOnlyStatic: unknown
// names kept, $$ a literal $, a variable from a source expanded to "".
func TestExecCommandExpansion(t *testing.T) {
	env := []EnvVar{{"PORT", "8080"}, {"SECRET", ""}, {"PORT", "9090"}}
	for in, want := range map[string]string{
		"curl localhost:$(PORT)/x": "curl localhost:9090/x",
		"$(MISSING)":               "$(MISSING)",
		"$$(PORT)":                 "$(PORT)",
		"$$$(PORT)":                "$9090",
		"[$(SECRET)]":              "[]",
		"$(PORT":                   "$(PORT",
		"$()":                      "$()",
		"a$b$":                     "a$b$",
		"$(PORT)$(PORT)":           "90909090",
		"é$(PORT)é":                "é9090é",
	} {
		assert.Equal(t, []string{want}, expandCommand([]string{in}, env), in)
	}
	rec := &scriptedExec{}
	New(rec).Run(context.Background(), Spec{Exec: &ExecAction{Command: []string{"sh", "-c", "test $(PORT) = 9090"}}}, Target{ContainerID: "c1", Env: env})
	assert.Equal(t, []string{"sh", "-c", "test 9090 = 9090"}, rec.cmd)
}

// TestKindsAreCoreProbeResults: the runner hands a Result's Kind to
// core/prober as its ProbeResult; the names must be the same.
func TestKindsAreCoreProbeResults(t *testing.T) {
	assert.Equal(t, prober.ProbeSuccess, prober.ProbeResult(Success))
	assert.Equal(t, prober.ProbeWarning, prober.ProbeResult(Warning))
	assert.Equal(t, prober.ProbeFailure, prober.ProbeResult(Failure))
	assert.Equal(t, prober.ProbeUnknown, prober.ProbeResult(Unknown))
}

// TestSpecAndTargetOfACoreRun: a core ProbeRun becomes the Spec and the
// Target the probe runs with: named ports, headers, the CRI ID without its
// runtime, the container's ports and env.
func TestSpecAndTargetOfACoreRun(t *testing.T) {
	svc := "db"
	run := prober.ProbeRun{
		Probe: prober.Probe{TimeoutSeconds: 3, Handler: prober.Handler{HTTPGet: &prober.HTTPGetAction{
			Scheme: "HTTPS", Host: "h", Port: prober.PortName("web"), Path: "/p", Headers: []prober.HTTPHeader{{Name: "X", Value: "1"}}}}},
		Container:   prober.Container{Ports: []prober.ContainerPort{{Name: "web", ContainerPort: 8443}}, Env: []prober.EnvVar{{Name: "A", Value: "b"}}},
		ContainerID: "containerd://abc", PodIP: "10.0.0.1",
	}
	assert.Equal(t, Spec{TimeoutSeconds: 3, HTTPGet: &HTTPGetAction{Scheme: "HTTPS", Host: "h", Port: Port{Name: "web"}, Path: "/p", Headers: []HTTPHeader{{"X", "1"}}}}, SpecOf(run.Probe))
	assert.Equal(t, Target{PodIP: "10.0.0.1", ContainerID: "abc", Ports: []ContainerPort{{Name: "web", Number: 8443}}, Env: []EnvVar{{"A", "b"}}}, TargetOf(run))
	assert.Equal(t, Spec{TCPSocket: &TCPSocketAction{Port: Port{Number: 80}}}, SpecOf(prober.Probe{Handler: prober.Handler{TCPSocket: &prober.TCPSocketAction{Port: prober.PortNumber(80)}}}))
	assert.Equal(t, Spec{GRPC: &GRPCAction{Port: 9, Service: &svc}}, SpecOf(prober.Probe{Handler: prober.Handler{GRPC: &prober.GRPCAction{Port: 9, Service: &svc}}}))
	assert.Equal(t, Spec{Exec: &ExecAction{Command: []string{"true"}}}, SpecOf(prober.Probe{Handler: prober.Handler{Exec: &prober.ExecAction{Command: []string{"true"}}}}))
}

// TestExcerpt: an output longer than ExcerptBytes is cut, at a character
// boundary, and says how much it left out; line breaks stay on the line.
func TestExcerpt(t *testing.T) {
	long := strings.Repeat("a", ExcerptBytes)
	for _, tc := range []struct{ output, want string }{
		{"", ""},
		{"ok\r\n", `ok\r\n`},
		{long, long},
		{long + "bc", long + " (2 more bytes)"},
		// "é" is two bytes: the one that would straddle the cut goes whole.
		{long[:ExcerptBytes-1] + "é" + "z", long[:ExcerptBytes-1] + " (3 more bytes)"},
		{"line 1\n" + long, `line 1\n` + long[:ExcerptBytes-len("line 1\n")] + " (7 more bytes)"},
	} {
		assert.Equal(t, tc.want, Excerpt(tc.output), "Excerpt(%q)", tc.output)
	}
}
