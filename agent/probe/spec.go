package probe

import (
	"fmt"
	"strconv"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Spec is the part of a container's probe that says how to probe: exactly
// one handler and the timeout. Thresholds and periods are core/prober's.
type Spec struct {
	Exec      *ExecAction
	HTTPGet   *HTTPGetAction
	TCPSocket *TCPSocketAction
	GRPC      *GRPCAction
	// TimeoutSeconds bounds the whole probe: connect, request and answer,
	// or the command. Zero is the API default, 1 s; negative is an error.
	TimeoutSeconds int32
}

// Port is a probe's port: a number, or the name of one of the container's
// ports (Name set, Number zero). A name that is no port of the container
// is read as a number if it is one, as upstream does.
type Port struct {
	Number int32
	Name   string
}

// ExecAction runs Command in the container through CRI ExecSync, after
// $(VAR) references are expanded from Target.Env as the kubelet does.
type ExecAction struct {
	Command []string
}

// HTTPGetAction is a GET of Scheme://Host:Port/Path.
type HTTPGetAction struct {
	// Scheme is HTTP or HTTPS (any case); empty means HTTP.
	Scheme string
	// Host defaults to the pod's IP.
	Host string
	Port Port
	Path string
	// Headers are sent as given; Host sets the request's host, an Accept
	// with an empty value removes the default Accept.
	Headers []HTTPHeader
}

// HTTPHeader is one request header.
type HTTPHeader struct {
	Name, Value string
}

// TCPSocketAction connects to Host:Port.
type TCPSocketAction struct {
	// Host defaults to the pod's IP.
	Host string
	Port Port
}

// GRPCAction calls grpc.health.v1.Health/Check on the pod's IP and Port.
type GRPCAction struct {
	// Port is a number only: gRPC probes take no named port.
	Port int32
	// Service is the health service name; nil asks for the server's
	// overall health (service "").
	Service *string
}

// Target is the container a probe is run against.
type Target struct {
	// PodIP is the host of HTTP and TCP probes without a Host, and of gRPC
	// probes.
	PodIP string
	// ContainerID is the CRI container exec probes run in.
	ContainerID string
	// Ports are the container's declared ports, for named probe ports.
	Ports []ContainerPort
	// Env is the container's environment as declared, for $(VAR) in exec
	// commands. A variable set from a source (valueFrom) is listed with an
	// empty Value: the kubelet expands it to "" (it reads only the static
	// values).
	Env []EnvVar
}

// EnvVar is one of a container's declared environment variables.
type EnvVar struct {
	Name, Value string
}

// ContainerPort is one of a container's declared ports.
type ContainerPort struct {
	Name   string
	Number int32
}

// check validates the spec and returns its timeout.
func (s Spec) check() (time.Duration, error) {
	var handlers []string
	if s.Exec != nil {
		handlers = append(handlers, "exec")
	}
	if s.HTTPGet != nil {
		handlers = append(handlers, "httpGet")
	}
	if s.TCPSocket != nil {
		handlers = append(handlers, "tcpSocket")
	}
	if s.GRPC != nil {
		handlers = append(handlers, "grpc")
	}
	switch {
	case len(handlers) == 0:
		return 0, &InputError{Field: "handler", Rule: "must specify a handler type"}
	case len(handlers) > 1:
		return 0, &InputError{Field: handlers[1], Rule: "may not specify more than 1 handler type"}
	case s.TimeoutSeconds < 0:
		return 0, &InputError{Field: "timeoutSeconds", Value: fmt.Sprint(s.TimeoutSeconds), Rule: "must be greater than or equal to 0"}
	}
	switch {
	case s.Exec != nil && len(s.Exec.Command) == 0:
		return 0, &InputError{Field: "exec.command", Rule: "must not be empty"}
	case s.HTTPGet != nil:
		for i, h := range s.HTTPGet.Headers {
			if !httpguts.ValidHeaderFieldName(h.Name) {
				return 0, &InputError{Field: fmt.Sprintf("httpGet.httpHeaders[%d].name", i), Value: h.Name, Rule: "must be a valid HTTP header name"}
			}
		}
	case s.GRPC != nil && (s.GRPC.Port < 1 || s.GRPC.Port > 65535):
		return 0, &InputError{Field: "grpc.port", Value: fmt.Sprint(s.GRPC.Port), Rule: "must be between 1 and 65535, inclusive"}
	}
	if s.TimeoutSeconds == 0 {
		return time.Second, nil
	}
	return time.Duration(s.TimeoutSeconds) * time.Second, nil
}

// resolvePort is upstream's ResolveContainerPort: a number as is; a name
// of one of the container's ports, else the name read as a number; the
// result must be 1 to 65535, with upstream's texts as the rule.
func resolvePort(field string, p Port, ports []ContainerPort) (int, error) {
	number := int(p.Number)
	if p.Name != "" {
		found := false
		for _, cp := range ports {
			if cp.Name == p.Name {
				number, found = int(cp.Number), true
				break
			}
		}
		if !found {
			n, err := strconv.Atoi(p.Name)
			if err != nil {
				return 0, &InputError{Field: field, Value: p.Name, Rule: err.Error()}
			}
			number = n
		}
	}
	if number < 1 || number > 65535 {
		return 0, &InputError{Field: field, Value: strconv.Itoa(number), Rule: fmt.Sprintf("invalid port number: %d", number)}
	}
	return number, nil
}
