package prober

import (
	"fmt"
	"time"
)

// ProbeType is the kind of a probe. The values are upstream's: liveness 0,
// readiness 1, startup 2.
type ProbeType int

// The three probe types.
const (
	Liveness ProbeType = iota
	Readiness
	Startup
)

// String is upstream's probeType.String, used in event texts ("Liveness
// probe failed: ...").
func (t ProbeType) String() string {
	switch t {
	case Liveness:
		return "Liveness"
	case Readiness:
		return "Readiness"
	case Startup:
		return "Startup"
	default:
		return "UNKNOWN"
	}
}

// Result is a cached probe result (pkg/kubelet/prober/results): Unknown -1,
// Success 0, Failure 1.
type Result int

// The cached results.
const (
	Unknown Result = -1
	Success Result = 0
	Failure Result = 1
)

// String is upstream's: "Success", "Failure", anything else "UNKNOWN".
func (r Result) String() string {
	switch r {
	case Success:
		return "Success"
	case Failure:
		return "Failure"
	default:
		return "UNKNOWN"
	}
}

// InitialValue is the result a worker caches for a container it sees for
// the first time: readiness Failure (not ready until a probe succeeds),
// liveness Success (alive until probes fail), startup Unknown.
func InitialValue(t ProbeType) Result {
	switch t {
	case Readiness:
		return Failure
	case Liveness:
		return Success
	default:
		return Unknown
	}
}

// Port is an IntOrString port of a probe handler: a number, or (Named) the
// name of one of the container's ports.
type Port struct {
	Named  bool
	Number int32
	Name   string
}

// PortNumber is a numeric port.
func PortNumber(n int32) Port { return Port{Number: n} }

// PortName is a named port.
func PortName(name string) Port { return Port{Named: true, Name: name} }

func (p Port) String() string {
	if p.Named {
		return p.Name
	}
	return fmt.Sprint(p.Number)
}

// ExecAction runs Command in the container through CRI ExecSync.
type ExecAction struct {
	Command []string
}

// HTTPHeader is one header a probe sends.
type HTTPHeader struct {
	Name, Value string
}

// HTTPGetAction is an HTTP GET probe. Host empty means the pod IP; Scheme
// "HTTP" or "HTTPS" (defaulted to HTTP), Path defaulted to "/".
type HTTPGetAction struct {
	Path    string
	Port    Port
	Host    string
	Scheme  string
	Headers []HTTPHeader
}

// TCPSocketAction is a TCP connect probe; Host empty means the pod IP.
type TCPSocketAction struct {
	Port Port
	Host string
}

// GRPCAction is a grpc.health.v1 probe against the pod IP; Service nil
// means "".
type GRPCAction struct {
	Port    int32
	Service *string
}

// Handler is a probe's action; exactly one must be set.
type Handler struct {
	Exec      *ExecAction
	HTTPGet   *HTTPGetAction
	TCPSocket *TCPSocketAction
	GRPC      *GRPCAction
}

// Probe is a container probe (core/v1 Probe). The API server defaults the
// zero fields (WithDefaults) before the kubelet sees them.
type Probe struct {
	Handler                       Handler
	InitialDelaySeconds           int32
	TimeoutSeconds                int32
	PeriodSeconds                 int32
	SuccessThreshold              int32
	FailureThreshold              int32
	TerminationGracePeriodSeconds *int64
}

// Period is PeriodSeconds as a duration: the worker's ticker period.
func (p Probe) Period() time.Duration { return time.Duration(p.PeriodSeconds) * time.Second }

// Timeout is TimeoutSeconds as a duration, the timeout of every handler.
func (p Probe) Timeout() time.Duration { return time.Duration(p.TimeoutSeconds) * time.Second }

// ContainerRestartPolicy is a container-level restart policy: "" (none;
// the pod's applies), Always (on an init container: a sidecar), OnFailure
// or Never.
type ContainerRestartPolicy string

// Restart policies, of containers and of pods.
const (
	RestartAlways    ContainerRestartPolicy = "Always"
	RestartOnFailure ContainerRestartPolicy = "OnFailure"
	RestartNever     ContainerRestartPolicy = "Never"
)

// Restart rule actions.
const (
	ActionRestart              = "Restart"
	ActionRestartAllContainers = "RestartAllContainers"
)

// Exit code operators of a restart rule.
const (
	OperatorIn    = "In"
	OperatorNotIn = "NotIn"
)

// ExitCodes matches a terminated container's exit code: Operator In (the
// code is one of Values) or NotIn (it is none of them).
type ExitCodes struct {
	Operator string
	Values   []int32
}

// RestartRule is one of a container's restartPolicyRules; a rule without
// ExitCodes never matches.
type RestartRule struct {
	Action    string
	ExitCodes *ExitCodes
}

// ContainerPort is a named container port, for named probe ports.
type ContainerPort struct {
	Name          string
	ContainerPort int32
}

