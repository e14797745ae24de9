package prober_test

import (
	"testing"

	"github.com/nodeproof/nodeproof/core/prober"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefaults: SetDefaults_Probe and SetDefaults_HTTPGetAction.
func TestDefaults(t *testing.T) {
	got := prober.Probe{Handler: prober.Handler{HTTPGet: &prober.HTTPGetAction{Port: prober.PortNumber(80)}}, InitialDelaySeconds: 0}.WithDefaults()
	assert.Equal(t, prober.Probe{
		Handler:        prober.Handler{HTTPGet: &prober.HTTPGetAction{Path: "/", Port: prober.PortNumber(80), Scheme: "HTTP"}},
		TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
	}, got)
	kept := prober.Probe{TimeoutSeconds: 5, PeriodSeconds: -1, SuccessThreshold: 2, FailureThreshold: 7, InitialDelaySeconds: 3}.WithDefaults()
	assert.Equal(t, prober.Probe{TimeoutSeconds: 5, PeriodSeconds: -1, SuccessThreshold: 2, FailureThreshold: 7, InitialDelaySeconds: 3}, kept)
}

// TestValidateProbe: upstream's rules and texts, as field.Error prints them.
func TestValidateProbe(t *testing.T) {
	exec := prober.Handler{Exec: &prober.ExecAction{Command: []string{"true"}}}
	grace := func(v int64) *int64 { return &v }
	const path = "spec.containers[0].livenessProbe"
	for _, tc := range []struct {
		name  string
		typ   prober.ProbeType
		probe prober.Probe
		want  []string
	}{
		{"valid", prober.Liveness, prober.Probe{Handler: exec, SuccessThreshold: 1}, nil},
		{"no handler", prober.Readiness, prober.Probe{}, []string{path + ": Required value: must specify a handler type"}},
		{"two handlers", prober.Readiness, prober.Probe{Handler: prober.Handler{Exec: exec.Exec, TCPSocket: &prober.TCPSocketAction{Port: prober.PortNumber(80)}}},
			[]string{path + ".tcpSocket: Forbidden: may not specify more than 1 handler type"}},
		{"empty command", prober.Readiness, prober.Probe{Handler: prober.Handler{Exec: &prober.ExecAction{}}}, []string{path + ".exec.command: Required value"}},
		{"negative numbers", prober.Readiness, prober.Probe{Handler: exec, InitialDelaySeconds: -1, TimeoutSeconds: -2, PeriodSeconds: -3, SuccessThreshold: -4, FailureThreshold: -5}, []string{
			path + ".initialDelaySeconds: Invalid value: -1: must be greater than or equal to 0",
			path + ".timeoutSeconds: Invalid value: -2: must be greater than or equal to 0",
			path + ".periodSeconds: Invalid value: -3: must be greater than or equal to 0",
			path + ".successThreshold: Invalid value: -4: must be greater than or equal to 0",
			path + ".failureThreshold: Invalid value: -5: must be greater than or equal to 0",
		}},
		{"liveness successThreshold", prober.Liveness, prober.Probe{Handler: exec, SuccessThreshold: 2}, []string{path + ".successThreshold: Invalid value: 2: must be 1"}},
		{"startup successThreshold", prober.Startup, prober.Probe{Handler: exec, SuccessThreshold: 3}, []string{path + ".successThreshold: Invalid value: 3: must be 1"}},
		{"readiness successThreshold", prober.Readiness, prober.Probe{Handler: exec, SuccessThreshold: 3}, nil},
		{"grace 0", prober.Liveness, prober.Probe{Handler: exec, SuccessThreshold: 1, TerminationGracePeriodSeconds: grace(0)},
			[]string{path + ".terminationGracePeriodSeconds: Invalid value: 0: must be greater than 0"}},
		{"grace on readiness", prober.Readiness, prober.Probe{Handler: exec, TerminationGracePeriodSeconds: grace(5)},
			[]string{path + ".terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes"}},
		{"http", prober.Readiness, prober.Probe{Handler: prober.Handler{HTTPGet: &prober.HTTPGetAction{Port: prober.PortNumber(0), Scheme: "FTP", Headers: []prober.HTTPHeader{{Name: "X_Y"}}}}}, []string{
			path + ".httpGet.path: Required value",
			path + ".httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive",
			path + `.httpGet.scheme: Unsupported value: "FTP": supported values: "HTTP", "HTTPS"`,
			path + `.httpGet.httpHeaders: Invalid value: "X_Y": a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')`,
		}},
		{"port names", prober.Readiness, prober.Probe{Handler: prober.Handler{TCPSocket: &prober.TCPSocketAction{Port: prober.PortName("-1234567890123456")}}}, []string{
			path + `.tcpSocket.port: Invalid value: "-1234567890123456": must be no more than 15 characters`,
			path + `.tcpSocket.port: Invalid value: "-1234567890123456": must contain at least one letter (a-z)`,
			path + `.tcpSocket.port: Invalid value: "-1234567890123456": must not begin or end with a hyphen`,
		}},
		{"port name charset", prober.Readiness, prober.Probe{Handler: prober.Handler{TCPSocket: &prober.TCPSocketAction{Port: prober.PortName("Web--x")}}}, []string{
			path + `.tcpSocket.port: Invalid value: "Web--x": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`,
			path + `.tcpSocket.port: Invalid value: "Web--x": must not contain consecutive hyphens`,
		}},
		// Each bound is inclusive: ports 1 and 65535, a port name of 15
		// characters, a header name using each end of its ranges.
		{"at the bounds", prober.Readiness, prober.Probe{Handler: prober.Handler{HTTPGet: &prober.HTTPGetAction{Path: "/", Port: prober.PortNumber(1), Scheme: "HTTP",
			Headers: []prober.HTTPHeader{{Name: "az-AZ-09"}}}}}, nil},
		{"port 65535", prober.Readiness, prober.Probe{Handler: prober.Handler{TCPSocket: &prober.TCPSocketAction{Port: prober.PortNumber(65535)}}}, nil},
		{"port name of 15", prober.Readiness, prober.Probe{Handler: prober.Handler{TCPSocket: &prober.TCPSocketAction{Port: prober.PortName("abcdefghijklmno")}}}, nil},
		{"empty header name", prober.Readiness, prober.Probe{Handler: prober.Handler{HTTPGet: &prober.HTTPGetAction{Path: "/", Port: prober.PortNumber(80), Scheme: "HTTPS",
			Headers: []prober.HTTPHeader{{Name: ""}}}}}, []string{
			path + `.httpGet.httpHeaders: Invalid value: "": a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')`,
		}},
		{"grpc port", prober.Readiness, prober.Probe{Handler: prober.Handler{GRPC: &prober.GRPCAction{Port: 70000}}}, []string{
			path + ".grpc.port: Invalid value: 70000: must be between 1 and 65535, inclusive",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range prober.ValidateProbe(&tc.probe, tc.typ, path) {
				got = append(got, e.Error())
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestValidatePod: init containers without restartPolicy Always may have
// no probe; sidecars' probes are validated; errors aggregate as upstream.
func TestValidatePod(t *testing.T) {
	pod := prober.Pod{
		InitContainers: []prober.Container{
			{Name: "init", ReadinessProbe: execProbe()},
			{Name: "side", RestartPolicy: prober.RestartAlways, LivenessProbe: execProbe(thresholds(2, 3))},
		},
		Containers: []prober.Container{{Name: "c", StartupProbe: execProbe()}},
	}
	err := pod.Validate()
	require.Error(t, err)
	assert.Equal(t, "[spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always, "+
		"spec.initContainers[1].livenessProbe.successThreshold: Invalid value: 2: must be 1]", err.Error())
	assert.NoError(t, prober.Pod{Containers: []prober.Container{{Name: "c", StartupProbe: execProbe()}}}.Validate())

	// AddPod refuses an invalid pod, and an undefaulted one, changing nothing.
	m := newManager(t)
	_, err = m.AddPod(later, pod, nil)
	assert.Equal(t, err, pod.Validate())
	_, err = m.AddPod(later, prober.Pod{UID: "u", Containers: []prober.Container{{Name: "c", ReadinessProbe: &prober.Probe{Handler: prober.Handler{Exec: &prober.ExecAction{Command: []string{"x"}}}}}}}, nil)
	assert.EqualError(t, err, "spec.containers[0].readinessProbe.timeoutSeconds: must be ≥ 1 once defaulted (Pod.WithDefaults), got 0")
	assert.Empty(t, m.Workers())
}
