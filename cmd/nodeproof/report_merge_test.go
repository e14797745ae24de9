package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/campaign"
	"github.com/nodeproof/nodeproof/cli"
	campaigncmd "github.com/nodeproof/nodeproof/cli/campaign"
	"github.com/nodeproof/nodeproof/cli/commands"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/simreport"
	"github.com/nodeproof/nodeproof/verify"
)

// The merge of a campaign's shards into one report (report --merge), end to
// end: shards written by nodeproof campaign with the report's recorder,
// merged by nodeproof report.

// stubCampaignDeps run nothing real: simulation seeds pass, except those
// in failSeeds; fuzz targets pass, except failTarget. Suites run for real,
// and the shards are recorded by the report's recorder.
func stubCampaignDeps(failSeeds map[uint64]bool, failTarget string) campaigncmd.Deps {
	stubSim := func(cfg sim.Config, progress func(sim.Stats)) sim.Summary {
		st := sim.Stats{Events: 10 + int(cfg.Seed), Simulated: cfg.Duration, Faults: map[sim.Fault]int{sim.PluginCrash: 1},
			Checks: verify.Counts{"SIM-X": {Checked: 10, Applied: 5}}}
		s := sim.Summary{Config: cfg, Stats: st, Replay: cfg.ReplayCommand()}
		if failSeeds[cfg.Seed] {
			e := sim.Event{Seq: 3, At: time.Minute, Kind: "plugin-crash", Detail: "a.com/gpu"}
			s.Violation = &sim.Violation{Invariant: "SIM-X", Message: "SIM-X: device d1 held twice", Event: e, Trace: []sim.Event{e}}
		}
		return s
	}
	return campaigncmd.Deps{
		Suites: properties.Suites(),
		Fuzz: func(job campaign.FuzzJob) campaign.FuzzResult {
			r := campaign.FuzzResult{Package: job.Target.Package, Target: job.Target.Name, Passed: true, Seconds: job.Duration.Seconds()}
			if job.Target.Name == failTarget {
				r.Passed = false
				r.Failure = &campaign.FuzzFailure{Message: "--- FAIL: " + failTarget, Input: filepath.ToSlash(filepath.Join(job.InputsRel, "0123abcd"))}
			}
			return r
		},
		ListFuzz: func(string) ([]campaign.FuzzTarget, error) {
			return []campaign.FuzzTarget{{Package: "fuzz/x", Name: "FuzzX"}, {Package: "fuzz/y", Name: "FuzzY"}}, nil
		},
		NewRecorder: commands.NewShardRecorder(stubSim, properties.Run, properties.Suites()),
	}
}

