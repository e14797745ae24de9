package depsrule

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	modulePath = "github.com/nodeproof/nodeproof"
	corePath   = modulePath + "/core"
	// simPath is the node simulation, deterministic under core's contract:
	// it composes the cores, so it may import them (core may not import it).
	simPath = modulePath + "/sim"
	// verifyPath is the spine every check shares (properties, cite). The
	// simulation evaluates its invariants through it, so it keeps core's
	// contract too.
	verifyPath = modulePath + "/verify"
	rapidPath  = "pgregory.net/rapid"
	// testifyPath is allowed in core's and models' tests only: tests compare
	// structured values with its require/assert diffs, while production code
	// in core/ and models/ stays standard library only.
	testifyPath = "github.com/stretchr/testify"
	// datadrivenPath is allowed in the same tests: a table that has grown
	// past a dozen fields reads better as a file of directives and the
	// outputs they print (etcd-io/raft's tests do the same).
	datadrivenPath = "github.com/cockroachdb/datadriven"
)

// Rule names, printed in every violation so a reader can find the rule in
// DESIGN.md.
const (
	ruleCoreImports   = "core imports only the standard library and core/..."
	ruleSimImports    = "sim imports only the standard library, core/..., sim/... and verify/..."
	ruleVerifyImports = "verify imports only the standard library and verify/..."
	ruleModelsImports = "models imports only the standard library"
	ruleModelsNoCore  = "models never imports core"
	ruleTestImports   = "tests in core/ and models/ may add only " + rapidPath + ", " + testifyPath + "/... and " + datadrivenPath
	ruleNoIO          = "core does no I/O, concurrency or randomness (forbidden import)"
	ruleNoWallClock   = "core takes time as an argument (no wall clock or timers)"
	ruleNoGoroutines  = "core starts no goroutines"
	ruleNoChannels    = "core uses no channels"
)

// forbiddenInCore lists imports that give core I/O, goroutine coordination,
// randomness or a way around the type system. Each entry also forbids the
// packages below it (net covers net/http, log covers log/slog), because they
// serve the same purpose.
var forbiddenInCore = []string{
	"sync", "math/rand", "crypto/rand", "os", "net", "io/ioutil",
	"syscall", "unsafe", "runtime", "log", "testing",
}

// wallClock lists the functions of package time that read the clock or start
// a timer. Types such as time.Time and time.Duration stay allowed: time
// arrives as an argument.
var wallClock = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"AfterFunc": true, "Tick": true, "NewTimer": true, "NewTicker": true,
}

// violation is one broken rule at one place.
type violation struct {
	pos    token.Position
	rule   string
	detail string
}

func (v violation) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", v.pos.Filename, v.pos.Line, v.rule, v.detail)
}

// checkFile returns the rules that file breaks. name is the file's slash
// separated path relative to the module root; its first element (core, sim,
// verify or models) and its _test.go suffix decide which rules apply. sim/
// keeps core's contract: a simulation is replayed from its seed only if
// nothing in it reads the clock, schedules goroutines or draws ambient
// randomness; verify/ keeps it because the simulation runs its checks.
func checkFile(fset *token.FileSet, name string, file *ast.File) []violation {
	tree, _, _ := strings.Cut(name, "/")
	isTest := strings.HasSuffix(name, "_test.go")
	var found []violation
	report := func(p token.Pos, rule, format string, args ...any) {
		found = append(found, violation{fset.Position(p), rule, fmt.Sprintf(format, args...)})
	}

	timeName := "" // the name package time is bound to in this file
	for _, spec := range file.Imports {
		importPath, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			report(spec.Pos(), "import path", "cannot unquote %s", spec.Path.Value)
			continue
		}
		switch tree {
		case "core":
			checkCoreImport(importPath, isTest, func(rule, detail string) { report(spec.Pos(), rule, "%s", detail) })
		case "sim":
			checkSimImport(importPath, isTest, func(rule, detail string) { report(spec.Pos(), rule, "%s", detail) })
		case "verify":
			checkVerifyImport(importPath, isTest, func(rule, detail string) { report(spec.Pos(), rule, "%s", detail) })
		case "models":
			checkModelsImport(importPath, isTest, func(rule, detail string) { report(spec.Pos(), rule, "%s", detail) })
		}
		if importPath == "time" {
			timeName = "time"
			if spec.Name != nil {
				timeName = spec.Name.Name
			}
		}
	}
	if (tree != "core" && tree != "sim" && tree != "verify") || isTest {
		return found
	}

	if timeName == "." {
		report(file.Pos(), ruleNoWallClock, "dot import of time hides wall-clock calls from this check")
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && timeName != "" && id.Name == timeName && wallClock[n.Sel.Name] {
				report(n.Pos(), ruleNoWallClock, "%s.%s", id.Name, n.Sel.Name)
			}
		case *ast.GoStmt:
			report(n.Pos(), ruleNoGoroutines, "go statement")
		case *ast.ChanType:
			report(n.Pos(), ruleNoChannels, "channel type")
		case *ast.SendStmt:
			report(n.Pos(), ruleNoChannels, "channel send")
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				report(n.Pos(), ruleNoChannels, "channel receive")
			}
		case *ast.SelectStmt:
			report(n.Pos(), ruleNoChannels, "select statement")
		}
		return true
	})
	return found
}

