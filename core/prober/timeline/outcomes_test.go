package timeline

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/core/prober"
)

func TestParseOutcomes(t *testing.T) {
	o, err := ParseOutcomes("healthy 20s, timeout 10s, repeat; web.liveness = failing; readiness=warning 5s, error")
	require.NoError(t, err)
	require.Len(t, o.Rules, 3)
	assert.Equal(t, "web.liveness", o.Rules[1].Selector())
	assert.Equal(t, Failing, o.PatternFor("web", prober.Liveness).At(0), "container.type wins")
	assert.Equal(t, Healthy, o.PatternFor("db", prober.Liveness).At(45*time.Second), "the rule without a selector repeats every 30 s")
	assert.Equal(t, Timeout, o.PatternFor("db", prober.Liveness).At(50*time.Second))
	assert.Equal(t, Error, o.PatternFor("db", prober.Readiness).At(time.Hour), "the last step lasts")
	assert.Equal(t, "healthy 20s, timeout 10s, repeat", o.PatternFor("db", prober.Startup).String())

	since, ok := o.PatternFor("db", prober.Startup).UnhealthySince(85 * time.Second)
	require.True(t, ok)
	assert.Equal(t, 80*time.Second, since)
	_, ok = o.PatternFor("db", prober.Startup).UnhealthySince(75 * time.Second)
	assert.False(t, ok)
	since, ok = Pattern{Steps: []Step{{Healthy, 30 * time.Second}, {Timeout, 10 * time.Second}, {State: Failing}}}.UnhealthySince(time.Minute)
	require.True(t, ok)
	assert.Equal(t, 30*time.Second, since, "timeout then failing is one unhealthy run")
}

// TestParseOutcomesErrors: every error names the column and the rule.
func TestParseOutcomesErrors(t *testing.T) {
	for script, want := range map[string]string{
		"liveness=healthy 30s, failng":       `column 23: "failng" is not a state: want healthy, failing, timeout, warning or error`,
		"healthy, failing":                   `column 10: the step before "failing" has no duration: only the last step may last for the rest of the container's life`,
		"healthy 30x":                        `column 9: "30x" is not a duration such as 30s or 1m30s`,
		"healthy -1s, failing":               `column 9: duration -1s must be more than 0 and at most 24h0m0s`,
		"liveness=healthy; liveness=failing": `column 19: selector "liveness" is given twice (first at column 1)`,
		"aliveness=healthy":                  `column 1: selector "aliveness": want liveness, readiness, startup or CONTAINER.TYPE with one of them`,
		"Web.liveness=healthy":               `column 1: selector "Web.liveness": container "Web" is not a container name (lower-case letters, digits and '-')`,
		"healthy 5s, repeat, failing":        `column 13: repeat must be the last word of a pattern`,
		"healthy 5s, failing, repeat":        `column 22: a repeated pattern needs a duration on every step (failing has none)`,
		"healthy;":                           `column 9: empty step: want a state (healthy, failing, timeout, warning, error) and a duration`,
		"healthy 0s, failing":                `column 9: duration 0s must be more than 0 and at most 24h0m0s`,
		"healthy 24h0m1s, failing":           `column 9: duration 24h0m1s must be more than 0 and at most 24h0m0s`,
		"healthy;  Web.liveness=failing":     `column 11: selector "Web.liveness": container "Web" is not a container name (lower-case letters, digits and '-')`,
	} {
		_, err := ParseOutcomes(script)
		assert.EqualError(t, err, want, script)
	}
	o, err := ParseOutcomes("db.readiness=failing")
	require.NoError(t, err)
	assert.EqualError(t, o.Check(webPod()), `column 1: selector "db.readiness" selects no probe of the pods in the file`)
	o, err = ParseOutcomes("startup=failing")
	require.NoError(t, err)
	assert.EqualError(t, o.Check(webPod()), `column 1: selector "startup" selects no probe of the pods in the file`)
}

// TestParseOutcomesBounds: a step of exactly MaxStepDuration, and a
// container name of 63 characters using each end of the ranges a-z and
// 0-9, parse; a name of 64 does not.
func TestParseOutcomesBounds(t *testing.T) {
	o, err := ParseOutcomes("healthy 24h, failing")
	require.NoError(t, err)
	assert.Equal(t, []Step{{Healthy, MaxStepDuration}, {State: Failing}}, o.Rules[0].Pattern.Steps)

	for _, name := range []string{"a0-z9", strings.Repeat("a", 63)} {
		o, err := ParseOutcomes(name + ".liveness=failing")
		require.NoError(t, err, name)
		assert.Equal(t, name, o.Rules[0].Container)
	}
	long := strings.Repeat("a", 64)
	_, err = ParseOutcomes(long + ".liveness=failing")
	assert.EqualError(t, err, fmt.Sprintf(`column 1: selector "%s.liveness": container "%s" is not a container name (lower-case letters, digits and '-')`, long, long))
}

// TestPatternStringOfNoSteps: the zero Pattern prints as nothing.
func TestPatternStringOfNoSteps(t *testing.T) {
	assert.Equal(t, "", Pattern{}.String())
	assert.Equal(t, "healthy", HealthyPattern.String())
}

// TestAnswerTexts: the output of an answer at once is the handler's text
// for that state (a gRPC SERVING says "service healthy", an HTTP 200 and
// an exit 0 nothing).
func TestAnswerTexts(t *testing.T) {
	grpc := prober.Handler{GRPC: &prober.GRPCAction{Port: 9000}}
	httpGet := prober.Handler{HTTPGet: &prober.HTTPGetAction{Path: "/", Port: prober.PortNumber(80)}}
	exec := prober.Handler{Exec: &prober.ExecAction{Command: []string{"true"}}}
	for _, tc := range []struct {
		name    string
		handler prober.Handler
		want    string
	}{{"grpc", grpc, "service healthy"}, {"http", httpGet, ""}, {"exec", exec, ""}} {
		t.Run(tc.name, func(t *testing.T) {
			req := Request{At: time.Minute, Run: prober.ProbeRun{Key: prober.WorkerKey{ContainerName: "c", Type: prober.Readiness}, Probe: prober.Probe{Handler: tc.handler}}}
			end, out := Outcomes{}.Answer(req)
			assert.Equal(t, time.Minute, end)
			assert.Equal(t, prober.Outcome{Result: prober.ProbeSuccess, Output: tc.want}, out)
		})
	}
}
