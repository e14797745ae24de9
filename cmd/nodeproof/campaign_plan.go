package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/nodeproof/nodeproof/agent/manifest"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/sim"
)

// maxCampaignUnits bounds the units of one campaign (seeds, suite runs,
// fuzz targets), so that a typo in a range cannot make every shard list
// billions of units before running one.
const maxCampaignUnits = 1_000_000

// maxCampaignShards bounds shards: the Job's completions, far above what a
// cluster runs at once.
const maxCampaignShards = 10_000

// campaignPlan is the plan file of `nodeproof campaign` as written (YAML or
// JSON): what the whole campaign runs, before it is split into shards.
type campaignPlan struct {
	// Shards is the number of shards, the Job's completions.
	Shards int `json:"shards"`
	// Sim sweeps node simulation seeds.
	Sim *planSim `json:"sim,omitempty"`
	// Suites runs property suites at a budget of their own, once per seed.
	Suites *planSuites `json:"suites,omitempty"`
	// Fuzz runs native fuzz targets from prebuilt test binaries.
	Fuzz *planFuzz `json:"fuzz,omitempty"`
}

type planSim struct {
	// Seeds is an inclusive range A..B.
	Seeds string `json:"seeds"`
	// Hours is the simulated time per seed.
	Hours float64 `json:"hours"`
	// Pods and Faults default to the simulation's defaults.
	Pods   int    `json:"pods,omitempty"`
	Faults string `json:"faults,omitempty"`
}

type planSuites struct {
	// Names is a regular expression over suite names; empty selects all.
	Names string `json:"names,omitempty"`
	// Seeds is an inclusive range A..B of base seeds, from 1: each selected
	// suite runs once from each.
	Seeds string `json:"seeds"`
	// Checks and Steps are rapid's budget per run.
	Checks int `json:"checks"`
	Steps  int `json:"steps"`
}

type planFuzz struct {
	// Targets is a regular expression over fuzz target names; empty selects all.
	Targets string `json:"targets,omitempty"`
	// Duration is each target's fuzzing time, as Go writes durations (30m).
	Duration string `json:"duration"`
	// Binaries is the directory of the test binaries (`go test -c -fuzz`),
	// each at its package's directory in the module, with its testdata beside it.
	Binaries string `json:"binaries"`
}

// resolvedPlan is a plan with every choice made (suite names and fuzz
// targets listed, ranges read), as each shard records it: shards of one
// campaign hold equal resolved plans, and the units follow from it alone.
type resolvedPlan struct {
	Shards int             `json:"shards"`
	Sim    *resolvedSim    `json:"sim"`
	Suites *resolvedSuites `json:"suites"`
	Fuzz   *resolvedFuzz   `json:"fuzz"`
}

type resolvedSim struct {
	FirstSeed uint64  `json:"first_seed"`
	LastSeed  uint64  `json:"last_seed"`
	Hours     float64 `json:"hours"`
	Pods      int     `json:"pods"`
	Faults    string  `json:"faults"`
}

type resolvedSuites struct {
	Names     []string `json:"names"`
	FirstSeed uint64   `json:"first_seed"`
	LastSeed  uint64   `json:"last_seed"`
	Checks    int      `json:"checks"`
	Steps     int      `json:"steps"`
}

type resolvedFuzz struct {
	// Binaries is where every shard's image holds the test binaries.
	Binaries string       `json:"binaries"`
	Targets  []fuzzTarget `json:"targets"`
	Seconds  float64      `json:"seconds"`
}

// fuzzTarget is one Fuzz function: its package's directory in the module
// (where its test binary and testdata sit under the binaries directory).
type fuzzTarget struct {
	Package string `json:"package"`
	Name    string `json:"name"`
}

// readPlan reads a plan file (- reads stdin) with the reader of every
// manifest (agent/manifest): strictly, so that a misspelt or repeated key,
// a value of the wrong type or a second document is an error naming its
// path and the rule.
func readPlan(path string, stdin io.Reader) (campaignPlan, error) {
	var p campaignPlan
	data, err := readManifestFile(path, stdin)
	if err != nil {
		return p, fmt.Errorf("--plan: %v", err)
	}
	if err := manifest.DecodeOne(data, &p); err != nil {
		return p, fmt.Errorf("--plan %s: %v", path, err)
	}
	return p, nil
}

