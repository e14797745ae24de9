package plugincheck

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// record collects counts and findings. The ListAndWatch goroutine writes to
// it while the properties run, hence the mutex.
type record struct {
	// run is the run's context. Once it has ended, a failure is its end's
	// doing (a call cancelled, a stream closed), not the plugin's: no
	// finding is recorded.
	run      context.Context
	mu       sync.Mutex
	counts   map[string]Count
	findings map[string]Finding
}

func newRecord(run context.Context) *record {
	r := &record{run: run, counts: map[string]Count{}, findings: map[string]Finding{}}
	for _, c := range catalogue {
		r.counts[c.ID] = Count{}
	}
	return r
}

// check counts one evaluation of id; applied says it had something to judge.
func (r *record) check(id string, applied bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.counts[id]
	c.Run++
	if applied {
		c.Applied++
	}
	r.counts[id] = c
}

// add counts n evaluations at once, applied of them applied.
func (r *record) add(id string, run, applied int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.counts[id]
	c.Run += run
	c.Applied += applied
	r.counts[id] = c
}

// fail records a finding of id unless one is recorded already: the first
// failure of a check is the one to read.
func (r *record) fail(id, format string, args ...any) {
	r.finding(Finding{Check: id, Message: fmt.Sprintf(format, args...)})
}

func (r *record) finding(f Finding) {
	// A failure that the end of the run's context caused comes after that
	// end, so the context has ended by the time the failure gets here.
	if r.run.Err() != nil {
		return
	}
	f.Severity = severityOf(f.Check)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.findings[f.Check]; !ok {
		r.findings[f.Check] = f
	}
}

// replace records f in place of any finding of its check: a cause seen
// after the failures it explains (a plugin's exit after its calls failed).
func (r *record) replace(f Finding) {
	if r.run.Err() != nil {
		return
	}
	f.Severity = severityOf(f.Check)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.findings[f.Check] = f
}

// result fills res's counts and findings, in catalogue order.
func (r *record) result(res *Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res.Counts = map[string]Count{}
	for id, c := range r.counts {
		res.Counts[id] = c
	}
	res.Findings = res.Findings[:0]
	for _, c := range catalogue {
		if f, ok := r.findings[c.ID]; ok {
			res.Findings = append(res.Findings, f)
		}
	}
	res.Findings = slices.Clip(res.Findings)
}
