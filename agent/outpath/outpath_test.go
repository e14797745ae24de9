package outpath

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDirMakesAndProves(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	require.NoError(t, Dir(dir))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "the write check leaves nothing behind")
}

// TestDirLeavesNothingBehind: a path that cannot be made whole (a name
// beyond NAME_MAX at its end) leaves none of the directories it made.
func TestDirLeavesNothingBehind(t *testing.T) {
	root := t.TempDir()
	err := Dir(filepath.Join(root, "a", "b", strings.Repeat("x", 300)))
	require.Error(t, err)
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestDirNamesAFileInTheWay(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	assert.EqualError(t, Dir(filepath.Join(file, "out")), "mkdir "+file+": not a directory")
}

func TestFileRefusesADirectory(t *testing.T) {
	dir := t.TempDir()
	assert.EqualError(t, File(dir), dir+": is a directory, not a file")
	assert.NoError(t, File(filepath.Join(dir, "new", "r.json")))
}
