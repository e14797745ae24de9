package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/cli/commands"
	"github.com/stretchr/testify/assert"
)

// TestOutputWriteFailures: output that cannot be written (a full disk, a
// closed pipe: `> /dev/full`) fails the command with status 1 and says so,
// instead of exiting 0 with nothing delivered.
func TestOutputWriteFailures(t *testing.T) {
	for _, args := range [][]string{
		{"mutants", "--list", "--run", "^ad-exact-fit-rejected$"},
		{"replay", "--suite", "preemption", "--seed", "1", "--steps", "5"},
		{"findings", "--list"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			status := cli.Execute(cli.NewRoot(commands.All()...), args, strings.NewReader(""), failingWriter{}, &stderr)
			assert.Equal(t, cli.StatusFailed, status)
			assert.Contains(t, stderr.String(), "writing the output: disk full")
		})
	}
}

// TestMutantsJSONPathCheckedFirst: a --json path that cannot be written is
// a usage error before any mutant runs, not a survivor after all of them.
func TestMutantsJSONPathCheckedFirst(t *testing.T) {
	status, stdout, stderr := runNodeproof("", "mutants", "--run", "^ad-exact-fit-rejected$", "--json", "/proc/nodeproof/kill-matrix.json")
	assert.Equal(t, cli.StatusUsage, status)
	assert.Empty(t, stdout, "no mutant ran")
	assert.Contains(t, stderr, "nodeproof mutants: --json: mkdir /proc/nodeproof")
}

// TestInputErrorsNameTheFileOnce: a directory or a missing file given as
// input is named once, with what is wrong in words.
func TestInputErrorsNameTheFileOnce(t *testing.T) {
	dir := t.TempDir()
	for _, cmd := range []string{"cgroups -f", "admit -f", "checkpoint"} {
		t.Run(cmd, func(t *testing.T) {
			status, _, stderr := runNodeproof("", append(strings.Fields(cmd), dir)...)
			assert.Equal(t, cli.StatusUsage, status)
			assert.Contains(t, stderr, dir+": is a directory, not a file\n")
			assert.Equal(t, 1, strings.Count(stderr, dir), stderr)
		})
	}
}

// failingWriter fails every write, as a full disk does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
