package campaign

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/nodeproof/nodeproof/phrase"
)

// Info places a shard in its campaign: the "campaign" key of a shard file.
type Info struct {
	Shard  int      `json:"shard"`
	Shards int      `json:"shards"`
	Plan   Resolved `json:"plan"`
}

// ShardFileName is the file shard index writes into the results directory.
func ShardFileName(index int) string { return fmt.Sprintf("shard-%d.json", index) }

// Failure is one failed unit: which shard found it, what failed and the
// line that replays it. A Recorder returns it without Shard and Unit,
// which the campaign fills in.
type Failure struct {
	Shard     int    `json:"shard"`
	Unit      string `json:"unit"`
	Invariant string `json:"invariant"`
	Replay    string `json:"replay"`
}

// Recorder runs a shard's simulation seeds and suite runs and keeps them
// as the report records them: the "suites" and "sim" keys of the shard
// file are report.json's own sections, whose schema the report owns. It is
// the seam between the campaign and the report; nodeproof's is the
// report's, a test's may keep nothing.
type Recorder interface {
	// Sim runs one seed of the plan's simulation; nil when it passed.
	Sim(plan ResolvedSim, seed uint64) *Failure
	// Suite runs the named suite from seed at the plan's budget; nil when
	// it passed.
	Suite(plan ResolvedSuites, name string, seed uint64) *Failure
	// File is the shard file to write once the units ran: the outcome's
	// header and fuzz targets with the suites and seeds recorded.
	File(outcome Outcome) any
}

// RunOptions say which shard Run runs and with what.
type RunOptions struct {
	Plan  Resolved
	Index int
	// Out is the results directory: failing fuzz inputs and the fuzzer's
	// cache go under it.
	Out      string
	Version  string
	Recorder Recorder
	Fuzz     FuzzRunner
	// Log receives a line for the shard, then one per unit as it ends.
	Log io.Writer
}

// Outcome is what a shard ran besides what its Recorder kept: the header of
// its file and its fuzz targets.
type Outcome struct {
	Version string
	// Started is RFC 3339, Seconds the wall time of the whole shard.
	Started string
	Seconds float64
	// Passed: no unit failed.
	Passed bool
	Info   Info
	Fuzz   []FuzzResult
}

// Run runs shard opts.Index's units in plan order.
func Run(opts RunOptions) Outcome {
	started := time.Now()
	out := Outcome{Version: opts.Version, Started: started.Format(time.RFC3339), Passed: true,
		Info: Info{Shard: opts.Index, Shards: opts.Plan.Shards, Plan: opts.Plan}, Fuzz: []FuzzResult{}}
	units := opts.Plan.ShardUnits(opts.Index)
	fmt.Fprintf(opts.Log, "shard %d of %d: %s\n", opts.Index, opts.Plan.Shards, phrase.Count(len(units), "unit"))
	for i, u := range units {
		var failed *Failure
		switch u.Kind {
		case "sim":
			failed = opts.Recorder.Sim(*opts.Plan.Sim, u.Seed)
		case "suite":
			failed = opts.Recorder.Suite(*opts.Plan.Suites, u.Suite, u.Seed)
		case "fuzz":
			fr := runFuzz(opts, u.Target)
			out.Fuzz = append(out.Fuzz, fr)
			if f := fr.Failure; f != nil {
				failed = &Failure{Invariant: "fuzz", Replay: f.Replay}
			}
		}
		verdict := "passed"
		switch {
		case failed == nil:
		case u.Kind == "fuzz":
			verdict = "FAILED replay: " + orDash(failed.Replay)
		default:
			verdict = "FAILED " + failed.Invariant + "; replay: " + orDash(failed.Replay)
		}
		out.Passed = out.Passed && failed == nil
		fmt.Fprintf(opts.Log, "[%d/%d] %s: %s\n", i+1, len(units), u, verdict)
	}
	out.Seconds = phrase.RoundMilli(time.Since(started).Seconds())
	return out
}

func runFuzz(opts RunOptions, t FuzzTarget) FuzzResult {
	inputsRel := filepath.Join("fuzz-inputs", fmt.Sprintf("shard-%d", opts.Index), t.Name)
	fr := opts.Fuzz(FuzzJob{
		Target:    t,
		Duration:  time.Duration(opts.Plan.Fuzz.Seconds * float64(time.Second)),
		Binaries:  opts.Plan.Fuzz.Binaries,
		CacheDir:  filepath.Join(opts.Out, "fuzz-cache"),
		InputsDir: filepath.Join(opts.Out, inputsRel),
		InputsRel: inputsRel,
	})
	fr.Shard = opts.Index
	if f := fr.Failure; f != nil && f.Input != "" {
		// Relative to the results directory as the shard saw it; the merge
		// rewrites it for the directory it reads.
		f.Replay = FuzzReplay(t, filepath.Join(opts.Out, filepath.FromSlash(f.Input)))
	}
	return fr
}

// orDash writes an empty replay line as "-".
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
