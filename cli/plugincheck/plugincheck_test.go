package plugincheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pc "github.com/nodeproof/nodeproof/agent/plugincheck"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/verify"
)

// testpluginBinary builds cmd/testplugin once per test binary.
var testpluginBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "testplugin-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "testplugin")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/nodeproof/nodeproof/cmd/testplugin").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build cmd/testplugin: %v\n%s", err, out)
	}
	return bin, nil
})

func buildTestplugin(t *testing.T) string {
	t.Helper()
	bin, err := testpluginBinary()
	require.NoError(t, err)
	return bin
}

// crashpluginBinary builds testdata/crashplugin once per test binary.
var crashpluginBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "crashplugin-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "crashplugin")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/crashplugin").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build testdata/crashplugin: %v\n%s", err, out)
	}
	return bin, nil
})

// TestPluginCheckFlagErrors: every bad flag is exit 2 naming the flag,
// before any plugin starts.
func TestPluginCheckFlagErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct{ args, want string }{
		{"", "give exactly one of --dir (a plugin already running) and --exec (a plugin to start)"},
		{"--dir /tmp --exec true", "give exactly one of --dir"},
		{"--dir=", "--dir must name a directory"},
		{"--exec=", "--exec must name a command"},
		{"--dir /no/such/dir", `--dir "/no/such/dir" must be an existing directory`},
		{"--dir " + file, "must be a directory, not a file"},
		{"--dir /tmp --exec-env X", "--exec-env goes with --exec"},
		{"--exec true --exec-env A=B", `--exec-env must be an environment variable name`},
		{"--exec true --exec-env 1X", `--exec-env must be an environment variable name`},
		{"--exec true --checks 0", "--checks must be positive, got 0"},
		{"--exec true --register-timeout 0s", "--register-timeout must be positive"},
		{"--exec true --call-timeout -1s", "--call-timeout must be positive"},
		{"--exec true --shrink-time 0s", "--shrink-time must be positive, got 0s"},
		{"--exec true --out=", "--out must name a directory"},
		{"--exec true --seed x", `invalid argument "x" for "--seed" flag`},
		{"--exec true --mute PC-REG-VERSION", `--mute: "PC-REG-VERSION" is not a check of the generated kubelet calls; they are PC-PREF-ANSWER, `},
		{"--exec true extra", `unexpected argument "extra"`},
	} {
		t.Run(tc.args, func(t *testing.T) {
			code, stdout, stderr := runNodeproof("", append([]string{"plugin-check"}, strings.Fields(tc.args)...)...)
			assert.Equal(t, cli.StatusUsage, code)
			assert.Contains(t, stderr, "nodeproof plugin-check: ")
			assert.Contains(t, stderr, tc.want)
			assert.Empty(t, stdout)
		})
	}
}

// TestPluginCheckCleanTestplugin runs the built testplugin through --exec:
// every check passes and --out holds the three files, which agree.
func TestPluginCheckCleanTestplugin(t *testing.T) {
	bin := buildTestplugin(t)
	out := filepath.Join(t.TempDir(), "report")
	code, stdout, stderr := runNodeproof("", "plugin-check", "--exec", bin, "--seed", "1", "--checks", "30", "--out", out)
	require.Equal(t, cli.StatusOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Empty(t, stderr, "no progress off a terminal, no plugin output on success")
	for _, c := range pc.Checks() {
		assert.Regexp(t, `\n`+c.ID+` +`+string(c.Severity)+` +\d+ +\d+  passed\n`, stdout)
	}
	assert.Contains(t, stdout, "plugin example.com/testplugin on testplugin.sock, version v1beta1,")
	assert.Regexp(t, `\npassed; \d+ check evaluations in `, stdout)

	var report pc.Report
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &report))
	assert.True(t, report.Passed)
	assert.Equal(t, uint64(1), report.Seed)
	assert.Equal(t, "--exec "+verify.Quote(bin), report.Target)
	assert.Equal(t, "nodeproof plugin-check --exec "+verify.Quote(bin)+" --checks 30 --seed 1", report.Replay)
	assert.Equal(t, pc.Plugin{ResourceName: "example.com/testplugin", Endpoint: "testplugin.sock", Version: "v1beta1",
		Options: pc.PluginOptions{PreStartRequired: true, GetPreferredAllocationAvailable: true}, Devices: 5, Healthy: 4}, report.Plugin)
	require.Len(t, report.Checks, len(pc.Checks()))
	assert.Empty(t, report.Findings)
	assert.Contains(t, string(data), `"findings": []`, "no findings is [], not null")
	// The restart ran by default with --exec.
	for _, c := range report.Checks {
		if c.ID == pc.RestartReregister {
			assert.Equal(t, 1, c.Run)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "**passed. No contract or kubelet check failed.**")
	assert.Contains(t, string(md), "| PC-RESTART-REREGISTER | kubelet |")
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), `<div id="verdict" class="verdict passed">`)
	assert.Contains(t, string(page), "<code>PC-ALLOC-ANSWER</code>")
}

