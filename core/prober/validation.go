package prober

import (
	"fmt"
	"strconv"
	"strings"
)

// WithDefaults returns the probe as the API server stores it
// (SetDefaults_Probe, SetDefaults_HTTPGetAction): a zero TimeoutSeconds
// becomes 1, PeriodSeconds 10, SuccessThreshold 1, FailureThreshold 3; an
// HTTP GET's empty Path "/" and empty Scheme "HTTP". InitialDelaySeconds
// stays as given. Negative values are left for validation to refuse.
func (p Probe) WithDefaults() Probe {
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	if h := p.Handler.HTTPGet; h != nil {
		c := *h
		if c.Path == "" {
			c.Path = "/"
		}
		if c.Scheme == "" {
			c.Scheme = "HTTP"
		}
		p.Handler.HTTPGet = &c
	}
	return p
}

// WithDefaults returns the pod with every probe defaulted.
func (p Pod) WithDefaults() Pod {
	p.Containers = defaultContainers(p.Containers)
	p.InitContainers = defaultContainers(p.InitContainers)
	return p
}

func defaultContainers(in []Container) []Container {
	if in == nil {
		return nil
	}
	out := make([]Container, len(in))
	for i, c := range in {
		for _, pp := range []**Probe{&c.LivenessProbe, &c.ReadinessProbe, &c.StartupProbe} {
			if *pp != nil {
				d := (*pp).WithDefaults()
				*pp = &d
			}
		}
		out[i] = c
	}
	return out
}

// ErrorType is the kind of a field error, printed as apimachinery's
// field.ErrorType.String.
type ErrorType string

// The field error types probe validation produces.
const (
	ErrorRequired     ErrorType = "Required value"
	ErrorForbidden    ErrorType = "Forbidden"
	ErrorInvalid      ErrorType = "Invalid value"
	ErrorNotSupported ErrorType = "Unsupported value"
)

// FieldError is one validation failure, printed as apimachinery's
// field.Error: "<field>: <type>[: <value>][: <detail>]". Value is the bad
// value already rendered as upstream renders it (numbers plain, strings
// quoted); it is printed for Invalid and NotSupported only.
type FieldError struct {
	Type   ErrorType
	Field  string
	Value  string
	Detail string
}

