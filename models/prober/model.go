package prober

import (
	"fmt"
	"time"
)

// Kind is a probe's kind.
type Kind string

// The kinds.
const (
	Liveness  Kind = "liveness"
	Readiness Kind = "readiness"
	Startup   Kind = "startup"
)

// Verdict is a cached result.
type Verdict string

// The verdicts; Unset is startup's initial value.
const (
	Pass  Verdict = "Success"
	Fail  Verdict = "Failure"
	Unset Verdict = "UNKNOWN"
)

// Spec is a defaulted probe.
type Spec struct {
	Kind                               Kind
	InitialDelaySeconds, PeriodSeconds int
	SuccessThreshold, FailureThreshold int
}

// Answer is what a probe run gives: "success", "warning", "failure",
// "unknown" or "error" (three tries all erring).
type Answer string

// State is the container as the status manager shows it from At on.
type State struct {
	At          time.Time
	ID          string // "" before the container exists
	Running     bool
	StartedAt   time.Time
	Started     bool
	Exited      bool
	WillRestart bool // an exited container will run again
	Deleted     bool // the pod is being deleted
	PodDone     bool // the pod phase is Succeeded or Failed
}

// Script is one worker's life.
type Script struct {
	Spec         Spec
	KubeletStart time.Time
	FirstRun     time.Time
	Until        time.Time
	States       []State  // ascending At; before the first, no status
	Answers      []Answer // consumed by the probes in order; none left: success
}

// Publication is one result the worker publishes.
type Publication struct {
	At          time.Time
	ContainerID string
	Verdict     Verdict
}

func (p Publication) String() string {
	return fmt.Sprintf("%s %s %s", p.At.Format(time.RFC3339Nano), p.ContainerID, p.Verdict)
}

// Outcome is what the worker did: its publications, how many probes ran
// and when it exited (zero: still running at Until).
type Outcome struct {
	Published []Publication
	Probes    int
	ExitedAt  time.Time
}

// Run plays the script.
func Run(s Script) Outcome {
	var out Outcome
	cache := map[string]Verdict{}
	publish := func(at time.Time, id string, v Verdict) {
		if old, ok := cache[id]; ok && old == v {
			return
		}
		cache[id] = v
		out.Published = append(out.Published, Publication{at, id, v})
	}
	initial := map[Kind]Verdict{Liveness: Pass, Readiness: Fail, Startup: Unset}[s.Spec.Kind]
	period := time.Duration(s.Spec.PeriodSeconds) * time.Second

	current := ""    // the container the worker follows
	held := false    // waiting for another container
	streakOf := Pass // the verdict of the current streak (zero value: Success)
	streak := 0      // its length
	next := 0        // next answer

	for at := s.FirstRun; !at.After(s.Until); at = at.Add(period) {
		st, ok := stateAt(s.States, at)
		if !ok {
			continue
		}
		if st.PodDone {
			out.ExitedAt = at
			return out
		}
		if st.ID == "" {
			continue
		}
		if st.ID != current {
			delete(cache, current)
			current = st.ID
			survived := st.Running && !st.StartedAt.IsZero() && st.StartedAt.Before(s.KubeletStart.Add(-10*time.Second))
			if !survived {
				publish(at, current, initial)
			}
			held = false
		}
		if held {
			continue
		}
		if !st.Running {
			publish(at, current, Fail)
			if st.Exited && !st.WillRestart {
				out.ExitedAt = at
				return out
			}
			continue
		}
		if st.Deleted && s.Spec.Kind != Readiness {
			publish(at, current, Pass)
			out.ExitedAt = at
			return out
		}
		if wholeSeconds(at.Sub(st.StartedAt)) < s.Spec.InitialDelaySeconds {
			continue
		}
		if (s.Spec.Kind == Startup) == st.Started {
			continue
		}
		answer := Answer("success")
		if next < len(s.Answers) {
			answer = s.Answers[next]
		}
		next++
		out.Probes++
		var v Verdict
		switch answer {
		case "error":
			continue
		case "success", "warning":
			v = Pass
		default:
			v = Fail
		}
		if v == streakOf {
			streak++
		} else {
			streakOf, streak = v, 1
		}
		need := s.Spec.SuccessThreshold
		if v == Fail {
			need = s.Spec.FailureThreshold
		}
		if streak < need {
			continue
		}
		publish(at, current, v)
		if s.Spec.Kind == Startup || (s.Spec.Kind == Liveness && v == Fail) {
			held, streak = true, 0
		}
	}
	return out
}

// wholeSeconds truncates toward zero, as the kubelet's int32 conversion.
func wholeSeconds(d time.Duration) int {
	return int(d / time.Second)
}

func stateAt(states []State, at time.Time) (State, bool) {
	found := false
	var st State
	for _, s := range states {
		if s.At.After(at) {
			break
		}
		st, found = s, true
	}
	return st, found
}
