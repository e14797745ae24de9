package mutationscore

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFiles writes name → content under a new directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	return dir
}

const podReport = `{"elapsed_time":10,"files":[{"file_name":"qos.go","mutations":[
 {"type":"CONDITIONALS_BOUNDARY","status":"KILLED","line":5,"column":3},
 {"type":"CONDITIONALS_NEGATION","status":"LIVED","line":6,"column":3},
 {"type":"ARITHMETIC_BASE","status":"NOT COVERED","line":7,"column":3}]}]}`

func TestScoreOfEachDirectorysReport(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"reports/pod.json":        podReport,
		"reports/preemption.json": `{"elapsed_time":5,"files":[{"file_name":"validate.go","mutations":[{"type":"ARITHMETIC_BASE","status":"KILLED","line":1,"column":1}]}]}`,
		"table.md":                "| `core/pod/qos.go:6:3` | CONDITIONALS_NEGATION | equivalent | both branches agree |\n",
	})
	var stdout, stderr bytes.Buffer
	status := Run([]string{"--reports", filepath.Join(dir, "reports"), "--table", filepath.Join(dir, "table.md")}, &stdout, &stderr)
	assert.Equal(t, 0, status, stderr.String())
	assert.Equal(t, "mutation score 100.0%: 2 killed of 2 non-equivalent (1 lived, of which 1 equivalent); "+
		"1 not covered, 0 timed out, 0 not viable, shown apart; gremlins tested for 15 s\n", stdout.String())
	assert.Empty(t, stderr.String())
}

func TestUnlistedSurvivorFails(t *testing.T) {
	dir := writeFiles(t, map[string]string{"reports/pod.json": podReport, "table.md": "no table yet\n"})
	var stdout, stderr bytes.Buffer
	status := Run([]string{"--reports", filepath.Join(dir, "reports"), "--table", filepath.Join(dir, "table.md")}, &stdout, &stderr)
	assert.Equal(t, 1, status)
	assert.Contains(t, stdout.String(), "mutation score 50.0%")
	assert.Equal(t, filepath.Join(dir, "table.md")+": core/pod/qos.go:6:3 CONDITIONALS_NEGATION lived and is not in the table\n", stderr.String())
}

func TestBadInputIsAUsageError(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"bad/pod.json":  `{"files":[{"file_name":"x.go","mutations":[{"type":"X","status":"??","line":1}]}]}`,
		"good/pod.json": podReport,
		"table.md":      "",
	})
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no reports":   {[]string{"--reports", t.TempDir()}, "holds no gremlins reports"},
		"bad status":   {[]string{"--reports", filepath.Join(dir, "bad"), "--table", filepath.Join(dir, "table.md")}, `status "??" is none of`},
		"no table":     {[]string{"--reports", filepath.Join(dir, "good"), "--table", filepath.Join(dir, "missing.md")}, "--table: open"},
		"unknown flag": {[]string{"--bogus"}, "unknown flag: --bogus"},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			assert.Equal(t, 2, Run(tc.args, &stdout, &stderr))
			assert.Contains(t, stderr.String(), tc.want)
		})
	}
}
