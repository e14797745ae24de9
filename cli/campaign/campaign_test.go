package campaign

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/campaign"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/properties"
)

// stubRecorder runs nothing: every simulation seed and suite passes. It
// counts the seeds in ran and calls before, when set, ahead of each.
type stubRecorder struct {
	ran    *int
	before func()
}

func (r stubRecorder) Sim(campaign.ResolvedSim, uint64) *campaign.Failure {
	if r.before != nil {
		r.before()
	}
	*r.ran++
	return nil
}

func (r stubRecorder) Suite(campaign.ResolvedSuites, string, uint64) *campaign.Failure {
	*r.ran++
	return nil
}

func (r stubRecorder) File(o campaign.Outcome) any { return o }

// stubDeps are a campaign's dependencies with stubRecorder, fuzz targets
// FuzzX and FuzzY that pass, and the registered suites.
func stubDeps(ran *int, before func()) Deps {
	return Deps{
		Suites: properties.Suites(),
		ListFuzz: func(string) ([]campaign.FuzzTarget, error) {
			return []campaign.FuzzTarget{{Package: "fuzz/x", Name: "FuzzX"}, {Package: "fuzz/y", Name: "FuzzY"}}, nil
		},
		Fuzz: func(job campaign.FuzzJob) campaign.FuzzResult {
			*ran++
			return campaign.FuzzResult{Package: job.Target.Package, Target: job.Target.Name, Passed: true}
		},
		NewRecorder: func(io.Writer) campaign.Recorder { return stubRecorder{ran: ran, before: before} },
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

// runRoot runs a command line against root and returns the exit status and
// what was printed.
func runRoot(root *cobra.Command, stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = cli.Execute(root, args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestCampaignShardLines: a shard runs its share of the units in plan order,
// a line each on stderr, prints its file's path and writes the file.
func TestCampaignShardLines(t *testing.T) {
	out := t.TempDir()
	ran := 0
	code, stdout, stderr := runRoot(cli.NewRoot(NewCommand(stubDeps(&ran, nil))), "", "campaign", "--plan", writePlan(t, stubPlan), "--index", "1", "--out", out)
	require.Equal(t, cli.StatusOK, code, stderr)
	assert.Equal(t, filepath.Join(out, "shard-1.json")+"\n", stdout)
	assert.Equal(t, "shard 1 of 3: 3 units\n[1/3] sim seed 2: passed\n[2/3] sim seed 5: passed\n[3/3] fuzz FuzzY in ./fuzz/y: passed\n", stderr)
	assert.Equal(t, 3, ran)
	assert.FileExists(t, filepath.Join(out, "shard-1.json"))
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
		{"suite names", "shards: 1\nsuites:\n  names: nosuch\n  seeds: 1..2\n  checks: 1\n  steps: 1\n", []string{"--index", "0"}, "-", `suites.names: "nosuch" matches no suite`},
		{"suite checks", "shards: 1\nsuites:\n  seeds: 1..2\n  checks: 0\n  steps: 1\n", []string{"--index", "0"}, "-", "suites.checks must be positive, got 0"},
		{"fuzz duration", "shards: 1\nfuzz:\n  duration: soon\n  binaries: /x\n", []string{"--index", "0"}, "-", `fuzz.duration must be a duration of at least 1s (30s, 1h), got "soon"`},
		{"fuzz targets", "shards: 1\nfuzz:\n  targets: Nope\n  duration: 1s\n  binaries: /x\n", []string{"--index", "0"}, "-", `fuzz.targets "Nope" matches no target in /x; targets: FuzzX, FuzzY`},
		{"too many units", "shards: 1\nsim:\n  seeds: 0..2000000\n  hours: 1\n", []string{"--index", "0"}, "-", `sim.seeds "0..2000000" holds more than 1000000 seeds`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env == "-" {
				// t.Setenv restores the variable; Unsetenv then removes it for this test.
				t.Setenv(JobIndexEnv, "")
				require.NoError(t, os.Unsetenv(JobIndexEnv))
			} else {
				t.Setenv(JobIndexEnv, tc.env)
			}
			args := []string{"campaign", "--out", t.TempDir()}
			if tc.plan != "" {
				args = append(args, "--plan", writePlan(t, tc.plan))
			}
			ran := 0
			code, stdout, stderr := runRoot(cli.NewRoot(NewCommand(stubDeps(&ran, nil))), "", append(args, tc.args...)...)
			assert.Equal(t, cli.StatusUsage, code)
			assert.Empty(t, stdout)
			assert.True(t, strings.HasPrefix(stderr, "nodeproof campaign: "), stderr)
			assert.Contains(t, stderr, tc.want)
			assert.Zero(t, ran, "a unit ran despite the bad input")
		})
	}
}

// TestCampaignOutCheckedFirst: an --out that cannot be written is exit 2
// naming the flag before any unit runs.
func TestCampaignOutCheckedFirst(t *testing.T) {
	ran := 0
	code, stdout, stderr := runRoot(cli.NewRoot(NewCommand(stubDeps(&ran, nil))), "",
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
		var ran int
		deps := stubDeps(&ran, func() {
			require.NoError(t, os.RemoveAll(out))
			require.NoError(t, os.WriteFile(out, nil, 0o644))
		})
		code, stdout, stderr := runRoot(cli.NewRoot(NewCommand(deps)), "", "campaign", "--plan", plan, "--index", "0", "--out", out)
		assert.Equal(t, cli.StatusFailed, code)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, "nodeproof campaign: writing the output: --out: open "+out+"/.shard-")
	})
	t.Run("stdout", func(t *testing.T) {
		var stderr bytes.Buffer
		code := cli.Execute(cli.NewRoot(NewCommand(stubDeps(new(int), nil))), []string{"campaign", "--plan", plan, "--index", "0", "--out", t.TempDir()},
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
			t.Setenv(JobIndexEnv, "0")
			plan := writePlan(t, tc.plan)
			code, stdout, stderr := runRoot(cli.NewRoot(NewCommand(stubDeps(new(int), nil))), "", "campaign", "--out", t.TempDir(), "--plan", plan)
			assert.Equal(t, cli.StatusUsage, code, "exit status")
			assert.Empty(t, stdout, "stdout")
			assert.Equal(t, "nodeproof campaign: --plan "+plan+": "+tc.want+"\n", stderr)
		})
	}
}

// TestCampaignPlanFromStdin: --plan - reads the plan from stdin, through
// the same reader as every input file.
func TestCampaignPlanFromStdin(t *testing.T) {
	t.Setenv(JobIndexEnv, "0")
	root := cli.NewRoot(NewCommand(stubDeps(new(int), nil)))
	code, stdout, stderr := runRoot(root, "shards: 1\nsim: {seeds: 1..2, hourz: 1}\n", "campaign", "--out", t.TempDir(), "--plan", "-")
	assert.Equal(t, cli.StatusUsage, code, "exit status")
	assert.Empty(t, stdout, "stdout")
	assert.Equal(t, "nodeproof campaign: --plan -: sim.hourz: unknown field\n", stderr)

	out := t.TempDir()
	code, _, stderr = runRoot(cli.NewRoot(NewCommand(stubDeps(new(int), nil))), "shards: 1\nsim: {seeds: 1..2, hours: 1}\n", "campaign", "--out", out, "--plan", "-")
	assert.Equal(t, cli.StatusOK, code, "exit status; stderr:\n%s", stderr)
	assert.FileExists(t, filepath.Join(out, "shard-0.json"))
}