func writePlan(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

const stubPlan = `shards: 3
sim:
  seeds: 1..6
  hours: 0.5
fuzz:
  duration: 2s
  binaries: /nowhere
`

// runStubShards runs every shard of stubPlan with the stub runners and
// returns the results directory and each shard's exit status.
func runStubShards(t *testing.T, failSeeds map[uint64]bool, failTarget string) (string, []int) {
	t.Helper()
	plan := writePlan(t, stubPlan)
	out := t.TempDir()
	var codes []int
	for i := range 3 {
		root := cli.NewRoot(campaigncmd.NewCommand(stubCampaignDeps(failSeeds, failTarget)))
		code, stdout, _ := runRoot(root, "", "campaign", "--plan", plan, "--index", fmt.Sprint(i), "--out", out)
		assert.Equal(t, filepath.Join(out, campaign.ShardFileName(i))+"\n", stdout)
		codes = append(codes, code)
	}
	return out, codes
}

// TestCampaignMergePlantedFailure: a simulation seed and a fuzz target fail
// in their shards; the merged report shows each with the shard that found
// it and its replay line, in report.json, report.md and index.html.
func TestCampaignMergePlantedFailure(t *testing.T) {
	// Units in plan order: sim seeds 1..6, then FuzzX, FuzzY; dealt
	// round-robin, seed 5 (unit 4) and FuzzY (unit 7) fall in shard 1.
	results, codes := runStubShards(t, map[uint64]bool{5: true}, "FuzzY")
	assert.Equal(t, []int{cli.StatusOK, cli.StatusFailed, cli.StatusOK}, codes)

	out := t.TempDir()
	code, stdout, stderr := runNodeproof("", "report", "--merge", results, "--out", out)
	require.Equal(t, cli.StatusFailed, code, stderr)
	assert.Contains(t, stdout, filepath.Join(out, "report.json"))
	simReplay := "nodeproof sim --seed 5 --hours 0.5 --pods 20 --faults " + sim.DefaultConfig().Faults.String()
	input := filepath.Join(results, "fuzz-inputs", "shard-1", "FuzzY", "0123abcd")
	fuzzReplay := "mkdir -p fuzz/y/testdata/fuzz/FuzzY && cp " + input + " fuzz/y/testdata/fuzz/FuzzY/ && go test ./fuzz/y -run '^FuzzY/0123abcd$'"
	assert.Contains(t, stderr, "shard 1: sim seed 5: SIM-X violated; replay: "+simReplay)
	assert.Contains(t, stderr, "shard 1: fuzz FuzzY in ./fuzz/y failed; replay: "+fuzzReplay)

	var rep struct {
		Passed   bool              `json:"passed"`
		Sim      simreport.Section `json:"sim"`
		Campaign campaign.Section  `json:"campaign"`
	}
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &rep))
	assert.False(t, rep.Passed)
	assert.Equal(t, []campaign.Failure{
		{Shard: 1, Unit: "sim seed 5", Invariant: "SIM-X", Replay: simReplay},
		{Shard: 1, Unit: "fuzz FuzzY in ./fuzz/y", Invariant: "fuzz", Replay: fuzzReplay},
	}, rep.Campaign.Failures)
	assert.Equal(t, 8, rep.Campaign.Units)
	assert.Equal(t, []campaign.ShardRow{
		{Shard: 0, File: "shard-0.json", Units: 3, Passed: true},
		{Shard: 1, File: "shard-1.json", Units: 3, Passed: false},
		{Shard: 2, File: "shard-2.json", Units: 2, Passed: true},
	}, zeroSeconds(rep.Campaign.ShardResults))
	var seeds []uint64
	for _, r := range rep.Sim.Runs {
		seeds = append(seeds, r.Seed)
	}
	assert.Equal(t, []uint64{1, 2, 3, 4, 5, 6}, seeds, "the merged simulation holds each seed once, in order")
	assert.Equal(t, 11+12+13+14+15+16, rep.Sim.Events)
	assert.Equal(t, []simreport.Check{{ID: "SIM-X", Checked: 60, Applied: 30}}, rep.Sim.Checks)
	require.Len(t, rep.Sim.Violations, 1)
	assert.Equal(t, uint64(5), rep.Sim.Violations[0].Seed)

	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "- shard 1, sim seed 5: SIM-X; replay: `"+simReplay+"`\n")
	assert.Contains(t, string(md), "- shard 1, fuzz FuzzY in ./fuzz/y: fuzz; replay: `"+fuzzReplay+"`\n")
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), `<tr><td class="num">1</td><td>sim seed 5</td><td class="failed"><code>SIM-X</code></td>`)
	assert.Contains(t, string(page), "<h3 class=\"failed\">Fuzz failure: FuzzY (shard 1)</h3>")
}

func zeroSeconds(rows []campaign.ShardRow) []campaign.ShardRow {
	for i := range rows {
		rows[i].Seconds = 0
	}
	return rows
}

