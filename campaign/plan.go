package campaign

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/nodeproof/nodeproof/agent/manifest"
	"github.com/nodeproof/nodeproof/properties"
	// The suites register themselves with properties when imported.
	_ "github.com/nodeproof/nodeproof/properties/suites"
	"github.com/nodeproof/nodeproof/seedrange"
	"github.com/nodeproof/nodeproof/sim"
)

// MaxUnits bounds the units of one campaign (seeds, suite runs, fuzz
// targets), so that a typo in a range cannot make every shard list
// billions of units before running one.
const MaxUnits = 1_000_000

// MaxShards bounds shards: the Job's completions, far above what a cluster
// runs at once.
const MaxShards = 10_000

// Plan is the plan file of `nodeproof campaign` as written (YAML or JSON):
// what the whole campaign runs, before it is split into shards.
type Plan struct {
	// Shards is the number of shards, the Job's completions.
	Shards int `json:"shards"`
	// Sim sweeps node simulation seeds.
	Sim *PlanSim `json:"sim,omitempty"`
	// Suites runs property suites at a budget of their own, once per seed.
	Suites *PlanSuites `json:"suites,omitempty"`
	// Fuzz runs native fuzz targets from prebuilt test binaries.
	Fuzz *PlanFuzz `json:"fuzz,omitempty"`
}

// PlanSim is a plan's simulation seeds.
type PlanSim struct {
	// Seeds is an inclusive range A..B.
	Seeds string `json:"seeds"`
	// Hours is the simulated time per seed.
	Hours float64 `json:"hours"`
	// Pods and Faults default to the simulation's defaults.
	Pods   int    `json:"pods,omitempty"`
	Faults string `json:"faults,omitempty"`
}

// PlanSuites is a plan's suite runs.
type PlanSuites struct {
	// Names is a regular expression over suite names; empty selects all.
	Names string `json:"names,omitempty"`
	// Seeds is an inclusive range A..B of base seeds, from 1: each selected
	// suite runs once from each.
	Seeds string `json:"seeds"`
	// Checks and Steps are rapid's budget per run.
	Checks int `json:"checks"`
	Steps  int `json:"steps"`
}

// PlanFuzz is a plan's fuzz targets.
type PlanFuzz struct {
	// Targets is a regular expression over fuzz target names; empty selects all.
	Targets string `json:"targets,omitempty"`
	// Duration is each target's fuzzing time, as Go writes durations (30m).
	Duration string `json:"duration"`
	// Binaries is the directory of the test binaries (`go test -c -fuzz`),
	// each at its package's directory in the module, with its testdata beside it.
	Binaries string `json:"binaries"`
}

// Resolved is a plan with every choice made (suite names and fuzz targets
// listed, ranges read), as each shard records it: shards of one campaign
// hold equal resolved plans, and the units follow from it alone.
type Resolved struct {
	Shards int             `json:"shards"`
	Sim    *ResolvedSim    `json:"sim"`
	Suites *ResolvedSuites `json:"suites"`
	Fuzz   *ResolvedFuzz   `json:"fuzz"`
}

// ResolvedSim is the simulation of a resolved plan.
type ResolvedSim struct {
	FirstSeed uint64  `json:"first_seed"`
	LastSeed  uint64  `json:"last_seed"`
	Hours     float64 `json:"hours"`
	Pods      int     `json:"pods"`
	// Faults is as sim --faults takes it.
	Faults string `json:"faults"`
}

// ResolvedSuites are the suite runs of a resolved plan.
type ResolvedSuites struct {
	Names     []string `json:"names"`
	FirstSeed uint64   `json:"first_seed"`
	LastSeed  uint64   `json:"last_seed"`
	Checks    int      `json:"checks"`
	Steps     int      `json:"steps"`
}

// ResolvedFuzz are the fuzz targets of a resolved plan.
type ResolvedFuzz struct {
	// Binaries is where every shard's image holds the test binaries.
	Binaries string       `json:"binaries"`
	Targets  []FuzzTarget `json:"targets"`
	Seconds  float64      `json:"seconds"`
}

// DecodePlan decodes a plan file with the reader of every manifest
// (agent/manifest): strictly, so that a misspelt or repeated key, a value
// of the wrong type or a second document is an error naming its path and
// the rule.
func DecodePlan(data []byte) (Plan, error) {
	var p Plan
	err := manifest.DecodeOne(data, &p)
	return p, err
}

