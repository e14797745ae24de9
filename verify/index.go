package verify

import (
	"fmt"
	"strings"
)

// IndexMarkdown is the table of every known finding that heads the
// kubelet part of docs/findings.md, for scanning (each finding's entry
// below it has the whole story); a test keeps the two in step.
func IndexMarkdown() string {
	var b strings.Builder
	b.WriteString("| Finding | Subsystem | Broken promise | Upstream tracker | v1.37.2 | Confirmed by | On the real kubelet |\n|---|---|---|---|---|---|---|\n")
	for _, f := range Findings() {
		tracker := NoTracker
		if len(f.Tracker) > 0 {
			links := make([]string, len(f.Tracker))
			for i, t := range f.Tracker {
				links[i] = "[" + t.Text + "](" + t.URL + ")"
			}
			tracker = strings.Join(links, ", ")
		}
		fixed := "still present"
		if strings.HasPrefix(f.Releases, "fixed") {
			fixed = "fixed"
		}
		confirmation, _ := strings.CutPrefix(f.Confirmation, "conformance: ")
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | `%s` | %s |\n", f.ID, f.Subsystem,
			strings.ReplaceAll(f.Title, "|", `\|`), tracker, fixed, confirmation, realKubeletCell(f.RealKubelet))
	}
	return b.String()
}

// realKubeletCell is the index's word on a finding's real-kubelet test:
// the test's name, or the clause of the reason before its colon.
func realKubeletCell(text string) string {
	if pkg, test, ok := realKubeletTest(text); ok {
		return "`" + test + "` (" + pkg + ")"
	}
	reason, _, _ := strings.Cut(text, ":")
	return reason
}

// realKubeletTest splits Finding.RealKubelet into the package directory
// and the test's name when it names a test ("realkubelet/scenario:
// TestFindingX"), and says whether it does.
func realKubeletTest(text string) (pkg, test string, ok bool) {
	pkg, test, ok = strings.Cut(text, ": ")
	if !ok || !strings.HasPrefix(pkg, "realkubelet") || !strings.HasPrefix(test, "Test") || strings.ContainsAny(test, " ,") {
		return "", "", false
	}
	return pkg, test, true
}
