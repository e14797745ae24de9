package httpprobe

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/agent/probe"
)

// connLimit bounds each connection of the raw server, so a client that
// never sends its request cannot hold it.
const connLimit = 5 * time.Second

// rawServer answers every connection with the same bytes, whatever the
// request, and closes it.
type rawServer struct {
	lis    net.Listener
	mu     sync.Mutex
	answer []byte
	done   chan struct{}
}

// startRawServer takes the *testing.F and its caller stops the server with
// a defer, not tb.Cleanup: OSS-Fuzz's libFuzzer build (go-118-fuzz-build)
// has no testing.TB, runs the Fuzz function once per input and never runs
// an F's cleanups, so a cleanup there would leak a listener per input.
func startRawServer(f *testing.F) *rawServer {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	s := &rawServer{lis: lis, done: make(chan struct{})}
	go s.serve()
	return s
}

// stop closes the listener and waits for the connections to finish.
func (s *rawServer) stop() {
	s.lis.Close()
	<-s.done
}

func (s *rawServer) set(answer []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer = answer
}

func (s *rawServer) serve() {
	defer close(s.done)
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		conn, err := s.lis.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		answer := s.answer
		s.mu.Unlock()
		conns.Add(1)
		go func() {
			defer conns.Done()
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(connLimit))
			// Read the request's head first, so the answer is not a
			// reset of a connection the client is still writing to.
			if _, err := http.ReadRequest(bufio.NewReader(conn)); err != nil {
				return
			}
			conn.Write(answer)
		}()
	}
}

// statusCode is the code of a status line "HTTP/x.y NNN ...", or -1.
func statusCode(line string) int {
	proto, rest, ok := strings.Cut(line, " ")
	if !ok || !strings.HasPrefix(proto, "HTTP/") || len(rest) < 3 {
		return -1
	}
	code, err := strconv.Atoi(rest[:3])
	if err != nil {
		return -1
	}
	return code
}

const warningPrefix = "Probe terminated redirects, Response body: "

// framedBody is the body of an answer as an HTTP/1 client frames it: what
// follows the first empty line ("\n" or "\r\n") after the status line. The
// fuzzer's header block may hold an empty line itself, and then the body
// starts there, not where the fuzzer's body argument does.
func framedBody(answer []byte) []byte {
	rest := answer
	for first := true; ; first = false {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return nil
		}
		line := rest[:i]
		rest = rest[i+1:]
		if !first && (len(line) == 0 || string(line) == "\r") {
			return rest
		}
	}
}

// check holds one probe's result to the answer the server sent; body is
// the answer's body as the client frames it.
func check(status, headers string, body []byte, got probe.Result) error {
	code := statusCode(status)
	switch got.Kind {
	case probe.Success, probe.Warning, probe.Failure:
	default:
		return fmt.Errorf("kind %q is not one of success, warning, failure", got.Kind)
	}
	if got.Err != nil && (got.Kind != probe.Failure || got.Output != "") {
		return fmt.Errorf("an error comes only with a failure without output: %+v", got)
	}
	bodyOut := got.Output
	if got.Kind == probe.Warning {
		if !strings.HasPrefix(got.Output, warningPrefix) {
			return fmt.Errorf("warning without upstream's text: %q", got.Output)
		}
		bodyOut = strings.TrimPrefix(got.Output, warningPrefix)
	}
	if got.Kind != probe.Failure && len(bodyOut) > probe.MaxOutputBytes {
		return fmt.Errorf("%d bytes of body read, more than %d", len(bodyOut), probe.MaxOutputBytes)
	}
	// Informational answers (1xx) are skipped by the client, so the status
	// that decided is in what follows; a chunked body is decoded.
	if code < 200 {
		return nil
	}
	switch {
	case got.Kind == probe.Success && code >= 300:
		return fmt.Errorf("success for status %d", code)
	case got.Kind == probe.Warning && (code < 300 || code >= 400):
		return fmt.Errorf("warning for status %d", code)
	case got.Kind == probe.Failure && strings.HasPrefix(got.Output, "HTTP probe failed with statuscode: "):
		if want := fmt.Sprintf("HTTP probe failed with statuscode: %d", code); got.Output != want || (code >= 200 && code < 400) {
			return fmt.Errorf("status %d: failure %q", code, got.Output)
		}
	}
	if got.Kind != probe.Failure && !strings.Contains(strings.ToLower(headers), "transfer-encoding") && !bytes.HasPrefix(body, []byte(bodyOut)) {
		return fmt.Errorf("output %q is not the start of the body sent", bodyOut)
	}
	return nil
}

// clip keeps a failure's message readable: the start of a long answer.
func clip(b []byte) []byte { return b[:min(len(b), 512)] }

// FuzzHTTPProbeResponse sends the probe a fuzzed answer: the status line,
// the header block (its lines joined by CRLF) and the body, framed as
// HTTP/1 frames them. Seeds are in testdata/fuzz/FuzzHTTPProbeResponse: a
// success, redirects away and in a loop, a failure with a body, a chunked
// body, 100 Continue, a short body, a four-digit status, 30 KiB of body,
// and a header block with an empty line of its own (bare LFs), where the
// body the client reads starts.
func FuzzHTTPProbeResponse(f *testing.F) {
	srv := startRawServer(f)
	defer srv.stop()
	host, portText, err := net.SplitHostPort(srv.lis.Addr().String())
	if err != nil {
		f.Fatal(err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		f.Fatal(err)
	}
	p := probe.New(nil)
	defer p.Close()
	spec := probe.Spec{HTTPGet: &probe.HTTPGetAction{Port: probe.Port{Number: int32(port)}, Path: "/healthz"}, TimeoutSeconds: 1}
	f.Fuzz(func(t *testing.T, status, headers string, body []byte) {
		head := status + "\r\n"
		if headers != "" {
			head += headers + "\r\n"
		}
		answer := append([]byte(head+"\r\n"), body...)
		srv.set(answer)
		got := p.Run(context.Background(), spec, probe.Target{PodIP: host})
		if err := check(status, headers, framedBody(answer), got); err != nil {
			t.Fatalf("answer %q (%d bytes): %s, %d bytes of output: %v", clip(answer), len(answer), got.Kind, len(got.Output), err)
		}
	})
}
