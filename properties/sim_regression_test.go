package properties

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/sim"
)

// scriptSource answers the simulation's choices from the recorded draws of
// one of the suite's cases: an integer per Intn, T or F per Chance, drawn
// exactly where rapidSource draws, so that the case replays without rapid
// or its seed. Past the script every Intn is 0 and every Chance false, as
// rapid's shrunk draws are. A draw of the other kind than the script's
// next answer, or out of range, is recorded as a divergence: the suite no
// longer draws in the order the script was taken from.
type scriptSource struct {
	draws    []string
	next     int
	diverged []string
}

func (s *scriptSource) take() (string, bool) {
	if s.next >= len(s.draws) {
		return "", false
	}
	s.next++
	return s.draws[s.next-1], true
}

func (s *scriptSource) Intn(n int) int {
	if n == 1 {
		return 0
	}
	a, ok := s.take()
	if !ok {
		return 0
	}
	v, err := strconv.Atoi(a)
	if err != nil || v >= n {
		s.diverged = append(s.diverged, "draw "+strconv.Itoa(s.next)+": Intn("+strconv.Itoa(n)+") got "+a)
		return 0
	}
	return v
}

func (s *scriptSource) Split() sim.Source { return s }

func (s *scriptSource) Chance(rate float64) bool {
	switch {
	case rate <= 0:
		return false
	case rate >= 1:
		return true
	}
	a, ok := s.take()
	if !ok {
		return false
	}
	if a != "T" && a != "F" {
		s.diverged = append(s.diverged, "draw "+strconv.Itoa(s.next)+": Chance got "+a)
	}
	return a == "T"
}

// readScript reads a script from testdata/sim, skipping # comment lines.
func readScript(t *testing.T, name string) *scriptSource {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sim", name))
	require.NoError(t, err)
	var draws []string
	for line := range strings.Lines(string(b)) {
		if !strings.HasPrefix(line, "#") {
			draws = append(draws, strings.Fields(line)...)
		}
	}
	return &scriptSource{draws: draws}
}

// After a restart, pod-000003's admission garbage-collects the devices of
// pod-000004, admitted before the restart but not yet running (its image
// was pulling) and not yet back in the pod manager; pod-000004's own
// admission then calls Allocate again, the answer is slow, and the kubelet
// restarts before it arrives. The next kubelet admits pod-000004 with the
// devices and the answer its checkpoint file restored (allocation-1), as
// upstream's would. SIM-DEVICES-HELD took the answer that never arrived
// (allocation-2) for the container's grant: the world recorded an answer
// when the plugin sent it, not when the kubelet that made the call received
// it. The report's sim suite failed on it in CI (seed 3094853838802209),
// and this script failed the same way before the fix.
func TestAnAllocateAnswerThatNeverArrivedGrantsNothing(t *testing.T) {
	src := readScript(t, "undelivered-allocate-answer.txt")
	s, err := sim.New(simConfig(), src)
	require.NoError(t, err)
	const events = 233
	for range events {
		ev, ok := s.Step()
		require.True(t, ok)
		for _, r := range s.Check() {
			require.NoError(t, r.Err, "after %s", ev)
		}
	}
	require.Empty(t, src.diverged, "the suite no longer draws in the script's order")
	require.Equal(t, len(src.draws), src.next, "the case took fewer draws than the script holds")

	// The case still reaches the situation: pod-000004 admitted with its
	// first answer, a restart, its second Allocate call, a restart with no
	// answer in between, and its admission from the checkpoint's devices.
	var story []string
	for _, e := range s.Trace() {
		switch {
		case e.Kind == "admit" && strings.HasPrefix(e.Detail, "pod-000004: "),
			e.Kind == "allocate-answer" && strings.HasPrefix(e.Detail, "pod-000004: "),
			e.Kind == "kubelet-restart":
			story = append(story, e.Kind+": "+e.Detail)
		}
	}
	require.Equal(t, []string{
		"admit: pod-000004: Allocate for c0",
		"allocate-answer: pod-000004: admitted, 0 evicted",
		"kubelet-restart: kubelet restarted at an event",
		"admit: pod-000004: Allocate for c0",
		"kubelet-restart: kubelet restarted at an event",
		"admit: pod-000004: admitted, 0 evicted",
	}, story)
}
