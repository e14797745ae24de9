package libfuzzer

import (
	"bufio"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// BuildTags are the tags OSS-Fuzz's libFuzzer build of a Go target is
// compiled with: compile_native_go_fuzzer passes gofuzz, go-118-fuzz-build
// adds the other two. A file excluded by them is not part of that build.
var BuildTags = []string{"gofuzz", "gofuzz_libfuzzer", "libfuzzer"}

// Target is one native fuzz target (func FuzzX(f *testing.F)) found in the
// tree.
type Target struct {
	// Package is the import path of the target's package.
	Package string
	// Dir is the package's directory, relative to the module root, with
	// forward slashes ("." for the root).
	Dir string
	// Func is the target's function name.
	Func string
	// Name is the fuzzer's name in OSS-Fuzz ($OUT/<Name>): Func, or, when
	// two packages have a target of that name, Func qualified by the
	// package's directory, so every name is unique.
	Name string
	// Params are the types of the harness's arguments after *testing.T, as
	// written (byte and rune spelt uint8 and int32), for a target
	// go-118-fuzz-build can run.
	Params []string
	// Unsupported says why go-118-fuzz-build cannot run the target; empty
	// when it can.
	Unsupported string
}

// SeedDir is the target's Go seed corpus directory, relative to the module
// root: the files `go test` reads as seeds and OSS-Fuzz would otherwise
// never see (it ignores f.Add).
func (t Target) SeedDir() string {
	return filepath.ToSlash(filepath.Join(t.Dir, "testdata", "fuzz", t.Func))
}

// generatedTypes are the argument types go-118-fuzz-build's F.Fuzz decodes
// from libFuzzer's input (testing/f.go of the pinned version), as reflect
// names them; anything else makes it panic with "unsupported type".
var generatedTypes = map[string]bool{
	"[]uint8": true, "string": true, "bool": true, "float32": true, "float64": true,
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true,
}

// Discover finds every native fuzz target of the Go module at root, in
// packages ordered by directory and targets in source order. It skips what
// `go test ./...` of that module skips (testdata, vendor, directories
// starting with . or _) and nested modules, which have builds of their own.
func Discover(root string) ([]Target, error) {
	modulePath, err := readModulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	var dirs []string
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != root {
			name := d.Name()
			if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		dirs = append(dirs, path)
		return nil
	})
	if err != nil {
		return nil, err
	}
	ctx := build.Default
	ctx.BuildTags = append(append([]string(nil), ctx.BuildTags...), BuildTags...)
	var targets []Target
	for _, dir := range dirs {
		pkg, err := ctx.ImportDir(dir, 0)
		if err != nil {
			var noGo *build.NoGoError
			if errors.As(err, &noGo) {
				continue
			}
			return nil, fmt.Errorf("package in %s: %w", dir, err)
		}
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return nil, err
		}
		rel = filepath.ToSlash(rel)
		importPath := modulePath
		if rel != "." {
			importPath += "/" + rel
		}
		files := map[string]bool{}
		for _, f := range pkg.TestGoFiles {
			files[f] = false
		}
		for _, f := range pkg.XTestGoFiles {
			files[f] = true
		}
		names := make([]string, 0, len(files))
		for f := range files {
			names = append(names, f)
		}
		sort.Strings(names)
		for _, name := range names {
			found, err := fileTargets(filepath.Join(dir, name), files[name])
			if err != nil {
				return nil, err
			}
			for _, t := range found {
				t.Package, t.Dir = importPath, rel
				targets = append(targets, t)
			}
		}
	}
	nameTargets(targets)
	return targets, nil
}

// nameTargets gives each target its OSS-Fuzz name.
func nameTargets(targets []Target) {
	count := map[string]int{}
	for _, t := range targets {
		count[t.Func]++
	}
	for i := range targets {
		targets[i].Name = targets[i].Func
		if count[targets[i].Func] > 1 {
			targets[i].Name = strings.ReplaceAll(targets[i].Dir, "/", "_") + "_" + targets[i].Func
		}
	}
}

