package timeline

import (
	"fmt"
	"strings"
	"time"

	"github.com/nodeproof/nodeproof/core/prober"
)

// State is what a scripted probe target does when probed.
type State string

// The scripted states. Each answers at once but timeout, which answers
// after the probe's timeoutSeconds.
const (
	// Healthy: the handler succeeds (HTTP 200, a connection, SERVING, exit 0).
	Healthy State = "healthy"
	// Failing: the handler fails at once (HTTP 500, a refused connection,
	// NOT_SERVING, exit 1).
	Failing State = "failing"
	// Timeout: the handler fails after timeoutSeconds (no answer in time).
	Timeout State = "timeout"
	// Warning: the handler answers with a warning (an HTTP 3xx not
	// followed), which the kubelet counts as success.
	Warning State = "warning"
	// Error: the handler cannot run (a port that does not resolve); the
	// kubelet retries it three times and its worker discards the result.
	Error State = "error"
)

var states = []State{Healthy, Failing, Timeout, Warning, Error}

// MaxStepDuration bounds one step of a pattern.
const MaxStepDuration = 24 * time.Hour

// MaxRules and MaxSteps bound an outcome script.
const (
	MaxRules = 64
	MaxSteps = 64
)

// Step is one step of a pattern: State for Duration (0: for the rest of
// the container's life, on the last step only).
type Step struct {
	State    State
	Duration time.Duration
}

// Pattern is what one probe's target does over a container's life, from
// the container's start: the steps in order; after the last one, the
// pattern starts again when Repeat, else the last step goes on.
type Pattern struct {
	Steps  []Step
	Repeat bool
}

// HealthyPattern is the pattern of a probe no rule names.
var HealthyPattern = Pattern{Steps: []Step{{State: Healthy}}}

// At returns the state at age (the time since the container started).
func (p Pattern) At(age time.Duration) State {
	i, _ := p.stepAt(age)
	return p.Steps[i].State
}

// stepAt returns the step at age and when (as an age) that step began.
func (p Pattern) stepAt(age time.Duration) (int, time.Duration) {
	if age < 0 {
		age = 0
	}
	var start time.Duration
	if p.Repeat {
		var cycle time.Duration
		for _, s := range p.Steps {
			cycle += s.Duration
		}
		start = age / cycle * cycle
		age -= start
	}
	for i, s := range p.Steps {
		if s.Duration == 0 || age < s.Duration {
			return i, start
		}
		age -= s.Duration
		start += s.Duration
	}
	last := len(p.Steps) - 1 // the last step of a pattern without Repeat lasts
	return last, start - p.Steps[last].Duration
}

// UnhealthySince returns, for a target unhealthy (failing or timing out)
// at age, the age at which its current unhealthy run began; false when it
// is not unhealthy at age.
func (p Pattern) UnhealthySince(age time.Duration) (time.Duration, bool) {
	if !unhealthy(p.At(age)) {
		return 0, false
	}
	// Walk back step by step while the steps before are unhealthy too.
	i, start := p.stepAt(age)
	for start > 0 {
		prevAge := start - 1
		j, prevStart := p.stepAt(prevAge)
		if !unhealthy(p.Steps[j].State) || j == i {
			break
		}
		i, start = j, prevStart
	}
	return start, true
}

func unhealthy(s State) bool { return s == Failing || s == Timeout }

func (p Pattern) String() string {
	parts := make([]string, 0, len(p.Steps)+1)
	for _, s := range p.Steps {
		if s.Duration == 0 {
			parts = append(parts, string(s.State))
		} else {
			parts = append(parts, fmt.Sprintf("%s %v", s.State, s.Duration))
		}
	}
	if p.Repeat {
		parts = append(parts, "repeat")
	}
	return strings.Join(parts, ", ")
}

