package sim

import (
	"fmt"
	"strconv"
	"strings"
)

// Script is a Source that answers from a written list of draws, so that a
// case the properties suite shrank replays without rapid or its seed, and
// a regression test keeps its case as text. The words of the script are
// the draws in order: an integer answers an Intn, T or F a Chance; a line
// starting with # is a comment.
//
// It draws where the properties suite's rapid source draws, so a shrunk
// case's draws are its script: one choice (Intn(1)) and a certain outcome
// (Chance of 0 or 1) take no draw, and Split shares the script, since a
// separate stream matters only to seeded runs. Past the script every Intn
// is 0 and every Chance false, as rapid's shrunk draws are.
type Script struct {
	draws []string
	next  int
	// diverged lists the draws that did not fit: a draw of the other kind
	// than the script's next word, or out of range.
	diverged []string
}

// NewScript reads a script.
func NewScript(text string) *Script {
	var draws []string
	for line := range strings.Lines(text) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			draws = append(draws, strings.Fields(line)...)
		}
	}
	return &Script{draws: draws}
}

func (s *Script) take() (string, bool) {
	if s.next >= len(s.draws) {
		return "", false
	}
	s.next++
	return s.draws[s.next-1], true
}

func (s *Script) Intn(n int) int {
	if n == 1 {
		return 0
	}
	a, ok := s.take()
	if !ok {
		return 0
	}
	v, err := strconv.Atoi(a)
	if err != nil || v < 0 || v >= n {
		s.diverged = append(s.diverged, fmt.Sprintf("draw %d: Intn(%d) got %q", s.next, n, a))
		return 0
	}
	return v
}

func (s *Script) Split() Source { return s }

func (s *Script) Chance(rate float64) bool {
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
		s.diverged = append(s.diverged, fmt.Sprintf("draw %d: Chance got %q", s.next, a))
	}
	return a == "T"
}

// Err says whether the run drew as the script was written: nil when every
// draw fitted and the run took every draw of the script. Otherwise the
// code that draws has changed since the script was taken, and the script
// must be taken again.
func (s *Script) Err() error {
	switch {
	case len(s.diverged) > 0:
		return fmt.Errorf("the run no longer draws in the script's order: %s", strings.Join(s.diverged, "; "))
	case s.next < len(s.draws):
		return fmt.Errorf("the run took %d of the script's %d draws", s.next, len(s.draws))
	}
	return nil
}
