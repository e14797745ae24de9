package campaign

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nodeproof/nodeproof/phrase"
)

// Section is the campaign a merged report comes from: report.json's
// "campaign" key, present only in a merged report.
type Section struct {
	Shards int      `json:"shards"`
	Plan   Resolved `json:"plan"`
	Units  int      `json:"units"`
	// ShardResults is one row per shard file, in index order.
	ShardResults []ShardRow `json:"shard_results"`
	// Failures lists every failed unit, in plan order, with its shard.
	Failures []Failure    `json:"failures"`
	Fuzz     []FuzzResult `json:"fuzz"`
}

// ShardRow is one shard file of a merged campaign.
type ShardRow struct {
	Shard   int     `json:"shard"`
	File    string  `json:"file"`
	Units   int     `json:"units"`
	Seconds float64 `json:"seconds"`
	Passed  bool    `json:"passed"`
}

// Record is a shard file as the campaign reads it. The report decodes the
// file (its suites and sim keys are the report's sections) and lists in
// Held the simulation seeds and suite runs they hold; Fuzz is the file's
// own fuzz key.
type Record struct {
	Path    string
	Version string
	Started string
	Seconds float64
	Passed  bool
	Info    Info
	Held    []Held
	Fuzz    []FuzzResult
}

// Held is a simulation seed or suite run a shard file holds: the unit, the
// field it is in ("sim.runs", "suites") and its failure, nil when it
// passed.
type Held struct {
	Unit    Unit
	Field   string
	Failure *Failure
}

// Merged is a whole campaign read back from its shard files.
type Merged struct {
	Section *Section
	// Records are the shard files in index order, each Fuzz's replay lines
	// rewritten for the directory merged.
	Records []Record
	Version string
	// Started is the earliest shard's start (RFC 3339) and Seconds the time
	// from it to the end of the last shard.
	Started string
	Seconds float64
}

// shardFileRE matches the files a campaign's shards write.
var shardFileRE = regexp.MustCompile(`^shard-(\d+)\.json$`)

// Merge reads every shard-N.json in dir through read, checks that together
// they are one whole campaign (one plan, one build, each shard once, each
// unit in its shard) and returns the campaign section of them all. Errors
// name the file and the field.
func Merge(dir string, read func(path string) (Record, error)) (Merged, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return Merged{}, err
	}
	var shards []Record
	for _, e := range entries {
		m := shardFileRE.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		rec, err := read(path)
		if err != nil {
			return Merged{}, err
		}
		rec.Path = path
		if err := rec.check(); err != nil {
			return Merged{}, err
		}
		if n, err := strconv.Atoi(m[1]); err != nil || n != rec.Info.Shard {
			return Merged{}, fmt.Errorf("%s: campaign.shard is %d, but the file's name says shard %s", path, rec.Info.Shard, m[1])
		}
		shards = append(shards, rec)
	}
	if len(shards) == 0 {
		return Merged{}, fmt.Errorf("%s holds no shard-N.json files (nodeproof campaign --out writes them)", dir)
	}
	slices.SortFunc(shards, func(a, b Record) int { return a.Info.Shard - b.Info.Shard })
	first := shards[0]
	for i, s := range shards {
		c := s.Info
		switch {
		case c.Shards != first.Info.Shards:
			return Merged{}, fmt.Errorf("%s: campaign.shards is %d, but %s says %d", s.Path, c.Shards, first.Path, first.Info.Shards)
		case !c.Plan.Equal(first.Info.Plan):
			return Merged{}, fmt.Errorf("%s: campaign.plan differs from %s's: the shards belong to different campaigns", s.Path, first.Path)
		case s.Version != first.Version:
			return Merged{}, fmt.Errorf("%s: version %s differs from %s's %s: the shards ran different builds", s.Path, s.Version, first.Path, first.Version)
		case i > 0 && c.Shard == shards[i-1].Info.Shard:
			return Merged{}, fmt.Errorf("%s: campaign.shard %d is also in %s", s.Path, c.Shard, shards[i-1].Path)
		}
	}
	total := first.Info.Shards
	for i := range total {
		if i >= len(shards) || shards[i].Info.Shard != i {
			return Merged{}, fmt.Errorf("campaign.shards is %d, but no file holds campaign.shard %d (want %s)", total, i, filepath.Join(dir, ShardFileName(i)))
		}
	}
	plan := first.Info.Plan
	for _, s := range shards {
		if err := s.checkShareOf(plan); err != nil {
			return Merged{}, err
		}
	}
	return merge(dir, plan, shards), nil
}

// check checks a shard file's own fields.
func (r Record) check() error {
	c := r.Info
	switch {
	case c.Shards < 1 || c.Shards > MaxShards:
		return fmt.Errorf("%s: campaign.shards must be between 1 and %d, got %d", r.Path, MaxShards, c.Shards)
	case c.Shard < 0 || c.Shard >= c.Shards:
		return fmt.Errorf("%s: campaign.shard must be between 0 and %d (campaign.shards - 1), got %d", r.Path, c.Shards-1, c.Shard)
	case c.Plan.Shards != c.Shards:
		return fmt.Errorf("%s: campaign.plan.shards is %d, but campaign.shards is %d", r.Path, c.Plan.Shards, c.Shards)
	case c.Plan.UnitCount() > MaxUnits:
		return fmt.Errorf("%s: campaign.plan holds more than %d units", r.Path, MaxUnits)
	case r.Passed != (len(r.Failures()) == 0):
		return fmt.Errorf("%s: passed is %v, but the file holds %d failures", r.Path, r.Passed, len(r.Failures()))
	}
	return nil
}

