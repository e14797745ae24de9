package plugincheck

import (
	"fmt"
	"io"
	"time"

	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// Report is one run as `nodeproof plugin-check` prints it and writes it
// into report.json.
type Report struct {
	// Version is nodeproof's.
	Version string  `json:"version"`
	Started string  `json:"started"` // RFC 3339
	Seconds float64 `json:"seconds"`
	// Target is how the plugin was found: "--dir DIR" or "--exec 'CMD'".
	Target string `json:"target"`
	// Passed: no contract or kubelet check failed (advice does not count).
	Passed bool `json:"passed"`
	// Interrupted: the run was stopped (SIGINT, SIGTERM) before it
	// finished; Findings are those made until then.
	Interrupted bool `json:"interrupted"`
	// Verdict is Result.Verdict: "passed, with 1 piece of advice".
	Verdict string `json:"verdict"`
	Seed    uint64 `json:"seed"`
	// Replay is the command that repeats the whole run.
	Replay string `json:"replay"`
	Plugin Plugin `json:"plugin"`
	// Evaluations counts the checks' runs over the whole run, and
	// PerSecond is Evaluations per second of wall time.
	Evaluations int        `json:"evaluations"`
	PerSecond   float64    `json:"per_second"`
	Checks      []CheckRow `json:"checks"`
	// Findings are in the order of Checks; never null.
	Findings []Finding `json:"findings"`
}

// CheckRow is one check of the catalogue and what it did in a run.
type CheckRow struct {
	ID       string   `json:"id"`
	Rule     string   `json:"rule"`
	Source   string   `json:"source"`
	Severity Severity `json:"severity"`
	Run      int      `json:"run"`
	Applied  int      `json:"applied"`
	// Result is "passed", "failed" or "not run".
	Result string `json:"result"`
}

// NewReport is the report of res, a run started at started by nodeproof
// version against target.
func NewReport(res *Result, started time.Time, version, target string) Report {
	r := Report{
		Version: version, Started: started.Format(time.RFC3339), Seconds: phrase.RoundMilli(res.Seconds), Target: target,
		Passed: res.Passed(), Interrupted: res.Interrupted, Verdict: res.Verdict(), Seed: res.Seed, Replay: res.Replay,
		Plugin: res.Plugin, Findings: append([]Finding{}, res.Findings...),
	}
	failed := map[string]bool{}
	for _, f := range res.Findings {
		failed[f.Check] = true
	}
	for _, c := range catalogue {
		n := res.Counts[c.ID]
		row := CheckRow{ID: c.ID, Rule: c.Statement, Source: cite.Join(c.Sources), Severity: c.Severity, Run: n.Run, Applied: n.Applied, Result: "passed"}
		switch {
		case failed[c.ID]:
			row.Result = "failed"
		case n.Run == 0:
			row.Result = "not run"
		}
		r.Evaluations += n.Run
		r.Checks = append(r.Checks, row)
	}
	if res.Seconds > 0 {
		r.PerSecond = phrase.RoundMilli(float64(r.Evaluations) / res.Seconds)
	}
	return r
}

// WriteText writes the report for a terminal: a line about the plugin,
// one line per check, every finding in full, then the verdict.
func (r Report) WriteText(w io.Writer) {
	p := r.Plugin
	fmt.Fprintf(w, "plugin %s on %s, version %s, pre_start_required %t, get_preferred_allocation_available %t, %d devices (%d healthy)\n",
		orDash(p.ResourceName), orDash(p.Endpoint), orDash(p.Version), p.Options.PreStartRequired,
		p.Options.GetPreferredAllocationAvailable, p.Devices, p.Healthy)
	idWidth := len("check")
	for _, c := range r.Checks {
		idWidth = max(idWidth, len(c.ID))
	}
	fmt.Fprintf(w, "%-*s  %-8s  %7s  %7s  %s\n", idWidth, "check", "severity", "run", "applied", "result")
	for _, c := range r.Checks {
		result := c.Result
		if result == "failed" {
			result = "FAILED"
		}
		fmt.Fprintf(w, "%-*s  %-8s  %7d  %7d  %s\n", idWidth, c.ID, c.Severity, c.Run, c.Applied, result)
	}
	for _, f := range r.Findings {
		fmt.Fprintf(w, "\n%s (%s): %s\n", f.Check, f.Severity, f.Message)
		if len(f.Steps) > 0 {
			fmt.Fprintln(w, "  kubelet calls:")
			for _, step := range f.Steps {
				fmt.Fprintf(w, "    %s\n", step)
			}
		}
		if f.Replay != "" {
			fmt.Fprintf(w, "  replay: %s\n", f.Replay)
		}
	}
	fmt.Fprintf(w, "\n%s; %d check evaluations in %.1fs (%s/s); seed %d (rerun: %s)\n", r.Verdict,
		r.Evaluations, r.Seconds, phrase.Rate(float64(r.Evaluations), r.Seconds), r.Seed, r.Replay)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
