package conformance

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/properties"
	_ "github.com/nodeproof/nodeproof/properties/suites"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// upstreamRepo maps a code source's link prefix to the module this module
// builds against, which holds the same files at the same tag.
type upstreamRepo struct {
	blob, module, version string
	// stagingPrefix, when set, is the repository path of a staging module,
	// published as a module of its own.
	stagingPrefix string
}

var upstreamRepos = []upstreamRepo{
	{blob: "https://github.com/kubernetes/kubernetes/blob/" + cite.KubernetesTag + "/staging/src/k8s.io/component-helpers/",
		module: "k8s.io/component-helpers", version: "v0" + strings.TrimPrefix(cite.KubernetesTag, "v1")},
	{blob: "https://github.com/kubernetes/kubernetes/blob/" + cite.KubernetesTag + "/", module: "k8s.io/kubernetes", version: cite.KubernetesTag},
	{blob: "https://github.com/opencontainers/cgroups/blob/" + cite.CgroupsLibraryTag + "/", module: "github.com/opencontainers/cgroups", version: cite.CgroupsLibraryTag},
}

// TestCodeSourcesExistAtTag checks every invariant's upstream code source
// against the very release this module compares nodeproof with: the file
// exists and declares each function (or constant) the source names, so a
// reviewer who follows the link finds what the catalogue promises.
func TestCodeSourcesExistAtTag(t *testing.T) {
	dirs := map[string]string{}
	for _, r := range upstreamRepos {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{.Dir}}", r.module).Output()
		if err != nil {
			t.Fatalf("go list -m %s: %v", r.module, err)
		}
		version, dir, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
		if version != r.version || dir == "" {
			t.Fatalf("module %s is at %q in %q; the sources cite %s", r.module, version, dir, r.version)
		}
		dirs[r.module] = dir
	}
	checked := 0
	for _, inv := range properties.Invariants() {
		for _, s := range inv.Sources {
			if s.Kind != cite.KindCode {
				continue
			}
			if err := checkCodeSource(s, dirs); err != nil {
				t.Errorf("%s: %v", inv.ID, err)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no invariant cites upstream code; the registry is not linked in")
	}
}

func checkCodeSource(s cite.Source, dirs map[string]string) error {
	var file string
	for _, r := range upstreamRepos {
		if rest, ok := strings.CutPrefix(s.URL, r.blob); ok {
			file = filepath.Join(dirs[r.module], filepath.FromSlash(rest))
			break
		}
	}
	if file == "" {
		return fmt.Errorf("source %q: url %q is not in a module this test knows", s.Text, s.URL)
	}
	parsed, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		return fmt.Errorf("source %q: %v", s.Text, err)
	}
	names, _, ok := strings.Cut(s.Text, " in ")
	if !ok {
		return fmt.Errorf("source %q: text does not start with \"<function> in <file>\"", s.Text)
	}
	for _, name := range strings.Split(names, ", ") {
		if !declares(parsed, name) {
			return fmt.Errorf("source %q: %s does not declare %s", s.Text, file, name)
		}
	}
	return nil
}

// declares says whether f declares name: a function, a method written
// Receiver.Method, or a constant, variable or type.
func declares(f *ast.File, name string) bool {
	receiver, method, isMethod := strings.Cut(name, ".")
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !isMethod && d.Recv == nil && d.Name.Name == name {
				return true
			}
			if isMethod && d.Recv != nil && d.Name.Name == method && receiverName(d.Recv.List[0].Type) == receiver {
				return true
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch sp := spec.(type) {
				case *ast.ValueSpec:
					for _, n := range sp.Names {
						if !isMethod && n.Name == name {
							return true
						}
					}
				case *ast.TypeSpec:
					if !isMethod && sp.Name.Name == name {
						return true
					}
				}
			}
		}
	}
	return false
}

func receiverName(expr ast.Expr) string {
	switch e := expr.(type) {
	case *ast.StarExpr:
		return receiverName(e.X)
	case *ast.IndexExpr:
		return receiverName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}
