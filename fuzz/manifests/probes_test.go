package manifests

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/agent/kube"
	"github.com/nodeproof/nodeproof/core/prober"
)

// FuzzProbeSpecs feeds fuzzed Pod manifests through agent/kube's decoding
// into core/prober's defaulting and validation. The oracle: nothing panics;
// a refusal is a prober.ValidationError whose every field error names a
// probe field under spec.; an accepted pod keeps the API's probe rules,
// restated here, and AddPod takes it.
func FuzzProbeSpecs(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := kube.Decode(data, kube.Options{SkipUnknownKinds: true})
		if err != nil {
			return // FuzzDecodeManifests holds the decoder's errors to account
		}
		require.Len(t, got.ProberPods, len(got.Pods), "a probe view per pod")
		for i, p := range got.ProberPods {
			d := p.WithDefaults()
			err := d.Validate()
			if err != nil {
				var verr prober.ValidationError
				require.True(t, errors.As(err, &verr), "pod %d: %v (%T) is not a ValidationError", i, err, err)
				require.NotEmpty(t, verr, "pod %d: an empty ValidationError", i)
				for _, fe := range verr {
					require.True(t, strings.HasPrefix(fe.Field, "spec.initContainers[") || strings.HasPrefix(fe.Field, "spec.containers["), "pod %d: error %q names no container", i, fe.Error())
					require.NotEmpty(t, fe.Type, "pod %d: error %q has no type", i, fe.Error())
				}
				continue
			}
			for _, c := range d.InitContainers {
				if c.RestartPolicy != prober.RestartAlways {
					require.True(t, c.LivenessProbe == nil && c.ReadinessProbe == nil && c.StartupProbe == nil, "pod %d: accepted a probe on the regular init container %s", i, c.Name)
				}
			}
			for _, c := range append(append([]prober.Container(nil), d.InitContainers...), d.Containers...) {
				for _, typ := range []prober.ProbeType{prober.Liveness, prober.Readiness, prober.Startup} {
					if pr := c.ProbeOf(typ); pr != nil {
						require.NoError(t, apiProbeRules(*pr, typ), "pod %d container %s: accepted %s probe %+v", i, c.Name, typ, pr)
					}
				}
			}
			m, err := prober.NewManager(prober.Options{KubeletStart: time.Unix(0, 0)})
			require.NoError(t, err)
			d.UID = "uid"
			_, err = m.AddPod(time.Unix(0, 0), d, nil)
			require.NoError(t, err, "pod %d: AddPod refuses a valid defaulted pod", i)
		}
	})
}

var (
	headerName = regexp.MustCompile(`^[-A-Za-z0-9]+$`)
	portName   = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
)

// apiProbeRules restates the API's rules for a defaulted probe, apart from
// core/prober's validation: one handler with its own rules, every period,
// timeout and threshold at least 1, the delay at least 0, success 1 on
// liveness and startup probes, a probe-level grace period positive and not
// on readiness probes.
func apiProbeRules(p prober.Probe, typ prober.ProbeType) error {
	h := p.Handler
	handlers := 0
	for _, set := range []bool{h.Exec != nil, h.HTTPGet != nil, h.TCPSocket != nil, h.GRPC != nil} {
		if set {
			handlers++
		}
	}
	switch {
	case handlers != 1:
		return fmt.Errorf("%d handlers", handlers)
	case p.InitialDelaySeconds < 0, p.TimeoutSeconds < 1, p.PeriodSeconds < 1, p.SuccessThreshold < 1, p.FailureThreshold < 1:
		return errors.New("a number out of range")
	case typ != prober.Readiness && p.SuccessThreshold != 1:
		return errors.New("successThreshold is not 1")
	case p.TerminationGracePeriodSeconds != nil && (typ == prober.Readiness || *p.TerminationGracePeriodSeconds <= 0):
		return errors.New("terminationGracePeriodSeconds")
	case h.Exec != nil && len(h.Exec.Command) == 0:
		return errors.New("exec without a command")
	case h.TCPSocket != nil:
		return portRule(h.TCPSocket.Port)
	case h.GRPC != nil:
		return portRule(prober.PortNumber(h.GRPC.Port))
	case h.HTTPGet != nil:
		if h.HTTPGet.Path == "" || (h.HTTPGet.Scheme != "HTTP" && h.HTTPGet.Scheme != "HTTPS") {
			return fmt.Errorf("path %q scheme %q", h.HTTPGet.Path, h.HTTPGet.Scheme)
		}
		for _, hd := range h.HTTPGet.Headers {
			if !headerName.MatchString(hd.Name) {
				return fmt.Errorf("header name %q", hd.Name)
			}
		}
		return portRule(h.HTTPGet.Port)
	}
	return nil
}

func portRule(p prober.Port) error {
	if !p.Named {
		if p.Number < 1 || p.Number > 65535 {
			return fmt.Errorf("port %d", p.Number)
		}
		return nil
	}
	if len(p.Name) > 15 || !portName.MatchString(p.Name) || strings.Contains(p.Name, "--") || !strings.ContainsAny(p.Name, "abcdefghijklmnopqrstuvwxyz") {
		return fmt.Errorf("port name %q", p.Name)
	}
	return nil
}
