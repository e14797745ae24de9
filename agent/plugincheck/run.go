package plugincheck

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/verify"
)

// Run is Check for a plugin author's go test: every Contract and Kubelet
// finding is a t.Error with its steps and replay line, Advice is t.Log,
// and a set-up failure is t.Fatal. Each message starts with the check's ID
// and severity.
//
// Unless opts.ReplayCommand is set, a replay line is a go test command:
//
//	cd '/path/to/pkg' && NODEPROOF_PLUGINCHECK_SEED=N NODEPROOF_PLUGINCHECK_MUTE=A,B go test -count=1 -run '^TestName$' .
//
// Check reads the seed from SeedEnv when opts.Seed is 0 and mutes the
// checks of MuteEnv, so the failing case runs first, as it ran. A test
// that fixes opts.Seed repeats its whole run, findings included; its
// replay line is the go test command alone.
func Run(t testing.TB, opts Options) *Result {
	t.Helper()
	ctx := context.Background()
	if d, ok := t.(interface{ Context() context.Context }); ok {
		ctx = d.Context()
	}
	if opts.ReplayCommand == "" && opts.goTestReplay == nil {
		opts.goTestReplay = goTestReplay(t.Name(), opts.Seed != 0)
	}
	res, err := Check(ctx, opts)
	if err != nil {
		t.Fatal(err)
		return nil
	}
	if res.Interrupted {
		t.Errorf("plugincheck: %s: the test's context ended", res.Verdict())
	}
	for _, f := range res.Findings {
		msg := describe(f)
		if f.Severity == Advice {
			t.Log(msg)
		} else {
			t.Error(msg)
		}
	}
	return res
}

// goTestReplay builds the replay lines of the test named test, run from
// the working directory, which go test makes the package's directory.
func goTestReplay(test string, seedFixed bool) func(seed uint64, muted []string) string {
	cd := ""
	if dir, err := os.Getwd(); err == nil {
		cd = "cd " + verify.Quote(dir) + " && "
	}
	goTest := "go test -count=1 -run " + verify.Quote(anchoredTest(test)) + " ."
	return func(seed uint64, muted []string) string {
		if seedFixed {
			return cd + goTest
		}
		env := fmt.Sprintf("%s=%d ", SeedEnv, seed)
		if len(muted) > 0 {
			env += MuteEnv + "=" + strings.Join(muted, ",") + " "
		}
		return cd + env + goTest
	}
}

// anchoredTest turns a test name ("TestA/sub_case") into a -run pattern
// that matches that test alone.
func anchoredTest(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// describe writes a finding out in full: check, severity, message, steps,
// replay.
func describe(f Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s", f.Check, f.Severity, f.Message)
	if len(f.Steps) > 0 {
		b.WriteString("\nsteps:")
		for _, s := range f.Steps {
			b.WriteString("\n  " + s)
		}
	}
	if f.Replay != "" {
		b.WriteString("\nreplay: " + f.Replay)
	}
	return b.String()
}
