package upstream

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Test is one top-level test of a release's run: its subtests' output and
// verdicts are its own.
type Test struct {
	Name    string  `json:"name"`
	Passed  bool    `json:"passed"`
	Seconds float64 `json:"seconds"`
	// Verdicts are the finding verdicts the test logged, Contracts the
	// contract verdicts of its suite runs on upstream code.
	Verdicts  []Verdict         `json:"verdicts,omitempty"`
	Contracts []ContractVerdict `json:"contracts,omitempty"`
	// Failure is the start of a failed test's output.
	Failure string `json:"failure,omitempty"`
}

// event is one line of `go test -json` (test2json's TestEvent).
type event struct {
	Action  string
	Test    string
	Output  string
	Elapsed float64
}

// failureLines bounds the output a failed test keeps: enough for the
// assertion and its messages, not a whole log.
const failureLines = 30

// Events reads test2json events, one a line (Read), hands each top-level
// test to done as it ends, and keeps the tests in the order they ended
// (Tests). A line that is not an event is an error naming it: the stream is
// the go command's, and a stray line means something else wrote to it.
type Events struct {
	tests  []Test
	output map[string][]string
	done   func(Test)
}

// NewEvents returns an empty reader; done may be nil.
func NewEvents(done func(Test)) *Events {
	return &Events{output: map[string][]string{}, done: done}
}

// Read consumes r to its end.
func (e *Events) Read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		var ev event
		if err := json.Unmarshal(line, &ev); err != nil {
			return fmt.Errorf("test events, line %d: not a test2json event (%v): %.80q", n, err, line)
		}
		e.add(ev)
	}
	return sc.Err()
}

func (e *Events) add(ev event) {
	if ev.Test == "" {
		return
	}
	top, _, _ := strings.Cut(ev.Test, "/")
	switch ev.Action {
	case "output":
		e.output[top] = append(e.output[top], strings.TrimRight(ev.Output, "\n"))
	case "pass", "fail", "skip":
		if ev.Test != top {
			return
		}
		t := Test{Name: top, Passed: ev.Action != "fail", Seconds: ev.Elapsed}
		for _, line := range e.output[top] {
			if v, ok := ParseVerdict(line); ok {
				t.Verdicts = append(t.Verdicts, v)
			}
			if v, ok := ParseContractVerdict(line); ok {
				t.Contracts = append(t.Contracts, v)
			}
		}
		if ev.Action == "fail" {
			out := e.output[top]
			if len(out) > failureLines {
				out = append(out[:failureLines:failureLines], fmt.Sprintf("... %d more lines", len(e.output[top])-failureLines))
			}
			t.Failure = strings.Join(out, "\n")
		}
		if ev.Action == "skip" {
			// A skipped conformance test checked nothing: not a pass.
			t.Passed = false
			t.Failure = "skipped: " + strings.Join(e.output[top], "\n")
		}
		delete(e.output, top)
		e.tests = append(e.tests, t)
		if e.done != nil {
			e.done(t)
		}
	}
}

// Tests are the tests that ended, in that order.
func (e *Events) Tests() []Test { return e.tests }
