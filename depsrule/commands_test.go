package depsrule

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cliPath holds every command: the helpers they share and one package per
// command (issue #26 item 4).
const cliPath = modulePath + "/cli"

const ruleThinCommands = "a command under cmd/ imports only the standard library and cli/... (its logic lives in a package)"

// checkCommandFile returns the imports of one non-test file of a command
// under cmd/ that break ruleThinCommands: a main that imports a library
// holds logic that no other package can test or reuse.
func checkCommandFile(fset *token.FileSet, file *ast.File) []violation {
	var found []violation
	for _, spec := range file.Imports {
		importPath, err := strconv.Unquote(spec.Path.Value)
		if err != nil || (!isStandard(importPath) && !within(importPath, cliPath)) {
			found = append(found, violation{fset.Position(spec.Pos()), ruleThinCommands, spec.Path.Value})
		}
	}
	return found
}

// TestCommandsAreThin checks the non-test Go files of every package under
// cmd/; the whole-CLI tests of cmd/nodeproof may import what they need.
func TestCommandsAreThin(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(root, "cmd", "*", "*.go"))
	require.NoError(t, err)
	checked := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		rel, err := filepath.Rel(root, path)
		require.NoError(t, err)
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, filepath.ToSlash(rel), src, parser.ImportsOnly)
		require.NoError(t, err)
		checked++
		for _, v := range checkCommandFile(fset, file) {
			t.Error(v)
		}
	}
	assert.NotZero(t, checked, "no command found under cmd/")
}

// TestThinCommandsRuleCatchesALibraryImport proves the rule can fail.
func TestThinCommandsRuleCatchesALibraryImport(t *testing.T) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "cmd/x/main.go", `package main

import (
	"os"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/cli/sim"
	"github.com/nodeproof/nodeproof/fuzz/speed"
	"github.com/spf13/cobra"
)
`, parser.ImportsOnly)
	require.NoError(t, err)
	var got []string
	for _, v := range checkCommandFile(fset, file) {
		got = append(got, v.String())
	}
	assert.Equal(t, []string{
		"cmd/x/main.go:8: " + ruleThinCommands + ": \"github.com/nodeproof/nodeproof/fuzz/speed\"",
		"cmd/x/main.go:9: " + ruleThinCommands + ": \"github.com/spf13/cobra\"",
	}, got)
}
