package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxRedirects is the longest redirect chain an HTTP probe follows.
const maxRedirects = 10

// runHTTP is upstream's HTTP probe: the request NewRequestForHTTPGetAction
// builds, sent by a client with the probe's timeout and the same-host
// redirect rule, the answer judged by DoHTTPProbe's rules.
func (p *Prober) runHTTP(ctx context.Context, action *HTTPGetAction, target Target, timeout time.Duration) Result {
	req, err := newHTTPRequest(ctx, action, target)
	if err != nil {
		return unknown(err)
	}
	client := &http.Client{Timeout: timeout, Transport: p.transport, CheckRedirect: sameHostRedirects}
	resp, err := client.Do(req)
	if err != nil {
		// Refused, reset, timed out, too many redirects: the target's
		// fault, a failure whose output is the error.
		return Result{Kind: Failure, Output: err.Error()}
	}
	defer resp.Body.Close()
	// Reaching the limit is not an error: the body is cut there. Any other
	// read error is, and the kubelet discards the probe.
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxOutputBytes))
	if err != nil {
		return Result{Kind: Failure, Err: err}
	}
	switch code := resp.StatusCode; {
	case code >= http.StatusOK && code < http.StatusMultipleChoices:
		return Result{Kind: Success, Output: string(body)}
	case code >= http.StatusMultipleChoices && code < http.StatusBadRequest:
		return Result{Kind: Warning, Output: fmt.Sprintf("Probe terminated redirects, Response body: %v", string(body))}
	default:
		// The body is not part of a failure's output upstream.
		return Result{Kind: Failure, Output: fmt.Sprintf("HTTP probe failed with statuscode: %d", code)}
	}
}

// newHTTPRequest builds the probe's GET: scheme lower-cased (HTTP by
// default), host the pod's IP unless set, the port resolved, the path
// parsed as a URL (query kept) or taken as a plain path; the probe's
// headers, then the kubelet's User-Agent and Accept unless the probe set
// them (an Accept set empty removes it); a Host header sets the request's
// host.
func newHTTPRequest(ctx context.Context, action *HTTPGetAction, target Target) (*http.Request, error) {
	scheme := strings.ToLower(action.Scheme)
	if scheme == "" {
		scheme = "http"
	}
	host := action.Host
	if host == "" {
		host = target.PodIP
	}
	port, err := resolvePort("httpGet.port", action.Port, target.Ports)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(action.Path)
	if err != nil {
		u = &url.URL{Path: action.Path}
	}
	u.Scheme = scheme
	u.Host = net.JoinHostPort(host, strconv.Itoa(port))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	headers := http.Header{}
	for _, h := range action.Headers {
		headers.Add(h.Name, h.Value)
	}
	if _, set := headers["User-Agent"]; !set {
		headers.Set("User-Agent", UserAgent)
	}
	if _, set := headers["Accept"]; !set {
		headers.Set("Accept", "*/*")
	} else if headers.Get("Accept") == "" {
		headers.Del("Accept")
	}
	req.Header = headers
	req.Host = headers.Get("Host")
	return req, nil
}

// sameHostRedirects follows a redirect only to the host name of the first
// request (the port may differ); a redirect elsewhere ends the chain with
// the 3xx answer. After maxRedirects requests the next redirect is an
// error, upstream's text.
func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if req.URL.Hostname() != via[0].URL.Hostname() {
		return http.ErrUseLastResponse
	}
	if len(via) >= maxRedirects {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}
