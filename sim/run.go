package sim

import "slices"

// progressEvery is how many events pass between progress reports.
const progressEvery = 8192

// Run runs cfg from its seed until the duration is simulated or an
// invariant fails, checking every invariant after every event; a violation
// of an invariant cfg.Explained names is counted in Stats.Explained and the
// run goes on. progress,
// if not nil, is called every progressEvery events and at the end.
func Run(cfg Config, progress func(Stats)) Summary {
	s, err := New(cfg, NewSeeded(cfg.Seed))
	if err != nil {
		return Summary{Config: cfg, Replay: cfg.ReplayCommand(), Violation: &Violation{Invariant: "config", Message: err.Error()}}
	}
	return s.finish(progress)
}

// finish runs s to its end or its first violation.
func (s *Sim) finish(progress func(Stats)) Summary {
	sum := Summary{Config: s.cfg, Replay: s.cfg.ReplayCommand()}
	for {
		ev, ok := s.Step()
		if !ok {
			break
		}
		if v := s.firstUnexplained(s.Check()); v != nil {
			v.Event, v.Trace = ev, s.Trace()
			sum.Violation = v
			break
		}
		if progress != nil && ev.Seq%progressEvery == 0 {
			progress(s.Stats())
		}
	}
	sum.Stats = s.Stats()
	if progress != nil {
		progress(sum.Stats)
	}
	return sum
}

// firstUnexplained counts the violations Config.Explained names and
// returns the first of the others.
func (s *Sim) firstUnexplained(results []CheckResult) *Violation {
	var first *Violation
	for _, r := range results {
		switch {
		case r.Err == nil:
		case slices.Contains(s.cfg.Explained, r.ID):
			s.stats.Explained[r.ID]++
		case first == nil:
			first = &Violation{Invariant: r.ID, Message: r.Err.Error()}
		}
	}
	return first
}