// Rule gives the pattern of the probes it selects: every probe (no
// Container, no Type), every probe of a type, or one container's probe of
// a type. Column is where the rule begins in the script, from 1.
type Rule struct {
	Container string
	Type      *prober.ProbeType
	Pattern   Pattern
	Column    int
}

// Selector is the rule's selector as written: "", "liveness" or
// "web.liveness".
func (r Rule) Selector() string {
	switch {
	case r.Type == nil:
		return ""
	case r.Container == "":
		return typeName(*r.Type)
	default:
		return r.Container + "." + typeName(*r.Type)
	}
}

func typeName(t prober.ProbeType) string { return strings.ToLower(t.String()) }

// Outcomes is a parsed outcome script: which pattern each probe follows.
type Outcomes struct {
	Rules []Rule
}

// SyntaxError is a script that does not parse: Column (from 1) is where
// the fault is, Rule the rule it breaks.
type SyntaxError struct {
	Column int
	Rule   string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("column %d: %s", e.Column, e.Rule) }

// ParseOutcomes reads an outcome script:
//
//	script   = rule { ";" rule }
//	rule     = [ selector "=" ] pattern
//	selector = type | container "." type        type: liveness, readiness, startup
//	pattern  = step { "," step } [ "," "repeat" ]
//	step     = state [ duration ]                state: healthy, failing, timeout, warning, error
//
// A duration is Go's (30s, 1m30s), more than 0 and at most 24h. Every step
// but the last needs one; with repeat, every step does. Ages count from
// each container's start, so a restarted container plays its pattern from
// the beginning. A selector appears once; the most specific rule wins
// (container.type, then type, then the rule without a selector); a probe
// no rule selects is healthy. Blank space around the words is ignored.
func ParseOutcomes(script string) (Outcomes, error) {
	var out Outcomes
	seen := map[string]int{}
	col := 1
	for _, text := range strings.Split(script, ";") {
		if len(out.Rules) == MaxRules {
			return Outcomes{}, &SyntaxError{col, fmt.Sprintf("more than %d rules", MaxRules)}
		}
		rule, err := parseRule(text, col)
		if err != nil {
			return Outcomes{}, err
		}
		sel := rule.Selector()
		if first, ok := seen[sel]; ok {
			what := "the rule without a selector"
			if sel != "" {
				what = fmt.Sprintf("selector %q", sel)
			}
			return Outcomes{}, &SyntaxError{rule.Column, fmt.Sprintf("%s is given twice (first at column %d)", what, first)}
		}
		seen[sel] = rule.Column
		out.Rules = append(out.Rules, rule)
		col += len(text) + 1
	}
	return out, nil
}

func parseRule(text string, col int) (Rule, error) {
	rule := Rule{Column: col + leadingSpace(text)}
	body, bodyCol := text, col
	if sel, rest, ok := strings.Cut(text, "="); ok {
		selCol := col + leadingSpace(sel)
		name := strings.TrimSpace(sel)
		container, typ, qualified := strings.Cut(name, ".")
		if !qualified {
			container, typ = "", name
		}
		t, ok := parseType(typ)
		if !ok {
			return Rule{}, &SyntaxError{selCol, fmt.Sprintf("selector %q: want liveness, readiness, startup or CONTAINER.TYPE with one of them", name)}
		}
		if qualified && !isContainerName(container) {
			return Rule{}, &SyntaxError{selCol, fmt.Sprintf("selector %q: container %q is not a container name (lower-case letters, digits and '-')", name, container)}
		}
		rule.Container, rule.Type = container, &t
		body, bodyCol = rest, col+len(sel)+1
	}
	p, err := parsePattern(body, bodyCol)
	if err != nil {
		return Rule{}, err
	}
	rule.Pattern = p
	return rule, nil
}

