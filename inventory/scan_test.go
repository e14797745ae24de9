package inventory

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// modulePath prefixes the import paths scan attributes to subsystems.
const modulePath = "github.com/nodeproof/nodeproof/"

// modelOwners names the subsystem of a model that is not named after a core
// package: models/deviceagent is the sequential view of the whole agent.
var modelOwners = map[string]string{"deviceagent": "agent"}

// mutantPrefixes maps the short subsystem names mutant IDs start with
// (mutants/<subsystem>-<slug>.patch) to subsystems. A mutant whose prefix
// is neither here nor a subsystem's name belongs to the subsystem of the
// first file it patches.
//
// "verify" mutants break the checks' own machinery (a contract breach, a
// finding's search), which every subsystem's suite shares; they count in
// the whole node's row, sim, the one row that spans every subsystem. "pc"
// mutants break agent/plugincheck or a plugin it checks, some through the
// plugin-check command in cmd/. "rk" mutants break the real-kubelet
// scenarios' checks (realkubelet/scenario), which watch a whole node, so
// they count in sim's row too.
var mutantPrefixes = map[string]string{
	"ad": "admission", "admit": "admission", "cg": "cgroups", "cgfs": "agent",
	"dm": "devicemanager", "kube": "agent", "pc": "agent", "pr": "preemption", "rk": "sim", "verify": "sim",
}

// shared is the core package every subsystem uses for its types; a test
// counts for it only when it uses no other subsystem.
const shared = "pod"

// suiteSubsystems maps each state-machine suite to its subsystem. scan takes
// it as an argument so that a test can scan a tree of its own.
type suiteSubsystems map[string]string

// scanner holds what scan learns about a tree while it walks it.
type scanner struct {
	root   string
	suites suiteSubsystems
	rows   map[string]*Subsystem
	// packageOwner maps the last element of every core package's path
	// ("checkpoint") to its subsystem, to place conformance comparisons
	// named "checkpoint.Decode".
	packageOwner map[string]string
}

