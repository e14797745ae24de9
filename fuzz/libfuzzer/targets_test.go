package libfuzzer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeTree writes files (path relative to root -> content) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		path := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
}

const rapidHarness = `package machine

import (
	"testing"

	"pgregory.net/rapid"
)

func FuzzMachine(f *testing.F) {
	f.Fuzz(rapid.MakeFuzz(func(t *rapid.T) {}))
}
`

func TestDiscoverFindsEveryTargetAndItsStatus(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.26\n",
		"decode/decode_test.go": `package decode

import tst "testing"

func FuzzDecode(f *tst.F) {
	f.Add([]byte("x"), true)
	f.Fuzz(func(t *tst.T, data []byte, strict bool, n byte, r rune) {})
}

func Fuzzy(f *tst.F) {}           // not a target: lower case after Fuzz
func FuzzHelper(x int)           {} // not a target: no *testing.F
func TestDecode(t *tst.T)        {}
`,
		"machine/machine_test.go": rapidHarness,
		"ext/ext_test.go": `package ext_test

import "testing"

func FuzzExternal(f *testing.F) { f.Fuzz(func(t *testing.T, s string) {}) }
`,
		"typed/typed_test.go": `package typed

import "testing"

type point struct{ x, y int }

func FuzzPoint(f *testing.F) { f.Fuzz(func(t *testing.T, p point) {}) }
`,
		"tb/tb_test.go": `package tb

import "testing"

func helper(tb testing.TB) {}

func FuzzTB(f *testing.F) { helper(f); f.Fuzz(func(t *testing.T, b []byte) {}) }
`,
		"tagged/tagged_test.go":       "//go:build never\n\npackage tagged\n\nimport \"testing\"\n\nfunc FuzzTagged(f *testing.F) { f.Fuzz(func(t *testing.T, b []byte) {}) }\n",
		"a/dup/dup_test.go":           "package dup\n\nimport \"testing\"\n\nfunc FuzzDup(f *testing.F) { f.Fuzz(func(t *testing.T, b []byte) {}) }\n",
		"b/dup/dup_test.go":           "package dup\n\nimport \"testing\"\n\nfunc FuzzDup(f *testing.F) { f.Fuzz(func(t *testing.T, b []byte) {}) }\n",
		"decode/testdata/x/x_test.go": "package x\n\nimport \"testing\"\n\nfunc FuzzInTestdata(f *testing.F) {}\n",
		"nested/go.mod":               "module example.com/nested\n\ngo 1.26\n",
		"nested/n_test.go":            "package nested\n\nimport \"testing\"\n\nfunc FuzzNested(f *testing.F) {}\n",
	})
	targets, err := Discover(root)
	require.NoError(t, err)
	type row struct{ Name, Package, Func string }
	var rows []row
	status := map[string]string{}
	for _, tg := range targets {
		rows = append(rows, row{tg.Name, tg.Package, tg.Func})
		status[tg.Name] = tg.Unsupported
	}
	assert.Equal(t, []row{
		{"a_dup_FuzzDup", "example.com/m/a/dup", "FuzzDup"},
		{"b_dup_FuzzDup", "example.com/m/b/dup", "FuzzDup"},
		{"FuzzDecode", "example.com/m/decode", "FuzzDecode"},
		{"FuzzExternal", "example.com/m/ext", "FuzzExternal"},
		{"FuzzMachine", "example.com/m/machine", "FuzzMachine"},
		{"FuzzTB", "example.com/m/tb", "FuzzTB"},
		{"FuzzPoint", "example.com/m/typed", "FuzzPoint"},
	}, rows)
	assert.Equal(t, []string{"[]uint8", "bool", "uint8", "int32"}, targets[2].Params)
	assert.Empty(t, status["FuzzDecode"])
	assert.Empty(t, status["a_dup_FuzzDup"])
	assert.Contains(t, status["FuzzMachine"], "rapid.MakeFuzz(...), not a function literal")
	assert.Contains(t, status["FuzzExternal"], "external test package (package ext_test)")
	assert.Contains(t, status["FuzzPoint"], "takes a point")
	assert.Contains(t, status["FuzzTB"], "uses testing.TB")
	assert.Equal(t, "decode/testdata/fuzz/FuzzDecode", targets[2].SeedDir())
}

func TestDiscoverNeedsAModule(t *testing.T) {
	_, err := Discover(t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "go.mod")
}