func checkCoreImport(importPath string, isTest bool, report func(rule, detail string)) {
	switch {
	case isStandard(importPath):
		if !isTest {
			for _, f := range forbiddenInCore {
				if within(importPath, f) {
					report(ruleNoIO, importPath)
				}
			}
		}
	case within(importPath, corePath):
	case isTest && allowedInTests(importPath):
	case isTest:
		report(ruleTestImports, importPath)
	default:
		report(ruleCoreImports, importPath)
	}
}

// checkSimImport applies core's import rules to sim/, which may also import
// core/, itself and verify/.
func checkSimImport(importPath string, isTest bool, report func(rule, detail string)) {
	if within(importPath, simPath) || within(importPath, verifyPath) {
		return
	}
	checkCoreImport(importPath, isTest, func(rule, detail string) {
		if rule == ruleCoreImports {
			rule = ruleSimImports
		}
		report(rule, detail)
	})
}

// checkVerifyImport applies core's import rules to verify/, which may
// import itself but not core/: the spine describes checks of every
// subsystem and depends on none.
func checkVerifyImport(importPath string, isTest bool, report func(rule, detail string)) {
	if within(importPath, verifyPath) {
		return
	}
	if within(importPath, corePath) {
		report(ruleVerifyImports, importPath)
		return
	}
	checkCoreImport(importPath, isTest, func(rule, detail string) {
		if rule == ruleCoreImports {
			rule = ruleVerifyImports
		}
		report(rule, detail)
	})
}

func checkModelsImport(importPath string, isTest bool, report func(rule, detail string)) {
	switch {
	case isStandard(importPath):
	case within(importPath, corePath):
		report(ruleModelsNoCore, importPath)
	case isTest && allowedInTests(importPath):
	case isTest:
		report(ruleTestImports, importPath)
	default:
		report(ruleModelsImports, importPath)
	}
}

// allowedInTests reports whether a _test.go file in core/, sim/, verify/ or models/ may
// import importPath beyond the standard library: rapid for properties, and
// testify's packages (require, assert) for comparisons with a readable diff.
// A test binary is not part of what core ships, so neither breaks the
// determinism contract; the same import in a non-test file is still reported.
func allowedInTests(importPath string) bool {
	return importPath == rapidPath || importPath == datadrivenPath || within(importPath, testifyPath)
}

// isStandard follows the go command's convention: a standard library path has
// no dot in its first element.
func isStandard(importPath string) bool {
	first, _, _ := strings.Cut(importPath, "/")
	return !strings.Contains(first, ".")
}

// within reports whether importPath is root or a package below it.
func within(importPath, root string) bool {
	return importPath == root || strings.HasPrefix(importPath, root+"/")
}

// checkSource parses one file from memory and checks it.
func checkSource(name, src string) ([]violation, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	return checkFile(fset, name, file), nil
}

