package plugincheck

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
	"github.com/nodeproof/nodeproof/verify"
)

// recordingTB keeps what Run reports instead of failing the test.
type recordingTB struct {
	testing.TB
	errors, logs []string
}

func (r *recordingTB) Helper()           {}
func (r *recordingTB) Error(args ...any) { r.errors = append(r.errors, fmt.Sprint(args...)) }
func (r *recordingTB) Log(args ...any)   { r.logs = append(r.logs, fmt.Sprint(args...)) }

// replayLine matches Run's replay line of this test.
var replayLine = regexp.MustCompile(`\nreplay: cd (\S+) && ` + SeedEnv + `=(\d+) (?:` + MuteEnv + `=(\S+) )?go test -count=1 -run '\^TestRunReplayLines\$' \.$`)

// TestRunReplayLines: Run's findings carry go test replay lines, and
// running a line's environment again repeats its finding as the first
// case, with the same shrunk calls: for the first finding of a run and
// for the one found with it muted.
func TestRunReplayLines(t *testing.T) {
	t.Setenv(SeedEnv, "")
	t.Setenv(MuteEnv, "")
	broken := func() testplugin.Config {
		cfg := cleanPlugin(socketDir(t))
		// A device that fails after some calls makes the plugin answer
		// a case by what ran before it, which a replay, starting with
		// the case, does not repeat.
		cfg.DeviceFailure = nil
		cfg.RejectUnknownIDs = false
		cfg.Faults[testplugin.GetPreferredAllocation] = testplugin.Fault{Malformed: testplugin.MissingMustInclude}
		return cfg
	}
	cfg := broken()
	rec := &recordingTB{TB: t}
	launch, stop := launcher(cfg)
	res := Run(rec, Options{Dir: cfg.Dir, Launch: launch, Checks: 30, CallTimeout: callBound(cfg)})
	_, err := stop()
	require.NoError(t, err)
	require.Equal(t, []string{PrefMustInclude, AllocUnknown}, findingChecks(res))
	// The contract finding is an error, the advice a log line.
	require.Len(t, rec.errors, 1)
	require.Len(t, rec.logs, 1)
	assert.Equal(t, describe(res.Findings[0]), rec.errors[0])
	assert.Equal(t, describe(res.Findings[1]), rec.logs[0])
	wd, err := os.Getwd()
	require.NoError(t, err)

	muted := 0
	for _, f := range res.Findings {
		m := replayLine.FindStringSubmatch(describe(f))
		require.NotNil(t, m, "%s's replay line: %q", f.Check, f.Replay)
		assert.Equal(t, verify.Quote(wd), m[1])
		if m[3] != "" {
			muted++
		}
		t.Setenv(SeedEnv, m[2])
		t.Setenv(MuteEnv, m[3])
		cfg := broken()
		launch, stop := launcher(cfg)
		again, err := Check(context.Background(), Options{Dir: cfg.Dir, Launch: launch, Checks: 30, CallTimeout: callBound(cfg)})
		require.NoError(t, err)
		_, err = stop()
		require.NoError(t, err)
		assert.Equal(t, m[2], fmt.Sprint(again.Seed))
		var replayed *Finding
		for _, g := range again.Findings {
			if g.Check == f.Check {
				replayed = &g
			}
		}
		require.NotNil(t, replayed, "the replay of %s found %v", f.Check, findingChecks(again))
		assert.Equal(t, f.Message, replayed.Message)
		assert.Equal(t, f.Steps, replayed.Steps)
		// Check's own replay line names the same case and muted checks.
		want := " --seed " + m[2]
		if m[3] != "" {
			want += " --mute " + m[3]
		}
		assert.Equal(t, "nodeproof plugin-check --dir "+cfg.Dir+want, replayed.Replay)
	}
	assert.Equal(t, 1, muted, "the finding found second mutes the first")
}

// TestRunFixedSeedReplaysWholeRun: with opts.Seed fixed by the test, the
// replay line is the go test command alone, which repeats the whole run.
func TestRunFixedSeedReplaysWholeRun(t *testing.T) {
	replay := goTestReplay("TestX/a_b", true)
	wd, err := os.Getwd()
	require.NoError(t, err)
	assert.Equal(t, "cd "+verify.Quote(wd)+" && go test -count=1 -run '^TestX$/^a_b$' .", replay(7, []string{AllocUnknown}))
	assert.Equal(t, "cd "+verify.Quote(wd)+" && "+SeedEnv+"=7 "+MuteEnv+"=PC-ALLOC-UNKNOWN go test -count=1 -run '^TestX$/^a_b$' .",
		goTestReplay("TestX/a_b", false)(7, []string{AllocUnknown}))
}

// TestEnvironmentErrors: a bad seed or muted check in the environment is
// a set-up error naming the variable.
func TestEnvironmentErrors(t *testing.T) {
	t.Setenv(SeedEnv, "x")
	_, err := Check(context.Background(), Options{Dir: socketDir(t)})
	require.ErrorContains(t, err, SeedEnv+`="x": must be a positive integer`)
	t.Setenv(SeedEnv, "")
	t.Setenv(MuteEnv, "PC-REG-VERSION")
	_, err = Check(context.Background(), Options{Dir: socketDir(t)})
	require.ErrorContains(t, err, `Options.Mute (or `+MuteEnv+`): "PC-REG-VERSION" is not a check of the kubelet-call properties`)
}
