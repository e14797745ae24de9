package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/sim"
)

// TestShardUnitsCoverEachUnitOnce: for any number of shards, every unit of
// the plan is in exactly one shard's share.
func TestShardUnitsCoverEachUnitOnce(t *testing.T) {
	plan := resolvedPlan{
		Sim:    &resolvedSim{FirstSeed: 3, LastSeed: 12},
		Suites: &resolvedSuites{Names: []string{"a", "b"}, FirstSeed: 1, LastSeed: 4},
		Fuzz:   &resolvedFuzz{Targets: []fuzzTarget{{"fuzz/x", "FuzzX"}, {"fuzz/y", "FuzzY"}}},
	}
	all := plan.units()
	require.Len(t, all, 10+8+2)
	for shards := 1; shards <= 25; shards++ {
		plan.Shards = shards
		seen := map[string]int{}
		for i := range shards {
			for _, u := range plan.shardUnits(i) {
				seen[u.String()]++
			}
		}
		require.Len(t, seen, len(all), "shards=%d", shards)
		for u, n := range seen {
			require.Equal(t, 1, n, "shards=%d: %s", shards, u)
		}
	}
}

// stubCampaignRunners run nothing real: simulation seeds pass, except those
// in failSeeds; fuzz targets pass, except failTarget.
func stubCampaignRunners(failSeeds map[uint64]bool, failTarget string) campaignRunners {
	return campaignRunners{
		sim: func(cfg sim.Config, progress func(sim.Stats)) sim.Summary {
			st := sim.Stats{Events: 10 + int(cfg.Seed), Simulated: cfg.Duration, Faults: map[sim.Fault]int{sim.PluginCrash: 1},
				Checks: map[string]sim.Count{"SIM-X": {Checked: 10, Applied: 5}}}
			s := sim.Summary{Config: cfg, Stats: st, Replay: cfg.ReplayCommand()}
			if failSeeds[cfg.Seed] {
				e := sim.Event{Seq: 3, At: time.Minute, Kind: "plugin-crash", Detail: "a.com/gpu"}
				s.Violation = &sim.Violation{Invariant: "SIM-X", Message: "SIM-X: device d1 held twice", Event: e, Trace: []sim.Event{e}}
			}
			return s
		},
		suite: properties.Run,
		fuzz: func(job fuzzJob) fuzzReport {
			r := fuzzReport{Package: job.target.Package, Target: job.target.Name, Passed: true, Seconds: job.duration.Seconds()}
			if job.target.Name == failTarget {
				r.Passed = false
				r.Failure = &fuzzFailure{Message: "--- FAIL: " + failTarget, Input: filepath.ToSlash(filepath.Join(job.inputsRel, "0123abcd"))}
			}
			return r
		},
		listFuzz: func(string) ([]fuzzTarget, error) {
			return []fuzzTarget{{"fuzz/x", "FuzzX"}, {"fuzz/y", "FuzzY"}}, nil
		},
		suites: properties.Suites(),
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
		root := cli.NewRoot(newCampaignCommand(stubCampaignRunners(failSeeds, failTarget)))
		code, stdout, _ := runRoot(root, "", "campaign", "--plan", plan, "--index", fmt.Sprint(i), "--out", out)
		assert.Equal(t, filepath.Join(out, shardFileName(i))+"\n", stdout)
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
	simReplay := "nodeproof sim --seed 5 --hours 0.5 --pods 20 --faults '" + sim.DefaultConfig().Faults.String() + "'"
	input := filepath.Join(results, "fuzz-inputs", "shard-1", "FuzzY", "0123abcd")
	fuzzReplay := "mkdir -p fuzz/y/testdata/fuzz/FuzzY && cp " + input + " fuzz/y/testdata/fuzz/FuzzY/ && go test ./fuzz/y -run '^FuzzY/0123abcd$'"
	assert.Contains(t, stderr, "shard 1: sim seed 5: SIM-X violated; replay: "+simReplay)
	assert.Contains(t, stderr, "shard 1: fuzz FuzzY in ./fuzz/y failed; replay: "+fuzzReplay)

	var rep struct {
		Passed   bool            `json:"passed"`
		Sim      simSection      `json:"sim"`
		Campaign campaignSection `json:"campaign"`
	}
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &rep))
	assert.False(t, rep.Passed)
	assert.Equal(t, []campaignFailure{
		{Shard: 1, Unit: "sim seed 5", Invariant: "SIM-X", Replay: simReplay},
		{Shard: 1, Unit: "fuzz FuzzY in ./fuzz/y", Invariant: "fuzz", Replay: fuzzReplay},
	}, rep.Campaign.Failures)
	assert.Equal(t, 8, rep.Campaign.Units)
	assert.Equal(t, []campaignShardRow{
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
	assert.Equal(t, []simCheck{{ID: "SIM-X", Checked: 60, Applied: 30}}, rep.Sim.Checks)
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

func zeroSeconds(rows []campaignShardRow) []campaignShardRow {
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
	campaign := func(doc map[string]any) map[string]any { return doc["campaign"].(map[string]any) }
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
		want   string
	}{
		{"unknown field", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "shard-1.json"), func(doc map[string]any) { doc["extra"] = 1 })
		}, `shard-1.json: want the JSON nodeproof campaign writes: json: unknown field "extra"`},
		{"wrong type", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "shard-2.json"), func(doc map[string]any) { campaign(doc)["shard"] = "two" })
		}, `shard-2.json: want the JSON nodeproof campaign writes: json: cannot unmarshal string into Go struct field shardInfo.campaign.shard of type int`},
		{"not JSON", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "shard-0.json"), []byte("{"), 0o644))
		}, `shard-0.json: want the JSON nodeproof campaign writes: unexpected EOF`},
		{"index beyond shards", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "shard-2.json"), func(doc map[string]any) { campaign(doc)["shard"] = 3 })
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
				campaign(doc)["plan"].(map[string]any)["sim"].(map[string]any)["hours"] = 9
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
				require.NoError(t, os.Remove(filepath.Join(dir, shardFileName(i))))
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