// scan reads the source tree at root and returns its inventory.
func scan(root string, suites suiteSubsystems) ([]Subsystem, error) {
	s := &scanner{root: root, suites: suites, rows: map[string]*Subsystem{}, packageOwner: map[string]string{}}
	if err := s.scanCore(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(root, "agent")); err == nil {
		s.rows["agent"] = &Subsystem{Name: "agent"}
	}
	if err := s.scanSim(); err != nil {
		return nil, err
	}
	if err := s.scanModels(); err != nil {
		return nil, err
	}
	for name, sub := range suites {
		row, ok := s.rows[sub]
		if !ok {
			return nil, fmt.Errorf("suite %q: subsystem %q is not a core/ directory, the agent or the sim", name, sub)
		}
		row.Suites = append(row.Suites, name)
	}
	if err := s.scanGoFiles(); err != nil {
		return nil, err
	}
	if err := s.scanMutants(); err != nil {
		return nil, err
	}
	var out []Subsystem
	for _, row := range s.rows {
		for _, list := range []*[]string{&row.CorePackages, &row.Models, &row.Suites, &row.FuzzTargets,
			&row.IntegrationTests, &row.Linearizability, &row.Conformance, &row.Mutants} {
			slices.Sort(*list)
			*list = slices.Compact(*list)
		}
		out = append(out, *row)
	}
	slices.SortFunc(out, func(a, b Subsystem) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// scanCore makes one row per directory of core/ and lists its packages.
func (s *scanner) scanCore() error {
	entries, err := os.ReadDir(filepath.Join(s.root, "core"))
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		row := &Subsystem{Name: e.Name()}
		err := filepath.WalkDir(filepath.Join(s.root, "core", e.Name()), func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if hasPackage(p) {
				rel, _ := filepath.Rel(s.root, p)
				row.CorePackages = append(row.CorePackages, filepath.ToSlash(rel))
				s.packageOwner[d.Name()] = row.Name
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(row.CorePackages) > 0 {
			s.rows[row.Name] = row
		}
	}
	return nil
}

// scanSim makes the row of the node simulation, sim/, which composes every
// core: its own row, since no core/ directory owns it.
func (s *scanner) scanSim() error {
	row := &Subsystem{Name: simRow}
	err := filepath.WalkDir(filepath.Join(s.root, simRow), func(p string, d fs.DirEntry, err error) error {
		if os.IsNotExist(err) {
			return filepath.SkipAll
		}
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if hasPackage(p) {
			rel, _ := filepath.Rel(s.root, p)
			row.CorePackages = append(row.CorePackages, filepath.ToSlash(rel))
		}
		return nil
	})
	if len(row.CorePackages) > 0 {
		s.rows[simRow] = row
	}
	return err
}

// simRow is the node simulation's row and directory.
const simRow = "sim"

// hasPackage reports whether dir holds Go code other than tests.
func hasPackage(dir string) bool {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
			return true
		}
	}
	return false
}

func (s *scanner) modelOwner(model string) string {
	if _, ok := s.rows[model]; ok {
		return model
	}
	return modelOwners[model]
}

func (s *scanner) scanModels() error {
	entries, err := os.ReadDir(filepath.Join(s.root, "models"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		owner := s.modelOwner(e.Name())
		if owner == "" {
			return fmt.Errorf("models/%s: name it after its core package or add it to modelOwners", e.Name())
		}
		s.rows[owner].Models = append(s.rows[owner].Models, "models/"+e.Name())
	}
	return nil
}

// subsystemOf maps a module-relative path (of a package or a file) to its
// subsystem, "" when it belongs to none.
func (s *scanner) subsystemOf(rel string) string {
	parts := strings.Split(rel, "/")
	switch {
	case len(parts) >= 2 && parts[0] == "core":
		if _, ok := s.rows[parts[1]]; ok {
			return parts[1]
		}
	case parts[0] == "agent":
		return "agent"
	case parts[0] == simRow:
		if _, ok := s.rows[simRow]; ok {
			return simRow
		}
	case len(parts) >= 2 && parts[0] == "models":
		return s.modelOwner(parts[1])
	}
	return ""
}

// scanGoFiles places the fuzz targets, integration tests, linearizability
// tests and conformance comparisons of every test file.
func (s *scanner) scanGoFiles() error {
	var (
		modelSubsystems []string // what the linearizability checker checks against
		histories       []string // the tests that record histories
	)
	err := filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != s.root && (n == "testdata" || strings.HasPrefix(n, ".") || n == "report" || n == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(s.root, p)
		rel = filepath.ToSlash(rel)
		dir := path.Dir(rel)
		file, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		imports := s.imports(file)
		if dir == "linearizability" && !strings.HasSuffix(rel, "_test.go") {
			for _, spec := range file.Imports {
				p, _ := strconv.Unquote(spec.Path.Value)
				if model, ok := strings.CutPrefix(p, modulePath+"models/"); ok {
					modelSubsystems = append(modelSubsystems, s.modelOwner(model))
				}
			}
		}
		if !strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil {
				continue
			}
			name := fn.Name.Name
			switch {
			case dir == "conformance" || strings.HasPrefix(dir, "conformance/"):
				if err := s.conformance(rel, fn); err != nil {
					return err
				}
			case strings.HasPrefix(name, "Fuzz"):
				s.attribute(rel, fn, imports, func(row *Subsystem) { row.FuzzTargets = append(row.FuzzTargets, dir+"."+name) })
			case dir == "integration" && strings.HasPrefix(name, "Test") && name != "TestMain":
				s.attribute(rel, fn, imports, func(row *Subsystem) { row.IntegrationTests = append(row.IntegrationTests, name) })
			// A history test records through Record (RecordHistories does),
			// or through the forced interleavings' node (startForcedNode).
			case dir == "linearizability" && strings.HasPrefix(name, "Test") && callsAny(fn, "Record", "RecordHistories", "startForcedNode"):
				histories = append(histories, name)
			}
		}
		return nil
	})
	for _, sub := range modelSubsystems {
		s.rows[sub].Linearizability = append(s.rows[sub].Linearizability, histories...)
	}
	return err
}

// imports maps each of a file's imports of this module to its local name's
// subsystem ("" for a package of no subsystem, such as properties).
func (s *scanner) imports(file *ast.File) map[string]string {
	out := map[string]string{}
	for _, spec := range file.Imports {
		p, _ := strconv.Unquote(spec.Path.Value)
		if !strings.HasPrefix(p, modulePath) {
			continue
		}
		rel := strings.TrimPrefix(p, modulePath)
		name := path.Base(rel)
		if spec.Name != nil {
			name = spec.Name.Name
		}
		out[name] = s.subsystemOf(rel)
	}
	return out
}