func parsePattern(text string, col int) (Pattern, error) {
	var p Pattern
	words := strings.Split(text, ",")
	offset := 0
	for i, w := range words {
		wcol := col + offset + leadingSpace(w)
		offset += len(w) + 1
		word := strings.TrimSpace(w)
		switch {
		case word == "":
			return Pattern{}, &SyntaxError{wcol, "empty step: want a state (healthy, failing, timeout, warning, error) and a duration"}
		case word == "repeat":
			if i != len(words)-1 {
				return Pattern{}, &SyntaxError{wcol, "repeat must be the last word of a pattern"}
			}
			if len(p.Steps) == 0 {
				return Pattern{}, &SyntaxError{wcol, "repeat needs a step before it"}
			}
			for _, s := range p.Steps {
				if s.Duration == 0 {
					return Pattern{}, &SyntaxError{wcol, fmt.Sprintf("a repeated pattern needs a duration on every step (%s has none)", s.State)}
				}
			}
			p.Repeat = true
			continue
		}
		if len(p.Steps) == MaxSteps {
			return Pattern{}, &SyntaxError{wcol, fmt.Sprintf("more than %d steps", MaxSteps)}
		}
		if n := len(p.Steps); n > 0 && p.Steps[n-1].Duration == 0 {
			return Pattern{}, &SyntaxError{wcol, fmt.Sprintf("the step before %q has no duration: only the last step may last for the rest of the container's life", word)}
		}
		name, dur, hasDur := strings.Cut(word, " ")
		s := Step{State: State(name)}
		if !isState(s.State) {
			return Pattern{}, &SyntaxError{wcol, fmt.Sprintf("%q is not a state: want healthy, failing, timeout, warning or error", name)}
		}
		if hasDur {
			dur = strings.TrimSpace(dur)
			dcol := wcol + strings.Index(word, dur)
			d, err := time.ParseDuration(dur)
			if err != nil {
				return Pattern{}, &SyntaxError{dcol, fmt.Sprintf("%q is not a duration such as 30s or 1m30s", dur)}
			}
			if d <= 0 || d > MaxStepDuration {
				return Pattern{}, &SyntaxError{dcol, fmt.Sprintf("duration %v must be more than 0 and at most %v", d, MaxStepDuration)}
			}
			s.Duration = d
		}
		p.Steps = append(p.Steps, s)
	}
	return p, nil
}

func leadingSpace(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }

func parseType(s string) (prober.ProbeType, bool) {
	for _, t := range []prober.ProbeType{prober.Liveness, prober.Readiness, prober.Startup} {
		if s == typeName(t) {
			return t, true
		}
	}
	return 0, false
}

func isState(s State) bool {
	for _, v := range states {
		if s == v {
			return true
		}
	}
	return false
}

func isContainerName(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// PatternFor returns the pattern of one probe: the container.type rule,
// else the type's rule, else the rule without a selector, else healthy.
func (o Outcomes) PatternFor(container string, t prober.ProbeType) Pattern {
	best, rank := HealthyPattern, 0
	for _, r := range o.Rules {
		switch {
		case r.Type != nil && *r.Type == t && r.Container == container:
			return r.Pattern
		case r.Type != nil && *r.Type == t && r.Container == "" && rank < 2:
			best, rank = r.Pattern, 2
		case r.Type == nil && rank < 1:
			best, rank = r.Pattern, 1
		}
	}
	return best
}

// Check reports a rule whose selector selects no probe of any of the
// pods: a misspelt container, or a probe the pods do not have.
func (o Outcomes) Check(pods ...prober.Pod) error {
	for _, r := range o.Rules {
		if r.Type == nil {
			continue
		}
		found := false
		for _, p := range pods {
			for _, c := range append(append([]prober.Container(nil), p.Containers...), p.InitContainers...) {
				if (r.Container == "" || r.Container == c.Name) && c.ProbeOf(*r.Type) != nil {
					found = true
				}
			}
		}
		if !found {
			return &SyntaxError{r.Column, fmt.Sprintf("selector %q selects no probe of the pods in the file", r.Selector())}
		}
	}
	return nil
}
