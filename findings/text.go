package findings

import (
	"fmt"
	"io"

	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/verify"
)

// WriteList writes the known findings, one line each: ID, subsystem,
// property and title (nodeproof findings --list).
func WriteList(w io.Writer, all []verify.Finding) {
	if len(all) == 0 {
		fmt.Fprintln(w, "no known findings")
	}
	for _, f := range all {
		fmt.Fprintf(w, "%-8s %-14s %-28s %s\n", f.ID, f.Subsystem, f.Property, f.Title)
	}
}

// WriteSearch writes one search: its verdict line, then the shrunk steps
// and the replay line when it found the finding or something else.
func WriteSearch(w io.Writer, f verify.Finding, s Search) {
	switch {
	case s.Found:
		fmt.Fprintf(w, "%s  %s  seed %d: found after %.2f s (%d cases), shrunk to %d steps (%.1f s in all)\n",
			f.ID, f.Property, s.Seed, s.FoundAfter, s.Cases, s.Steps, s.Seconds)
	case s.Other != "":
		fmt.Fprintf(w, "%s  %s  seed %d: FAILED: %s failed first, which no known finding explains\n", f.ID, f.Property, s.Seed, s.Other)
	default:
		fmt.Fprintf(w, "%s  %s  seed %d: NOT FOUND in %d cases (%.1f s)\n", f.ID, f.Property, s.Seed, s.Cases, s.Seconds)
		return
	}
	for _, line := range s.Shrunk {
		fmt.Fprintf(w, "    %s\n", line)
	}
	if s.Replay != "" {
		fmt.Fprintf(w, "    replay: %s\n", s.Replay)
	}
}

// WriteTotal writes what the searches of file add up to: in a sweep each
// finding's summary, then how many findings were reproduced.
func WriteTotal(w io.Writer, file File, sweep bool) {
	if sweep {
		for _, r := range file.Findings {
			fmt.Fprintf(w, "%s: %s\n", r.ID, r.Summary())
		}
	}
	if n := len(file.Findings); n > 0 {
		fmt.Fprintf(w, "total: %d of %d %s reproduced\n", file.Reproduced(), n, phrase.Noun(n, "finding", "findings"))
	}
}

// Reproduced counts the findings the searches reproduced.
func (f File) Reproduced() int {
	n := 0
	for _, r := range f.Findings {
		if r.Reproduced {
			n++
		}
	}
	return n
}
