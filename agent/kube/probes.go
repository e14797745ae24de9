package kube

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nodeproof/nodeproof/core/prober"
)

// ConvertProbes returns what the prober reads of a decoded Pod: its
// containers' and init containers' probes as written (not defaulted:
// prober.Pod.WithDefaults does what the API server does, then
// prober.Pod.Validate applies the API's probe rules), their ports and
// static environment, the restart policies and the deletion timestamp.
// It never fails: every probe field has a place in core/prober, and the
// rules are core/prober's to apply.
func ConvertProbes(p *corev1.Pod) prober.Pod {
	out := prober.Pod{
		UID: string(p.UID), Namespace: p.Namespace, Name: p.Name,
		Containers:     probeContainers(p.Spec.Containers),
		InitContainers: probeContainers(p.Spec.InitContainers),
		RestartPolicy:  prober.ContainerRestartPolicy(p.Spec.RestartPolicy),
	}
	if out.Namespace == "" {
		out.Namespace = DefaultNamespace
	}
	if p.DeletionTimestamp != nil {
		t := p.DeletionTimestamp.Time
		out.DeletionTimestamp = &t
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			out.Ready = true
		}
	}
	return out
}

func probeContainers(cs []corev1.Container) []prober.Container {
	var out []prober.Container
	for _, c := range cs {
		conv := prober.Container{Name: c.Name,
			LivenessProbe: convertProbe(c.LivenessProbe), ReadinessProbe: convertProbe(c.ReadinessProbe), StartupProbe: convertProbe(c.StartupProbe)}
		if c.RestartPolicy != nil {
			conv.RestartPolicy = prober.ContainerRestartPolicy(*c.RestartPolicy)
		}
		for _, port := range c.Ports {
			conv.Ports = append(conv.Ports, prober.ContainerPort{Name: port.Name, ContainerPort: port.ContainerPort})
		}
		for _, env := range c.Env {
			if env.ValueFrom == nil {
				conv.Env = append(conv.Env, prober.EnvVar{Name: env.Name, Value: env.Value})
			}
		}
		out = append(out, conv)
	}
	return out
}

func convertProbe(p *corev1.Probe) *prober.Probe {
	if p == nil {
		return nil
	}
	out := &prober.Probe{
		InitialDelaySeconds: p.InitialDelaySeconds, TimeoutSeconds: p.TimeoutSeconds, PeriodSeconds: p.PeriodSeconds,
		SuccessThreshold: p.SuccessThreshold, FailureThreshold: p.FailureThreshold,
	}
	if g := p.TerminationGracePeriodSeconds; g != nil {
		v := *g
		out.TerminationGracePeriodSeconds = &v
	}
	h := p.ProbeHandler
	if h.Exec != nil {
		out.Handler.Exec = &prober.ExecAction{Command: append([]string(nil), h.Exec.Command...)}
	}
	if h.HTTPGet != nil {
		get := &prober.HTTPGetAction{Path: h.HTTPGet.Path, Port: probePort(h.HTTPGet.Port), Host: h.HTTPGet.Host, Scheme: string(h.HTTPGet.Scheme)}
		for _, hd := range h.HTTPGet.HTTPHeaders {
			get.Headers = append(get.Headers, prober.HTTPHeader{Name: hd.Name, Value: hd.Value})
		}
		out.Handler.HTTPGet = get
	}
	if h.TCPSocket != nil {
		out.Handler.TCPSocket = &prober.TCPSocketAction{Port: probePort(h.TCPSocket.Port), Host: h.TCPSocket.Host}
	}
	if h.GRPC != nil {
		g := &prober.GRPCAction{Port: h.GRPC.Port}
		if h.GRPC.Service != nil {
			s := *h.GRPC.Service
			g.Service = &s
		}
		out.Handler.GRPC = g
	}
	return out
}

func probePort(p intstr.IntOrString) prober.Port {
	if p.Type == intstr.String {
		return prober.PortName(p.StrVal)
	}
	return prober.PortNumber(p.IntVal)
}