func (e FieldError) Error() string {
	s := string(e.Type)
	if e.Type == ErrorInvalid || e.Type == ErrorNotSupported {
		s += ": " + e.Value
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return e.Field + ": " + s
}

// ValidationError is the list of a pod's probe validation failures, in
// upstream's order, printed as field.ErrorList.ToAggregate: one error as
// itself, several deduplicated, joined with ", " in brackets.
type ValidationError []FieldError

func (v ValidationError) Error() string {
	if len(v) == 1 {
		return v[0].Error()
	}
	var texts []string
	seen := map[string]bool{}
	for _, e := range v {
		if t := e.Error(); !seen[t] {
			seen[t] = true
			texts = append(texts, t)
		}
	}
	if len(texts) == 1 {
		return texts[0]
	}
	return "[" + strings.Join(texts, ", ") + "]"
}

const (
	msgNegative       = "must be greater than or equal to 0"
	msgMustBeOne      = "must be 1"
	msgGracePositive  = "must be greater than 0"
	msgGraceReadiness = "must not be set for readinessProbes"
	msgMoreThanOne    = "may not specify more than 1 handler type"
	msgNoHandler      = "must specify a handler type"
	msgInitContainer  = "may not be set for init containers without restartPolicy=Always"
	msgPortRange      = "must be between 1 and 65535, inclusive"
	msgHeaderName     = "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')"
)

// ValidateProbe returns the failures of one probe of type t at path (for
// example "spec.containers[0].livenessProbe"), with upstream's rules and
// texts (pkg/apis/core/validation: validateLivenessProbe and its
// siblings): the handler (exactly one; its own rules), every number ≥ 0, a
// probe-level terminationGracePeriodSeconds > 0 and not on readiness
// probes, and successThreshold 1 on liveness and startup probes. It
// validates the probe as given: the API server validates after defaulting.
func ValidateProbe(p *Probe, t ProbeType, path string) []FieldError {
	if p == nil {
		return nil
	}
	errs := validateHandler(p.Handler, path)
	for _, f := range []struct {
		name  string
		value int32
	}{
		{"initialDelaySeconds", p.InitialDelaySeconds},
		{"timeoutSeconds", p.TimeoutSeconds},
		{"periodSeconds", p.PeriodSeconds},
		{"successThreshold", p.SuccessThreshold},
		{"failureThreshold", p.FailureThreshold},
	} {
		if f.value < 0 {
			errs = append(errs, invalid(path+"."+f.name, fmt.Sprint(f.value), msgNegative))
		}
	}
	if g := p.TerminationGracePeriodSeconds; g != nil && *g <= 0 {
		errs = append(errs, invalid(path+".terminationGracePeriodSeconds", fmt.Sprint(*g), msgGracePositive))
	}
	switch t {
	case Liveness, Startup:
		if p.SuccessThreshold != 1 {
			errs = append(errs, invalid(path+".successThreshold", fmt.Sprint(p.SuccessThreshold), msgMustBeOne))
		}
	case Readiness:
		if g := p.TerminationGracePeriodSeconds; g != nil {
			errs = append(errs, invalid(path+".terminationGracePeriodSeconds", fmt.Sprint(*g), msgGraceReadiness))
		}
	}
	return errs
}

func invalid(field, value, detail string) FieldError {
	return FieldError{Type: ErrorInvalid, Field: field, Value: value, Detail: detail}
}

func validateHandler(h Handler, path string) []FieldError {
	var errs []FieldError
	n := 0
	one := func(set bool, name string, check func(string) []FieldError) {
		if !set {
			return
		}
		if n > 0 {
			errs = append(errs, FieldError{Type: ErrorForbidden, Field: path + "." + name, Detail: msgMoreThanOne})
			return
		}
		n++
		errs = append(errs, check(path+"."+name)...)
	}
	one(h.Exec != nil, "exec", func(p string) []FieldError {
		if len(h.Exec.Command) == 0 {
			return []FieldError{{Type: ErrorRequired, Field: p + ".command"}}
		}
		return nil
	})
	one(h.HTTPGet != nil, "httpGet", func(p string) []FieldError { return validateHTTPGet(*h.HTTPGet, p) })
	one(h.TCPSocket != nil, "tcpSocket", func(p string) []FieldError { return validatePort(h.TCPSocket.Port, p+".port") })
	one(h.GRPC != nil, "grpc", func(p string) []FieldError { return validatePort(PortNumber(h.GRPC.Port), p+".port") })
	if n == 0 {
		errs = append(errs, FieldError{Type: ErrorRequired, Field: path, Detail: msgNoHandler})
	}
	return errs
}

func validateHTTPGet(h HTTPGetAction, path string) []FieldError {
	var errs []FieldError
	if h.Path == "" {
		errs = append(errs, FieldError{Type: ErrorRequired, Field: path + ".path"})
	}
	errs = append(errs, validatePort(h.Port, path+".port")...)
	if h.Scheme != "HTTP" && h.Scheme != "HTTPS" {
		errs = append(errs, FieldError{Type: ErrorNotSupported, Field: path + ".scheme", Value: strconv.Quote(h.Scheme), Detail: `supported values: "HTTP", "HTTPS"`})
	}
	for _, hd := range h.Headers {
		if !isHeaderName(hd.Name) {
			errs = append(errs, invalid(path+".httpHeaders", strconv.Quote(hd.Name), msgHeaderName))
		}
	}
	return errs
}

// validatePort is ValidatePortNumOrName: a number 1–65535, or a port name
// by IsValidPortName's rules, each broken rule its own error.
func validatePort(p Port, path string) []FieldError {
	if !p.Named {
		if p.Number < 1 || p.Number > 65535 {
			return []FieldError{invalid(path, fmt.Sprint(p.Number), msgPortRange)}
		}
		return nil
	}
	var errs []FieldError
	bad := func(msg string) { errs = append(errs, invalid(path, strconv.Quote(p.Name), msg)) }
	name := p.Name
	if len(name) > 15 {
		bad("must be no more than 15 characters")
	}
	charset, letter := name != "", false
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z':
			letter = true
		case r >= '0' && r <= '9', r == '-':
		default:
			charset = false
		}
	}
	if !charset {
		bad("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
	}
	if !letter {
		bad("must contain at least one letter (a-z)")
	}
	if strings.Contains(name, "--") {
		bad("must not contain consecutive hyphens")
	}
	if name != "" && (name[0] == '-' || name[len(name)-1] == '-') {
		bad("must not begin or end with a hyphen")
	}
	return errs
}

func isHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// Validate returns the pod's probe validation failures (nil when none) in
// upstream's order: init containers first (a regular init container may
// have no probe: "may not be set for init containers without
// restartPolicy=Always"; a sidecar's probes are validated), then the
// containers; per container liveness, readiness, startup.
func (p Pod) Validate() error {
	var errs ValidationError
	for i, c := range p.InitContainers {
		path := fmt.Sprintf("spec.initContainers[%d]", i)
		if c.IsSidecar() {
			errs = append(errs, validateContainerProbes(c, path)...)
			continue
		}
		for _, f := range []struct {
			name string
			set  bool
		}{{"livenessProbe", c.LivenessProbe != nil}, {"readinessProbe", c.ReadinessProbe != nil}, {"startupProbe", c.StartupProbe != nil}} {
			if f.set {
				errs = append(errs, FieldError{Type: ErrorForbidden, Field: path + "." + f.name, Detail: msgInitContainer})
			}
		}
	}
	for i, c := range p.Containers {
		errs = append(errs, validateContainerProbes(c, fmt.Sprintf("spec.containers[%d]", i))...)
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

func validateContainerProbes(c Container, path string) []FieldError {
	var errs []FieldError
	errs = append(errs, ValidateProbe(c.LivenessProbe, Liveness, path+".livenessProbe")...)
	errs = append(errs, ValidateProbe(c.ReadinessProbe, Readiness, path+".readinessProbe")...)
	errs = append(errs, ValidateProbe(c.StartupProbe, Startup, path+".startupProbe")...)
	return errs
}