// Resolve validates the plan and makes its choices: the suites among
// suites, the fuzz targets that list finds under the binaries directory.
// Each error names the plan's field and the rule.
func (p Plan) Resolve(suites []properties.Suite, list func(dir string) ([]FuzzTarget, error)) (Resolved, error) {
	r := Resolved{Shards: p.Shards}
	if p.Shards < 1 || p.Shards > MaxShards {
		return r, fmt.Errorf("shards must be between 1 and %d, got %d", MaxShards, p.Shards)
	}
	if p.Sim == nil && p.Suites == nil && p.Fuzz == nil {
		return r, fmt.Errorf("the plan runs nothing: give sim, suites or fuzz")
	}
	if s := p.Sim; s != nil {
		rs, err := s.resolve()
		if err != nil {
			return r, err
		}
		r.Sim = rs
	}
	if s := p.Suites; s != nil {
		rs, err := s.resolve(suites)
		if err != nil {
			return r, err
		}
		r.Suites = rs
	}
	if f := p.Fuzz; f != nil {
		rf, err := f.resolve(list)
		if err != nil {
			return r, err
		}
		r.Fuzz = rf
	}
	if n := r.UnitCount(); n > MaxUnits {
		return r, fmt.Errorf("the plan holds %d units (seeds, suite runs, fuzz targets), more than %d", n, MaxUnits)
	}
	return r, nil
}

func (s PlanSim) resolve() (*ResolvedSim, error) {
	first, last, err := planRange("sim.seeds", s.Seeds, 0)
	if err != nil {
		return nil, err
	}
	if math.IsNaN(s.Hours) || s.Hours <= 0 || s.Hours > sim.MaxHours {
		return nil, fmt.Errorf("sim.hours must be more than 0 and at most %d, got %v", sim.MaxHours, s.Hours)
	}
	def := sim.DefaultConfig()
	cfg := sim.Config{Seed: first, Duration: time.Duration(s.Hours * float64(time.Hour)), Pods: def.Pods, Faults: def.Faults}
	if s.Pods != 0 {
		cfg.Pods = s.Pods
	}
	if s.Faults != "" {
		rates, err := sim.ParseRates(s.Faults)
		if err != nil {
			return nil, fmt.Errorf("sim.faults: %v", err)
		}
		cfg.Faults = rates
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("sim.%v", err)
	}
	return &ResolvedSim{FirstSeed: first, LastSeed: last, Hours: s.Hours, Pods: cfg.Pods, Faults: cfg.Faults.String()}, nil
}

func (s PlanSuites) resolve(suites []properties.Suite) (*ResolvedSuites, error) {
	// Seed 0 would make properties.Run pick one from the clock, and the
	// shards would no longer be reproducible.
	first, last, err := planRange("suites.seeds", s.Seeds, 1)
	if err != nil {
		return nil, err
	}
	switch {
	case s.Checks <= 0:
		return nil, fmt.Errorf("suites.checks must be positive, got %d", s.Checks)
	case s.Steps <= 0:
		return nil, fmt.Errorf("suites.steps must be positive, got %d", s.Steps)
	}
	if err := properties.CheckSteps(s.Steps); err != nil {
		return nil, fmt.Errorf("suites.steps: %v", err)
	}
	re, err := regexp.Compile(s.Names)
	if err != nil {
		return nil, fmt.Errorf("suites.names: %v", err)
	}
	selected, err := properties.Select(re, suites)
	if err != nil {
		return nil, fmt.Errorf("suites.names: %v", err)
	}
	return &ResolvedSuites{Names: properties.SuiteNames(selected), FirstSeed: first, LastSeed: last, Checks: s.Checks, Steps: s.Steps}, nil
}