// TestPluginCheckLegalKnobs: the built testplugin with every legal
// behaviour on (a device failing mid-run, a new socket name after the
// restart, several IDs per host device) passes every check, and a reversed
// answer to several container requests is advice, which does not fail
// the run (#25).
func TestPluginCheckLegalKnobs(t *testing.T) {
	bin := buildTestplugin(t)
	for flags, advice := range map[string]string{
		"--fail-device-after 3 --reregister-endpoint again.sock --ids-per-host-device 2": "",
		"--fault Allocate=reversed-container-responses":                                  pc.AllocOrder,
	} {
		t.Run(flags, func(t *testing.T) {
			code, stdout, stderr := runNodeproof("", "plugin-check", "--exec", bin+" "+flags, "--seed", "1", "--checks", "30")
			require.Equal(t, cli.StatusOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			if advice == "" {
				assert.Regexp(t, `\npassed; `, stdout)
				return
			}
			assert.Regexp(t, `\n`+advice+` +advice +\d+ +\d+  FAILED\n`, stdout)
			assert.Regexp(t, `\npassed, with 1 piece of advice; `, stdout)
		})
	}
}

// TestPluginCheckFaultyKnobs: a knob of the test plugin makes the run exit
// 1, naming the check that catches it, with the plugin's output shown.
func TestPluginCheckFaultyKnobs(t *testing.T) {
	bin := buildTestplugin(t)
	// A bound a healthy answer can meet on a loaded machine turns load into
	// findings: only the wait that must run out (the registration that
	// never comes again) gets a short one.
	for _, tc := range []struct{ flags, check, registerTimeout string }{
		{"--fault GetPreferredAllocation=missing-must-include", pc.PrefMustInclude, "30s"},
		{"--fault Allocate=no-container-responses", pc.AllocAnswer, "30s"},
		{"--fault ListAndWatch=duplicate-ids", pc.LawIDs, "30s"},
		{"--no-reregister", pc.RestartReregister, "3s"},
	} {
		t.Run(tc.flags, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "report")
			code, stdout, stderr := runNodeproof("", "plugin-check", "--exec", bin+" "+tc.flags, "--seed", "1", "--checks", "30",
				"--register-timeout", tc.registerTimeout, "--call-timeout", "30s", "--out", out)
			require.Equal(t, cli.StatusFailed, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			assert.Regexp(t, `\n`+tc.check+` +\w+ +\d+ +\d+  FAILED\n`, stdout)
			// The finding's line names its check once.
			assert.Regexp(t, `\n`+tc.check+` \(\w+\): [^\n]+\n`, stdout)
			assert.NotRegexp(t, `\n`+tc.check+` \(\w+\): [^\n]*`+tc.check, stdout)
			assert.Regexp(t, `\nFAILED: \d+ findings?(, and \d+ pieces? of advice)?; `, stdout)
			assert.Contains(t, stderr, "the plugin's output ("+bin+" "+tc.flags+"):\n")
			assert.Contains(t, stderr, "msg=serving")

			var report pc.Report
			data, err := os.ReadFile(filepath.Join(out, "report.json"))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &report))
			assert.False(t, report.Passed)
			var checks []string
			for _, f := range report.Findings {
				checks = append(checks, f.Check)
			}
			assert.Contains(t, checks, tc.check)
			md, err := os.ReadFile(filepath.Join(out, "report.md"))
			require.NoError(t, err)
			assert.Contains(t, string(md), "### "+tc.check+" (")
		})
	}
}

