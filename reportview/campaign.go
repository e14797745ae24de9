package reportview

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"

	"github.com/nodeproof/nodeproof/campaign"
	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/simreport"
)

// The report's side of a campaign (package campaign): the shard file,
// whose suites and sim keys are report.json's own sections, and the merge
// of the shard files into one report (nodeproof report --merge).

// ShardFile is what one shard of a campaign writes: the report's JSON
// (version, started, seconds, passed, suites, sim) for its units, with the
// campaign it belongs to and its fuzz targets.
type ShardFile struct {
	Version  string                `json:"version"`
	Started  string                `json:"started"`
	Seconds  float64               `json:"seconds"`
	Passed   bool                  `json:"passed"`
	Campaign campaign.Info         `json:"campaign"`
	Suites   []Suite               `json:"suites"`
	Sim      *simreport.Section    `json:"sim"`
	Fuzz     []campaign.FuzzResult `json:"fuzz"`
}

// ReadShard decodes a shard file strictly, checks its simulation's sums
// and lists the units its sections hold for campaign.Merge.
func ReadShard(path string) (ShardFile, campaign.Record, error) {
	var rep ShardFile
	data, err := os.ReadFile(path)
	if err != nil {
		return rep, campaign.Record{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		return rep, campaign.Record{}, fmt.Errorf("%s: want the JSON nodeproof campaign writes: %v", path, err)
	}
	rec := campaign.Record{Path: path, Version: rep.Version, Started: rep.Started, Seconds: rep.Seconds, Passed: rep.Passed,
		Info: rep.Campaign, Fuzz: rep.Fuzz}
	if rep.Sim != nil {
		events := 0
		for _, r := range rep.Sim.Runs {
			events += r.Events
			h := campaign.Held{Unit: campaign.Unit{Kind: "sim", Seed: r.Seed}, Field: "sim.runs"}
			if v := r.Violation; v != nil {
				h.Failure = &campaign.Failure{Invariant: v.Invariant, Replay: v.Replay}
			}
			rec.Held = append(rec.Held, h)
		}
		if events != rep.Sim.Events {
			return rep, rec, fmt.Errorf("%s: sim.events is %d, but sim.runs add up to %d", path, rep.Sim.Events, events)
		}
	}
	for _, s := range rep.Suites {
		h := campaign.Held{Unit: campaign.Unit{Kind: "suite", Suite: s.Name, Seed: s.Seed}, Field: "suites"}
		if f := s.Failure; f != nil {
			h.Failure = &campaign.Failure{Invariant: f.Invariant, Replay: f.Replay}
		}
		rec.Held = append(rec.Held, h)
	}
	return rep, rec, nil
}

// MergeShards reads the shard files in dir, which campaign.Merge checks
// are one whole campaign, and returns the report of them all, not yet
// finished: suites summed per suite, the simulation's runs in seed order,
// and the campaign section with every failure and the shard that found it.
func MergeShards(dir string) (*Report, error) {
	files := map[string]ShardFile{}
	m, err := campaign.Merge(dir, func(path string) (campaign.Record, error) {
		rep, rec, err := ReadShard(path)
		files[path] = rep
		return rec, err
	})
	if err != nil {
		return nil, err
	}
	r := &Report{Version: m.Version, Started: m.Started, Seconds: m.Seconds, Campaign: m.Section}
	var sims []simreport.Section
	var suites []Suite
	for _, rec := range m.Records {
		rep := files[rec.Path]
		suites = append(suites, rep.Suites...)
		if rep.Sim != nil {
			sims = append(sims, *rep.Sim)
		}
	}
	if plan := m.Section.Plan; plan.Suites != nil {
		r.Suites = mergeSuites(plan.Suites.Names, suites)
	}
	if len(sims) > 0 {
		merged := mergeSims(sims)
		r.Sim = &merged
	}
	return r, nil
}

// mergeSuites sums the runs of each suite from every seed into one row per
// suite, in names' order; its failure is the first seed's that failed.
func mergeSuites(names []string, runs []Suite) []Suite {
	slices.SortStableFunc(runs, func(a, b Suite) int { return cmp.Compare(a.Seed, b.Seed) })
	var out []Suite
	for _, name := range names {
		var m *Suite
		stats := map[string]*Statistic{}
		for _, r := range runs {
			if r.Name != name {
				continue
			}
			if m == nil {
				m = &Suite{Name: r.Name, Subsystem: r.Subsystem, Passed: true, Seed: r.Seed, Actions: map[string]int{},
					Invariants: slices.Clone(r.Invariants), Statistics: []Statistic{}}
				for i := range m.Invariants {
					m.Invariants[i].Checked, m.Invariants[i].Applied, m.Invariants[i].Violations = 0, 0, 0
				}
			}
			m.Checks += r.Checks
			m.Steps += r.Steps
			m.Seconds = phrase.RoundMilli(m.Seconds + r.Seconds)
			m.Passed = m.Passed && r.Passed
			if m.Failure == nil && r.Failure != nil {
				m.Failure = r.Failure
			}
			for k, n := range r.Actions {
				m.Actions[k] += n
			}
			for _, inv := range r.Invariants {
				for i := range m.Invariants {
					if m.Invariants[i].ID == inv.ID {
						m.Invariants[i].Checked += inv.Checked
						m.Invariants[i].Applied += inv.Applied
						m.Invariants[i].Violations += inv.Violations
					}
				}
			}
			for _, st := range r.Statistics {
				sum := stats[st.Name]
				if sum == nil {
					sum = &Statistic{Name: st.Name, Max: st.Max}
					stats[st.Name] = sum
				}
				// The mean of the merged samples, weighted by each run's count.
				if total := sum.Samples + st.Samples; total > 0 {
					sum.Mean = phrase.RoundMicro((sum.Mean*float64(sum.Samples) + st.Mean*float64(st.Samples)) / float64(total))
				}
				sum.Samples += st.Samples
				sum.Max = max(sum.Max, st.Max)
				sum.Nonzero += st.Nonzero
			}
		}
		if m == nil {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(stats)) {
			m.Statistics = append(m.Statistics, *stats[name])
		}
		out = append(out, *m)
	}
	return out
}

// mergeSims combines the shards' simulation sections into one over every
// seed, its runs in seed order and its sums taken again from them.
func mergeSims(sections []simreport.Section) simreport.Section {
	s := simreport.Section{Hours: sections[0].Hours, Pods: sections[0].Pods, Faults: sections[0].Faults,
		Injected: map[string]int{}, Observed: map[string]int{}, Passed: true, Violations: []simreport.Violation{}}
	for _, sec := range sections {
		s.Runs = append(s.Runs, sec.Runs...)
		s.Seconds += sec.Seconds
	}
	sort.Slice(s.Runs, func(i, j int) bool { return s.Runs[i].Seed < s.Runs[j].Seed })
	s.SumRuns()
	s.Seeds = len(s.Runs)
	s.FirstSeed, s.LastSeed = s.Runs[0].Seed, s.Runs[len(s.Runs)-1].Seed
	s.Seconds = phrase.RoundMicro(s.Seconds)
	return s
}
