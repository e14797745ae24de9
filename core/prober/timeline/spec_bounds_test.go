package timeline

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/core/prober"
)

// Each bound of a timeline is inclusive: input at exactly the bound is
// accepted and one past it refused. The tests at the bound are what tell a
// `>` from a `>=`.

func podOf(containers, initContainers int) prober.Pod {
	pod := prober.Pod{Namespace: "default", Name: "many"}
	for i := 0; i < containers; i++ {
		pod.Containers = append(pod.Containers, prober.Container{Name: fmt.Sprintf("c%d", i)})
	}
	for i := 0; i < initContainers; i++ {
		pod.InitContainers = append(pod.InitContainers, prober.Container{Name: fmt.Sprintf("i%d", i)})
	}
	return pod
}

// TestNewBounds: the duration, the start delay and the number of
// containers and init containers (counted together) at and past their
// bounds.
func TestNewBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  prober.Pod
		opts Options
		want string // "" when New accepts it
	}{
		{"duration MaxDuration", webPod(), Options{Duration: MaxDuration}, ""},
		{"duration past MaxDuration", webPod(), Options{Duration: MaxDuration + 1}, "duration: must be more than 0 and at most 168h0m0s, got 168h0m0.000000001s"},
		{"start delay the duration", webPod(), Options{Duration: time.Minute, StartDelay: time.Minute}, ""},
		{"start delay past the duration", webPod(), Options{Duration: time.Minute, StartDelay: time.Minute + 1},
			"startDelay: must be at least 0 and at most the duration 1m0s, got 1m0.000000001s"},
		{"MaxContainers containers", podOf(MaxContainers, 0), Options{Duration: time.Minute}, ""},
		{"MaxContainers in all", podOf(MaxContainers-5, 5), Options{Duration: time.Minute}, ""},
		{"one more than MaxContainers in all", podOf(MaxContainers-4, 5), Options{Duration: time.Minute},
			"spec.containers: more than 64 containers and init containers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.pod, tc.opts)
			if tc.want == "" {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, tc.want)
			}
		})
	}
}

// TestPodUID: a pod without a UID gets namespace/name, one with a UID
// keeps it; the workers' keys carry it.
func TestPodUID(t *testing.T) {
	for _, tc := range []struct {
		uid, want string
	}{{"", "default/web"}, {"uid-web", "uid-web"}} {
		pod := webPod()
		pod.UID = tc.uid
		tl, err := New(pod, Options{Duration: time.Minute})
		require.NoError(t, err)
		assert.Equal(t, tc.want, tl.Pod().UID)
		req, ok, err := tl.Next()
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, tc.want, req.Run.Key.PodUID)
	}
}

// TestMaxEntriesIsTheBound: a timeline of exactly MaxEntries entries
// plays to its end; one second more, one entry more, is an error. The pod
// probes once a second and each probe is one entry: 10 entries at the
// start, then one a second.
func TestMaxEntriesIsTheBound(t *testing.T) {
	pod := prober.Pod{Namespace: "default", Name: "busy", Containers: []prober.Container{{Name: "app", ReadinessProbe: httpProbe(1, 1)}}}
	atBound := time.Duration(MaxEntries-10) * time.Second
	tl, err := New(pod, Options{Duration: atBound})
	require.NoError(t, err)
	require.NoError(t, Play(tl, Outcomes{}))
	assert.Len(t, tl.Entries(), MaxEntries)

	tl, err = New(pod, Options{Duration: atBound + time.Second})
	require.NoError(t, err)
	assert.EqualError(t, Play(tl, Outcomes{}), "duration: 55h33m11s makes more than 200000 timeline entries; choose a shorter one")
}
