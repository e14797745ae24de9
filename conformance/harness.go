// Package conformance runs the same generated inputs through nodeproof's
// core and through the v1.36.3 kubelet's own code and requires identical
// results, except where docs/deviations.md lists a deliberate difference.
//
// It is a module of its own so that the root module never depends on
// k8s.io/kubernetes (a long first build and a large dependency tree).
package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"sync"

	"pgregory.net/rapid"
)

// Deviation names a deliberate difference from docs/deviations.md and the
// predicate that recognises an input where it shows. A mismatch on such an
// input is counted as excluded under ID; on any other input it fails.
type Deviation[In, Out any] struct {
	ID      string // the row in docs/deviations.md, e.g. "K3"
	Applies func(In) bool
	// Confined, when set, must hold as well: the outputs agree everywhere
	// the deviation cannot reach, so that an unrelated difference on the
	// same input still fails.
	Confined func(ours, theirs Out) bool
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
}

// Result is one line of the JSON result that `nodeproof report
// --conformance` prints. Cases counts every execution of the property,
// shrinking included; Mismatches counts executions whose outputs differed
// without a listed deviation (any mismatch fails the test, and rapid then
// shrinks it, so the count includes the shrinking steps).
type Result struct {
	Function   string `json:"function"`
	Cases      int    `json:"cases"`
	Mismatches int    `json:"mismatches"`
	Excluded   int    `json:"excluded"`
	// Deviations lists the excluded cases by deviation ID ("K3:12 G5:1"),
	// flat so that the report's generic table can print it.
	Deviations string         `json:"deviations,omitempty"`
	ByDev      map[string]int `json:"-"`
}

var (
	resultsMu sync.Mutex
	results   = map[string]*Result{}
)

// Compare runs c under rapid.Check on t and records its Result. t is
// rapid.TB rather than *testing.T so that a test can hand it a recorder and
// see that a wrong function is reported.
func Compare[In, Out any](t rapid.TB, c Comparison[In, Out]) *Result {
	t.Helper()
	res := &Result{Function: c.Name, ByDev: map[string]int{}}
	equal := c.Equal
	if equal == nil {
		equal = func(a, b Out) bool { return reflect.DeepEqual(a, b) }
	}
	rapid.Check(t, func(rt *rapid.T) {
		in := c.Gen.Draw(rt, "input")
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
		for _, d := range c.Deviations {
			if d.Applies(in) && (d.Confined == nil || d.Confined(ours, theirs)) {
				res.Excluded++
				res.ByDev[d.ID]++
				return
			}
		}
		res.Mismatches++
		// rapid shrinks the input before its last report; JSON shows
		// quantities as a manifest writes them, where %#v would not.
		rt.Fatalf("%s: nodeproof and upstream differ\n  input:     %s\n  nodeproof: %s\n  upstream:  %s",
			c.Name, show(in), show(ours), show(theirs))
	})
	ids := make([]string, 0, len(res.ByDev))
	for id := range res.ByDev {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for i, id := range ids {
		if i > 0 {
			res.Deviations += " "
		}
		res.Deviations += fmt.Sprintf("%s:%d", id, res.ByDev[id])
	}
	resultsMu.Lock()
	results[c.Name] = res
	resultsMu.Unlock()
	return res
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
func forget(name string) {
	resultsMu.Lock()
	delete(results, name)
	resultsMu.Unlock()
}