// TestCampaignMergeErrors: a bad, duplicate, foreign or missing shard file
// is exit 2, with the file and the field named.
func TestCampaignMergeErrors(t *testing.T) {
	edit := func(t *testing.T, path string, change func(map[string]any)) {
		t.Helper()
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		var doc map[string]any
		require.NoError(t, json.Unmarshal(data, &doc))
		change(doc)
		data, err = json.Marshal(doc)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, data, 0o644))
	}
	campaignOf := func(doc map[string]any) map[string]any { return doc["campaign"].(map[string]any) }
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
		want   string
	}{
		{"unknown field", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "shard-1.json"), func(doc map[string]any) { doc["extra"] = 1 })
		}, `shard-1.json: want the JSON nodeproof campaign writes: json: unknown field "extra"`},
		{"wrong type", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "shard-2.json"), func(doc map[string]any) { campaignOf(doc)["shard"] = "two" })
		}, `shard-2.json: want the JSON nodeproof campaign writes: json: cannot unmarshal string into Go struct field Info.campaign.shard of type int`},
		{"not JSON", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "shard-0.json"), []byte("{"), 0o644))
		}, `shard-0.json: want the JSON nodeproof campaign writes: unexpected EOF`},
		{"index beyond shards", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "shard-2.json"), func(doc map[string]any) { campaignOf(doc)["shard"] = 3 })
		}, `shard-2.json: campaign.shard must be between 0 and 2 (campaign.shards - 1), got 3`},
		{"name and index differ", func(t *testing.T, dir string) {
			require.NoError(t, os.Rename(filepath.Join(dir, "shard-2.json"), filepath.Join(dir, "shard-7.json")))
		}, `shard-7.json: campaign.shard is 2, but the file's name says shard 7`},
		{"duplicate", func(t *testing.T, dir string) {
			data, err := os.ReadFile(filepath.Join(dir, "shard-1.json"))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "shard-01.json"), data, 0o644))
		}, `campaign.shard 1 is also in`},
		{"missing index", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "shard-2.json")))
		}, "campaign.shards is 3, but no file holds campaign.shard 2 (want "},
		{"another campaign", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "shard-1.json"), func(doc map[string]any) {
				campaignOf(doc)["plan"].(map[string]any)["sim"].(map[string]any)["hours"] = 9
			})
		}, `shard-1.json: campaign.plan differs from `},
		{"unit of another shard", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "shard-1.json"), func(doc map[string]any) {
				runs := doc["sim"].(map[string]any)["runs"].([]any)
				runs[0].(map[string]any)["seed"] = 1
			})
		}, `shard-1.json: sim.runs holds sim seed 1, which is not in shard 1's share of campaign.plan`},
		{"unit left out", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "shard-0.json"), func(doc map[string]any) { doc["fuzz"] = []any{} })
		}, `shard-0.json: fuzz FuzzX in ./fuzz/x of shard 0's share is not in the file`},
		{"verdict contradicts", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "shard-0.json"), func(doc map[string]any) { doc["passed"] = false })
		}, `shard-0.json: passed is false, but the file holds 0 failures`},
		{"no shards", func(t *testing.T, dir string) {
			for i := range 3 {
				require.NoError(t, os.Remove(filepath.Join(dir, campaign.ShardFileName(i))))
			}
		}, "holds no shard-N.json files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := runStubShards(t, nil, "")
			tc.change(t, dir)
			code, stdout, stderr := runNodeproof("", "report", "--merge", dir, "--out", t.TempDir())
			assert.Equal(t, cli.StatusUsage, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, "nodeproof report: --merge: ")
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// TestCampaignMergeRefusesRunFlags: --merge runs nothing, so a flag about
// what to run is a usage error rather than silently ignored.
func TestCampaignMergeRefusesRunFlags(t *testing.T) {
	code, _, stderr := runNodeproof("", "report", "--merge", t.TempDir(), "--checks", "5")
	assert.Equal(t, cli.StatusUsage, code)
	assert.Contains(t, stderr, "nodeproof report: --checks does not apply to --merge")
}