// Ran lists every unit the shard file holds, in the order of the file:
// Held's, then the fuzz targets'.
func (r Record) Ran() []Held {
	out := slices.Clone(r.Held)
	for _, f := range r.Fuzz {
		var failure *Failure
		if f.Failure != nil {
			failure = &Failure{Invariant: "fuzz", Replay: f.Failure.Replay}
		}
		out = append(out, Held{Unit: Unit{Kind: "fuzz", Target: FuzzTarget{Package: f.Package, Name: f.Target}}, Field: "fuzz", Failure: failure})
	}
	return out
}

// Failures are the shard's failed units, in the order of its file, each
// with the shard and the unit.
func (r Record) Failures() []Failure {
	var out []Failure
	for _, h := range r.Ran() {
		if h.Failure != nil {
			f := *h.Failure
			f.Shard, f.Unit = r.Info.Shard, h.Unit.String()
			out = append(out, f)
		}
	}
	return out
}

// checkShareOf checks that a shard ran exactly its share of the plan's units.
func (r Record) checkShareOf(plan Resolved) error {
	share := plan.ShardUnits(r.Info.Shard)
	want := map[string]bool{}
	for _, u := range share {
		want[u.String()] = true
	}
	seen := map[string]bool{}
	for _, h := range r.Ran() {
		u := h.Unit.String()
		switch {
		case seen[u]:
			return fmt.Errorf("%s: %s holds %s twice", r.Path, h.Field, u)
		case !want[u]:
			return fmt.Errorf("%s: %s holds %s, which is not in shard %d's share of campaign.plan", r.Path, h.Field, u, r.Info.Shard)
		}
		seen[u] = true
	}
	for _, u := range share {
		if !seen[u.String()] {
			return fmt.Errorf("%s: %s of shard %d's share is not in the file", r.Path, u, r.Info.Shard)
		}
	}
	return nil
}

// merge combines checked shards into the campaign section, with every
// failure and the shard that found it in plan order, and the time span of
// them all.
func merge(dir string, plan Resolved, shards []Record) Merged {
	units := plan.Units()
	order := map[string]int{}
	for i, u := range units {
		order[u.String()] = i
	}
	c := &Section{Shards: plan.Shards, Plan: plan, Units: len(units), Failures: []Failure{}, Fuzz: []FuzzResult{}}
	m := Merged{Section: c, Version: shards[0].Version}
	var start, end time.Time
	for i, s := range shards {
		c.ShardResults = append(c.ShardResults, ShardRow{Shard: s.Info.Shard, File: filepath.Base(s.Path),
			Units: len(s.Ran()), Seconds: s.Seconds, Passed: s.Passed})
		fuzz := make([]FuzzResult, len(s.Fuzz))
		for j, f := range s.Fuzz {
			if f.Failure != nil && f.Failure.Input != "" {
				// The input now lies under the directory being merged.
				failure := *f.Failure
				failure.Replay = FuzzReplay(FuzzTarget{Package: f.Package, Name: f.Target}, filepath.Join(dir, filepath.FromSlash(failure.Input)))
				f.Failure = &failure
			}
			fuzz[j] = f
		}
		s.Fuzz = fuzz
		shards[i] = s
		c.Fuzz = append(c.Fuzz, fuzz...)
		c.Failures = append(c.Failures, s.Failures()...)
		if t, err := time.Parse(time.RFC3339, s.Started); err == nil {
			if start.IsZero() || t.Before(start) {
				start = t
			}
			if e := t.Add(time.Duration(s.Seconds * float64(time.Second))); e.After(end) {
				end = e
			}
		}
	}
	sort.SliceStable(c.Failures, func(i, j int) bool { return order[c.Failures[i].Unit] < order[c.Failures[j].Unit] })
	sort.SliceStable(c.Fuzz, func(i, j int) bool {
		a, b := c.Fuzz[i], c.Fuzz[j]
		return a.Package+" "+a.Target < b.Package+" "+b.Target
	})
	m.Records = shards
	m.Started = start.Format(time.RFC3339)
	m.Seconds = phrase.RoundMilli(end.Sub(start).Seconds())
	return m
}

// Problems are the verdict's lines for a merged report: every failure with
// the shard that found it.
func (c *Section) Problems() []string {
	var out []string
	for _, f := range c.Failures {
		line := fmt.Sprintf("shard %d: %s: %s", f.Shard, f.Unit, f.Invariant)
		if f.Invariant != "fuzz" {
			line += " violated"
		} else {
			line = strings.TrimSuffix(line, ": fuzz") + " failed"
		}
		out = append(out, line+"; replay: "+orDash(f.Replay))
	}
	return out
}