// TestPluginCheckAdviceOnly: a plugin whose only finding is advice passes
// (exit 0), and the verdict says so without calling it a failure. A
// --shrink-time other than the default is in the replay lines.
func TestPluginCheckAdviceOnly(t *testing.T) {
	bin := buildTestplugin(t)
	code, stdout, stderr := runNodeproof("", "plugin-check", "--exec", bin+" --accept-unknown", "--seed", "1", "--checks", "10", "--restart=false", "--shrink-time", "5s")
	require.Equal(t, cli.StatusOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Regexp(t, `\n`+pc.AllocUnknown+` \(advice\): Allocate\(\[plugincheck-unknown-\d\]\) of devices `, stdout)
	assert.Regexp(t, `\npassed, with 1 piece of advice; \d+ check evaluations in `, stdout)
	assert.Regexp(t, `\n  replay: nodeproof plugin-check --exec '[^']+' --checks 10 --restart=false --shrink-time 5s --seed \d+\n`, stdout)
}

// TestPluginCheckRegistrationKnobs: testplugin's registration knobs are
// caught by their checks. The run may end before the plugin logs anything
// (its socket is not where it said), so its output is not asserted.
func TestPluginCheckRegistrationKnobs(t *testing.T) {
	bin := buildTestplugin(t)
	// Only the dial of an endpoint nobody serves must run out of its bound.
	for _, tc := range []struct{ flags, check, callTimeout string }{
		{"--register-endpoint elsewhere.sock", pc.RegEndpoint, "3s"},
		{"--register-options none", pc.RegOptions, "30s"},
	} {
		t.Run(tc.flags, func(t *testing.T) {
			code, stdout, stderr := runNodeproof("", "plugin-check", "--exec", bin+" "+tc.flags, "--seed", "1", "--checks", "10",
				"--register-timeout", "30s", "--call-timeout", tc.callTimeout)
			require.Equal(t, cli.StatusFailed, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			assert.Regexp(t, `\n`+tc.check+` +\w+ +\d+ +\d+  FAILED\n`, stdout)
		})
	}
}

// TestPluginCheckEveryFinding: a plugin with two faults gets both
// findings, each with its calls and a replay line of its own, and the
// replay line of the one found second (with the first muted) repeats it.
func TestPluginCheckEveryFinding(t *testing.T) {
	bin := buildTestplugin(t)
	plugin := bin + " --accept-unknown --fault GetPreferredAllocation=missing-must-include"
	code, stdout, stderr := runNodeproof("", "plugin-check", "--exec", plugin, "--seed", "1", "--checks", "30", "--restart=false")
	require.Equal(t, cli.StatusFailed, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	prefix := regexp.QuoteMeta("nodeproof plugin-check --exec " + verify.Quote(plugin) + " --checks 30 --restart=false --seed ")
	replays := map[string][]string{}
	for _, check := range []string{pc.PrefMustInclude, pc.AllocUnknown} {
		finding := regexp.MustCompile(`\n` + check + ` \(\w+\): [^\n]+\n  kubelet calls:\n(    step [^\n]+\n(?:      [^\n]+\n)*)+  replay: ` +
			prefix + `(\d+)(?: --mute (\S+))?\n`).FindStringSubmatch(stdout)
		require.NotNil(t, finding, "%s with its calls and replay line in:\n%s", check, stdout)
		replays[check] = finding[2:]
	}
	// One of the two was found with the other muted.
	second := pc.AllocUnknown
	if replays[second][1] == "" {
		second = pc.PrefMustInclude
	}
	seed, muted := replays[second][0], replays[second][1]
	require.NotEmpty(t, muted, "replays %v", replays)
	code, again, stderr := runNodeproof("", "plugin-check", "--exec", plugin, "--checks", "30", "--restart=false", "--seed", seed, "--mute", muted)
	require.Equal(t, cli.StatusFailed, code, "stdout:\n%s\nstderr:\n%s", again, stderr)
	assert.Contains(t, again, "\n"+second+" (")
	assert.Contains(t, again, "--seed "+seed+" --mute "+muted+"\n")
	assert.NotContains(t, again, "\n"+muted+" (", "the muted check is not reported")
}

// TestPluginCheckInterrupted: SIGINT during a run (sent by the plugin, once
// it has registered, to its shell's parent: this test's process, where the
// command waits for the signal) ends it with exit 130, no finding, and a
// report that says it was interrupted. The plugin's Allocate and the bounds
// take an hour, so only the interrupt ends the run.
func TestPluginCheckInterrupted(t *testing.T) {
	bin := buildTestplugin(t)
	out := filepath.Join(t.TempDir(), "report")
	plugin := bin + ` --fault Allocate=delay:1h 2>&1 | { while read -r line; do case $line in *msg=serving*) kill -INT $PPID;; esac; done; }`
	code, stdout, stderr := runNodeproof("", "plugin-check", "--exec", plugin, "--seed", "1", "--call-timeout", "1h", "--register-timeout", "1h", "--out", out)
	require.Equal(t, cli.StatusInterrupted, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr, "nodeproof plugin-check: interrupted\n")
	assert.Regexp(t, `\nINTERRUPTED before the run finished; \d+ check evaluations in `, stdout)
	assert.NotContains(t, stdout, "FAILED")

	var report pc.Report
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &report))
	assert.True(t, report.Interrupted)
	assert.False(t, report.Passed)
	assert.Empty(t, report.Findings)
	assert.Equal(t, "INTERRUPTED before the run finished", report.Verdict)
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "**INTERRUPTED before the run finished.**")
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), "<strong>INTERRUPTED before the run finished.</strong>")
}

