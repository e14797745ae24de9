package upstream

import (
	"fmt"
	"regexp"
	"strconv"
)

// Verdict is what a finding test says of its finding on a release.
type Verdict struct {
	Finding, Release string
	// Present says the bug showed: every assertion of the broken promise
	// held. Detail, when it did not, is the first line of each that failed.
	Present bool
	Detail  string
	// Inapplicable, when set, says why the finding cannot arise on the
	// release at all: what it is about is not in it (a feature a later
	// release added). Neither present nor absent.
	Inapplicable string
}

// verdictPrefix marks a verdict among a test's other output lines.
const verdictPrefix = "nodeproof-matrix: finding "

// Line is the verdict as the test logs it, one line.
func (v Verdict) Line() string {
	if v.Inapplicable != "" {
		return fmt.Sprintf("%s%s on %s: not applicable: %s", verdictPrefix, v.Finding, v.Release, v.Inapplicable)
	}
	if v.Present {
		return fmt.Sprintf("%s%s on %s: present", verdictPrefix, v.Finding, v.Release)
	}
	return fmt.Sprintf("%s%s on %s: absent: %s", verdictPrefix, v.Finding, v.Release, v.Detail)
}

var verdictLine = regexp.MustCompile(regexp.QuoteMeta(verdictPrefix) + `(\S+) on (\S+): (present|absent|not applicable)(?:: (.*))?$`)

// ParseVerdict reads a verdict out of one line of test output (the test
// runner's indentation and file prefix before it), and says whether the
// line held one.
func ParseVerdict(line string) (Verdict, bool) {
	m := verdictLine.FindStringSubmatch(line)
	if m == nil {
		return Verdict{}, false
	}
	if m[3] == "not applicable" {
		return Verdict{Finding: m[1], Release: m[2], Inapplicable: m[4]}, true
	}
	return Verdict{Finding: m[1], Release: m[2], Present: m[3] == "present", Detail: m[4]}, true
}

// ContractVerdict is what a run of a suite with upstream as the system
// under test says of one contract property on a release: how often it was
// checked and applied, and whether the generated search breached it.
type ContractVerdict struct {
	Property, Release string
	// Test is the (sub)test that ran the search: its replay.
	Test             string
	Checked, Applied int
	Breached         bool
	// Detail is the breach's message and shrunk steps, on one line; or,
	// for a property the release cannot express (applied in none), why.
	Detail string
}

const contractPrefix = "nodeproof-matrix: contract "

// Line is the verdict as the test logs it, one line.
func (v ContractVerdict) Line() string {
	state := "held"
	if v.Breached {
		state = "breached"
	}
	line := fmt.Sprintf("%s%s on %s in %s: %s: checked %d applied %d", contractPrefix, v.Property, v.Release, v.Test, state, v.Checked, v.Applied)
	if v.Detail != "" {
		line += ": " + v.Detail
	}
	return line
}

var contractLine = regexp.MustCompile(regexp.QuoteMeta(contractPrefix) + `(\S+) on (\S+) in (\S+): (breached|held): checked (\d+) applied (\d+)(?:: (.*))?$`)

// ParseContractVerdict reads a contract verdict out of one line of test
// output, and says whether the line held one.
func ParseContractVerdict(line string) (ContractVerdict, bool) {
	m := contractLine.FindStringSubmatch(line)
	if m == nil {
		return ContractVerdict{}, false
	}
	checked, _ := strconv.Atoi(m[5])
	applied, _ := strconv.Atoi(m[6])
	return ContractVerdict{Property: m[1], Release: m[2], Test: m[3], Breached: m[4] == "breached", Checked: checked, Applied: applied, Detail: m[7]}, true
}
