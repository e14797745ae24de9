package plugincheck

import (
	"context"
	"strings"
	"testing"
)

// Run is Check for a plugin author's go test: every Contract and Kubelet
// finding is a t.Errorf with its steps and replay line, Advice is t.Log,
// and a set-up failure is t.Fatal. Each message starts with the check's ID.
func Run(t testing.TB, opts Options) *Result {
	t.Helper()
	ctx := context.Background()
	if d, ok := t.(interface{ Context() context.Context }); ok {
		ctx = d.Context()
	}
	res, err := Check(ctx, opts)
	if err != nil {
		t.Fatal(err)
		return nil
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

// describe writes a finding out in full: message, shrunk steps, replay.
func describe(f Finding) string {
	var b strings.Builder
	b.WriteString(f.Message)
	b.WriteString(" [" + string(f.Severity) + "]")
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