// resolve validates the plan and makes its choices: the suites among
// registered ones, the fuzz targets that list finds. Each error names the
// plan's field and the rule.
func (p campaignPlan) resolve(suites []properties.Suite, list func(dir string) ([]fuzzTarget, error)) (resolvedPlan, error) {
	r := resolvedPlan{Shards: p.Shards}
	if p.Shards < 1 || p.Shards > maxCampaignShards {
		return r, fmt.Errorf("shards must be between 1 and %d, got %d", maxCampaignShards, p.Shards)
	}
	if p.Sim == nil && p.Suites == nil && p.Fuzz == nil {
		return r, fmt.Errorf("the plan runs nothing: give sim, suites or fuzz")
	}
	if s := p.Sim; s != nil {
		first, last, err := planRange("sim.seeds", s.Seeds, 0)
		if err != nil {
			return r, err
		}
		if math.IsNaN(s.Hours) || s.Hours <= 0 || s.Hours > maxSimHours {
			return r, fmt.Errorf("sim.hours must be more than 0 and at most %d, got %v", maxSimHours, s.Hours)
		}
		def := sim.DefaultConfig()
		cfg := sim.Config{Seed: first, Duration: time.Duration(s.Hours * float64(time.Hour)), Pods: def.Pods, Faults: def.Faults}
		if s.Pods != 0 {
			cfg.Pods = s.Pods
		}
		if s.Faults != "" {
			rates, err := sim.ParseRates(s.Faults)
			if err != nil {
				return r, fmt.Errorf("sim.faults: %v", err)
			}
			cfg.Faults = rates
		}
		if err := cfg.Validate(); err != nil {
			return r, fmt.Errorf("sim.%v", err)
		}
		r.Sim = &resolvedSim{FirstSeed: first, LastSeed: last, Hours: s.Hours, Pods: cfg.Pods, Faults: cfg.Faults.String()}
	}
	if s := p.Suites; s != nil {
		// Seed 0 would make properties.Run pick one from the clock, and the
		// shards would no longer be reproducible.
		first, last, err := planRange("suites.seeds", s.Seeds, 1)
		if err != nil {
			return r, err
		}
		switch {
		case s.Checks <= 0:
			return r, fmt.Errorf("suites.checks must be positive, got %d", s.Checks)
		case s.Steps <= 0:
			return r, fmt.Errorf("suites.steps must be positive, got %d", s.Steps)
		case properties.CheckSteps(s.Steps) != nil:
			return r, fmt.Errorf("suites.steps: %v", properties.CheckSteps(s.Steps))
		}
		re, err := regexp.Compile(s.Names)
		if err != nil {
			return r, fmt.Errorf("suites.names: %v", err)
		}
		selected, err := selectSuites(re, suites)
		if err != nil {
			return r, fmt.Errorf("suites.names: %v", err)
		}
		rs := &resolvedSuites{FirstSeed: first, LastSeed: last, Checks: s.Checks, Steps: s.Steps}
		for _, suite := range selected {
			rs.Names = append(rs.Names, suite.Name)
		}
		r.Suites = rs
	}
	if f := p.Fuzz; f != nil {
		d, err := time.ParseDuration(f.Duration)
		if err != nil || d < time.Second {
			return r, fmt.Errorf("fuzz.duration must be a duration of at least 1s (30s, 1h), got %q", f.Duration)
		}
		if f.Binaries == "" {
			return r, fmt.Errorf("fuzz.binaries must name the directory of the fuzz test binaries")
		}
		re, err := regexp.Compile(f.Targets)
		if err != nil {
			return r, fmt.Errorf("fuzz.targets: %v", err)
		}
		all, err := list(f.Binaries)
		if err != nil {
			return r, fmt.Errorf("fuzz.binaries: %v", err)
		}
		rf := &resolvedFuzz{Binaries: f.Binaries, Seconds: d.Seconds(), Targets: []fuzzTarget{}}
		var names []string
		for _, t := range all {
			names = append(names, t.Name)
			if re.MatchString(t.Name) {
				rf.Targets = append(rf.Targets, t)
			}
		}
		if len(rf.Targets) == 0 {
			return r, fmt.Errorf("fuzz.targets %q matches no target in %s; targets: %s", f.Targets, f.Binaries, listOrNone(names))
		}
		r.Fuzz = rf
	}
	if n := r.unitCount(); n > maxCampaignUnits {
		return r, fmt.Errorf("the plan holds %d units (seeds, suite runs, fuzz targets), more than %d", n, maxCampaignUnits)
	}
	return r, nil
}