// TestCampaignFlagErrors: a bad flag or plan is exit 2 naming the flag or
// the plan's field and the rule, before any unit runs.
func TestCampaignFlagErrors(t *testing.T) {
	good := "shards: 2\nsim:\n  seeds: 1..4\n  hours: 1\n"
	for _, tc := range []struct {
		name, plan string
		args       []string
		env        string // JOB_COMPLETION_INDEX; "-" for unset
		want       string
	}{
		{"no plan", "", []string{"--index", "0"}, "-", "--plan must name the campaign's plan file"},
		{"no index", good, nil, "-", "--index is required when $JOB_COMPLETION_INDEX is not set"},
		{"bad env index", good, nil, "x", `$JOB_COMPLETION_INDEX must be a whole number (the --index), got "x"`},
		{"index beyond", good, nil, "2", "--index must be between 0 and 1 (shards - 1), got 2"},
		{"shards disagree", good, []string{"--index", "0", "--shards", "3"}, "-", "--shards 3, but the plan"},
		{"unknown key", good + "extra: 1\n", []string{"--index", "0"}, "-", "extra: unknown field"},
		{"no shards", "sim:\n  seeds: 1..4\n  hours: 1\n", []string{"--index", "0"}, "-", "shards must be between 1 and 10000, got 0"},
		{"nothing", "shards: 2\n", []string{"--index", "0"}, "-", "the plan runs nothing: give sim, suites or fuzz"},
		{"sim seeds", "shards: 1\nsim:\n  seeds: \"4\"\n  hours: 1\n", []string{"--index", "0"}, "-", `sim.seeds must be a range A..B of seeds (whole numbers from 0), got "4"`},
		{"sim hours", "shards: 1\nsim:\n  seeds: 1..2\n  hours: 0\n", []string{"--index", "0"}, "-", "sim.hours must be more than 0"},
		{"sim pods", "shards: 1\nsim:\n  seeds: 1..2\n  hours: 1\n  pods: 1000\n", []string{"--index", "0"}, "-", "sim.pods: 1000 must be between 1 and"},
		{"suite seed 0", "shards: 1\nsuites:\n  seeds: 0..2\n  checks: 1\n  steps: 1\n", []string{"--index", "0"}, "-", `suites.seeds must start at 1 or above, got "0..2"`},
		{"suite names", "shards: 1\nsuites:\n  names: nosuch\n  seeds: 1..2\n  checks: 1\n  steps: 1\n", []string{"--index", "0"}, "-", `suites.names: --suite "nosuch" matches no suite`},
		{"suite checks", "shards: 1\nsuites:\n  seeds: 1..2\n  checks: 0\n  steps: 1\n", []string{"--index", "0"}, "-", "suites.checks must be positive, got 0"},
		{"fuzz duration", "shards: 1\nfuzz:\n  duration: soon\n  binaries: /x\n", []string{"--index", "0"}, "-", `fuzz.duration must be a duration of at least 1s (30s, 1h), got "soon"`},
		{"fuzz targets", "shards: 1\nfuzz:\n  targets: Nope\n  duration: 1s\n  binaries: /x\n", []string{"--index", "0"}, "-", `fuzz.targets "Nope" matches no target in /x; targets: FuzzX, FuzzY`},
		{"too many units", "shards: 1\nsim:\n  seeds: 0..2000000\n  hours: 1\n", []string{"--index", "0"}, "-", `sim.seeds "0..2000000" holds more than 1000000 seeds`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env == "-" {
				// t.Setenv restores the variable; Unsetenv then removes it for this test.
				t.Setenv(jobIndexEnv, "")
				require.NoError(t, os.Unsetenv(jobIndexEnv))
			} else {
				t.Setenv(jobIndexEnv, tc.env)
			}
			args := []string{"campaign", "--out", t.TempDir()}
			if tc.plan != "" {
				args = append(args, "--plan", writePlan(t, tc.plan))
			}
			ran := false
			runners := stubCampaignRunners(nil, "")
			inner := runners.sim
			runners.sim = func(cfg sim.Config, p func(sim.Stats)) sim.Summary { ran = true; return inner(cfg, p) }
			code, stdout, stderr := runRoot(cli.NewRoot(newCampaignCommand(runners)), "", append(args, tc.args...)...)
			assert.Equal(t, cli.StatusUsage, code)
			assert.Empty(t, stdout)
			assert.True(t, strings.HasPrefix(stderr, "nodeproof campaign: "), stderr)
			assert.Contains(t, stderr, tc.want)
			assert.False(t, ran, "a unit ran despite the bad input")
		})
	}
}

