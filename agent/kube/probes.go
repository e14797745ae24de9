package kube

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nodeproof/nodeproof/core/prober"
)

// ConvertProberPod returns what the kubelet's prober reads of a Pod: its
// uid, namespace (DefaultNamespace when unset) and name, restart policy,
// the containers and init containers with their ports, static environment
// (a variable set from valueFrom has the empty value, as the kubelet's
// $(VAR) expansion of a probe command sees it), probes, restart policy and
// restart rules, the deletion mark and the PodReady condition. The probes
// are as written: core/prober's Pod.WithDefaults applies the API server's
// defaults and Pod.Validate its rules, with upstream's field paths.
func ConvertProberPod(p *corev1.Pod) prober.Pod {
	out := prober.Pod{
		UID:            string(p.UID),
		Namespace:      p.Namespace,
		Name:           p.Name,
		Containers:     convertProberContainers(p.Spec.Containers),
		InitContainers: convertProberContainers(p.Spec.InitContainers),
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

func convertProberContainers(cs []corev1.Container) []prober.Container {
	if cs == nil {
		return nil
	}
	out := make([]prober.Container, len(cs))
	for i, c := range cs {
		pc := prober.Container{
			Name:           c.Name,
			LivenessProbe:  convertProbe(c.LivenessProbe),
			ReadinessProbe: convertProbe(c.ReadinessProbe),
			StartupProbe:   convertProbe(c.StartupProbe),
		}
		if c.RestartPolicy != nil {
			pc.RestartPolicy = prober.ContainerRestartPolicy(*c.RestartPolicy)
		}
		for _, r := range c.RestartPolicyRules {
			rule := prober.RestartRule{Action: string(r.Action)}
			if r.ExitCodes != nil {
				rule.ExitCodes = &prober.ExitCodes{Operator: string(r.ExitCodes.Operator), Values: append([]int32(nil), r.ExitCodes.Values...)}
			}
			pc.RestartRules = append(pc.RestartRules, rule)
		}
		for _, port := range c.Ports {
			pc.Ports = append(pc.Ports, prober.ContainerPort{Name: port.Name, ContainerPort: port.ContainerPort})
		}
		for _, env := range c.Env {
			pc.Env = append(pc.Env, prober.EnvVar{Name: env.Name, Value: env.Value})
		}
		out[i] = pc
	}
	return out
}

func convertProbe(p *corev1.Probe) *prober.Probe {
	if p == nil {
		return nil
	}
	out := &prober.Probe{
		InitialDelaySeconds: p.InitialDelaySeconds,
		TimeoutSeconds:      p.TimeoutSeconds,
		PeriodSeconds:       p.PeriodSeconds,
		SuccessThreshold:    p.SuccessThreshold,
		FailureThreshold:    p.FailureThreshold,
	}
	if p.TerminationGracePeriodSeconds != nil {
		v := *p.TerminationGracePeriodSeconds
		out.TerminationGracePeriodSeconds = &v
	}
	h := p.ProbeHandler
	if h.Exec != nil {
		out.Handler.Exec = &prober.ExecAction{Command: append([]string(nil), h.Exec.Command...)}
	}
	if h.HTTPGet != nil {
		g := &prober.HTTPGetAction{Path: h.HTTPGet.Path, Port: convertPort(h.HTTPGet.Port), Host: h.HTTPGet.Host, Scheme: string(h.HTTPGet.Scheme)}
		for _, hd := range h.HTTPGet.HTTPHeaders {
			g.Headers = append(g.Headers, prober.HTTPHeader{Name: hd.Name, Value: hd.Value})
		}
		out.Handler.HTTPGet = g
	}
	if h.TCPSocket != nil {
		out.Handler.TCPSocket = &prober.TCPSocketAction{Port: convertPort(h.TCPSocket.Port), Host: h.TCPSocket.Host}
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

func convertPort(p intstr.IntOrString) prober.Port {
	if p.Type == intstr.String {
		return prober.PortName(p.StrVal)
	}
	return prober.PortNumber(p.IntVal)
}
