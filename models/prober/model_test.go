package prober

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

var (
	start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	t0    = start.Add(time.Hour)
)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func running(from int, id string, started bool) State {
	return State{At: at(from), ID: id, Running: true, StartedAt: at(from), Started: started}
}

func TestLivenessFailsAfterThreshold(t *testing.T) {
	out := Run(Script{
		Spec:         Spec{Kind: Liveness, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3},
		KubeletStart: start, FirstRun: at(0), Until: at(100),
		States:  []State{running(0, "c://1", true), running(55, "c://2", true)},
		Answers: []Answer{"success", "failure", "error", "failure", "failure", "failure"},
	})
	assert.Equal(t, []Publication{
		{at(0), "c://1", Pass},  // the initial value
		{at(40), "c://1", Fail}, // failures at 10, 30, 40; the error at 20 is skipped
		{at(60), "c://2", Pass}, // held until the new container, then its initial value
	}, out.Published)
	assert.Equal(t, 10, out.Probes, "0–40 and 60–100; none at 50 (held)")
}

func TestReadinessAndStartupGating(t *testing.T) {
	out := Run(Script{
		Spec:         Spec{Kind: Readiness, PeriodSeconds: 5, SuccessThreshold: 2, FailureThreshold: 1},
		KubeletStart: start, FirstRun: at(0), Until: at(30),
		States:  []State{running(0, "c://1", false), {At: at(12), ID: "c://1", Running: true, StartedAt: at(0), Started: true}},
		Answers: []Answer{"warning", "success", "failure"},
	})
	assert.Equal(t, []Publication{
		{at(0), "c://1", Fail},
		{at(20), "c://1", Pass},
		{at(25), "c://1", Fail},
	}, out.Published, "not probed before Started (12 s); successes at 15 and 20, a failure at 25")
	assert.Equal(t, 4, out.Probes)
}

func TestStartupHoldsOnAnyResult(t *testing.T) {
	out := Run(Script{
		Spec:         Spec{Kind: Startup, PeriodSeconds: 1, SuccessThreshold: 1, FailureThreshold: 2},
		KubeletStart: start, FirstRun: at(0), Until: at(10),
		States:  []State{running(0, "c://1", false)},
		Answers: []Answer{"failure", "success"},
	})
	assert.Equal(t, []Publication{{at(0), "c://1", Unset}, {at(1), "c://1", Pass}}, out.Published)
	assert.Equal(t, 2, out.Probes, "held after the first published result (#117153)")
}

func TestInitialDelayWholeSeconds(t *testing.T) {
	out := Run(Script{
		Spec:         Spec{Kind: Readiness, InitialDelaySeconds: 3, PeriodSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3},
		KubeletStart: start, FirstRun: at(0), Until: at(5),
		States: []State{{At: at(0), ID: "c://1", Running: true, StartedAt: at(0).Add(-999 * time.Millisecond), Started: true}},
	})
	assert.Equal(t, []Publication{{at(0), "c://1", Fail}, {at(3), "c://1", Pass}}, out.Published, "2.999 s at 2 s: no probe")
}

func TestKubeletRestartNoInitialValue(t *testing.T) {
	out := Run(Script{
		Spec:         Spec{Kind: Readiness, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3},
		KubeletStart: start, FirstRun: start, Until: start.Add(15 * time.Second),
		States:  []State{{At: start, ID: "c://1", Running: true, StartedAt: start.Add(-time.Hour), Started: true}},
		Answers: []Answer{"failure", "failure"},
	})
	assert.Empty(t, out.Published, "a container from before the restart keeps its state; two failures are below the threshold")
}

func TestDeletionAndExit(t *testing.T) {
	live := Spec{Kind: Liveness, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 1}
	out := Run(Script{Spec: live, KubeletStart: start, FirstRun: at(0), Until: at(60),
		States: []State{running(0, "c://1", true), {At: at(15), ID: "c://1", Running: true, StartedAt: at(0), Started: true, Deleted: true}}})
	assert.Equal(t, Outcome{Published: []Publication{{at(0), "c://1", Pass}}, Probes: 2, ExitedAt: at(20)}, out)

	out = Run(Script{Spec: live, KubeletStart: start, FirstRun: at(0), Until: at(60),
		States: []State{running(0, "c://1", true), {At: at(15), ID: "c://1", Exited: true}}})
	assert.Equal(t, Outcome{Published: []Publication{{at(0), "c://1", Pass}, {at(20), "c://1", Fail}}, Probes: 2, ExitedAt: at(20)}, out)

	out = Run(Script{Spec: live, KubeletStart: start, FirstRun: at(0), Until: at(60),
		States: []State{running(0, "c://1", true), {At: at(15), ID: "c://1", PodDone: true}}})
	assert.Equal(t, Outcome{Published: []Publication{{at(0), "c://1", Pass}}, Probes: 2, ExitedAt: at(20)}, out)
}
