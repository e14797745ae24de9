package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jumpClock is a --live clock that jumps to each wait's end at once, so a
// live test probes real servers without waiting for real periods.
type jumpClock struct{ now time.Time }

func (c *jumpClock) Now() time.Time { return c.now }

func (c *jumpClock) WaitUntil(ctx context.Context, t time.Time) error {
	if t.After(c.now) {
		c.now = t
	}
	return ctx.Err()
}

func runProbeCommand(stdin string, args ...string) (code int, stdout, stderr string) {
	clock := &jumpClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	var out, errOut bytes.Buffer
	code = cli.Execute(cli.NewRoot(NewCommand(clock)), append([]string{"probe"}, args...), strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

const webManifest = "testdata/web.yaml"

func TestProbeTimelineText(t *testing.T) {
	code, stdout, stderr := runProbeCommand("", "-f", webManifest, "--outcomes", "liveness=healthy 30s, failing", "--duration", "70s")
	require.Equal(t, 0, code, stderr)
	for _, want := range []string{
		"web liveness: http-get http://<pod IP>:http/healthz; delay 0s, period 10s, timeout 1s, success 1, failure 3; worst-case detection 0s + 10s × 3 + 1s = 31s; target: healthy 30s, failing",
		"       30s  web  liveness probe: failure (HTTP probe failed with statuscode: 500)",
		"       50s  web  liveness result → Failure (containerd://web-1); failing since age 30s, detected after 20s",
		"       50s  web  Normal Killing: Container web failed liveness probe, will be restarted",
		"       50s  web  container restarted (restart 1) containerd://web-2",
		"  restarts: web 1",
	} {
		assert.Contains(t, stdout, want+"\n")
	}
}

func TestProbeTimelineJSON(t *testing.T) {
	code, stdout, stderr := runProbeCommand("", "-f", webManifest, "--outcomes", "liveness=healthy 30s, failing", "--duration", "70s", "--json")
	require.Equal(t, 0, code, stderr)
	var out struct {
		Pods []podTimeline `json:"pods"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &out))
	require.Len(t, out.Pods, 1)
	p := out.Pods[0]
	assert.Equal(t, map[string]int{"web": 1}, p.Restarts)
	assert.Equal(t, 31.0, p.Probes[0].WorstCaseDetection)
	var kills []float64
	for _, r := range p.Timeline {
		if r.Kind == "kill" {
			kills = append(kills, r.At)
		}
	}
	assert.Equal(t, []float64{50}, kills)
}

// TestProbeFlagsRejected: bad flags and input exit 2, naming the flag or
// field and the rule.
func TestProbeFlagsRejected(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "nodeproof probe: -f FILE is required (- reads stdin)\n"},
		{[]string{"-f", webManifest, "--outcomes", "liveness=healthy 30s, failng"}, `nodeproof probe: --outcomes "liveness=healthy 30s, failng": column 23: "failng" is not a state: want healthy, failing, timeout, warning or error` + "\n"},
		{[]string{"-f", webManifest, "--outcomes", "startup=failing"}, `nodeproof probe: --outcomes "startup=failing": column 1: selector "startup" selects no probe of the pods in the file` + "\n"},
		{[]string{"-f", webManifest, "--duration", "0s"}, "nodeproof probe: --duration 0s: must be more than 0 and at most 168h0m0s\n"},
		{[]string{"-f", webManifest, "--jitter", "1"}, "nodeproof probe: --jitter 1: must be at least 0 and less than 1 (a fraction of the period)\n"},
		{[]string{"-f", webManifest, "--start-delay", "5m"}, "nodeproof probe: --start-delay 5m0s: must be at least 0 and at most --duration 3m0s\n"},
		{[]string{"-f", webManifest, "--live", "http://x"}, `nodeproof probe: --live "http://x": must be a host name or IP address, without scheme, port or path` + "\n"},
		{[]string{"-f", webManifest, "--live", "127.0.0.1", "--outcomes", "failing"}, "nodeproof probe: --outcomes and --live: a live run takes the answers of the real targets, not a script\n"},
	} {
		code, stdout, stderr := runProbeCommand("", tc.args...)
		assert.Equal(t, 2, code, tc.args)
		assert.Empty(t, stdout, tc.args)
		assert.Equal(t, tc.want, stderr, tc.args)
	}
	bad := "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec:\n  containers:\n  - name: c\n    livenessProbe:\n      successThreshold: 2\n      tcpSocket: {port: 80}\n"
	code, _, stderr := runProbeCommand(bad, "-f", "-")
	assert.Equal(t, 2, code)
	assert.Equal(t, `nodeproof probe: stdin: pod "bad" (document 1): spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1`+"\n", stderr)
}

// TestProbeLive runs the pod's probes for real against loopback servers: an
// HTTP server whose /healthz fails from its fourth request on and a TCP
// listener that stays up. The liveness probe fails three times, so the
// kubelet would kill the container after the third failure; readiness
// (TCP) stays Ready; the exec probe is not run. The clock jumps; the
// probes are real.
func TestProbeLive(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) > 3 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	_, httpPort, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, tcpPort, err := net.SplitHostPort(ln.Addr().String())
	require.NoError(t, err)
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: live}
spec:
  containers:
  - name: app
    ports: [{name: http, containerPort: %s}]
    livenessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 10, failureThreshold: 3}
    readinessProbe: {tcpSocket: {port: %s}, periodSeconds: 10}
  - name: side
    livenessProbe: {exec: {command: [cat, /tmp/healthy]}}
`, httpPort, tcpPort)
	code, stdout, stderr := runProbeCommand(manifest, "-f", "-", "--live", "127.0.0.1", "--duration", "65s")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "live against 127.0.0.1")
	assert.Contains(t, stdout, "liveness probe: failure (HTTP probe failed with statuscode: 500)")
	assert.Contains(t, stdout, "      1m0s  app  liveness result → Failure (containerd://app-1)\n", "failures at 40, 50, 60 s")
	assert.Contains(t, stdout, "      1m0s  app  Normal Killing: Container app failed liveness probe, will be restarted\n")
	assert.Contains(t, stdout, "readiness probe: success")
	assert.Contains(t, stdout, "exec probes are not run live")
	assert.NotContains(t, stdout, "side  liveness result → Failure")
	assert.True(t, strings.Contains(stderr, "live live") || stderr == "", stderr)
	assert.EqualValues(t, 6, requests.Load(), "10, 20, 30 s healthy; 40, 50, 60 s failing")
}

// TestProbeLiveBodyExcerpt: a live HTTP probe's body is printed as an
// excerpt of its first bytes and the count of the rest, on the probe's line
// and in the event that quotes it. Before, the whole body (up to the 10 KiB
// the kubelet keeps) went to the terminal, once per probe.
func TestProbeLiveBodyExcerpt(t *testing.T) {
	body := strings.Repeat("0123456789abcdef", 300) // 4800 bytes
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			// A redirect to another host is not followed: a Warning that
			// quotes the body.
			w.Header().Set("Location", "http://example.invalid/")
			w.WriteHeader(http.StatusFound)
		}
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: chatty}
spec:
  containers:
  - name: app
    livenessProbe: {httpGet: {path: /, port: %s}, periodSeconds: 10}
    readinessProbe: {httpGet: {path: /moved, port: %s}, periodSeconds: 10}
`, port, port)
	code, stdout, stderr := runProbeCommand(manifest, "-f", "-", "--live", "127.0.0.1", "--duration", "15s")
	require.Equal(t, 0, code, stderr)
	excerpt := body[:128] + " (4672 more bytes)"
	assert.Contains(t, stdout, "liveness probe: success ("+excerpt+")")
	assert.Contains(t, stdout, "Probe terminated redirects, Response body: "+body[:128-len("Probe terminated redirects, Response body: ")])
	assert.Regexp(t, `\n +\d+s  app  Warning ProbeWarning: Readiness probe warning: Probe terminated redirects, Response body: [0-9a-f]+ \(\d+ more bytes\)\n`, stdout,
		"the event quotes the body")
	assert.NotContains(t, stdout, body[:129], "a body printed beyond the excerpt")
}