// TestPluginCheckPluginExits: a plugin process that exits after it
// registered (testdata/crashplugin, with status 3 in the middle of the smoke
// pass's Allocate) is one finding, naming its exit status, reported at
// once: the call bound is an hour, and a run that waited out the restart's
// registration bound would take a minute.
func TestPluginCheckPluginExits(t *testing.T) {
	bin, err := crashpluginBinary()
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "report")
	started := time.Now()
	code, stdout, stderr := runNodeproof("", "plugin-check", "--exec", bin, "--seed", "1", "--call-timeout", "1h", "--register-timeout", "1m", "--out", out)
	require.Equal(t, cli.StatusFailed, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Less(t, time.Since(started), 30*time.Second, "the exit ends the run at once")
	assert.Regexp(t, `\n`+pc.PluginAlive+` \(kubelet\): the plugin exited \(exit status 3\) during the smoke pass, \S+ after it registered\n`, stdout)
	assert.Contains(t, stdout, "\nFAILED: 1 finding; ")
	assert.Contains(t, stderr, "crashplugin: crashing in Allocate\n", "the plugin's output is shown")

	var report pc.Report
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &report))
	require.Len(t, report.Findings, 1, "findings: %+v", report.Findings)
	assert.Equal(t, pc.PluginAlive, report.Findings[0].Check)
	assert.False(t, report.Interrupted)
}

// TestPluginCheckExecFails: a command that exits before registering is a
// set-up failure, exit 2, with its status and output.
func TestPluginCheckExecFails(t *testing.T) {
	code, stdout, stderr := runNodeproof("", "plugin-check", "--exec", "echo no plugin here; exit 3", "--register-timeout", "30s")
	assert.Equal(t, cli.StatusUsage, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "no plugin here\n")
	assert.Contains(t, stderr, `exited before it registered: exit status 3`)
}

// TestPluginCheckDirAndPlaceholder: --exec-env ” hands the directory
// through {dir} alone, and --dir with a plugin already waiting there works.
func TestPluginCheckDirAndPlaceholder(t *testing.T) {
	bin := buildTestplugin(t)
	code, stdout, stderr := runNodeproof("", "plugin-check", "--exec", bin+" --dir {dir}", "--exec-env", "", "--seed", "2", "--checks", "10")
	require.Equal(t, cli.StatusOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stdout, "--exec-env '' --checks 10 --seed 2")

	dir, err := os.MkdirTemp("", "pcdir")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	plugin := exec.Command(bin, "--dir", dir)
	require.NoError(t, plugin.Start())
	t.Cleanup(func() {
		_ = plugin.Process.Kill()
		_ = plugin.Wait()
	})
	code, stdout, stderr = runNodeproof("", "plugin-check", "--dir", dir, "--seed", "3", "--checks", "10")
	require.Equal(t, cli.StatusOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Regexp(t, `\n`+pc.RestartReregister+` +kubelet +0 +0  not run\n`, stdout, "no restart by default with --dir")
}

// runNodeproof runs `nodeproof plugin-check ...` as main does, reading
// stdin, and returns the exit status and what was printed.
func runNodeproof(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = cli.Execute(cli.NewRoot(NewCommand()), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestPluginCheckCountsAreBounded: a --checks beyond its bound is a usage
// error before any work, like report's counts.
func TestPluginCheckCountsAreBounded(t *testing.T) {
	status, stdout, stderr := runNodeproof("", "plugin-check", "--dir", filepath.Join(t.TempDir(), "out"), "--checks", "10001")
	assert.Equal(t, cli.StatusUsage, status)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "--checks: 10001 exceeds the bound of 10000")
}
