package scenario

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Target is what the pods' HTTP probes ask: a server on 127.0.0.1 (the
// pods use the host network) whose every path answers 200 until it is set
// unhealthy, then 500. It keeps every answer, so that a check counts the
// probes the kubelet made and what it was told instead of guessing at
// timing.
type Target struct {
	listener  net.Listener
	server    *http.Server
	served    chan struct{}
	serveErr  error
	mu        sync.Mutex
	unhealthy map[string]bool
	answers   []Answer
}

// Answer is one probe the target answered.
type Answer struct {
	Path string
	At   time.Time
	OK   bool
}

// StartTarget starts a target on a free port of 127.0.0.1.
func StartTarget() (*Target, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the probe target: %w", err)
	}
	t := &Target{listener: l, served: make(chan struct{}), unhealthy: map[string]bool{}}
	t.server = &http.Server{Handler: http.HandlerFunc(t.answer), ReadHeaderTimeout: time.Second}
	go func() {
		defer close(t.served)
		t.serveErr = t.server.Serve(l)
	}()
	return t, nil
}

func (t *Target) answer(w http.ResponseWriter, r *http.Request) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ok := !t.unhealthy[r.URL.Path]
	t.answers = append(t.answers, Answer{Path: r.URL.Path, At: time.Now(), OK: ok})
	if ok {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.WriteHeader(http.StatusInternalServerError)
}

// Close stops the target and waits for it to have stopped. An error says
// it had stopped serving before: the probes made since went unanswered,
// failures it did not count.
func (t *Target) Close() error {
	_ = t.server.Close()
	<-t.served
	if !errors.Is(t.serveErr, http.ErrServerClosed) {
		return fmt.Errorf("the probe target stopped serving: %w", t.serveErr)
	}
	return nil
}

// Get is a probe's handler: an HTTP GET of path on the target.
func (t *Target) Get(path string) *corev1.HTTPGetAction {
	addr := t.listener.Addr().(*net.TCPAddr)
	return &corev1.HTTPGetAction{Host: addr.IP.String(), Port: intstr.FromInt(addr.Port), Path: path}
}

// Set makes path answer healthy or not from now on.
func (t *Target) Set(path string, healthy bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.unhealthy[path] = !healthy
}

// Healthy says whether path answers healthy now.
func (t *Target) Healthy(path string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.unhealthy[path]
}

// Served lists the answers to path from since on.
func (t *Target) Served(path string, since time.Time) []Answer {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Answer
	for _, a := range t.answers {
		if a.Path == path && !a.At.Before(since) {
			out = append(out, a)
		}
	}
	return out
}

// Failures counts the failures path answered from since on.
func (t *Target) Failures(path string, since time.Time) int {
	n := 0
	for _, a := range t.Served(path, since) {
		if !a.OK {
			n++
		}
	}
	return n
}
