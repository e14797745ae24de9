package speed

import (
	"fmt"
	"io"
	"strings"
)

// WriteTable writes the rows as a Markdown table: each target against the
// lean ceiling (issue #17's measure) and against the same-binary ceiling
// (what its own body costs).
func WriteTable(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| target | exec/s | lean ceiling exec/s (before, after) | ratio to lean | per CPU second | "+
		"same-binary ceiling exec/s (before, after) | ratio to same-binary | per CPU second | coverage counters, target / lean ceiling |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		counters := "unknown"
		if r.Counters > 0 && r.LeanCounters > 0 {
			counters = fmt.Sprintf("%d / %d B (×%.1f)", r.Counters, r.LeanCounters, float64(r.Counters)/float64(r.LeanCounters))
		}
		fmt.Fprintf(w, "| `%s` (%s) | %.0f | %.0f (%.0f, %.0f) | %.1f %% | %.1f %% | %.0f (%.0f, %.0f) | %.1f %% | %.1f %% | %s |\n",
			r.Target.Name, strings.TrimPrefix(r.Target.Package, "./"), r.Speed.PerSecond(),
			r.Lean.PerSecond(), r.Lean.Before.PerSecond(), r.Lean.After.PerSecond(),
			100*r.LeanRatio(), 100*r.Speed.PerCPUSecond()/r.Lean.PerCPUSecond(),
			r.SameBinary.PerSecond(), r.SameBinary.Before.PerSecond(), r.SameBinary.After.PerSecond(),
			100*r.SameBinaryRatio(), 100*r.Speed.PerCPUSecond()/r.SameBinary.PerCPUSecond(), counters)
	}
}
