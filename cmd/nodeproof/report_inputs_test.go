package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportRefusesEmptyResultFiles: a results file that holds no results
// (null, an empty array) is not a section that ran and found nothing. It
// would show a green 0/0 and take the section off the not-run list, which
// CI's "nothing left not run" check reads, so it is bad input (exit 2),
// named with its flag and file, before any suite runs.
func TestReportRefusesEmptyResultFiles(t *testing.T) {
	dir := t.TempDir()
	for _, flag := range []string{"mutants", "linearizability", "conformance", "plugin-check"} {
		for name, tc := range map[string]struct{ body, want string }{
			"null":  {"null", "no results"},
			"empty": {"[]", "no results"},
			// An empty file was refused before: it is not JSON.
			"blank": {"  \n", "unexpected end of JSON input"},
		} {
			t.Run(flag+"/"+name, func(t *testing.T) {
				path := filepath.Join(dir, flag+"-"+name+".json")
				require.NoError(t, os.WriteFile(path, []byte(tc.body), 0o644))
				status, stdout, stderr := runNodeproof("", "report", "--out", filepath.Join(dir, "out"), "--checks", "1", "--histories", "0", "--sim-seeds", "0", "--suite", "^$", "--"+flag, path)
				assert.Equal(t, exitUsage, status, "stdout: %s", stdout)
				assert.Contains(t, stderr, "--"+flag+": "+path+": ")
				assert.Contains(t, stderr, tc.want)
			})
		}
	}
}
