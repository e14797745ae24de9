package linearizability

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/anishathalye/porcupine"
)

// Result is one checked history, as the report's linearizability section
// shows it. Keys are lower case, as in the rest of report.json.
type Result struct {
	History      string  `json:"history"`
	Clients      int     `json:"clients"`
	Operations   int     `json:"operations"`
	Partitions   int     `json:"partitions"`
	Unknown      int     `json:"unknown_outcomes"`
	Faults       int     `json:"faults"`
	CheckSeconds float64 `json:"check_seconds"`
	// Result is porcupine's verdict: "Ok", "Illegal" or "Unknown" (the
	// check ran out of time, which counts as a failure).
	Result string `json:"result"`
	// Visualization is the path of porcupine's HTML rendering, if written.
	Visualization string `json:"visualization,omitempty"`
	// Replay is the command that records the history again, set when the
	// check did not answer Ok.
	Replay string `json:"replay,omitempty"`
}

// Passed reports whether porcupine found the history linearizable.
func (r Result) Passed() bool { return r.Result == "Ok" }

// Checked is a recording with porcupine's verdict on it.
type Checked struct {
	Result  Result
	Verdict porcupine.CheckResult
	rec     Recording
	timeout time.Duration
}

// CheckRecording checks a recording against models/deviceagent within
// timeout.
func CheckRecording(rec Recording, timeout time.Duration) Checked {
	start := time.Now()
	verdict := Check(rec.Init, rec.History, timeout)
	took := time.Since(start)
	return Checked{
		Result: Result{
			History:      fmt.Sprintf("seed %d", rec.Workload.Seed),
			Clients:      rec.Clients,
			Operations:   len(rec.History),
			Partitions:   len(partition(Split(rec.History))),
			Unknown:      rec.Unknown,
			Faults:       len(rec.Faults),
			CheckSeconds: took.Seconds(),
			Result:       verdictName(verdict),
		},
		Verdict: verdict,
		rec:     rec,
		timeout: timeout,
	}
}

func verdictName(v porcupine.CheckResult) string {
	switch v {
	case porcupine.Ok:
		return "Ok"
	case porcupine.Illegal:
		return "Illegal"
	default:
		return "Unknown"
	}
}

// WriteVisualization checks the history again, keeping what porcupine's
// HTML rendering needs, and writes the rendering, with the injected faults
// drawn as annotations, to path and records the path. It creates path's
// directory: the first visualization of a fresh report directory is often
// written before anything else is.
func (c *Checked) WriteVisualization(path string) error {
	_, info := CheckVerbose(c.rec.Init, c.rec.History, c.timeout)
	info.AddAnnotations(c.rec.Faults)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := porcupine.Visualize(Model(c.rec.Init), info, f); err != nil {
		f.Close()
		return fmt.Errorf("rendering %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	c.Result.Visualization = path
	return nil
}