// TestDependencyRules checks every Go file under core/, sim/, verify/ and
// models/.
func TestDependencyRules(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "module root not found above the test's directory")
	checked := 0
	for _, tree := range []string{"core", "sim", "verify", "models"} {
		dir := filepath.Join(root, tree)
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			t.Logf("%s/ does not exist yet; nothing to check there", tree)
			continue
		}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			// The go command ignores testdata and names starting with . or _.
			if d.IsDir() {
				if p != dir && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") {
				return nil
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			found, err := checkSource(filepath.ToSlash(rel), string(src))
			if err != nil {
				t.Errorf("cannot parse: %v", err)
				return nil
			}
			checked++
			for _, v := range found {
				t.Error(v)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("checked %d files", checked)
}

// TestCheckerCatchesEachRule proves the rules can fail: every bad snippet is
// reported under its rule and the good snippets are not reported at all.
func TestCheckerCatchesEachRule(t *testing.T) {
	good := []struct{ name, src string }{
		{"core/devicemanager/ok.go", `package devicemanager

import (
	"errors"
	"sort"
	"time"

	"github.com/nodeproof/nodeproof/core/pod"
)

// A local selector named like a clock function on another value is fine.
type clock struct{ Now time.Time }

func Allocate(now time.Time, p pod.Pod, c clock, grace time.Duration) error {
	ids := []string{"b", "a"}
	sort.Strings(ids)
	if c.Now.Add(grace).Before(now) {
		return errors.New("expired")
	}
	return nil
}
`},
		{"core/devicemanager/ok_test.go", `package devicemanager

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestX(t *testing.T) {
	var mu sync.Mutex
	mu.Lock()
	go func() {}()
	_ = time.Now()
	_ = os.Getenv("X")
	rapid.Check(t, func(*rapid.T) {})
	require.NoError(t, nil)
	assert.Equal(t, 1, 1)
}
`},
		{"sim/ok.go", `package sim

import (
	"time"

	"github.com/nodeproof/nodeproof/core/admission"
	"github.com/nodeproof/nodeproof/sim/internal"
)

func Run(start time.Time, n *admission.Node) time.Time { return start.Add(internal.Step) }
`},
		{"sim/checks.go", `package sim

import (
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

var checks = []verify.Check[*Sim]{{Property: verify.Property{ID: "SIM-X", Sources: []cite.Source{cite.Issue(1)}}}}
`},
		{"verify/ok.go", `package verify

import (
	"fmt"
	"time"

	"github.com/nodeproof/nodeproof/verify/cite"
)

func Describe(s cite.Source, at time.Duration) string { return fmt.Sprint(s.Text, at) }
`},
		{"verify/ok_test.go", `package verify

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestX(t *testing.T) { _, err := os.ReadFile("x"); require.Error(t, err) }
`},
		{"models/devicemanager/ok.go", `package devicemanager

import (
	"sort"
	"sync"
	"time"
)

var mu sync.Mutex

func Now() time.Time { return time.Now() }

func Sorted(s []string) { sort.Strings(s) }
`},
		{"models/devicemanager/ok_test.go", `package devicemanager

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestX(t *testing.T) { rapid.Check(t, func(*rapid.T) { require.True(t, true) }) }
`},
	}
	for _, g := range good {
		found, err := checkSource(g.name, g.src)
		require.NoError(t, err, g.name)
		assert.Empty(t, found, "good snippet reported: %s", g.name)
	}

	bad := []struct {
		name, rule, src string
	}{
		{"core/x/third_party.go", ruleCoreImports,
			`package x; import _ "github.com/stretchr/testify/assert"`},
		{"core/x/other_module_pkg.go", ruleCoreImports,
			`package x; import _ "github.com/nodeproof/nodeproof/agent"`},
		// testify is for tests only: production code in core/ and models/
		// is still rejected for importing it (third_party.go above, and
		// models/x/testify.go below).
		{"core/x/other_test_library_test.go", ruleTestImports,
			`package x; import _ "github.com/google/go-cmp/cmp"`},
		{"core/x/testify_lookalike_test.go", ruleTestImports,
			`package x; import _ "github.com/stretchr/testifyx/assert"`},
		{"core/x/testify_sibling_test.go", ruleTestImports,
			`package x; import _ "github.com/stretchr/objx"`},
		{"models/x/third_party.go", ruleModelsImports,
			`package x; import _ "pgregory.net/rapid"`},
		{"models/x/module_pkg.go", ruleModelsImports,
			`package x; import _ "github.com/nodeproof/nodeproof/models/pod"`},
		{"models/x/core.go", ruleModelsNoCore,
			`package x; import _ "github.com/nodeproof/nodeproof/core/pod"`},
		{"models/x/core_test.go", ruleModelsNoCore,
			`package x; import _ "github.com/nodeproof/nodeproof/core/pod"`},
		{"models/x/testify.go", ruleModelsImports,
			`package x; import _ "github.com/stretchr/testify/assert"`},
		{"models/x/other_test_library_test.go", ruleTestImports,
			`package x; import _ "github.com/google/go-cmp/cmp"`},
		{"sim/x/third_party.go", ruleSimImports,
			`package x; import _ "pgregory.net/rapid"`},
		{"sim/x/agent.go", ruleSimImports,
			`package x; import _ "github.com/nodeproof/nodeproof/agent/cri"`},
		{"core/x/sim.go", ruleCoreImports,
			`package x; import _ "github.com/nodeproof/nodeproof/sim"`},
		{"sim/x/now.go", ruleNoWallClock,
			`package x; import "time"; func f() time.Time { return time.Now() }`},
		{"sim/x/go.go", ruleNoGoroutines,
			`package x; func f() { go f() }`},
		{"sim/x/rand.go", ruleNoIO,
			`package x; import _ "math/rand/v2"`},
		{"sim/x/sync.go", ruleNoIO,
			`package x; import _ "sync"`},
		{"verify/x/agent.go", ruleVerifyImports,
			`package x; import _ "github.com/nodeproof/nodeproof/agent/cri"`},
		{"verify/x/core.go", ruleVerifyImports,
			`package x; import _ "github.com/nodeproof/nodeproof/core/pod"`},
		{"verify/x/sim.go", ruleVerifyImports,
			`package x; import _ "github.com/nodeproof/nodeproof/sim"`},
		{"verify/x/testify.go", ruleVerifyImports,
			`package x; import _ "github.com/stretchr/testify/assert"`},
		{"verify/x/os.go", ruleNoIO,
			`package x; import _ "os"`},
		{"verify/x/rand.go", ruleNoIO,
			`package x; import _ "math/rand/v2"`},
		{"verify/x/now.go", ruleNoWallClock,
			`package x; import "time"; func f() time.Time { return time.Now() }`},
		{"verify/x/go.go", ruleNoGoroutines,
			`package x; func f() { go f() }`},
		{"verify/x/chan.go", ruleNoChannels,
			`package x; var c chan int`},
		{"core/x/verify.go", ruleCoreImports,
			`package x; import _ "github.com/nodeproof/nodeproof/verify"`},
		{"core/x/now.go", ruleNoWallClock,
			`package x; import "time"; func f() time.Time { return time.Now() }`},
		{"core/x/since.go", ruleNoWallClock,
			`package x; import "time"; var t0 time.Time; func f() time.Duration { return time.Since(t0) }`},
		{"core/x/until.go", ruleNoWallClock,
			`package x; import "time"; var t0 time.Time; func f() time.Duration { return time.Until(t0) }`},
		{"core/x/sleep.go", ruleNoWallClock,
			`package x; import "time"; func f() { time.Sleep(1) }`},
		{"core/x/after.go", ruleNoWallClock,
			`package x; import "time"; var _ = time.After`},
		{"core/x/afterfunc.go", ruleNoWallClock,
			`package x; import "time"; func f() { time.AfterFunc(1, f) }`},
		{"core/x/tick.go", ruleNoWallClock,
			`package x; import "time"; var _ = time.Tick`},
		{"core/x/timer.go", ruleNoWallClock,
			`package x; import "time"; var _ = time.NewTimer(1)`},
		{"core/x/ticker.go", ruleNoWallClock,
			`package x; import "time"; var _ = time.NewTicker(1)`},
		{"core/x/renamed.go", ruleNoWallClock,
			`package x; import clock "time"; var _ = clock.Now()`},
		{"core/x/dot.go", ruleNoWallClock,
			`package x; import . "time"; var _ Duration`},
		{"core/x/go.go", ruleNoGoroutines,
			`package x; func f() { go f() }`},
		{"core/x/chantype.go", ruleNoChannels,
			`package x; type events []chan int`},
		{"core/x/send.go", ruleNoChannels,
			`package x; func f(c C) { c <- 1 }`},
		{"core/x/receive.go", ruleNoChannels,
			`package x; func f(c C) int { return <-c }`},
		{"core/x/select.go", ruleNoChannels,
			`package x; func f() { select {} }`},
	}
	for _, f := range forbiddenInCore {
		bad = append(bad, struct{ name, rule, src string }{
			"core/x/" + path.Base(f) + ".go", ruleNoIO, fmt.Sprintf("package x; import _ %q", f)})
	}
	for _, sub := range []string{"sync/atomic", "math/rand/v2", "os/exec", "net/http", "log/slog"} {
		bad = append(bad, struct{ name, rule, src string }{
			"core/x/" + path.Base(sub) + ".go", ruleNoIO, fmt.Sprintf("package x; import _ %q", sub)})
	}
	for _, b := range bad {
		found, err := checkSource(b.name, b.src)
		require.NoError(t, err, b.name)
		// Each snippet breaks exactly one rule, possibly at several places.
		rules := make([]string, 0, len(found))
		for _, v := range found {
			rules = append(rules, v.rule)
		}
		assert.NotEmpty(t, rules, "%s: not reported under %q", b.name, b.rule)
		for i, rule := range rules {
			assert.Equal(t, b.rule, rule, "%s: reported under another rule: %s", b.name, found[i])
		}
	}
}