// planRange reads a plan's inclusive seed range A..B, whose start is at
// least min.
func planRange(field, s string, min uint64) (first, last uint64, err error) {
	first, last, err = parseSeedRange(s)
	if err != nil {
		return 0, 0, fmt.Errorf("%s must be a range A..B of seeds (whole numbers from %d), got %q", field, min, s)
	}
	if first < min {
		return 0, 0, fmt.Errorf("%s must start at %d or above, got %q", field, min, s)
	}
	if last-first >= maxCampaignUnits {
		return 0, 0, fmt.Errorf("%s %q holds more than %d seeds", field, s, maxCampaignUnits)
	}
	return first, last, nil
}

// campaignUnit is the smallest piece of work a shard takes: one simulation
// seed, one suite from one seed, or one fuzz target.
type campaignUnit struct {
	Kind   string // "sim", "suite" or "fuzz"
	Seed   uint64
	Suite  string
	Target fuzzTarget
}

func (u campaignUnit) String() string {
	switch u.Kind {
	case "sim":
		return fmt.Sprintf("sim seed %d", u.Seed)
	case "suite":
		return fmt.Sprintf("suite %s seed %d", u.Suite, u.Seed)
	default:
		return fmt.Sprintf("fuzz %s in ./%s", u.Target.Name, u.Target.Package)
	}
}

func (r resolvedPlan) unitCount() int {
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

// units lists every unit of the campaign in one fixed order: simulation
// seeds, then suite runs seed by seed, then fuzz targets.
func (r resolvedPlan) units() []campaignUnit {
	var out []campaignUnit
	if s := r.Sim; s != nil {
		for seed := s.FirstSeed; ; seed++ {
			out = append(out, campaignUnit{Kind: "sim", Seed: seed})
			if seed == s.LastSeed {
				break
			}
		}
	}
	if s := r.Suites; s != nil {
		for seed := s.FirstSeed; ; seed++ {
			for _, name := range s.Names {
				out = append(out, campaignUnit{Kind: "suite", Seed: seed, Suite: name})
			}
			if seed == s.LastSeed {
				break
			}
		}
	}
	if f := r.Fuzz; f != nil {
		for _, t := range f.Targets {
			out = append(out, campaignUnit{Kind: "fuzz", Target: t})
		}
	}
	return out
}

// shardUnits is shard index's share: every shards-th unit from its index
// on. Dealing the units round-robin gives every shard a like mix of
// simulation seeds, suites and fuzz targets, and each unit to one shard.
func (r resolvedPlan) shardUnits(index int) []campaignUnit {
	var mine []campaignUnit
	for i, u := range r.units() {
		if i%r.Shards == index {
			mine = append(mine, u)
		}
	}
	return mine
}

// equal compares two resolved plans by their JSON, as shard files hold them.
func (r resolvedPlan) equal(other resolvedPlan) bool {
	a, errA := json.Marshal(r)
	b, errB := json.Marshal(other)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// sortTargets orders fuzz targets by package, then name.
func sortTargets(ts []fuzzTarget) {
	slices.SortFunc(ts, func(a, b fuzzTarget) int {
		return cmp.Or(cmp.Compare(a.Package, b.Package), cmp.Compare(a.Name, b.Name))
	})
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "(none registered)"
	}
	return strings.Join(names, ", ")
}