// readModulePath reads the module directive of a go.mod file.
func readModulePath(goMod string) (string, error) {
	f, err := os.Open(goMod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) == 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`), nil
		}
	}
	if err := scanner.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: no module directive", goMod)
}

// isFuzzName reports whether name is a fuzz target's name by `go test`'s
// rule: Fuzz, then nothing or a character that is not a lower-case letter.
func isFuzzName(name string) bool {
	rest, ok := strings.CutPrefix(name, "Fuzz")
	if !ok {
		return false
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return rest == "" || !unicode.IsLower(r)
}

// fileTargets returns the fuzz targets declared in one test file.
func fileTargets(path string, externalTest bool) ([]Target, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	testing := testingImportName(file)
	if testing == "" {
		return nil, nil
	}
	missing := missingTestingNames(file, testing)
	var targets []Target
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || !isFuzzName(fn.Name.Name) || fn.Body == nil {
			continue
		}
		params := fn.Type.Params.List
		if len(params) != 1 || len(params[0].Names) > 1 || !isTestingPointer(params[0].Type, testing, "F") {
			continue
		}
		t := Target{Func: fn.Name.Name}
		switch {
		case externalTest:
			t.Unsupported = "in an external test package (package " + file.Name.Name + "): go-118-fuzz-build compiles the harness's file into the package under test, where a second package name does not compile"
		case missing != "":
			t.Unsupported = "its file uses " + testing + "." + missing + ", which go-118-fuzz-build's testing package (the harness file's testing once rewritten) does not define"
		case len(params[0].Names) == 0 || params[0].Names[0].Name == "_":
			t.Unsupported = "its *testing.F has no name, so it never calls f.Fuzz"
		default:
			t.Params, t.Unsupported = harnessParams(fn.Body, params[0].Names[0].Name, testing)
		}
		targets = append(targets, t)
	}
	return targets, nil
}

// go118TestingNames are the names go-118-fuzz-build's testing package
// (the pinned version) exports. go-118-fuzz-build points the whole file of
// a harness at that package, so any other testing name in it fails to
// compile.
var go118TestingNames = map[string]bool{
	"F": true, "T": true, "M": true, "NewT": true, "AllocsPerRun": true, "CoverMode": true, "Coverage": true,
	"Init": true, "RegisterCover": true, "RunExamples": true, "RunTests": true, "Short": true, "Verbose": true,
}

// missingTestingNames returns the first name file uses from the package
// it imports as testing that go-118-fuzz-build's testing lacks, or "".
func missingTestingNames(file *ast.File, testing string) string {
	missing := ""
	ast.Inspect(file, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || missing != "" {
			return missing == ""
		}
		if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == testing && !go118TestingNames[sel.Sel.Name] {
			missing = sel.Sel.Name
		}
		return true
	})
	return missing
}

// testingImportName is the name file gives the "testing" package, or "" if
// it does not import it.
func testingImportName(file *ast.File) string {
	for _, imp := range file.Imports {
		if imp.Path.Value != strconv.Quote("testing") {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return "testing"
	}
	return ""
}

// isTestingPointer reports whether expr is *<testing>.<typeName>.
func isTestingPointer(expr ast.Expr, testing, typeName string) bool {
	star, ok := expr.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == testing && sel.Sel.Name == typeName
}

// harnessParams finds the first f.Fuzz(...) call in body and returns the
// harness's argument types, or why go-118-fuzz-build cannot run it.
func harnessParams(body *ast.BlockStmt, f, testing string) ([]string, string) {
	var arg ast.Expr
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || arg != nil {
			return arg == nil
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Fuzz" || len(call.Args) != 1 {
			return true
		}
		if recv, ok := sel.X.(*ast.Ident); ok && recv.Name == f {
			arg = call.Args[0]
		}
		return arg == nil
	})
	if arg == nil {
		return nil, "it never calls " + f + ".Fuzz"
	}
	lit, ok := arg.(*ast.FuncLit)
	if !ok {
		return nil, fmt.Sprintf("%s.Fuzz gets %s, not a function literal: a harness made elsewhere (rapid.MakeFuzz) takes the standard library's *testing.T, and go-118-fuzz-build's F.Fuzz calls it with its own *testing.T, so reflect panics on every input", f, exprString(arg))
	}
	var params []string
	first := true
	for _, field := range lit.Type.Params.List {
		n := max(len(field.Names), 1)
		for range n {
			if first {
				first = false
				if !isTestingPointer(field.Type, testing, "T") {
					return nil, "the harness's first argument is not *" + testing + ".T"
				}
				continue
			}
			typ := typeName(field.Type)
			if !generatedTypes[typ] {
				return nil, fmt.Sprintf("the harness takes a %s, a type go-118-fuzz-build's F.Fuzz does not generate (it panics with \"unsupported type\")", exprString(field.Type))
			}
			params = append(params, typ)
		}
	}
	if first {
		return nil, "the harness takes no *" + testing + ".T"
	}
	return params, ""
}

// typeName spells a parameter's type as reflect does, byte as uint8 and
// rune as int32; "" for a type that is not a plain identifier or []byte.
func typeName(expr ast.Expr) string {
	switch e := expr.(type) {
	case *ast.Ident:
		switch e.Name {
		case "byte":
			return "uint8"
		case "rune":
			return "int32"
		}
		return e.Name
	case *ast.ArrayType:
		if e.Len == nil && typeName(e.Elt) == "uint8" {
			return "[]uint8"
		}
	}
	return ""
}

// exprString is a short rendering of expr for a reason: a call shows its
// function only.
func exprString(expr ast.Expr) string {
	switch e := expr.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.CallExpr:
		return exprString(e.Fun) + "(...)"
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	case *ast.ArrayType:
		if e.Len == nil {
			return "[]" + exprString(e.Elt)
		}
		return "[...]" + exprString(e.Elt)
	case *ast.MapType:
		return "map[" + exprString(e.Key) + "]" + exprString(e.Value)
	}
	return fmt.Sprintf("%T", expr)
}
