package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	simulation "github.com/nodeproof/nodeproof/sim"
)

// readScript reads a script of the suite's draws from testdata, and the
// events it says the case runs: its comment lines that start with "# #".
func readScript(t *testing.T, name string) (*simulation.Script, []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var events []string
	for line := range strings.Lines(string(b)) {
		if event, ok := strings.CutPrefix(strings.TrimSpace(line), "# #"); ok {
			events = append(events, "#"+event)
		}
	}
	return simulation.NewScript(string(b)), events
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
	src, events := readScript(t, "undelivered-allocate-answer.txt")
	s, err := simulation.New(config(), src)
	require.NoError(t, err)
	var ran []string
	for range events {
		ev, ok := s.Step()
		require.True(t, ok)
		ran = append(ran, ev.String())
		for _, r := range s.Check() {
			require.NoError(t, r.Err, "after %s", ev)
		}
	}
	require.NoError(t, src.Err())
	require.Equal(t, events, ran, "the script's comments name the events the case runs")

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
