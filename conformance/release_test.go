package conformance

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/upstream"
)

// release is the k8s.io/kubernetes version this test binary drives: the
// build tag of the release's shims (release_<minor>_test.go) says it, since
// a test binary carries no record of its modules; TestReleaseIsTheModules
// holds it to the module file the tag goes with.
func release() string { return releaseVersion }

// onModelled says whether this binary drives the release nodeproof's core
// models, where a finding was confirmed and every comparison must agree.
func onModelled() bool { return release() == upstream.Modelled }

// bugOutcome is what a TestFinding asserts its broken promise on: the
// assertions that hold while the bug is present, and fail once it is gone.
// On the modelled release a failed one fails the test, as it always has:
// the finding is confirmed there. On another release it is the finding's
// absence, not a failure: the test passes and logs the verdict the release
// matrix reads (upstream.ParseVerdict). The harness's own assertions (the
// scenario set up, upstream answered) stay on t, so that a harness that
// cannot drive a release fails rather than reads as a fix.
func bugOutcome(t *testing.T, id string) assert.TestingT {
	b := &absence{t: t}
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		t.Log(upstream.Verdict{Finding: id, Release: release(), Present: len(b.misses) == 0, Detail: strings.Join(b.misses, "; ")}.Line())
	})
	return b
}

// findingNotApplicable logs, for the release matrix, that the finding id
// cannot arise on this release at all, and why. On the modelled release,
// where every finding was confirmed, it fails t.
func findingNotApplicable(t *testing.T, id, why string) {
	t.Helper()
	if onModelled() {
		t.Fatalf("%s is confirmed on %s, yet its test says it cannot arise there: %s", id, release(), why)
	}
	t.Log(upstream.Verdict{Finding: id, Release: release(), Inapplicable: why}.Line())
}

// absence keeps the bug assertions that failed.
type absence struct {
	t      *testing.T
	misses []string
}

func (b *absence) Errorf(format string, args ...any) {
	if onModelled() {
		b.t.Helper()
		b.t.Errorf(format, args...)
		return
	}
	b.misses = append(b.misses, firstLine(fmt.Sprintf(format, args...)))
}

func (b *absence) Helper() { b.t.Helper() }

// firstLine is testify's message cut to what a matrix cell can show: its
// assertion text, which begins after "Error:" on testify's report.
func firstLine(report string) string {
	for line := range strings.SplitSeq(report, "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "Messages:"); ok {
			return strings.TrimSpace(rest)
		}
	}
	for line := range strings.SplitSeq(report, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "Error:"); ok {
			return strings.TrimSpace(rest)
		}
	}
	return strings.TrimSpace(report)
}

// kubernetesRequire is the requirement of k8s.io/kubernetes in a module
// file's require block.
var kubernetesRequire = regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes (v\S+)\s*$`)

// TestReleaseIsTheModules: the release the shims name is the one the
// module file of its tag pins, so that a verdict never names the wrong
// release.
func TestReleaseIsTheModules(t *testing.T) {
	r, err := upstream.Find(release())
	require.NoError(t, err)
	file := "go.mod"
	if r.ModFile != "" {
		file = r.ModFile
	}
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	m := kubernetesRequire.FindSubmatch(raw)
	require.NotNil(t, m, "%s requires no k8s.io/kubernetes", file)
	pinned := string(m[1])
	assert.Equal(t, release(), pinned, "%s pins k8s.io/kubernetes %s; the shims built with tag %q say %s", file, pinned, r.Tag, release())
}

// contractVerdicts logs, for the release matrix, what a suite run with this
// release's code as the system under test says of each of ids: how often
// each was checked and applied, and its breach, the shrunk case on one line,
// when the run failed on it, or why the release cannot express it when
// inapplicable names it. The run's other failures fail t: a search that
// cannot drive the release must not read as a promise kept.
func contractVerdicts(t *testing.T, res properties.Result, ids []string, inapplicable map[string]string) {
	t.Helper()
	breached := ""
	if res.Failure != nil {
		if !slices.Contains(ids, res.Failure.Invariant) {
			t.Fatalf("the search failed on %s, not on a contract property it searched:\n%s", res.Failure.Invariant, res.Failure.Message)
		}
		breached = res.Failure.Invariant
	}
	for _, id := range ids {
		v := upstream.ContractVerdict{Property: id, Release: release(), Test: t.Name(),
			Checked: res.Tally.Checked[id], Applied: res.Tally.Applied[id], Breached: id == breached, Detail: inapplicable[id]}
		if v.Breached {
			message, _, _ := strings.Cut(res.Failure.Message, "\n")
			v.Detail = strings.Join(append([]string{message}, res.Failure.Steps...), " | ")
		}
		t.Log(v.Line())
	}
}
