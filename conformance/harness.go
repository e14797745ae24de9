// Package conformance runs the same generated inputs through nodeproof's
// core and through the v1.36.3 kubelet's own code and requires identical
// results, except where docs/deviations.md lists a deliberate difference.
//
// It is a module of its own so that the root module never depends on
// k8s.io/kubernetes (a long first build and a large dependency tree).
package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"

	"pgregory.net/rapid"
)

// Deviation names a deliberate difference from docs/deviations.md and the
// predicate that recognises an input where it can show. A mismatch on such an
// input is counted as excluded under ID; on any other input it fails.
type Deviation[In, Out any] struct {
	ID      string // the row in docs/deviations.md, e.g. "K3"
	Applies func(In) bool
}

// Comparison is one function compared on generated inputs.
type Comparison[In, Out any] struct {
	Name   string
	Gen    *rapid.Generator[In]
	Ours   func(In) Out
	Theirs func(In) Out
	// Parallel runs Ours and Theirs at the same time, for comparisons that
	// spend their time waiting on sockets; each must then be safe to run
	// alongside the other.
	Parallel bool
	// Equal decides agreement; nil means reflect.DeepEqual.
	Equal      func(ours, theirs Out) bool
	Deviations []Deviation[In, Out]
	// Explain, when set, confines the deviations to the outputs they can
	// reach: given a mismatch, it returns the IDs of the deviations that
	// account for every difference (several may share one case), or an
	// error naming the first difference none of them accounts for. Each ID
	// must be listed in Deviations and apply to the input. Without
	// Explain, any mismatch on an input a deviation applies to is excluded,
	// which suits outputs as small as one number.
	Explain func(in In, ours, theirs Out) ([]string, error)
	// Part, when set, names the generator mode an input was drawn in; the
	// cases of each named mode are recorded as a Result of their own,
	// named "Name, part", so that a mode where no deviation can arise
	// shows its own count. "" is the comparison's main mode.
	Part func(In) string
}

// Result is one line of the JSON result that `nodeproof report
// --conformance` prints. Cases counts every execution of the property,
// shrinking included; Mismatches counts executions whose outputs differed
// without a listed deviation (any mismatch fails the test, and rapid then
// shrinks it, so the count includes the shrinking steps). Excluded counts
// the cases a deviation excused, ExcludedBy the same per deviation ID (a
// case two deviations explain together counts under both), with every
// listed deviation present, so that a 0 shows too.
type Result struct {
	Function   string         `json:"function"`
	Cases      int            `json:"cases"`
	Mismatches int            `json:"mismatches"`
	Excluded   int            `json:"excluded"`
	ExcludedBy map[string]int `json:"excluded_by,omitempty"`
	// Parts are the Results of the comparison's named modes, recorded
	// beside it.
	Parts map[string]*Result `json:"-"`
}

var (
	resultsMu sync.Mutex
	results   = map[string]*Result{}
)

// Compare runs c under rapid.Check on t and records its Result, and one for
// each named part. t is rapid.TB rather than *testing.T so that a test can
// hand it a recorder and see that a wrong function is reported.
func Compare[In, Out any](t rapid.TB, c Comparison[In, Out]) *Result {
	t.Helper()
	newResult := func(name string) *Result {
		r := &Result{Function: name, Parts: map[string]*Result{}}
		if len(c.Deviations) > 0 {
			r.ExcludedBy = map[string]int{}
			for _, d := range c.Deviations {
				r.ExcludedBy[d.ID] = 0
			}
		}
		return r
	}
	main := newResult(c.Name)
	equal := c.Equal
	if equal == nil {
		equal = func(a, b Out) bool { return reflect.DeepEqual(a, b) }
	}
	rapid.Check(t, func(rt *rapid.T) {
		in := c.Gen.Draw(rt, "input")
		res := main
		if c.Part != nil {
			if part := c.Part(in); part != "" {
				if main.Parts[part] == nil {
					main.Parts[part] = newResult(c.Name + ", " + part)
				}
				res = main.Parts[part]
			}
		}
		res.Cases++
		var ours, theirs Out
		if c.Parallel {
			done := make(chan struct{})
			var failure any
			go func() {
				defer close(done)
				// rapid reports a panic of the property's own goroutine
				// with the input; hand this one over to it.
				defer func() { failure = recover() }()
				theirs = c.Theirs(in)
			}()
			ours = c.Ours(in)
			<-done
			if failure != nil {
				panic(failure)
			}
		} else {
			ours, theirs = c.Ours(in), c.Theirs(in)
		}
		if equal(ours, theirs) {
			return
		}
		ids, why := c.excuse(in, ours, theirs)
		if why == nil {
			res.Excluded++
			for _, id := range ids {
				res.ExcludedBy[id]++
			}
			return
		}
		res.Mismatches++
		// rapid shrinks the input before its last report; JSON shows
		// quantities as a manifest writes them, where %#v would not.
		rt.Fatalf("%s: nodeproof and upstream differ\n  input:     %s\n  nodeproof: %s\n  upstream:  %s\n  why:       %v",
			c.Name, show(in), show(ours), show(theirs), why)
	})
	resultsMu.Lock()
	results[main.Function] = main
	for _, part := range main.Parts {
		results[part.Function] = part
	}
	resultsMu.Unlock()
	return main
}

// excuse returns the deviations that account for a mismatch, or why none
// does.
func (c Comparison[In, Out]) excuse(in In, ours, theirs Out) ([]string, error) {
	applies := map[string]bool{}
	var applying []string
	for _, d := range c.Deviations {
		if d.Applies(in) {
			applies[d.ID] = true
			applying = append(applying, d.ID)
		}
	}
	if len(applying) == 0 {
		return nil, errors.New("no listed deviation applies to the input")
	}
	if c.Explain == nil {
		// The first that applies, as the deviations are listed.
		return applying[:1], nil
	}
	ids, err := c.Explain(in, ours, theirs)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, errors.New("Explain found a mismatch but named no deviation")
	}
	for _, id := range ids {
		if !applies[id] {
			return nil, fmt.Errorf("Explain named %s, which does not apply to the input", id)
		}
	}
	return ids, nil
}

// show prints a value with its pointers followed, so that two configs that
// differ only behind a pointer do not print the same.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// WriteResults writes the recorded results, sorted by function, to the file
// named by NODEPROOF_CONFORMANCE_JSON; without it, nothing.
func WriteResults() error {
	path := os.Getenv("NODEPROOF_CONFORMANCE_JSON")
	if path == "" {
		return nil
	}
	resultsMu.Lock()
	out := make([]Result, 0, len(results))
	for _, r := range results {
		out = append(out, *r)
	}
	resultsMu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Function < out[j].Function })
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// forget drops a recorded result; the harness's own tests use it so that
// their deliberately wrong functions do not appear in the JSON result.
// The parts of a comparison go with it.
func forget(name string) {
	resultsMu.Lock()
	for n := range results {
		if n == name || strings.HasPrefix(n, name+", ") {
			delete(results, n)
		}
	}
	resultsMu.Unlock()
}
