package upstream

import (
	"fmt"
	"regexp"
)

// Verdict is what a finding test says of its finding on a release.
type Verdict struct {
	Finding, Release string
	// Present says the bug showed: every assertion of the broken promise
	// held. Detail, when it did not, is the first line of each that failed.
	Present bool
	Detail  string
}

// verdictPrefix marks a verdict among a test's other output lines.
const verdictPrefix = "nodeproof-matrix: finding "

// Line is the verdict as the test logs it, one line.
func (v Verdict) Line() string {
	if v.Present {
		return fmt.Sprintf("%s%s on %s: present", verdictPrefix, v.Finding, v.Release)
	}
	return fmt.Sprintf("%s%s on %s: absent: %s", verdictPrefix, v.Finding, v.Release, v.Detail)
}

var verdictLine = regexp.MustCompile(regexp.QuoteMeta(verdictPrefix) + `(\S+) on (\S+): (present|absent)(?:: (.*))?$`)

// ParseVerdict reads a verdict out of one line of test output (the test
// runner's indentation and file prefix before it), and says whether the
// line held one.
func ParseVerdict(line string) (Verdict, bool) {
	m := verdictLine.FindStringSubmatch(line)
	if m == nil {
		return Verdict{}, false
	}
	return Verdict{Finding: m[1], Release: m[2], Present: m[3] == "present", Detail: m[4]}, true
}