// TestCampaignOutCheckedFirst: an --out that cannot be written is exit 2
// naming the flag before any unit runs.
func TestCampaignOutCheckedFirst(t *testing.T) {
	ran := 0
	runners := stubCampaignRunners(nil, "")
	runners.sim = countingSimRunner(&ran)
	code, stdout, stderr := runRoot(cli.NewRoot(newCampaignCommand(runners)), "",
		"campaign", "--plan", writePlan(t, stubPlan), "--index", "0", "--out", "/proc/nodeproof/results")
	assert.Equal(t, cli.StatusUsage, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, `nodeproof campaign: --out "/proc/nodeproof/results" must be a writable directory`)
	assert.Zero(t, ran, "a unit ran before --out was checked")
}

// TestCampaignOutputWriteFails: a shard file that cannot be written after
// the units ran (--out replaced meanwhile), or a stdout that cannot be
// written, is output that was not delivered: exit 1, not a usage error.
func TestCampaignOutputWriteFails(t *testing.T) {
	plan := writePlan(t, stubPlan)
	t.Run("shard file", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "results")
		runners := stubCampaignRunners(nil, "")
		runners.sim = func(cfg sim.Config, _ func(sim.Stats)) sim.Summary {
			require.NoError(t, os.RemoveAll(out))
			require.NoError(t, os.WriteFile(out, nil, 0o644))
			return sim.Summary{Config: cfg, Replay: cfg.ReplayCommand()}
		}
		code, stdout, stderr := runRoot(cli.NewRoot(newCampaignCommand(runners)), "", "campaign", "--plan", plan, "--index", "0", "--out", out)
		assert.Equal(t, cli.StatusFailed, code)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, "nodeproof campaign: writing the output: --out: open "+out+"/.shard-")
	})
	t.Run("stdout", func(t *testing.T) {
		var stderr bytes.Buffer
		code := cli.Execute(cli.NewRoot(newCampaignCommand(stubCampaignRunners(nil, ""))), []string{"campaign", "--plan", plan, "--index", "0", "--out", t.TempDir()},
			strings.NewReader(""), failingWriter{}, &stderr)
		assert.Equal(t, cli.StatusFailed, code)
		assert.Contains(t, stderr.String(), "nodeproof campaign: writing the output: disk full\n")
	})
}

