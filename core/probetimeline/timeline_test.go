package probetimeline

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/core/prober"
)

func httpProbe(period, failure int32) *prober.Probe {
	return &prober.Probe{Handler: prober.Handler{HTTPGet: &prober.HTTPGetAction{Path: "/healthz", Port: prober.PortNumber(8080)}},
		PeriodSeconds: period, FailureThreshold: failure}
}

func webPod() prober.Pod {
	return prober.Pod{UID: "uid-web", Namespace: "default", Name: "web", Containers: []prober.Container{{
		Name: "web", LivenessProbe: httpProbe(10, 3), ReadinessProbe: httpProbe(5, 1),
	}}}
}

// play runs a pod under a script and returns the entries of the given
// kinds as "at container kind type value" lines.
func play(t *testing.T, pod prober.Pod, script string, opts Options, kinds ...Kind) []string {
	t.Helper()
	o, err := ParseOutcomes(script)
	require.NoError(t, err)
	tl, err := New(pod, opts)
	require.NoError(t, err)
	require.NoError(t, Play(tl, o))
	var lines []string
	for _, e := range tl.Entries() {
		for _, k := range kinds {
			if e.Kind == k {
				typ := "-"
				if e.Type != nil {
					typ = strings.ToLower(e.Type.String())
				}
				lines = append(lines, strings.TrimSpace(fmt.Sprintf("%v %s %s %s %s %s", e.At, e.Container, e.Kind, typ, e.ContainerID, e.Value)))
			}
		}
	}
	return lines
}

func TestDebugPrint(t *testing.T) {
	for _, l := range play(t, webPod(), "liveness=healthy 30s, failing", Options{Duration: 2 * time.Minute},
		KindStart, KindProbe, KindResult, KindKill, KindReady, KindStarted, KindBackOff, KindTriggered) {
		t.Log(l)
	}
}
