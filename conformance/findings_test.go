package conformance

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/verify"
)

// confirmationPrefix is how a finding names a test of this module that
// confirms it on upstream's own code.
const confirmationPrefix = "conformance: "

// TestFindingsAreConfirmedHere holds every known finding to its
// confirmation: the test it names exists in this module and starts with
// TestFinding, so that `make findings` (go test -run '^TestFinding') runs
// it, and asserts the bug through bugOutcome with the finding's ID, so
// that the release matrix reads its verdict. A finding is confirmed before
// it is one.
func TestFindingsAreConfirmedHere(t *testing.T) {
	tests := map[string]bool{}
	// outcomes are the finding IDs each test passes to bugOutcome.
	outcomes := map[string][]string{}
	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, name := range files {
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, name, src, 0)
		require.NoError(t, err, name)
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				tests[fn.Name.Name] = true
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					if call, ok := n.(*ast.CallExpr); ok && len(call.Args) == 2 {
						if name, ok := call.Fun.(*ast.Ident); ok && name.Name == "bugOutcome" {
							if id, ok := call.Args[1].(*ast.BasicLit); ok {
								outcomes[fn.Name.Name] = append(outcomes[fn.Name.Name], strings.Trim(id.Value, `"`))
							}
						}
					}
					return true
				})
			}
		}
	}
	for _, f := range verify.Findings() {
		name, ok := strings.CutPrefix(f.Confirmation, confirmationPrefix)
		if !ok {
			// A real-kubelet confirmation lives elsewhere; it must still
			// say where.
			assert.NotEmpty(t, f.Confirmation, "%s: confirmation", f.ID)
			continue
		}
		assert.True(t, strings.HasPrefix(name, "TestFinding"), "%s: confirmation %s: its name must start with TestFinding, which make findings runs", f.ID, name)
		assert.True(t, tests[name], "%s: confirmation %s: no such test in the conformance module", f.ID, name)
		// The release matrix reads the finding's verdict from the
		// assertions its test makes through bugOutcome.
		assert.Contains(t, outcomes[name], f.ID, "%s: confirmation %s: asserts its bug through bugOutcome(t, %q), which logs the release matrix's verdict", f.ID, name, f.ID)
	}
}