// attribute adds a test function to the rows of the subsystems it uses: the
// packages its body names, else those its file imports. A suite it looks up
// by name (properties.Lookup("devicemanager")) counts as that suite's
// subsystem.
func (s *scanner) attribute(rel string, fn *ast.FuncDecl, imports map[string]string, add func(*Subsystem)) {
	used := map[string]bool{}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Lookup" && len(call.Args) == 1 {
				if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					name, _ := strconv.Unquote(lit.Value)
					if sub := s.suites[name]; sub != "" {
						used[sub] = true
					}
				}
			}
		}
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		sub, imported := imports[id.Name]
		switch {
		case sub != "":
			used[sub] = true
		case imported:
			// A helper of a package of no subsystem counts for the
			// subsystem it is named after: admissioncheck.RunPreemption.
			for name := range s.rows {
				if strings.Contains(strings.ToLower(sel.Sel.Name), name) {
					used[name] = true
				}
			}
		}
		return true
	})
	if len(used) == 0 {
		for _, sub := range imports {
			if sub != "" {
				used[sub] = true
			}
		}
	}
	if len(used) > 1 {
		delete(used, shared)
	}
	for sub := range used {
		add(s.rows[sub])
	}
}

// conformance places every comparison with a literal name ("checkpoint.Decode")
// by the core package the name starts with. Comparisons named by variables
// are the harness's own tests.
func (s *scanner) conformance(rel string, fn *ast.FuncDecl) error {
	var err error
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok || !isComparison(lit.Type) {
			return true
		}
		for _, elt := range lit.Elts {
			kv, ok := elt.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			key, ok := kv.Key.(*ast.Ident)
			value, isLit := kv.Value.(*ast.BasicLit)
			if !ok || key.Name != "Name" || !isLit || value.Kind != token.STRING {
				continue
			}
			name, _ := strconv.Unquote(value.Value)
			pkg, _, _ := strings.Cut(name, ".")
			owner := s.packageOwner[pkg]
			if owner == "" && err == nil {
				err = fmt.Errorf("%s: comparison %q: start its name with the core package it compares (\"checkpoint.Decode\")", rel, name)
			}
			if owner != "" {
				s.rows[owner].Conformance = append(s.rows[owner].Conformance, name)
			}
		}
		return true
	})
	return err
}

func isComparison(t ast.Expr) bool {
	switch t := t.(type) {
	case *ast.IndexExpr:
		return isComparison(t.X)
	case *ast.IndexListExpr:
		return isComparison(t.X)
	case *ast.Ident:
		return t.Name == "Comparison"
	}
	return false
}

// callsAny reports whether fn calls a function of its own package by one of names.
func callsAny(fn *ast.FuncDecl, names ...string) bool {
	found := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if id, ok := call.Fun.(*ast.Ident); ok && slices.Contains(names, id.Name) {
				found = true
			}
		}
		return !found
	})
	return found
}

// scanMutants places each mutants/<id>.patch by its ID's prefix, else by
// the first file it patches under core/, models/, agent/ or sim/.
func (s *scanner) scanMutants() error {
	patches, err := filepath.Glob(filepath.Join(s.root, "mutants", "*.patch"))
	if err != nil {
		return err
	}
	for _, p := range patches {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		id := strings.TrimSuffix(filepath.Base(p), ".patch")
		prefix, _, _ := strings.Cut(id, "-")
		owner := mutantPrefixes[prefix]
		if _, ok := s.rows[prefix]; ok {
			owner = prefix
		}
		lines := bufio.NewScanner(bytes.NewReader(data))
		for owner == "" && lines.Scan() {
			if target, ok := strings.CutPrefix(lines.Text(), "+++ b/"); ok {
				owner = s.subsystemOf(strings.Fields(target)[0])
			}
		}
		if owner == "" {
			return fmt.Errorf("mutants/%s.patch starts with no subsystem (add its prefix to mutantPrefixes) and patches no file of core/, models/, agent/ or sim/", id)
		}
		s.rows[owner].Mutants = append(s.rows[owner].Mutants, id)
	}
	return nil
}

// generate renders the inventory as the Go source of subsystems.go.
func generate(rows []Subsystem) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by go test ./inventory -run TestInventoryMatchesTree -update; DO NOT EDIT.\n\n")
	b.WriteString("package inventory\n\nvar subsystems = []Subsystem{\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "{\nName: %q,\n", r.Name)
		for _, f := range []struct {
			name string
			list []string
		}{{"CorePackages", r.CorePackages}, {"Models", r.Models}, {"Suites", r.Suites}, {"FuzzTargets", r.FuzzTargets},
			{"IntegrationTests", r.IntegrationTests}, {"Linearizability", r.Linearizability},
			{"Conformance", r.Conformance}, {"Mutants", r.Mutants}} {
			if len(f.list) == 0 {
				continue
			}
			fmt.Fprintf(&b, "%s: []string{\n", f.name)
			for _, item := range f.list {
				fmt.Fprintf(&b, "%q,\n", item)
			}
			b.WriteString("},\n")
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}
