package inventory

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/properties"
	_ "github.com/nodeproof/nodeproof/properties/suites"
)

var update = flag.Bool("update", false, "rewrite subsystems.go from the source tree")

func registeredSuites() suiteSubsystems {
	out := suiteSubsystems{}
	for _, s := range properties.Suites() {
		out[s.Name] = s.Subsystem
	}
	return out
}

// TestInventoryMatchesTree keeps the checked-in inventory, which the
// report's coverage matrix reads, in step with the source tree.
func TestInventoryMatchesTree(t *testing.T) {
	rows, err := scan("..", registeredSuites())
	require.NoError(t, err)
	want, err := generate(rows)
	require.NoError(t, err)
	if *update {
		require.NoError(t, os.WriteFile("subsystems.go", want, 0o644))
		t.Log("rewrote subsystems.go; run the test again without -update to compare")
		return
	}
	got, err := os.ReadFile("subsystems.go")
	require.NoError(t, err)
	require.Equal(t, string(want), string(got),
		"subsystems.go is out of date with the source tree; regenerate it with\n  go test ./inventory -run TestInventoryMatchesTree -update")
	assert.Equal(t, rows, Subsystems())
}

// TestNewCorePackageIsANewRow builds a tree with a new core/ package and
// everything that verifies it, and expects a row that lists it all: the
// drift test then fails on the real tree until the inventory is regenerated.
func TestNewCorePackageIsANewRow(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"core/pod/pod.go":                 "package pod\n\ntype Pod struct{}\n",
		"core/imagegc/gc.go":              "package imagegc\n\nfunc Plan() {}\n",
		"core/imagegc/policy/policy.go":   "package policy\n",
		"agent/cri/cri.go":                "package cri\n",
		"models/imagegc/model.go":         "package imagegc\n",
		"fuzz/imagegc/gc_test.go":         "package imagegc\n\nimport (\n\t\"testing\"\n\n\t\"github.com/nodeproof/nodeproof/core/imagegc\"\n\t\"github.com/nodeproof/nodeproof/core/pod\"\n)\n\nfunc FuzzPlan(f *testing.F) { _ = pod.Pod{}; imagegc.Plan() }\n",
		"integration/gc_test.go":          "package integration\n\nimport (\n\t\"testing\"\n\n\t\"github.com/nodeproof/nodeproof/agent/cri\"\n\tgc \"github.com/nodeproof/nodeproof/core/imagegc\"\n)\n\nfunc TestMain(m *testing.M) {}\n\nfunc TestImagesRemoved(t *testing.T) { gc.Plan(); _ = cri.X }\n",
		"conformance/gc_test.go":          "package conformance\n\nimport \"testing\"\n\nfunc TestPlan(t *testing.T) { Compare(t, Comparison[int, int]{Name: \"policy.Plan\"}) }\n",
		"mutants/gc-keeps-pinned.patch":   "# Bug: pinned.\n--- a/core/imagegc/gc.go\n+++ b/core/imagegc/gc.go\n",
		"mutants/cri-no-timeout.patch":    "# Bug: no timeout.\n--- a/agent/cri/cri.go\n+++ b/agent/cri/cri.go\n",
		"core/imagegc/testdata/x/skip.go": "package skipped\n",
		"sim/node.go":                     "package sim\n",
		"mutants/sim-stale-list.patch":    "# Bug: stale.\n--- a/sim/node.go\n+++ b/sim/node.go\n",
	}
	for name, content := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	rows, err := scan(root, suiteSubsystems{"imagegc": "imagegc", "sim": "sim"})
	require.NoError(t, err)
	assert.Equal(t, []Subsystem{
		{Name: "agent", IntegrationTests: []string{"TestImagesRemoved"}, Mutants: []string{"cri-no-timeout"}},
		{
			Name:             "imagegc",
			CorePackages:     []string{"core/imagegc", "core/imagegc/policy"},
			Models:           []string{"models/imagegc"},
			Suites:           []string{"imagegc"},
			FuzzTargets:      []string{"fuzz/imagegc.FuzzPlan"},
			IntegrationTests: []string{"TestImagesRemoved"},
			Conformance:      []string{"policy.Plan"},
			Mutants:          []string{"gc-keeps-pinned"},
		},
		{Name: "pod", CorePackages: []string{"core/pod"}},
		{Name: "sim", CorePackages: []string{"sim"}, Suites: []string{"sim"}, Mutants: []string{"sim-stale-list"}},
	}, rows)
}

// TestScanNamesWhatItCannotPlace expects an error naming the file and the
// rule for a mutant and a comparison it cannot attribute.
func TestScanNamesWhatItCannotPlace(t *testing.T) {
	for name, tc := range map[string]struct{ file, content, want string }{
		"mutant": {"mutants/zz-odd.patch", "--- a/README.md\n+++ b/README.md\n",
			"mutants/zz-odd.patch starts with no subsystem"},
		"comparison": {"conformance/x_test.go", "package conformance\n\nfunc TestX(t *testing.T) { Compare(t, Comparison[int, int]{Name: \"Plan\"}) }\n",
			`conformance/x_test.go: comparison "Plan": start its name with the core package it compares`},
		"model": {"models/odd/m.go", "package odd\n", "models/odd: name it after its core package or add it to modelOwners"},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			for file, content := range map[string]string{"core/pod/pod.go": "package pod\n", tc.file: tc.content} {
				path := filepath.Join(root, filepath.FromSlash(file))
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
			}
			_, err := scan(root, suiteSubsystems{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