// TestCampaignPlanReadStrictly: a plan is read by the reader of every
// manifest, so its errors name the field path and the rule as theirs do.
// Before, a misspelt key inside sim was named without sim, a repeated key
// by its line alone, a key in the wrong case (Shards) was taken for shards,
// and a second document was dropped.
func TestCampaignPlanReadStrictly(t *testing.T) {
	good := "shards: 2\nsim:\n  seeds: 1..4\n  hours: 1\n"
	for _, tc := range []struct {
		name, plan, want string
	}{
		{"misspelt nested key", good + "  hourz: 2\n", "sim.hourz: unknown field"},
		{"key in the wrong case", strings.Replace(good, "shards", "Shards", 1), "Shards: unknown field"},
		{"duplicate key", good + "shards: 3\n", "shards: duplicate key"},
		{"duplicate nested key", good + "  hours: 2\n", "sim.hours: duplicate key"},
		{"wrong type", strings.Replace(good, "shards: 2", "shards: two", 1), "shards: must be an integer (int), not a string"},
		// YAML reads a bare 4 as a number, and the plan takes it as written.
		{"a number for a string", strings.Replace(good, "seeds: 1..4", "seeds: 4", 1), "sim.seeds: must be a string, not a number"},
		{"second document", good + "---\nshards: 5\n", "document 2 (line 5): the file must hold one document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(jobIndexEnv, "0")
			plan := writePlan(t, tc.plan)
			code, stdout, stderr := runRoot(cli.NewRoot(newCampaignCommand(stubCampaignRunners(nil, ""))), "", "campaign", "--out", t.TempDir(), "--plan", plan)
			assert.Equal(t, cli.StatusUsage, code, "exit status")
			assert.Empty(t, stdout, "stdout")
			assert.Equal(t, "nodeproof campaign: --plan "+plan+": "+tc.want+"\n", stderr)
		})
	}
}

// TestCampaignPlanFromStdin: --plan - reads the plan from stdin, through
// the same reader as every input file.
func TestCampaignPlanFromStdin(t *testing.T) {
	t.Setenv(jobIndexEnv, "0")
	root := cli.NewRoot(newCampaignCommand(stubCampaignRunners(nil, "")))
	code, stdout, stderr := runRoot(root, "shards: 1\nsim: {seeds: 1..2, hourz: 1}\n", "campaign", "--out", t.TempDir(), "--plan", "-")
	assert.Equal(t, cli.StatusUsage, code, "exit status")
	assert.Empty(t, stdout, "stdout")
	assert.Equal(t, "nodeproof campaign: --plan -: sim.hourz: unknown field\n", stderr)

	out := t.TempDir()
	code, _, stderr = runRoot(cli.NewRoot(newCampaignCommand(stubCampaignRunners(nil, ""))), "shards: 1\nsim: {seeds: 1..2, hours: 1}\n", "campaign", "--out", out, "--plan", "-")
	assert.Equal(t, cli.StatusOK, code, "exit status; stderr:\n%s", stderr)
	assert.FileExists(t, filepath.Join(out, "shard-0.json"))
}