func (f PlanFuzz) resolve(list func(dir string) ([]FuzzTarget, error)) (*ResolvedFuzz, error) {
	d, err := time.ParseDuration(f.Duration)
	if err != nil || d < time.Second {
		return nil, fmt.Errorf("fuzz.duration must be a duration of at least 1s (30s, 1h), got %q", f.Duration)
	}
	if f.Binaries == "" {
		return nil, fmt.Errorf("fuzz.binaries must name the directory of the fuzz test binaries")
	}
	re, err := regexp.Compile(f.Targets)
	if err != nil {
		return nil, fmt.Errorf("fuzz.targets: %v", err)
	}
	all, err := list(f.Binaries)
	if err != nil {
		return nil, fmt.Errorf("fuzz.binaries: %v", err)
	}
	rf := &ResolvedFuzz{Binaries: f.Binaries, Seconds: d.Seconds(), Targets: []FuzzTarget{}}
	var names []string
	for _, t := range all {
		names = append(names, t.Name)
		if re.MatchString(t.Name) {
			rf.Targets = append(rf.Targets, t)
		}
	}
	if len(rf.Targets) == 0 {
		found := "(none registered)"
		if len(names) > 0 {
			found = strings.Join(names, ", ")
		}
		return nil, fmt.Errorf("fuzz.targets %q matches no target in %s; targets: %s", f.Targets, f.Binaries, found)
	}
	return rf, nil
}

// planRange reads a plan's inclusive seed range A..B, whose start is at
// least min.
func planRange(field, s string, min uint64) (first, last uint64, err error) {
	first, last, err = seedrange.Parse(s)
	if err != nil {
		return 0, 0, fmt.Errorf("%s must be a range A..B of seeds (whole numbers from %d), got %q", field, min, s)
	}
	if first < min {
		return 0, 0, fmt.Errorf("%s must start at %d or above, got %q", field, min, s)
	}
	if last-first >= MaxUnits {
		return 0, 0, fmt.Errorf("%s %q holds more than %d seeds", field, s, MaxUnits)
	}
	return first, last, nil
}

// Unit is the smallest piece of work a shard takes: one simulation seed,
// one suite from one seed, or one fuzz target.
type Unit struct {
	Kind   string // "sim", "suite" or "fuzz"
	Seed   uint64
	Suite  string
	Target FuzzTarget
}

// String names the unit as every line and report does: "sim seed 5",
// "suite cgroups seed 2", "fuzz FuzzX in ./fuzz/x".
func (u Unit) String() string {
	switch u.Kind {
	case "sim":
		return fmt.Sprintf("sim seed %d", u.Seed)
	case "suite":
		return fmt.Sprintf("suite %s seed %d", u.Suite, u.Seed)
	default:
		return fmt.Sprintf("fuzz %s in ./%s", u.Target.Name, u.Target.Package)
	}
}

// UnitCount is the number of units of the campaign.
func (r Resolved) UnitCount() int {
	n := 0
	if r.Sim != nil {
		n += int(r.Sim.LastSeed-r.Sim.FirstSeed) + 1
	}
	if r.Suites != nil {
		n += (int(r.Suites.LastSeed-r.Suites.FirstSeed) + 1) * len(r.Suites.Names)
	}
	if r.Fuzz != nil {
		n += len(r.Fuzz.Targets)
	}
	return n
}

// Units lists every unit of the campaign in one fixed order: simulation
// seeds, then suite runs seed by seed, then fuzz targets.
func (r Resolved) Units() []Unit {
	var out []Unit
	if s := r.Sim; s != nil {
		for seed := s.FirstSeed; ; seed++ {
			out = append(out, Unit{Kind: "sim", Seed: seed})
			if seed == s.LastSeed {
				break
			}
		}
	}
	if s := r.Suites; s != nil {
		for seed := s.FirstSeed; ; seed++ {
			for _, name := range s.Names {
				out = append(out, Unit{Kind: "suite", Seed: seed, Suite: name})
			}
			if seed == s.LastSeed {
				break
			}
		}
	}
	if f := r.Fuzz; f != nil {
		for _, t := range f.Targets {
			out = append(out, Unit{Kind: "fuzz", Target: t})
		}
	}
	return out
}

// ShardUnits is shard index's share: every Shards-th unit from its index
// on. Dealing the units round-robin gives every shard a like mix of
// simulation seeds, suites and fuzz targets, and each unit to one shard.
func (r Resolved) ShardUnits(index int) []Unit {
	var mine []Unit
	for i, u := range r.Units() {
		if i%r.Shards == index {
			mine = append(mine, u)
		}
	}
	return mine
}

// Equal compares two resolved plans by their JSON, as shard files hold them.
func (r Resolved) Equal(other Resolved) bool {
	a, errA := json.Marshal(r)
	b, errB := json.Marshal(other)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}