// EnvVar is a static environment variable, for $(VAR) in exec commands.
type EnvVar struct {
	Name, Value string
}

// Container is what the prober reads of a container spec.
type Container struct {
	Name           string
	Ports          []ContainerPort
	Env            []EnvVar
	LivenessProbe  *Probe
	ReadinessProbe *Probe
	StartupProbe   *Probe
	RestartPolicy  ContainerRestartPolicy
	RestartRules   []RestartRule
}

// IsSidecar reports whether an init container is restartable.
func (c Container) IsSidecar() bool { return c.RestartPolicy == RestartAlways }

// ProbeOf returns the container's probe of type t (nil when unset).
func (c Container) ProbeOf(t ProbeType) *Probe {
	switch t {
	case Liveness:
		return c.LivenessProbe
	case Readiness:
		return c.ReadinessProbe
	case Startup:
		return c.StartupProbe
	}
	return nil
}

// SetProbe sets the container's probe of type t; nil removes it.
func (c *Container) SetProbe(t ProbeType, p *Probe) {
	switch t {
	case Liveness:
		c.LivenessProbe = p
	case Readiness:
		c.ReadinessProbe = p
	case Startup:
		c.StartupProbe = p
	}
}

// Pod is what the prober reads of a pod. A worker keeps the Pod it was
// created with (AddPod), as upstream's worker keeps its pod pointer; only
// the deletion timestamp reaches it later (Manager.SetDeletionTimestamp),
// as the kubelet's config updates the shared object in place.
type Pod struct {
	UID, Namespace, Name string
	Containers           []Container
	InitContainers       []Container
	// RestartPolicy is the pod's: Always ("" counts as Always), OnFailure or Never.
	RestartPolicy ContainerRestartPolicy
	// DeletionTimestamp is set once the pod is being deleted.
	DeletionTimestamp *time.Time
	// Ready is the API pod's PodReady condition being True
	// (pod.Status.Conditions); only UpdatePodStatus reads it, for the
	// kubelet-restart rule.
	Ready bool
}

// Phase is a pod phase.
type Phase string

// Pod phases.
const (
	PodPending   Phase = "Pending"
	PodRunning   Phase = "Running"
	PodSucceeded Phase = "Succeeded"
	PodFailed    Phase = "Failed"
	PodUnknown   Phase = "Unknown"
)

// Running is a running container's state.
type Running struct {
	StartedAt time.Time
}

// Terminated is an exited container's state.
type Terminated struct {
	ExitCode int32
}

// ContainerState is a container's state; neither set means waiting.
type ContainerState struct {
	Running    *Running
	Terminated *Terminated
}

// ContainerStatus is one container's status as the status manager holds
// it. ContainerID is "<runtime>://<id>" or empty (not created yet).
type ContainerStatus struct {
	Name        string
	ContainerID string
	State       ContainerState
	Started     *bool
	Ready       bool
}

// PodStatus is the pod status the kubelet's status manager holds: what a
// worker reads on every step, and what UpdatePodStatus completes.
type PodStatus struct {
	Phase                 Phase
	PodIP                 string
	ContainerStatuses     []ContainerStatus
	InitContainerStatuses []ContainerStatus
	// AllContainersRestarting is the condition AllContainersRestarting=True.
	AllContainersRestarting bool
}

// Clone returns a deep copy, so UpdatePodStatus never writes into its
// argument.
func (s PodStatus) Clone() PodStatus {
	c := s
	c.ContainerStatuses = cloneStatuses(s.ContainerStatuses)
	c.InitContainerStatuses = cloneStatuses(s.InitContainerStatuses)
	return c
}

func cloneStatuses(in []ContainerStatus) []ContainerStatus {
	if in == nil {
		return nil
	}
	out := make([]ContainerStatus, len(in))
	for i, s := range in {
		out[i] = s
		if s.Started != nil {
			v := *s.Started
			out[i].Started = &v
		}
		if s.State.Running != nil {
			v := *s.State.Running
			out[i].State.Running = &v
		}
		if s.State.Terminated != nil {
			v := *s.State.Terminated
			out[i].State.Terminated = &v
		}
	}
	return out
}

// WorkerKey names a worker: at most one per (pod UID, container, type).
type WorkerKey struct {
	PodUID        string
	ContainerName string
	Type          ProbeType
}

func (k WorkerKey) String() string {
	return fmt.Sprintf("%s/%s/%s", k.PodUID, k.ContainerName, k.Type)
}

// less orders keys by pod UID, container name, then type: the order in
// which the core visits workers where upstream iterates a Go map.
func (k WorkerKey) less(o WorkerKey) bool {
	if k.PodUID != o.PodUID {
		return k.PodUID < o.PodUID
	}
	if k.ContainerName != o.ContainerName {
		return k.ContainerName < o.ContainerName
	}
	return k.Type < o.Type
}
